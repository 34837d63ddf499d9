"""A passage in its place (``Engine.passage``, ``GET /v1/passage``, the web UI's "in
context"): the node with its neighbours in reading order, never past its document and never a
node the caller may not see, on both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.errors import InputError, NotFoundError
from excerpt.types import Filters, Principal


def _paragraphs(name: str, count: int) -> str:
    return "\n\n".join(f"{name} paragraph {i}: " + " ".join(
        f"{name}word{i}x{j}" for j in range(45)) + "." for i in range(count))


def _engine_with_notes(engine: Engine, tmp_path: Path) -> None:
    notes, board = tmp_path / "notes", tmp_path / "board"
    notes.mkdir()
    board.mkdir()
    (notes / "alpha.txt").write_text(_paragraphs("alpha", 9), "utf-8")
    (notes / "beta.txt").write_text(_paragraphs("beta", 9), "utf-8")
    (board / "merger.txt").write_text(_paragraphs("merger", 6), "utf-8")
    engine.ingest(notes, collection="c", embedder="none", source="notes")
    engine.ingest(board, collection="c", embedder="none", source="board", acl_tags=["board"])


def test_a_passage_comes_with_its_neighbours_in_its_document_only(
        store_engine: Engine, tmp_path: Path) -> None:
    _engine_with_notes(store_engine, tmp_path)
    ids = sorted(h.node.id for h in store_engine.search(
        "alpha paragraph", Filters("c"), None, "bm25", 50).hits if h.node.id.startswith("alpha"))
    assert len(ids) >= 4, ids  # several chunks, so the middle ones have both neighbours
    middle = store_engine.passage(ids[1], Filters("c"), around=1)
    assert [n["id"] for n in middle["before"]] == [ids[0]]
    assert middle["passage"]["id"] == ids[1]
    assert [n["id"] for n in middle["after"]] == [ids[2]]
    assert middle["document_id"] == "alpha.txt"
    first = store_engine.passage(ids[0], Filters("c"), around=2)
    assert first["before"] == [] and [n["id"] for n in first["after"]] == ids[1:3]
    last = store_engine.passage(ids[-1], Filters("c"), around=3)
    assert last["after"] == []  # beta.txt's first node follows in the snapshot: not shown
    assert all(n["id"].startswith("alpha") for n in last["before"])
    alone = store_engine.passage(ids[1], Filters("c"), around=0)
    assert alone["before"] == alone["after"] == []


def test_a_passage_the_caller_may_not_see_is_not_found_as_an_unknown_id(
        store_engine: Engine, tmp_path: Path) -> None:
    _engine_with_notes(store_engine, tmp_path)
    with pytest.raises(NotFoundError) as hidden:
        store_engine.passage("merger.txt:0001", Filters("c"), around=1)
    with pytest.raises(NotFoundError) as unknown:
        store_engine.passage("nothing.txt:0001", Filters("c"), around=1)
    assert str(hidden.value).replace("merger", "nothing") == str(unknown.value)
    board = Principal(frozenset({"board"}))
    seen = store_engine.passage("merger.txt:0001", Filters("c"), board, around=1)
    assert [n["id"] for n in seen["before"]] == ["merger.txt:0000"]
    with pytest.raises(InputError):
        store_engine.passage("alpha.txt:0001", Filters("c"), around=11)
