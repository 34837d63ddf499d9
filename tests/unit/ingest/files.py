"""Writing the small input files the ingest tests read."""

from __future__ import annotations

from pathlib import Path


def write_file(path: Path, content: str | bytes) -> Path:
    """``content`` at ``path`` (bytes as they are, text as UTF-8), its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path
