"""Access congruence (as qdrant-client's congruence tests hold its local mode to its server):
the same real corpus, paragraphs of The Picture of Dorian Gray with rights and metadata of
their own, is published into the embedded store and into PostgreSQL, and the ``Access`` each
store hands out (``access_for``: segments, SQL) must answer alike for every principal and
metadata filter: the same snapshots seen and counted, the same BM25 and semantic candidates
(id, snapshot, ordinal) in the same order with scores within float32 rounding, the same
hybrid rankings through the engine, and the same refusals of hidden nodes.

Where the two may legitimately differ they are not compared here: PostgreSQL's HNSW walk is
approximate (off by default; test_pg_hnsw.py measures its recall), and so is a segment's IVF
index, which only segments of ``dense_index_min_nodes`` or more get (far above this corpus):
both rank exactly here. Part indexes are each access's own (a merged segment is one part of
many snapshots), so candidates are compared by the snapshot and ordinal they name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from excerpt.analyze import analyze
from excerpt.embed import get_embedder
from excerpt.engine import Engine
from excerpt.retrieve.access import Access, SegmentAccess
from excerpt.retrieve.backends import access_for
from excerpt.retrieve.dense import QueryEmbedder
from excerpt.retrieve.sql_access import SqlAccess
from excerpt.retrieve.view import Candidate
from excerpt.settings import Settings
from excerpt.store.base import SnapshotInfo
from excerpt.store.postgres import PostgresStore
from excerpt.types import Filters, Principal

from .view_helpers import corpus

SETTINGS = Settings()
HR = Principal(frozenset({"hr"}))
PRINCIPALS = {"admin": Principal.admin(), "anonymous": Principal(), "hr": HR,
              "hr-secret": Principal(frozenset({"hr"}), frozenset({"secret"}))}
FILTERS: dict[str, dict[str, Any]] = {"none": {}, "speech": {"speech": True},
                                      "third": {"third": 1}}
QUERIES = ["Basil Hallward painted the portrait", "Lord Henry spoke of youth and beauty",
           "roses and lilac in the garden", "the picture of Dorian Gray"]
DEPTH = 12


def paragraphs(book: Path, count: int) -> list[tuple[int, str]]:
    """(chapter, text) of the first ``count`` paragraphs of 150-900 characters."""
    text = book.read_text("utf-8").replace("\r\n", "\n")
    chapter, found = 0, []
    for block in text[text.index("CHAPTER I.\n"):].split("\n\n"):
        para = " ".join(block.split())
        if re.fullmatch(r"CHAPTER [IVXL]+\.", para):
            chapter += 1
        elif 150 <= len(para) <= 900 and not para.startswith("CHAPTER"):
            found.append((chapter, para))
    return found[:count]


def records(book: Path) -> dict[str, dict[str, Any]]:
    """48 records: every fifth tagged hr, every seventh labelled secret, with metadata."""
    out: dict[str, dict[str, Any]] = {}
    for i, (chapter, text) in enumerate(paragraphs(book, 48)):
        record: dict[str, Any] = {"text": text, "metadata": {
            "chapter": chapter, "speech": "\u201c" in text, "third": i % 3}}
        if i % 5 == 1:
            record["acl_tags"] = ["hr"]
        if i % 7 == 3:
            record["classification_labels"] = ["secret"]
        out[f"p{i:02d}"] = record
    return out


def allowed(recs: Mapping[str, Mapping[str, Any]], principal: Principal) -> set[str]:
    return {i for i, r in recs.items() if principal.can_see(
        tuple(r.get("acl_tags", ())), tuple(r.get("classification_labels", ())))}


class Published:
    """The corpus in both stores: two sources whose six shared ids the later one shadows."""

    def __init__(self, book: Path, root: Path, pg_url: str) -> None:
        self.records = records(book)
        ids = sorted(self.records)
        self.parts = {"first": ids[:30], "second": ids[24:]}
        self.engines = {"sqlite": Engine(root / "sqlite"),
                        "postgres": Engine(root / "pg", store=PostgresStore(pg_url, root / "pg"))}
        for source, members in self.parts.items():
            path = corpus(root / source / "corpus.jsonl", {i: self.records[i] for i in members})
            for engine in self.engines.values():
                engine.ingest(path, "book", "beir", embedder="minilm", source=source)
        self.access: dict[str, Access] = {
            kind: access_for(engine.store, SETTINGS) for kind, engine in self.engines.items()}

    def snapshots(self, kind: str) -> list[SnapshotInfo]:
        return self.engines[kind].store.latest_snapshots("book")

    def views(self, principal: Principal, metadata: Mapping[str, Any]) -> tuple[Any, Any]:
        return (self.access["sqlite"].view(self.snapshots("sqlite"), principal, metadata),
                self.access["postgres"].view(self.snapshots("postgres"), principal, metadata))

    def close(self) -> None:
        for engine in self.engines.values():
            engine.close()


@pytest.fixture(scope="module")
def published(shared_data: Callable[..., Path], pg_database: Callable[[], str],
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Published]:
    book = shared_data("books", "pg174_dorian_gray.txt")
    built = Published(book, tmp_path_factory.mktemp("access-congruence"), pg_database())
    assert isinstance(built.access["sqlite"], SegmentAccess)
    assert isinstance(built.access["postgres"], SqlAccess)
    yield built
    built.close()


def embed(model: str) -> QueryEmbedder | None:
    """One query embedder for both accesses: the same query vector meets the same stored
    float32 vectors, so only the arithmetic's order can differ."""
    found: QueryEmbedder = get_embedder(model).embed_query
    return found


def placed(view: Any, found: Sequence[Candidate]) -> list[tuple[str, str, int]]:
    """(id, snapshot, ordinal in it) of each candidate: what it names, whatever the part."""
    return [(c.id, *view.parts[c.part].local(c.ordinal)) for c in found]


def assert_same(views: tuple[Any, Any],
                found: tuple[Sequence[Candidate], Sequence[Candidate]], what: str) -> None:
    a, b = (placed(v, f) for v, f in zip(views, found, strict=True))
    assert a == b, what
    for x, y in zip(*found, strict=True):
        assert x.score == pytest.approx(y.score, rel=1e-5, abs=1e-6), (what, x.id)


CASES = [(p, f) for p in sorted(PRINCIPALS) for f in sorted(FILTERS)]


@pytest.mark.parametrize(("who", "where"), CASES)
def test_views_see_and_count_alike(published: Published, who: str, where: str) -> None:
    principal = PRINCIPALS[who]
    sqlite, pg = (published.access[k] for k in ("sqlite", "postgres"))
    views = published.views(principal, FILTERS[where])
    assert sqlite.seen_ids(views[0]) == pg.seen_ids(views[1]) != []
    assert sqlite.has_vectors(views[0]) and pg.has_vectors(views[1])
    snaps = published.snapshots("sqlite")
    assert sqlite.seen_snapshots(snaps, principal) == pg.seen_snapshots(snaps, principal)
    assert sqlite.snapshot_counts(snaps, principal) == pg.snapshot_counts(snaps, principal)


@pytest.mark.parametrize(("who", "where"), CASES)
def test_bm25_and_dense_candidates_agree(published: Published, who: str, where: str) -> None:
    principal, metadata = PRINCIPALS[who], FILTERS[where]
    sqlite, pg = (published.access[k] for k in ("sqlite", "postgres"))
    views = published.views(principal, metadata)
    visible = allowed(published.records, principal)
    ranked = 0
    for query in QUERIES:
        tokens = analyze(query, "en")
        weights = sqlite.idf_weights(views[0], tokens), pg.idf_weights(views[1], tokens)
        assert weights[0] == pytest.approx(weights[1], rel=1e-5) and (
            weights[0].absent == weights[1].absent), query
        lexical = tuple(access.bm25(view, weights[0], DEPTH, SETTINGS.bm25_k1, SETTINGS.bm25_b)
                        for access, view in ((sqlite, views[0]), (pg, views[1])))
        dense = tuple(access.dense(view, embed, query, DEPTH)
                      for access, view in ((sqlite, views[0]), (pg, views[1])))
        assert_same(views, lexical, f"bm25 {query!r}")
        assert_same(views, dense, f"dense {query!r}")
        assert dense[0] and {c.id for c in (*lexical[0], *dense[0])} <= visible
        ranked += len(lexical[0])
    assert ranked  # the queries' words are in what the caller sees


@pytest.mark.parametrize("mode", ["bm25", "semantic", "hybrid"])
@pytest.mark.parametrize(("who", "where"), CASES)
def test_searches_rank_alike(published: Published, who: str, where: str, mode: str) -> None:
    """Through the engine, hybrid's fusion over each access's two legs included."""
    principal, filters = PRINCIPALS[who], Filters("book", metadata=FILTERS[where])
    visible = allowed(published.records, principal)
    for query in QUERIES:
        a, b = (published.engines[k].search(query, filters, principal, mode, 10)
                for k in ("sqlite", "postgres"))
        assert [(h.node.id, h.snapshot_id) for h in a.hits] == [
            (h.node.id, h.snapshot_id) for h in b.hits], (mode, query)
        for x, y in zip(a.hits, b.hits, strict=True):
            assert x.score == pytest.approx(y.score, rel=1e-5, abs=1e-6), (mode, x.node.id)
        assert a.analysis["visible_nodes"] == b.analysis["visible_nodes"]
        assert {h.node.id for h in a.hits} <= visible


@pytest.mark.parametrize("who", sorted(PRINCIPALS))
def test_hidden_nodes_are_refused_alike(published: Published, who: str) -> None:
    """A hidden node is 'hidden' to the graph and nothing to every other read, as a node
    that does not exist is 'missing' and nothing; a shadowed copy is never named."""
    principal = PRINCIPALS[who]
    sqlite, pg = (published.access[k] for k in ("sqlite", "postgres"))
    views = published.views(principal, {})
    visible = allowed(published.records, principal)
    hidden = sorted(set(published.records) - visible)
    assert bool(hidden) == (who not in ("admin", "hr-secret"))  # they see every record
    asked = [*sorted(published.records), "p99"]
    named = sqlite.named(views[0], asked), pg.named(views[1], asked)
    assert_same(views, named, "named")
    holders = {node_id: sid for node_id, sid, _ in placed(views[0], named[0])}
    assert sorted(holders) == sorted(visible)
    assert {holders[i] for i in published.parts["second"] if i in holders} == {"book-r2"}
    texts = sqlite.visible_texts(views[0], asked), pg.visible_texts(views[1], asked)
    assert texts[0] == texts[1] and set(texts[0]) == visible
    graphs = sqlite.graph(views[0]), pg.graph(views[1])
    for node_id in asked:
        status = graphs[0].status(node_id)
        assert status == graphs[1].status(node_id) == (
            "visible" if node_id in visible else "hidden" if node_id in hidden else "missing")
    for node_id in asked:
        near = ([n.id for n in sqlite.around(views[0], node_id, 2)],
                [n.id for n in pg.around(views[1], node_id, 2)])
        assert near[0] == near[1] and (near[0] == [] if node_id not in visible else
                                       near[0] == [node_id])  # one record, one document
    seeds = [*hidden[:3], "p99", *sorted(visible)[:2]]
    a, b = (published.engines[k].context(seeds, [], Filters("book"), principal, 10_000)
            for k in ("sqlite", "postgres"))
    assert a.to_json() == b.to_json()
    assert {n.id for n in a.node_texts} == set(sorted(visible)[:2])
