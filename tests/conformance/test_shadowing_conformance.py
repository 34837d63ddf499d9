"""Node ids are unique within a view (issue 15 item 11), on both stores: where two snapshots of
a view hold one id, the one imported last holds it, whoever reads; the older copy is gone from
rankings, BM25 statistics, graphs and contexts. A newer copy the caller may not see hides the
older one too (nothing is revealed or brought back), and the same holds in explicit sets."""

from __future__ import annotations

import shutil
from pathlib import Path

from excerpt.engine import Engine
from excerpt.types import Filters, Principal

from .view_helpers import corpus

ANONYMOUS, HR = Principal(), Principal(frozenset({"hr"}))
DOCS = {f"d{i}": {"text": text} for i, text in enumerate([
    "the cafeteria serves lunch at noon", "lunch tickets are sold at the front desk",
    "the library opens at nine", "parking is free after six", "lunch menus change weekly",
    "the gym is closed on sundays"])}


def ranking(engine: Engine, collection: str, principal: Principal = ANONYMOUS,
            filters: Filters | None = None, query: str = "lunch at noon"
            ) -> list[tuple[str, float]]:
    result = engine.search(query, filters or Filters(collection), principal, "bm25", 20)
    return [(h.node.id, round(h.score, 5)) for h in result.hits]


def test_a_corpus_ingested_from_two_paths_ranks_as_if_once(store_engine: Engine,
                                                           tmp_path: Path) -> None:
    engine = store_engine
    first = corpus(tmp_path / "a" / "corpus.jsonl", DOCS)
    copy = tmp_path / "b" / "corpus.jsonl"
    copy.parent.mkdir()
    shutil.copy(first, copy)
    engine.ingest(first, "once", "beir", embedder="none")
    engine.ingest(first, "twice", "beir", embedder="none")
    newer = engine.ingest(copy, "twice", "beir", embedder="none").snapshot_id
    once, twice = ranking(engine, "once"), ranking(engine, "twice")
    assert [i for i, _ in twice] == sorted({i for i, _ in twice}, key=[i for i, _ in twice].index)
    assert twice == once  # ids once each, and the same BM25 statistics
    assert {h.snapshot_id for h in engine.search("lunch", Filters("twice"), None, "bm25").hits
            } == {newer}
    assert engine.search("lunch", Filters("twice"), None, "bm25").analysis["visible_nodes"] == 6


def test_a_hidden_newer_copy_hides_the_older_one(store_engine: Engine, tmp_path: Path) -> None:
    engine = store_engine
    older = engine.ingest(corpus(tmp_path / "a" / "corpus.jsonl", DOCS), "c", "beir",
                          embedder="none").snapshot_id
    changed = {"d0": {"text": "the cafeteria lunch at noon is cancelled", "acl_tags": ["hr"]},
               "z9": {"text": "lunch vouchers for night shifts"}}
    newer = engine.ingest(corpus(tmp_path / "b" / "corpus.jsonl", changed), "c", "beir",
                          embedder="none").snapshot_id
    assert older and newer
    public = {k: v for k, v in DOCS.items() if k != "d0"} | {"z9": changed["z9"]}
    engine.ingest(corpus(tmp_path / "p" / "corpus.jsonl", public), "expected", "beir",
                  embedder="none")
    anonymous = ranking(engine, "c")
    assert "d0" not in [i for i, _ in anonymous]  # neither copy: the newer one is hidden
    assert anonymous == ranking(engine, "expected")  # statistics without any d0
    hr = engine.search("lunch at noon", Filters("c"), HR, "bm25", 20).hits
    assert [(h.node.id, h.snapshot_id) for h in hr if h.node.id == "d0"] == [("d0", newer)]
    assert "cancelled" in next(h.node.text for h in hr if h.node.id == "d0")
    hidden = engine.context(["d0"], filters=Filters("c")).to_json()
    assert hidden["node_texts"] == [] and hidden["skipped"][0]["id"] == "d0"
    shown = engine.context(["d0"], filters=Filters("c"), principal=HR).to_json()["node_texts"]
    assert [t["id"] for t in shown] == ["d0"] and "cancelled" in shown[0]["text"]
    assert engine.graph(["d0"], Filters("c")).to_json()["nodes"] == []  # hidden: unknown
    assert [n["id"] for n in engine.graph(["d0"], Filters("c"), HR).to_json()["nodes"]] == ["d0"]
    # An explicit set, members in any order: the later import holds d0 there too.
    engine.snapshot_set("both", [newer, older], "c")
    in_set = Filters("c", snapshot_set="both")
    assert ranking(engine, "c", filters=in_set) == anonymous
    assert ranking(engine, "c", HR, in_set) == ranking(engine, "c", HR)
