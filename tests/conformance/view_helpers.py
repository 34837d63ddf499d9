"""Shared by the read-view suites: open either store, and write tiny BEIR corpora whose records
carry their own security fields and typed metadata."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from excerpt.store.base import Store

BACKENDS = ["sqlite", "postgres"]


def open_store(kind: str, where: str, scratch: Path) -> Store:
    if kind == "postgres":
        from excerpt.store.postgres import PostgresStore

        return PostgresStore(where, scratch)
    from excerpt.store.sqlite import SQLiteStore

    return SQLiteStore(Path(where))


def corpus(path: Path, records: Mapping[str, Mapping[str, Any]]) -> Path:
    """A ``corpus.jsonl`` at ``path``: ``{id: {"text": …, "acl_tags": […], …}}``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"_id": i, "title": "", **r}) + "\n"
                            for i, r in records.items()), "utf-8")
    return path
