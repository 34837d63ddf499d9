"""Ingest test helpers: where the real corpora live, and how to skip when they are absent."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

try:  # the package is normally installed (make install); fall back to the source tree
    import excerpt  # noqa: F401
except ImportError:  # pragma: no cover - depends on how the venv was set up
    sys.path.insert(0, str(REPO / "src"))


def data_dir() -> Path:
    """``$EXCERPT_DATA`` when set, else ``<repo>/../shared/data`` (it may not exist)."""
    env = os.environ.get("EXCERPT_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def require_data(*parts: str) -> Path:
    """The path of a shared data file, or skip the test saying where it was looked for."""
    base = data_dir()
    path = base.joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"shared data file {path} not found: set EXCERPT_DATA to the shared data folder "
            f"(looked in {base})"
        )
    return path


@pytest.fixture(scope="session")
def dorian_path() -> Path:
    return require_data("books", "pg174_dorian_gray.txt")


@pytest.fixture(scope="session")
def iliad_path() -> Path:
    return require_data("books", "pg6130_iliad_pope.txt")


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    return require_data("scifact")
