"""Zip archives (code bundles, HWPX books) read without trusting them.

A zip is small on the wire and may be huge inside: one 1.4 MB upload held a 1.5 GB member of
zeros.  Every member is read through :class:`SafeZip`, which refuses (:class:`CorpusError`
naming the file and the member):

* a member whose expanded size is over ``max_member_bytes``, or whose expanded/compressed ratio
  is over ``max_ratio`` once it is past ``ratio_floor_bytes`` (below that, no ratio can hurt);
* more than ``max_total_bytes`` read from one archive in all;
* compression other than stored or deflate (zipfile decompresses bzip2 and LZMA input without
  an output bound, so a small read could expand without limit);
* member names that are absolute or climb out with ``..`` (zip-slip; nothing is extracted to
  disk, but such a name is no part of a well-made archive);
* a damaged archive: a bad header, a bad CRC, a truncated or undecodable stream.

The limits are checked twice: against the sizes the header declares, before anything is read,
and against the bytes actually produced while a member streams (the header may lie; zipfile
stops at the declared size and the CRC then fails).  Members are streamed in pieces, so a
refusal costs at most one piece of memory.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from excerpt.errors import CorpusError

__all__ = ["MIB", "ArchiveLimits", "Member", "SafeZip"]

MIB = 1024 * 1024
_PIECE = MIB
_STREAMED = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_DRIVE = re.compile(r"^[A-Za-z]:")
# What zipfile and zlib raise on damaged input.
_DAMAGE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError)


@dataclass(frozen=True)
class ArchiveLimits:
    """How much one archive may expand; the defaults are the settings' (see settings.py)."""

    max_member_bytes: int = 512 * MIB
    max_total_bytes: int = 2048 * MIB
    max_ratio: float = 200.0
    ratio_floor_bytes: int = 8 * MIB


class _Closing:
    """``with`` closes it."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


class SafeZip(_Closing):
    """A zip file whose members are read within :class:`ArchiveLimits` (see the module)."""

    def __init__(self, path: Path, limits: ArchiveLimits, what: str = "",
                 data: bytes | None = None) -> None:
        """Open ``path`` (``what`` it should be, for the message when it is no zip at all);
        ``data``: the file's bytes, when the import holds them (the file is not opened)."""
        self.path = path
        self.limits = limits
        self.total = 0  # bytes produced by every member read so far
        try:
            self._zip = zipfile.ZipFile(path if data is None else io.BytesIO(data))
        except _DAMAGE as exc:
            raise CorpusError(f"{path}: {f'not {what}: ' if what else ''}not a readable zip "
                              f"archive ({_reason(exc)})") from None
        self._infos = {i.filename: i for i in self._zip.infolist() if not i.is_dir()}
        for name in self._infos:
            if _unsafe(name):
                self._zip.close()
                raise CorpusError(f"{path}: refused: member name {name!r} leaves the archive "
                                  "(absolute or with '..')")

    @property
    def names(self) -> list[str]:
        """The archive's files (folders left out), in archive order."""
        return list(self._infos)

    def has(self, name: str) -> bool:
        return name in self._infos

    def open(self, name: str) -> Member:
        """A stream of one member's bytes, refused when it breaks a limit."""
        info = self._infos.get(name)
        if info is None:
            raise CorpusError(f"{self.path}: the archive has no {name}")
        self._check_declared(info)
        try:
            handle = self._zip.open(info)
        except _DAMAGE as exc:
            raise CorpusError(f"{self.path}: {name}: damaged member ({_reason(exc)})") from None
        return Member(self, info, handle)

    def read(self, name: str) -> bytes:
        with self.open(name) as member:
            return member.read()

    def _check_declared(self, info: zipfile.ZipInfo) -> None:
        where = f"{self.path}: {info.filename}"
        if info.compress_type not in _STREAMED:
            raise CorpusError(f"{where}: refused: compression method {info.compress_type} "
                              "(only stored and deflate members are read)")
        self.check(info, info.file_size, where, self.total + info.file_size)

    def check(self, info: zipfile.ZipInfo, size: int, where: str, total: int) -> None:
        """Refuse ``size`` bytes of ``info`` (``total`` from the whole archive)."""
        limits = self.limits
        if size > limits.max_member_bytes:
            raise CorpusError(f"{where}: refused: expands to over {_mib(limits.max_member_bytes)}"
                              " (setting archive_max_member_mb)")
        ratio = size / max(info.compress_size, 1)
        if size > limits.ratio_floor_bytes and ratio > limits.max_ratio:
            raise CorpusError(f"{where}: refused: compressed {ratio:.0f}:1, over "
                              f"{limits.max_ratio:.0f}:1 (a zip bomb? setting archive_max_ratio)")
        if total > limits.max_total_bytes:
            raise CorpusError(f"{where}: refused: the archive expands to over "
                              f"{_mib(limits.max_total_bytes)} (setting archive_max_total_mb)")

    def close(self) -> None:
        self._zip.close()


class Member(_Closing):
    """One member's bytes as a file object (``read``, ``close``), counted as they come out."""

    def __init__(self, archive: SafeZip, info: zipfile.ZipInfo, handle: IO[bytes]) -> None:
        self._archive = archive
        self._info = info
        self._handle = handle
        self._where = f"{archive.path}: {info.filename}"
        self.produced = 0

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            pieces = []
            while piece := self.read(_PIECE):
                pieces.append(piece)
            return b"".join(pieces)
        try:
            data = self._handle.read(min(size, _PIECE))
        except _DAMAGE as exc:
            raise CorpusError(f"{self._where}: damaged member ({_reason(exc)})") from None
        self.produced += len(data)
        self._archive.total += len(data)
        self._archive.check(self._info, self.produced, self._where, self._archive.total)
        return data

    def close(self) -> None:
        self._handle.close()


def _unsafe(name: str) -> bool:
    parts = re.split(r"[/\\]", name)
    return name.startswith(("/", "\\")) or bool(_DRIVE.match(name)) or ".." in parts


def _reason(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _mib(size: int) -> str:
    return f"{size / MIB:g} MB"
