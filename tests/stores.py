"""Stores the security tests share: the public handbook beside one note only a tag may read."""

from __future__ import annotations

from pathlib import Path

from excerpt.engine import Engine

HANDBOOK = Path(__file__).resolve().parents[1] / "examples" / "handbook"


def handbook_and_secret(root: Path, tag: str, filename: str, text: str) -> Path:
    """A home under ``root`` whose collection ``demo`` holds the handbook (source ``handbook``,
    public) and ``text`` as ``filename`` (source ``tag``, readable by the tag ``tag`` only)."""
    (root / tag).mkdir()
    (root / tag / filename).write_text(text, "utf-8")
    engine = Engine(root / "home")
    engine.ingest(HANDBOOK, collection="demo", embedder="none", source="handbook")
    engine.ingest(root / tag, collection="demo", embedder="none", source=tag, acl_tags=[tag])
    engine.close()
    return root / "home"
