"""Helpers the loaders share: path checks, source names, security labels, decoding."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from excerpt.errors import InputError
from excerpt.ingest.base import LoadOptions

BINARY_SNIFF_BYTES = 8192


def check_options(options: LoadOptions) -> None:
    if options.chunk_chars < 1:
        raise InputError(f"chunk size must be at least 1 character, got {options.chunk_chars}")
    if options.overlap_chars < 0:
        raise InputError(f"chunk overlap must not be negative, got {options.overlap_chars}")


def require_paths(paths: Sequence[Path]) -> list[Path]:
    """The paths as ``Path`` objects; refuses an empty list and paths that do not exist."""
    if not paths:
        raise InputError("no input path given")
    out = [Path(p) for p in paths]
    for p in out:
        if not p.exists():
            raise InputError(f"no such file or directory: {p}")
    return out


def source_name(paths: Sequence[Path]) -> str:
    """One path: its resolved absolute path; several: the sorted resolved paths joined by '|'."""
    resolved = sorted({str(Path(p).resolve()) for p in paths})
    return "|".join(resolved)


def labels(*groups: Iterable[str]) -> tuple[str, ...]:
    """Merged security labels: deduplicated, sorted, empty strings dropped."""
    return tuple(sorted({label for group in groups for label in group if label}))


def is_hidden(name: str) -> bool:
    return name.startswith(".")


def walk_files(root: Path) -> list[Path]:
    """Every non-hidden file under ``root``, sorted by relative path (components compared in
    turn, so the order is the same on every platform and file system).

    Hidden files and folders (a leading dot) are skipped; symbolic links to folders are not
    followed (no cycles), links to files are read.
    """
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not is_hidden(d)]
        found.extend(Path(dirpath) / name for name in filenames if not is_hidden(name))
    return sorted(found, key=lambda p: p.relative_to(root).parts)


def relative_id(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX style (the document id of a file in a folder)."""
    return path.relative_to(root).as_posix()


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data
