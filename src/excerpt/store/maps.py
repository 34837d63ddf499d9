"""A bound on the segment files a process keeps memory-mapped, so on its open files.

A memory map made with numpy (``np.load(mmap_mode="r")``) holds an open file for as long as
it lives: CPython's ``mmap`` keeps a duplicate of the descriptor it maps (before Python 3.13's
``trackfd``). A segment is a folder of about twenty arrays, and a view spans a segment per
source, so a collection synced from 1,000 files held 8,000 descriptors after a search; past
``ulimit -n`` every read of the process failed, whatever its collection (issue 28). Hence:

* a segment reads an array under :data:`READ_BELOW` bytes (256 KB) into memory (no descriptor, no
  map; what the array's pages would cost once read anyway): most synced files' segments then
  hold none;
* larger arrays are mapped, and :class:`OpenMaps` keeps at most ``limit`` of them across a
  store's segments: past it, the least recently read segment's maps are dropped, and mapped
  again the next time it is read. Segment files never change once written, so a segment
  mapped again reads the same bytes: dropping one never changes a result, only costs the
  next read of it a few system calls.

A map dropped here closes when the last array over it goes (a search under way keeps the
arrays it took); searches take copies of what they keep across segments (retrieve/lexical.py)
so that a view of many segments does not hold them all at once.
"""

from __future__ import annotations

import mmap
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from excerpt.errors import exhausted
from excerpt.settings import Settings

READ_BELOW = 256 * 1024
"""Arrays smaller than this (bytes on disk) are read, not mapped (setting segment_open_files'
help names it)."""
ADVICE = "raise the process's limit (ulimit -n) or lower the setting segment_open_files"


class Holder(Protocol):
    """What :class:`OpenMaps` keeps the maps of (a segment)."""

    mapped: dict[str, npt.NDArray[Any]]
    """Its arrays mapped now, read without a lock; only its OpenMaps changes it."""
    touched: int
    """The :attr:`OpenMaps.clock` when it was last made the most recently read."""


class OpenMaps:
    """The mapped arrays of a store's segments, at most ``limit`` at once: past it the least
    recently read segment's maps are dropped first (never those of the segment being read,
    so a single segment holding more than ``limit`` keeps what it needs). Thread-safe.

    "Recently" is counted in maps opened: a segment read again before any new map opened is
    not moved again (the order only matters when a new map makes room), so a search over
    segments that stay mapped takes no lock at all."""

    def __init__(self, limit: int = Settings.segment_open_files,
                 read_below: int = READ_BELOW) -> None:
        self.limit = limit
        self.read_below = read_below
        """Arrays of fewer bytes are read into memory instead (0: every array mapped)."""
        self.open = 0
        """Arrays mapped now (each one open file)."""
        self.dropped = 0
        """Arrays dropped to stay within ``limit`` since this object was made."""
        self.clock = 0
        """Maps opened so far."""
        self._lock = threading.Lock()
        self._order: OrderedDict[int, Holder] = OrderedDict()  # by id; least recent first

    def used(self, holder: Holder) -> None:
        """``holder`` was read: it becomes the most recently read."""
        with self._lock:
            if id(holder) in self._order:
                self._order.move_to_end(id(holder))
            holder.touched = self.clock

    def put(self, holder: Holder, name: str, array: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """Keeps ``array`` as ``holder``'s mapped ``name`` (or returns the one another thread
        kept first), dropping the least recently read segments' maps past ``limit``."""
        released = []  # closed once the lock is let go (munmap and close are system calls)
        with self._lock:
            kept = holder.mapped.setdefault(name, array)
            if kept is array:
                self.open += 1
                self.clock += 1
            self._order[id(holder)] = holder
            self._order.move_to_end(id(holder))
            holder.touched = self.clock
            while self.open > self.limit and next(iter(self._order)) != id(holder):
                released.append(self._drop(self._order.popitem(last=False)[1]))
                self.dropped += len(released[-1])
        del released
        return kept

    def close(self, holder: Holder | None = None) -> None:
        """Drops ``holder``'s maps (a deleted snapshot), or every segment's (None)."""
        with self._lock:
            if holder is None:
                victims = list(self._order.values())
                self._order.clear()
            else:
                found = self._order.pop(id(holder), None)
                victims = [] if found is None else [found]
            released = [self._drop(victim) for victim in victims]
        del released

    def _drop(self, holder: Holder) -> dict[str, npt.NDArray[Any]]:
        """``holder``'s maps, taken from it (under the lock). A search reading it meanwhile
        still sees the old dict, whose maps stay valid while it holds them."""
        arrays, holder.mapped = holder.mapped, {}
        self.open -= len(arrays)
        return arrays


class Layout(NamedTuple):
    """Where an array lies in its ``.npy`` file, from the file's header."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    fortran: bool
    offset: int


_HEADER_LOCK = threading.Lock()


def layout(path: Path) -> Layout:
    """The header of the ``.npy`` file ``path``. One thread at a time: numpy parses it with
    ``ast.literal_eval``, and CPython 3.11 before 3.11.8 can fail that in two threads at once
    ("SystemError: AST constructor recursion depth mismatch", seen in the concurrent-searchers
    test)."""
    with _HEADER_LOCK, open(path, "rb") as fh:
        version = np.lib.format.read_magic(fh)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read(fh)
        return Layout(shape, dtype, fortran, fh.tell())


def map_array(path: Path, where: Layout) -> npt.NDArray[Any]:
    """The array, memory-mapped read-only. Made from the header read once (``where``), not
    with ``np.load(mmap_mode="r")``: mapping again a segment that was dropped then costs an
    open and a map (numpy's memmap parses the header and resolves the path each time: 190 us
    against ~15 us here), and the array is a plain ndarray (np.memmap's slicing costs ~6 us a
    call)."""
    with open(path, "rb") as fh:
        view = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return np.ndarray(where.shape, where.dtype, buffer=view, offset=where.offset,
                      order="F" if where.fortran else "C")


def read_array(path: Path) -> npt.NDArray[Any]:
    """The array, read into memory, read-only as a map is."""
    with _HEADER_LOCK:
        array: npt.NDArray[Any] = np.load(path, allow_pickle=False)
    array.flags.writeable = False
    return array


@contextmanager
def resources() -> Iterator[None]:
    """A file or map refused for want of descriptors or memory is an UnavailableError (HTTP
    503, one line from the CLI) that names no path, not an OSError about a segment file."""
    try:
        yield
    except OSError as exc:
        unavailable = exhausted(exc, ADVICE)
        if unavailable is None:
            raise
        raise unavailable from exc
