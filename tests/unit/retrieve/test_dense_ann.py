"""Dense search through a segment's IVF index (store/ann.py): the same nodes as the exact
scan, never a node the caller may not see, an exact scan when little is visible, and a note
whenever the ranking used the index. Real engine, real store, the real MiniLM query embedder;
the stored vectors are clustered points written with the production segment writer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from excerpt.engine import Engine
from excerpt.errors import NotFoundError
from excerpt.store.ann import INDEX_FILE, AnnConfig
from excerpt.store.base import SnapshotPayload
from excerpt.store.segment import write_segment
from excerpt.store.sqlite import SQLiteStore
from excerpt.types import Document, Filters, Node, Principal

N = 3000
QUERIES = ("tidal energy storage", "proteins folding in cells", "rainfall over mountains",
           "market prices of grain", "children learning to read")


def _publish(home: Path, collection: str, hidden_every: int, config: AnnConfig | None,
             rest: tuple[str, ...] = (), seed: int = 7, source: str = "synthetic") -> None:
    """The vectors in ``collection``: every ``hidden_every``-th node tagged board, the others
    tagged ``rest``."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, 384)).astype(np.float32)
    vectors = centres[rng.integers(0, 60, N)] + 0.35 * rng.standard_normal((N, 384),
                                                                          dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"n{i:05d}" if seed == 7 else f"n{i:05d}s{seed}" for i in range(N)]
    tokens = [[f"w{i % 97}", f"w{i % 89}"] for i in range(N)]
    acl = [("board",) if i % hidden_every == 0 else rest for i in range(N)]
    store = SQLiteStore(home)
    run = store.begin_run(collection, source, "synthetic")
    write_segment(store.staging_dir(run), ids, tokens, acl, [() for _ in ids], vectors,
                  {"analyzer": "synthetic", "embed_model": "minilm"}, ann=config)
    nodes = [Node(ids[i], "doc", " ".join(tokens[i]), acl_tags=acl[i]) for i in range(N)]
    store.publish(run, SnapshotPayload(collection, source, [Document("doc", "d", "")],
                                       nodes, [], [], store.staging_dir(run),
                                       embed_model="minilm"), 0.0)
    store.close()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same vectors three times: indexed with one node in seven the board's, not indexed,
    and indexed with one node in a hundred the board's and all others the team's."""
    root = tmp_path_factory.mktemp("ann") / "home"
    _publish(root, "walked", 7, AnnConfig(min_nodes=1000))
    _publish(root, "scanned", 7, None)
    _publish(root, "narrow", 100, AnnConfig(min_nodes=1000), rest=("team",))
    for seed in (8, 9):  # two indexed segments in one view
        _publish(root, "pair", 7, AnnConfig(min_nodes=1000), seed=seed, source=f"s{seed}")
    return root


def test_a_large_segment_gets_an_index_and_a_small_one_none(home: Path) -> None:
    indexed = list(home.rglob(INDEX_FILE))
    assert len(indexed) == 4
    config = AnnConfig(min_nodes=N + 1)
    folder = home.parent / "small"
    write_segment(folder, ["a"], [["w"]], [()], [()], np.ones((1, 384), np.float32),
                  {"analyzer": "x"}, ann=config)
    assert not (folder / INDEX_FILE).exists()


def test_the_walk_finds_the_exact_top_ten_and_says_it_is_approximate(home: Path) -> None:
    engine = Engine(home)
    found = 0
    for query in QUERIES:
        walked = engine.search(query, Filters("walked"), None, "semantic", 10)
        exact = engine.search(query, Filters("scanned"), None, "semantic", 10)
        found += len({h.node.id for h in walked.hits} & {h.node.id for h in exact.hits})
        assert any("approximate" in note for note in walked.to_json()["analysis"]["notes"])
        assert not any("approximate" in note for note in exact.to_json()["analysis"]["notes"])
        assert all(int(h.node.id[1:]) % 7 for h in walked.hits)  # none hidden
        assert [h.score for h in walked.hits] == sorted((h.score for h in walked.hits),
                                                        reverse=True)
    assert found / (10 * len(QUERIES)) >= 0.95
    engine.close()


def test_the_caller_sees_only_its_nodes_and_a_narrow_view_is_scanned_exactly(
        home: Path) -> None:
    engine = Engine(home)
    board = Principal(frozenset({"board"}))
    with pytest.raises(NotFoundError):  # every node is the board's or the team's: to the
        engine.search(QUERIES[0], Filters("narrow"), None, "semantic", 10)  # anonymous, no
        # such collection (an empty answer would say the name exists)
    few = engine.search(QUERIES[0], Filters("narrow"), board, "semantic", 10)  # 1 % visible
    assert len(few.hits) == 10 and all(int(h.node.id[1:]) % 100 == 0 for h in few.hits)
    assert not any("approximate" in n for n in few.to_json()["analysis"]["notes"])
    team = Principal(frozenset({"team"}))  # 99 % visible: the walk, through the team's only
    many = engine.search(QUERIES[0], Filters("narrow"), team, "semantic", 10)
    assert len(many.hits) == 10 and all(int(h.node.id[1:]) % 100 for h in many.hits)
    assert any("approximate" in n for n in many.to_json()["analysis"]["notes"])
    walked = engine.search(QUERIES[1], Filters("walked"), board, "hybrid", 10)
    assert walked.hits and any("approximate" in n for n in walked.to_json()["analysis"]["notes"])
    engine.close()


def test_ingest_indexes_a_snapshot_of_at_least_dense_index_min_nodes(tmp_path: Path) -> None:
    from excerpt.settings import Settings

    handbook = Path(__file__).resolve().parents[3] / "examples" / "handbook"
    stages: list[str] = []
    engine = Engine(tmp_path / "home", Settings(dense_index_min_nodes=5))
    engine.ingest(handbook, collection="big", embedder="minilm",
                  progress=lambda stage, done, total: stages.append(stage))
    assert "index" in stages
    found = engine.search("snapshot published atomically", Filters("big"), None, "semantic", 3)
    assert any("approximate" in n for n in found.to_json()["analysis"]["notes"])
    engine.close()
    plain = Engine(tmp_path / "home")  # the default: 200,000 nodes; the handbook has 8
    plain.ingest(handbook, collection="small", embedder="minilm")
    found = plain.search("snapshot published atomically", Filters("small"), None, "semantic", 3)
    assert found.hits and not any("approximate" in n
                                  for n in found.to_json()["analysis"]["notes"])
    plain.close()


def test_the_index_threshold_is_declared_once_in_the_settings() -> None:
    from excerpt.settings import Settings

    assert AnnConfig().min_nodes == Settings().dense_index_min_nodes


def test_the_settings_choose_how_the_index_is_probed(home: Path) -> None:
    """``dense_index_nprobe`` and ``dense_index_candidates`` reach the walk: one cell probed and
    ten candidates re-scored find less of the exact top 10 than the defaults."""
    from excerpt.settings import Settings

    def overlap(settings: Settings) -> int:
        engine, found = Engine(home, settings), 0
        for query in QUERIES:
            walked = engine.search(query, Filters("walked"), None, "semantic", 10)
            exact = engine.search(query, Filters("scanned"), None, "semantic", 10)
            found += len({h.node.id for h in walked.hits} & {h.node.id for h in exact.hits})
        engine.close()
        return found

    narrow = overlap(Settings(dense_index_nprobe=1, dense_index_candidates=10))
    assert narrow < overlap(Settings()) and narrow < 0.9 * 10 * len(QUERIES)


def test_the_rows_read_for_re_scoring_are_the_stored_vectors(home: Path) -> None:
    store = SQLiteStore(home)
    segment = store.segment(store.snapshots("walked")[0].snapshot_id)
    assert segment.vectors is not None
    ordinals = np.array([0, 1, 7, N // 2, N - 1], dtype=np.int64)
    assert np.array_equal(segment.vector_rows(ordinals), segment.vectors[ordinals])
    assert segment.vector_rows(np.array([], dtype=np.int64)).shape == (0, 384)
    store.close()


def test_a_threshold_of_zero_builds_no_index(tmp_path: Path) -> None:
    """``dense_index_min_nodes`` 0 means never (its help says so), for every writer of a
    segment, not only for the import pipeline that checks it first."""
    from excerpt.store.ann import build

    vectors = np.eye(4, 8, dtype=np.float32)
    assert not build(tmp_path, vectors, AnnConfig(min_nodes=0))
    assert not (tmp_path / INDEX_FILE).exists()


def test_hybrid_over_an_indexed_segment_runs_its_legs_at_once_and_ranks_the_same(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """faiss walks without the GIL, so over a segment with an index the BM25 leg runs while
    the dense leg walks (the dense leg in a thread of its own); the answer is the one the two
    legs give one after another, for every caller."""
    import threading

    from excerpt.retrieve.access import SegmentAccess
    from excerpt.retrieve.dense import search_dense

    engine = Engine(home)
    walked = engine.access.view(engine.store.latest_snapshots("walked"), Principal.admin(), {})
    scanned = engine.access.view(engine.store.latest_snapshots("scanned"), Principal.admin(),
                                 {})
    assert engine.access.concurrent_legs(walked) and not engine.access.concurrent_legs(scanned)
    threads: list[str] = []

    def dense(self: SegmentAccess, *args: object) -> object:
        threads.append(threading.current_thread().name)
        return search_dense(*args, self.ann)  # type: ignore[arg-type]

    monkeypatch.setattr(SegmentAccess, "dense", dense)
    callers = (None, Principal(frozenset({"board"})), Principal.admin())
    together = [engine.search(q, Filters("walked"), who, "hybrid", 10).ranking
                for q in QUERIES for who in callers]
    assert threads and all(name.startswith("excerpt-leg") for name in threads)
    monkeypatch.setattr(SegmentAccess, "concurrent_legs", lambda self, view: False)
    threads.clear()
    apart = [engine.search(q, Filters("walked"), who, "hybrid", 10).ranking
             for q in QUERIES for who in callers]
    assert threads == ["MainThread"] * len(apart)
    assert together == apart and all(together)
    engine.close()


def test_a_view_of_indexed_segments_re_scores_only_its_best_candidates(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each segment's walk returns its candidates with their 8-bit scores; only the best
    ``rescored(depth)`` of the whole view are read back in float and re-scored (at 10M nodes in
    ten segments, re-scoring every candidate read 4,000 rows a query from disk), and the top
    10 is still the exact one of both segments' vectors."""
    from excerpt.embed import get_embedder
    from excerpt.store.ann import rescored
    from excerpt.store.segment import Segment

    read: list[int] = []
    real = Segment.vector_rows
    monkeypatch.setattr(Segment, "vector_rows",
                        lambda self, ordinals: read.append(len(ordinals)) or real(self, ordinals))
    engine, store = Engine(home), SQLiteStore(home)
    segments = [store.segment(i.snapshot_id) for i in store.latest_snapshots("pair")]
    assert len(segments) == 2 and all(s.ann is not None for s in segments)
    embedder = get_embedder("minilm")
    found = 0
    for query in QUERIES:
        read.clear()
        walked = engine.search(query, Filters("pair"), None, "semantic", 10)
        assert any("approximate" in note for note in walked.to_json()["analysis"]["notes"])
        assert 0 < sum(read) <= rescored(10, AnnConfig()) + 2  # (+ ties at the cut)
        vector = embedder.embed_query(query)
        exact = sorted(((float(s.vectors[o] @ vector), s.ids[o]) for s in segments
                        for o in range(s.size) if o % 7), reverse=True)[:10]
        found += len({h.node.id for h in walked.hits} & {node_id for _, node_id in exact})
        assert all(int(h.node.id[1:6]) % 7 for h in walked.hits)  # none of the board's
    assert found / (10 * len(QUERIES)) >= 0.95
    engine.close()
    store.close()
