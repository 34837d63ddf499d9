"""The files of one import, found once and read once.

An import used to walk a folder given to it five times (six within ingest roots: the content
hash, the roots check, three of detection's questions and the loader) and to open each file
two to five times (the hash, the format's magic bytes, a book or regulation sniff, a reader's
own checks, the reader).  :func:`resolve_files` walks each folder once, checking the ingest
roots in the same walk, and gives a :class:`FileSet`: per path given, its files in a stable
order, each with the name it goes by (its document id).  Every stage that follows (the content
hash, detection, the readers, code ingestion, sync) takes its files from that set.

A :class:`File` reads its bytes at most once: the first stage that needs them (the hash,
usually) reads the whole file and the set keeps the bytes, so the sniffers read their head and
the reader its content from memory.  What the set keeps is bounded (:data:`KEEP_FILE_BYTES`
per file, :data:`KEEP_TOTAL_BYTES` at once, freed as each file is read): a file past that is
streamed into the hash, which keeps its first :data:`HEAD_BYTES` for the sniffers, and its
reader opens it again (a folder of large PDFs is not held in memory between hashing and
reading; PDFium then reads the path natively).  The readers that take bytes say so in their
line of documents/registry.py; another reader (a plugin's) opens its file itself.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from excerpt.errors import InputError

__all__ = ["KEEP_FILE_BYTES", "KEEP_TOTAL_BYTES", "File", "FileSet", "check_confined",
           "head_of", "is_hidden", "relative_id", "require_paths", "resolve_files",
           "walk_files"]

MIB = 1024 * 1024
KEEP_FILE_BYTES = 32 * MIB
"""A file larger than this is never kept: the hash streams it and its reader opens it again."""
KEEP_TOTAL_BYTES = 128 * MIB
"""What one set keeps at once: past it, files are read as if they were too large to keep."""
HEAD_BYTES = 65536
"""The most any sniffer reads of a file's start (a Gutenberg header's START line)."""


def require_paths(paths: Sequence[Path], roots: Sequence[Path] | None = None) -> list[Path]:
    """The paths as ``Path`` objects; refuses an empty list, paths that do not exist and, when
    ``roots`` are given, anything that resolves outside them (:func:`check_confined`)."""
    out = _existing(paths)
    if roots is not None:
        check_confined(out, roots)
    return out


def _existing(paths: Sequence[Path]) -> list[Path]:
    if not paths:
        raise InputError("no input path given")
    out = [Path(p) for p in paths]
    for p in out:
        if not p.exists():
            raise InputError(f"no such file or directory: {p}")
    return out


def check_confined(paths: Sequence[Path], roots: Sequence[Path]) -> None:
    """Refuse a path, or any file, folder or link below a folder path (hidden ones too), that
    resolves outside every one of ``roots``.

    A server that ingests paths only inside its ingest roots must not read through a symbolic
    link that points out of them; checking what each entry resolves to, before any loader or
    format sniffer opens a file, covers every file a loader may read.  (A link swapped in
    after this check, while the import runs, is not covered.)
    """
    check = _confinement(roots)
    for given in paths:
        check(given)
        if given.is_dir():
            _walk(given, check)


def _confinement(roots: Sequence[Path]) -> Callable[[Path], None]:
    """The check of one entry against ``roots`` (InputError when it resolves outside)."""
    inside = _resolved(roots) or ()

    def check(path: Path) -> None:
        try:
            target = path.resolve()
        except (OSError, RuntimeError):  # a link loop
            raise InputError(f"{path}: refused: a symbolic link that cannot be resolved") from None
        if not any(target.is_relative_to(root) for root in inside):
            raise InputError(f"{path}: refused: it resolves outside the ingest roots "
                             "(a symbolic link out of them?)")

    return check


def is_hidden(name: str) -> bool:
    return name.startswith(".")


def walk_files(root: Path) -> list[Path]:
    """Every non-hidden file under ``root``, sorted by relative path (see :func:`_walk`)."""
    return _walk(root)[0]


def _walk(root: Path, check: Callable[[Path], None] | None = None
          ) -> tuple[list[Path], tuple[str, ...]]:
    """One walk of ``root``: its non-hidden files, sorted by relative path (components compared
    in turn, so the order is the same on every platform and file system), and the folders at
    its top (hidden ones too: a code bundle may sit one folder down).

    Hidden files and folders (a leading dot) are not content; symbolic links to folders are
    not followed (no cycles), links to files are read.  With ``check`` (the roots check),
    every entry is checked, those in hidden folders too, so the walk enters those folders."""
    found: list[Path] = []
    top: tuple[str, ...] = ()
    for dirpath, dirnames, filenames in os.walk(root):  # links to folders are not descended
        here = Path(dirpath)
        if check is not None:
            for name in (*dirnames, *filenames):
                check(here / name)
        if here == root:
            top = tuple(dirnames)
        inside_hidden = here != root and any(map(is_hidden, here.relative_to(root).parts))
        if check is None:
            dirnames[:] = [d for d in dirnames if not is_hidden(d)]
        if inside_hidden:  # entered for the roots check only
            continue
        found.extend(here / name for name in filenames if not is_hidden(name))
    return sorted(found, key=lambda p: p.relative_to(root).parts), top


def head_of(path: Path, size: int, head: bytes | None = None) -> bytes | None:
    """A sniffer's view of a file: its first ``size`` bytes, from ``head`` when the import
    read them already (the file is not opened), else read now; None when it cannot be read
    (a sniffer then says no)."""
    if head is None:
        try:
            with path.open("rb") as handle:
                head = handle.read(size)
        except OSError:
            return None
    return head[:size]


def relative_id(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX style (the document id of a file in a folder)."""
    return path.relative_to(root).as_posix()


@dataclass
class _Budget:
    """The bytes a set may still keep."""

    left: int = field(default_factory=lambda: KEEP_TOTAL_BYTES)

    def take(self, size: int) -> bool:
        if size > KEEP_FILE_BYTES or size > self.left:
            return False
        self.left -= size
        return True


@dataclass(eq=False)
class File:
    """One file of an import: where it is, the name it goes by, and its bytes once read."""

    path: Path
    name: str
    """Its path relative to the folder given (POSIX), or its own name when it was given."""
    root: Path | None = None
    """The folder given it was found in; None when the file itself was given."""
    budget: _Budget = field(default_factory=_Budget, repr=False)
    _data: bytes | None = field(default=None, repr=False)
    _head: bytes | None = field(default=None, repr=False)
    _unreadable: bool = field(default=False, repr=False)

    @property
    def suffix(self) -> str:
        return self.path.suffix.lower()

    def held(self) -> bytes | None:
        """The whole file's bytes, read now (one open) if not yet and the set may keep them;
        None when it may not (too large, or the budget is spent until other files are read)
        or cannot be read: then who needs the bytes opens the file and meets its error."""
        if self._data is None and not self._unreadable:
            try:
                size = self.path.stat().st_size
                if self.budget.take(size):
                    self._data = self._read_whole(size)
            except OSError:
                self._unreadable = True
        return self._data

    def _read_whole(self, size: int) -> bytes:
        try:
            with self.path.open("rb") as handle:
                data = handle.read()
        except OSError:
            self.budget.left += size
            raise
        self.budget.left += size - len(data)  # it grew or shrank since its size was read
        return data

    def head(self, size: int = HEAD_BYTES) -> bytes:
        """The file's first ``size`` bytes (kept ones, else one read); OSError when it cannot
        be read."""
        data = self.held()
        if data is None and self._head is not None and size <= HEAD_BYTES:
            data = self._head
        if data is not None:
            return data[:size]
        with self.path.open("rb") as handle:
            return handle.read(size)

    def digest(self) -> str:
        """sha256 of the file's bytes: the kept ones, else streamed from the file (its head
        kept, within the budget, for the sniffers: a large file is then opened once more, by
        its reader)."""
        data = self.held()
        if data is not None:
            return hashlib.sha256(data).hexdigest()
        with self.path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
            hashed = hashlib.sha256(head)
            while piece := handle.read(MIB):
                hashed.update(piece)
        if self._head is None and self.budget.take(len(head)):
            self._head = head
        return hashed.hexdigest()

    def release(self) -> None:
        """Its reader is done: the bytes are let go (and the set may keep others)."""
        for kept in (self._data, self._head):
            if kept is not None:
                self.budget.left += len(kept)
        self._data = self._head = None


@dataclass
class FileSet:
    """The files of an import, by path given (see the module docstring)."""

    given: list[Path]
    found: dict[Path, list[File]]
    tops: dict[Path, tuple[str, ...]] = field(default_factory=dict)
    roots: tuple[Path, ...] | None = None
    """The ingest roots every entry was checked against (resolved), or None: unchecked."""

    def within(self, roots: Sequence[Path] | None) -> bool:
        """Whether the set was checked against ``roots`` (None: nothing to check)."""
        return roots is None or self.roots == _resolved(roots)

    def files(self, path: Path) -> list[File]:
        """The files of one path given: a folder's, in walk order, or the file itself."""
        return self.found[Path(path)]

    def every(self) -> list[File]:
        return [f for path in self.given for f in self.files(path)]

    def top_folders(self, folder: Path) -> tuple[str, ...]:
        """The folders at the top of a folder given (hidden ones too)."""
        return self.tops.get(Path(folder), ())

    def release(self) -> None:
        for file in self.every():
            file.release()

    @classmethod
    def of(cls, file: File, roots: Sequence[Path] | None = None) -> FileSet:
        """A set of one file taken from another set, given by itself (sync imports each file
        alone): its bytes, when kept, come along. ``roots``: those the caller has checked the
        file against (:func:`require_paths`)."""
        alone = File(file.path, file.path.name, None, file.budget, file._data, file._head,
                     file._unreadable)
        file._data = file._head = None  # the bytes now belong to the new set
        return cls([file.path], {file.path: [alone]}, roots=_resolved(roots))


def resolve_files(paths: Sequence[Path], roots: Sequence[Path] | None = None) -> FileSet:
    """The files of ``paths`` in one walk of each folder (:class:`FileSet`); refuses what
    :func:`require_paths` refuses, checking the roots in the same walk."""
    given = _existing(paths)
    check = None if roots is None else _confinement(roots)
    budget = _Budget()
    found: dict[Path, list[File]] = {}
    tops: dict[Path, tuple[str, ...]] = {}
    for path in given:
        if check is not None:
            check(path)
        if path.is_dir():
            walked, tops[path] = _walk(path, check)
            found[path] = [File(f, relative_id(f, path), path, budget) for f in walked]
        else:
            found[path] = [File(path, path.name, None, budget)]
    return FileSet(given, found, tops, _resolved(roots))


def _resolved(roots: Sequence[Path] | None) -> tuple[Path, ...] | None:
    return None if roots is None else tuple(Path(r).resolve() for r in roots)
