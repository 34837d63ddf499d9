"""A search skips reading the query for code names when its view holds no code node
(``Searcher.named``, ``identifiers.view_has_code``): the results must be those of the full
lookup, on the real regulations (article citations are still pinned) and on code (where the
lookup runs). "Without the skip" is the same engine with ``view_has_code`` answering yes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.code_sources import write_sources

import excerpt.retrieve.searcher
from excerpt.engine import Engine
from excerpt.retrieve.identifiers import view_has_code
from excerpt.types import Filters, Principal

ANON = Principal.anonymous()
REGULATIONS = ("regulations", "dongeui_regulations_9-340_20250702.txt")
CODE_QUERIES = ["OrderRepository", "GetOrder", "dbo.Tenants", "[dbo].[Tenants]",
                "which procedure writes the Tenants table", "what calls GetOrder",
                "Order table", "orders repository", "tenants"]


@pytest.fixture(scope="module")
def regulations(shared_data: Any, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[Engine]:
    """The first 60,000 characters of the real regulations (collection ``r``), BM25 only."""
    root = tmp_path_factory.mktemp("named-skip-r")
    text = shared_data(*REGULATIONS).read_text("utf-8")[:60_000]
    (root / "regs").mkdir()
    (root / "regs" / REGULATIONS[1]).write_text(text, "utf-8")
    engine = Engine(root / "home")
    engine.ingest(root / "regs" / REGULATIONS[1], collection="r", embedder="none")
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def code(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The small code sources (collection ``c``) and a plain text (``t``), BM25 only."""
    root = tmp_path_factory.mktemp("named-skip-c")
    engine = Engine(root / "home")
    engine.ingest(write_sources(root / "src"), collection="c", fmt="code", embedder="none")
    (root / "notes").mkdir()
    (root / "notes" / "orders.txt").write_text(
        "The order repository keeps every order.\n\nTenants write to the tenants table.",
        "utf-8")
    engine.ingest(root / "notes", collection="t", embedder="none")
    yield engine
    engine.close()


def outcome(engine: Engine, query: str, collection: str) -> tuple[Any, ...]:
    result = engine.search(query, Filters(collection), ANON, "bm25", 10)
    return ([(h.node.id, h.score) for h in result.hits],
            result.analysis.get("named_nodes", []))


def both_ways(engine: Engine, monkeypatch: pytest.MonkeyPatch, queries: list[str],
              collection: str) -> list[tuple[Any, ...]]:
    skipped = [outcome(engine, q, collection) for q in queries]
    with monkeypatch.context() as patched:
        patched.setattr(excerpt.retrieve.searcher, "view_has_code", lambda view: True)
        full = [outcome(engine, q, collection) for q in queries]
    assert skipped == full
    return skipped


def regulation_queries(engine: Engine) -> list[str]:
    ids = engine.store.segment(engine.resolve(Filters("r"))[0].snapshot_id).ids
    articles = [i for i in ids if " 제" in i][:6]
    cut = [f"「{a.split()[0]}」 {a.split()[1]}제2항" for a in articles[:3]]
    return [*articles, *cut, "이사회 소집 절차", "임원의 임기", *CODE_QUERIES]


@pytest.mark.slow  # ~10 s: the regulation loader and Kiwi
def test_regulations_skip_and_still_pin_articles(regulations: Engine,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, view = regulations._open_view(Filters("r"), ANON)
    assert not view_has_code(view)  # the skip is taken here
    queries = regulation_queries(regulations)
    results = both_ways(regulations, monkeypatch, queries, "r")
    pinned = [named for _, named in results if named]
    assert len(pinned) >= 9  # the articles named, whole and cut to the article
    for query, (hits, named) in zip(queries, results, strict=True):
        if named:
            assert hits[0][0] == named[0], query


def test_code_runs_the_full_lookup(code: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, view = code._open_view(Filters("c"), ANON)
    assert view_has_code(view)
    results = both_ways(code, monkeypatch, CODE_QUERIES, "c")
    assert sum(bool(named) for _, named in results) >= 6


def test_text_skips_with_the_same_results(code: Engine,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, view = code._open_view(Filters("t"), ANON)
    assert not view_has_code(view)
    node_id = view.parts[0].segment.ids[0]
    results = both_ways(code, monkeypatch, [node_id, f"see {node_id} please", *CODE_QUERIES],
                        "t")
    assert all(hits for hits, _ in results[2:])
