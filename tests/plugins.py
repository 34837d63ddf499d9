"""A module written for one test, importable under a package of its own: how the extension
tests add a document reader or an embedder as a user would (a file of theirs), and forget it
after."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def plugin_module(root: Path, monkeypatch: pytest.MonkeyPatch, dotted: str,
                  source: str) -> Iterator[str]:
    """``source`` as module ``dotted`` (``package.module``) under ``root``, on the path while
    the block runs, and forgotten (unimported) after it."""
    package, _, module = dotted.partition(".")
    folder = root / package
    folder.mkdir()
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    try:
        yield dotted
    finally:
        for name in (dotted, package):
            sys.modules.pop(name, None)
