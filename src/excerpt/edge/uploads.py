"""Uploads of ``POST /v1/ingest``: the file name checked, the body streamed to a temporary
folder under ``<home>/uploads``, and error messages that name the upload, not the folder.

Each upload gets its own folder ``<pid>-<process start>-<random>`` and removes it when done. A
server killed mid-upload cannot, so every server removes, when it starts, the folders of
processes that no longer run (the pid and the process's start time together, so that a reused
pid does not keep a dead server's leftovers alive, and a live server's uploads are never
touched by another server sharing the home). The workers of `excerpt serve --workers N` are
such servers: each names its uploads by its own pid, and one that uvicorn restarts removes
only what dead workers left (tests/integration/test_serve_workers.py).
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psutil

from excerpt.errors import ExcerptError, Forbidden, InputError
from excerpt.names import plain_name

log = logging.getLogger(__name__)

MAX_NAME_BYTES = 255  # what a file system takes as one name
MAX_UPLOAD = 200 * 1024 * 1024
"""Bytes one upload may hold (``POST /v1/ingest``, the MCP ingest tool's text)."""


def upload_name(filename: str, field: str = "filename") -> str:
    """``filename`` if it is a plain file name (:func:`excerpt.names.plain_name`, at most 255
    bytes); InputError naming ``field`` and the value otherwise. Every request value that
    becomes part of a server path passes here first (an upload's ``filename``, a sync's
    ``name``), before anything touches the disk."""
    return plain_name(filename, field, noun="file name", max_chars=MAX_NAME_BYTES,
                      max_bytes=MAX_NAME_BYTES)


def inside(folder: Path, path: Path) -> Path:
    """``path`` if it resolves inside ``folder``; InputError otherwise (a last guard where a
    name from a request or an archive is joined to a server folder)."""
    if not path.resolve().is_relative_to(folder.resolve()):
        raise InputError(f"{path.name!r} would be written outside the upload")
    return path


def _start_time(pid: int) -> int | None:
    try:
        return int(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


class Uploads:
    """The temporary folders of one server's uploads, under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.owner = f"{os.getpid()}-{_start_time(os.getpid())}"

    def clean_stale(self) -> int:
        """Removes the folders of servers that no longer run; how many it removed."""
        if not self.root.is_dir():
            return 0
        removed = 0
        for folder in self.root.iterdir():
            pid, _, rest = folder.name.partition("-")
            started = rest.partition("-")[0]
            if pid.isdigit() and started == str(_start_time(int(pid))):
                continue  # its server still runs
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
        if removed:
            log.warning("excerpt: removed %d upload(s) left by a server that stopped", removed)
        return removed

    def new(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        folder = self.root / f"{self.owner}-{secrets.token_hex(8)}"
        folder.mkdir(mode=0o700)
        return folder


async def receive(chunks: AsyncIterator[bytes], path: Path, limit: int) -> None:
    """Writes the body to ``path`` as it arrives (never all of it in memory)."""
    size = 0
    with path.open("wb") as out:
        async for chunk in chunks:
            size += len(chunk)
            if size > limit:
                raise InputError(f"upload:{path.name}: the upload is over {limit} bytes")
            out.write(chunk)
    if not size:
        raise InputError(f"upload:{path.name}: the upload is empty: send the file as the "
                         "request body")


@contextmanager
def staged(uploads: Uploads, name: str) -> Iterator[Path]:
    """A fresh folder for the upload ``name`` (``POST /v1/ingest``, MCP's ``ingest``),
    removed afterwards; an :class:`ExcerptError` raised inside names ``upload:NAME``, never
    the folder."""
    folder = uploads.new()
    try:
        yield folder
    except ExcerptError as exc:
        raise renamed(exc, folder, name) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def inside_roots(path: Path, roots: Sequence[Path]) -> None:
    """Refuses (:class:`Forbidden`) a server-side path outside every ingest root; the import then
    also confines each file it reads (links included) to the roots."""
    resolved = path.resolve()
    if not any(resolved.is_relative_to(root.resolve()) for root in roots):
        raise Forbidden(f"{path} is not inside an ingest root of this server")


def renamed(exc: ExcerptError, folder: Path, name: str) -> ExcerptError:
    """``exc`` with the upload's temporary path in its message replaced by ``upload:NAME``."""
    message = str(exc)
    for place in sorted({str(folder / name), str(folder.resolve() / name)}, key=len,
                        reverse=True):
        message = message.replace(place, f"upload:{name}")
    for place in sorted({str(folder), str(folder.resolve())}, key=len, reverse=True):
        message = message.replace(place, f"upload:{name}")
    exc.args = (message,)
    return exc
