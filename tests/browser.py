"""Helpers the browser tests share (fixtures are in conftest.py)."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path
from typing import Any


def console_errors(page: Any) -> list[str]:
    """The console errors ``page`` logs from now on (failed loads included)."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    return seen


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header (and proof that it is one)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


SHOTS = "EXCERPT_UI_SCREENSHOTS"


def keep(shot: Path) -> None:
    """Copies a screenshot into $EXCERPT_UI_SCREENSHOTS when that is set (test artefacts)."""
    folder = os.environ.get(SHOTS)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(folder) / shot.name)
