"""Semantic search through pgvector's HNSW index (setting ``pg_dense_index: hnsw``) on a real
PostgreSQL server, with real vectors: SciFact abstracts embedded by MiniLM (the cache
bench/dense_ann.py writes, else the first 600 abstracts embedded here).

What must hold: a caller never gets a node it may not see, however selective its filter and
however many rows it asks for (the view's predicate is in the index walk's query, and a walk
that ends short is redone exactly); the index finds the exact top 10 nearly always; the exact
scan stays the default and gives exactly numpy's ranking.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from excerpt.errors import InputError
from excerpt.retrieve.sql import SqlView, sql_dense, sql_view
from excerpt.settings import Settings
from excerpt.store.base import SnapshotPayload
from excerpt.store.pg_hnsw import HnswConfig, hnsw_config
from excerpt.store.postgres import PostgresStore
from excerpt.store.segment import write_segment
from excerpt.types import Document, Node, Principal

CACHE = Path("/tmp/excerpt-scifact-minilm.npz")  # bench/dense_ann.py --cache default
MODEL = "minilm"
Matrix = npt.NDArray[np.float32]

slow = pytest.mark.slow  # a server, 5,183 nodes published, an index built: ~30 s in all


def scifact_vectors(corpus: Path) -> tuple[Matrix, Matrix]:
    """Corpus and query vectors: the bench's cache when present, else embedded now."""
    if CACHE.is_file():
        saved = np.load(CACHE)
        return saved["corpus"], saved["queries"][:60]
    from excerpt.embed import get_embedder

    embedder = get_embedder(MODEL)
    lines = corpus.read_text("utf-8").splitlines()[:600]
    texts = [f"{r.get('title', '')} {r['text']}".strip() for r in map(json.loads, lines)]
    queries = [json.loads(line)["text"] for line in
               (corpus.parent / "queries.jsonl").read_text("utf-8").splitlines()[:40]]
    return (np.asarray(embedder.embed_documents(texts), np.float32),
            np.vstack([embedder.embed_query(q) for q in queries]).astype(np.float32))


def tags(i: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(acl tags, labels) of node ``i``: one in seven is ``secret``; all but one in a
    hundred are ``confidential``, so a caller without that clearance sees about 1%."""
    return (("secret",) if i % 7 == 0 else (),
            () if i % 100 == 3 else ("confidential",))


def publish(store: PostgresStore, vectors: Matrix, tmp: Path) -> None:
    """One snapshot of ``len(vectors)`` nodes through the store's own import path."""
    nodes = [Node(id=f"n{i:05d}", document_id=f"d{i:05d}", text=f"abstract {i}",
                  acl_tags=tags(i)[0], classification_labels=tags(i)[1],
                  metadata={"bucket": i % 100}) for i in range(len(vectors))]
    run = store.begin_run("sf", "scifact", "beir")
    staging = store.staging_dir(run)
    write_segment(staging, [n.id for n in nodes], [["abstract", str(i)] for i in
                                                   range(len(nodes))],
                  [n.acl_tags for n in nodes], [n.classification_labels for n in nodes],
                  vectors, {"analyzer": 1, "embed_model": MODEL})
    store.publish(run, SnapshotPayload(
        "sf", "scifact", [Document(n.document_id, n.text, "scifact") for n in nodes], nodes,
        [], [], staging, embed_model=MODEL), 0.0)


@pytest.fixture(scope="module")
def loaded(pg_database: Callable[[], str], tmp_path_factory: pytest.TempPathFactory,
           shared_data: Callable[..., Path]) -> Iterator[tuple[str, Matrix, Matrix, Path]]:
    corpus, queries = scifact_vectors(shared_data("scifact", "corpus.jsonl"))
    url, tmp = pg_database(), tmp_path_factory.mktemp("hnsw")
    store = PostgresStore(url, tmp)
    publish(store, corpus, tmp)
    store.close()
    yield url, corpus, queries, tmp


@pytest.fixture(scope="module")
def stores(loaded: tuple[str, Matrix, Matrix, Path]
           ) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """(exact, hnsw) stores on the same database; opening the second builds the index."""
    url, _, _, tmp = loaded
    exact = PostgresStore(url, tmp)
    hnsw = PostgresStore(url, tmp, dense_index=HnswConfig(ef_search=40, max_scan_tuples=2000))
    yield exact, hnsw
    exact.close()
    hnsw.close()


def view_of(store: PostgresStore, principal: Principal,
            metadata: dict[str, Any] | None = None) -> SqlView:
    return sql_view(store.query, store.snapshots("sf"), principal, metadata or {})


def ranked(store: PostgresStore, view: SqlView, query: Matrix, depth: int) -> list[str]:
    found = sql_dense(store.query, view, lambda model: lambda text: query, "q", depth,
                      store if store.dense_index is not None else None)
    return [c.id for c in found]


def exact_ids(corpus: Matrix, query: Matrix, visible: npt.NDArray[np.bool_],
              depth: int) -> list[str]:
    scores = (corpus @ query).astype(np.float32)
    order = sorted(np.flatnonzero(visible), key=lambda i: (-scores[i], i))
    return [f"n{i:05d}" for i in order[:depth]]


def may_see(principal: Principal, n: int, bucket: int | None = None
            ) -> npt.NDArray[np.bool_]:
    return np.array([principal.can_see(*tags(i)) and bucket in (None, i % 100)
                     for i in range(n)])


CLEARED = Principal(clearances=frozenset({"confidential"}))  # sees 6 nodes in 7
UNCLEARED = Principal()  # sees about 1 node in 117: the 1% without the label, minus secrets


@slow
@pytest.mark.parametrize(("principal", "metadata", "depth"), [
    (CLEARED, None, 10), (CLEARED, None, 100),
    (CLEARED, {"bucket": 5}, 10), (CLEARED, {"bucket": 5}, 100),
    (UNCLEARED, None, 10), (UNCLEARED, None, 100),
])
def test_hnsw_never_returns_a_hidden_node_and_fills_the_depth(
        stores: tuple[PostgresStore, PostgresStore],
        loaded: tuple[str, Matrix, Matrix, Path], principal: Principal,
        metadata: dict[str, Any] | None, depth: int) -> None:
    _, hnsw = stores
    _, corpus, queries, _ = loaded
    bucket = (metadata or {}).get("bucket")
    visible = may_see(principal, len(corpus), bucket)
    allowed = {f"n{i:05d}" for i in np.flatnonzero(visible)}
    walked = 0
    for query in queries[:20]:
        view = view_of(hnsw, principal, metadata)
        got = ranked(hnsw, view, query, depth)
        assert set(got) <= allowed  # nothing the caller may not see, ever
        assert len(got) == min(depth, len(allowed))  # a selective filter still gets its rows
        walked += bool(view.approximate)
        if not view.approximate:  # the walk ended short (max_scan_tuples): scanned exactly
            assert got == exact_ids(corpus, query, visible, depth)
    if principal is CLEARED and metadata is None:  # 6 in 7 visible: the walk fills the depth
        assert walked == 20


@slow
def test_hnsw_recall_of_the_exact_top_10(stores: tuple[PostgresStore, PostgresStore],
                                         loaded: tuple[str, Matrix, Matrix, Path]) -> None:
    _, hnsw = stores
    _, corpus, queries, _ = loaded
    visible = may_see(CLEARED, len(corpus))
    hits = sum(len(set(ranked(hnsw, view_of(hnsw, CLEARED), q, 10))
                   & set(exact_ids(corpus, q, visible, 10))) for q in queries)
    assert hits / (10 * len(queries)) >= 0.95


@slow
def test_exact_scan_stays_the_default_and_exact(stores: tuple[PostgresStore, PostgresStore],
                                                loaded: tuple[str, Matrix, Matrix, Path]
                                                ) -> None:
    exact, _ = stores  # the index exists in this database; the exact store ignores it
    _, corpus, queries, _ = loaded
    assert Settings().pg_dense_index == "exact"
    assert hnsw_config(Settings().pg_dense_index) is None
    assert exact.dense_index is None
    for principal in (CLEARED, UNCLEARED):
        visible = may_see(principal, len(corpus))
        for query in queries[:10]:
            view = view_of(exact, principal)
            assert ranked(exact, view, query, 20) == exact_ids(corpus, query, visible, 20)
            assert view.approximate == []


@slow
def test_the_index_is_built_once_per_dimension(stores: tuple[PostgresStore, PostgresStore]
                                               ) -> None:
    _, hnsw = stores
    dims = hnsw.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'node_vectors' "
                      "AND indexdef LIKE '%%hnsw%%'", ())
    assert len(dims) == 1 and "vector(384)" in dims[0][0]
    plan = "\n".join(r[0] for r in hnsw.query_with(
        HnswConfig().search_settings(10),
        "EXPLAIN SELECT 1 FROM node_vectors v WHERE vector_dims(v.embedding) = 384 "
        "ORDER BY v.embedding::vector(384) <#> %s::vector(384) LIMIT 10",
        ["[" + ",".join(["0.05"] * 384) + "]"]))
    assert "node_vectors_hnsw_384" in plan


class Recording:
    """The HNSW store, keeping the statements of the last walk (to EXPLAIN them)."""

    def __init__(self, store: PostgresStore) -> None:
        self.store, self.dense_index = store, store.dense_index
        self.last: tuple[list[str], str, list[Any]] = ([], "", [])

    def query_with(self, settings: Sequence[str], sql: str,
                   args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.last = (list(settings), sql, list(args))
        return self.store.query_with(settings, sql, args)


@slow
def test_a_filtered_caller_walks_the_index(stores: tuple[PostgresStore, PostgresStore],
                                           loaded: tuple[str, Matrix, Matrix, Path]) -> None:
    """The planner estimates the rights predicate at one row and, from about 5,000 nodes on,
    would rather join and sort every visible node (exact, seconds at 1M): the walk's settings
    make the index the plan (this fails without ``enable_sort = off``)."""
    _, hnsw = stores
    _, _, queries, _ = loaded
    recording = Recording(hnsw)
    sql_dense(hnsw.query, view_of(hnsw, UNCLEARED), lambda model: lambda text: queries[0], "q",
              10, hnsw=recording)
    settings, sql, args = recording.last
    plan = "\n".join(r[0] for r in hnsw.query_with(settings, "EXPLAIN " + sql, args))
    assert "Index Scan using node_vectors_hnsw_384" in plan


def hnsw_scans(store: PostgresStore) -> int:
    """Index scans of the HNSW index the server has counted (its statistics are flushed by
    each backend within about a second of going idle)."""
    store.query("SELECT pg_stat_clear_snapshot()", ())
    return int(store.query("SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes "
                           "WHERE indexrelname = 'node_vectors_hnsw_384'", ())[0][0])


@slow
def test_the_engine_walks_the_index_of_an_hnsw_store(
        stores: tuple[PostgresStore, PostgresStore],
        loaded: tuple[str, Matrix, Matrix, Path], tmp_path: Path) -> None:
    """Through Engine.search (access_for hands SqlAccess the store when its index is on): the
    HNSW store's searches walk the index, return only visible nodes and say they are
    approximate; the exact store's never walk it."""
    import time

    from excerpt.engine import Engine
    from excerpt.types import Filters

    exact, hnsw = stores
    _, corpus, _, _ = loaded
    allowed = {f"n{i:05d}" for i in np.flatnonzero(may_see(CLEARED, len(corpus)))}
    for store, walks in ((exact, False), (hnsw, True)):
        before = hnsw_scans(store)
        engine = Engine(tmp_path / "home", store=store)
        result = engine.search("vitamin D and bone density", Filters(collection="sf"), CLEARED,
                               "semantic", 10, fetch=False)
        assert len(result.ranking) == 10 and {i for i, _, _ in result.ranking} <= allowed
        assert any("approximate (HNSW index)" in n for n in result.analysis["notes"]) is walks
        deadline = time.monotonic() + 10
        while walks and hnsw_scans(store) == before and time.monotonic() < deadline:
            time.sleep(0.5)
        if not walks:
            time.sleep(2)
        assert (hnsw_scans(store) > before) is walks


def test_the_setting_names_the_index_and_its_walk() -> None:
    assert hnsw_config("exact") is None
    assert hnsw_config("hnsw", 64) == HnswConfig(ef_search=64)
    with pytest.raises(InputError, match="'exact' or 'hnsw'"):
        hnsw_config("ivf")
    with pytest.raises(InputError, match="1-1000"):
        HnswConfig(ef_search=0)
    with pytest.raises(InputError, match="strict_order"):
        HnswConfig(iterative_scan="off")
    walk = HnswConfig(ef_search=40).search_settings(100)  # ef at least the depth asked
    assert "SET LOCAL hnsw.ef_search = 100" in walk
    assert "SET LOCAL enable_sort = off" in walk
    assert "SET LOCAL hnsw.ef_search = 1000" in HnswConfig().search_settings(5000)


@slow
def test_the_setting_reaches_the_store_an_engine_opens(
        loaded: tuple[str, Matrix, Matrix, Path], tmp_path: Path) -> None:
    """``pg_dense_index`` in the settings is what a CLI or service engine's store uses."""
    from excerpt.store.open import open_store

    url = loaded[0]
    for kind, ef, expected in (("exact", 100, None), ("hnsw", 64, HnswConfig(ef_search=64))):
        store = open_store(tmp_path, url, Settings(pg_dense_index=kind, pg_hnsw_ef_search=ef))
        try:
            assert isinstance(store, PostgresStore) and store.dense_index == expected
        finally:
            store.close()
