"""Segments: what write_segment writes is what Segment reads; the visibility mask; id order."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from excerpt.analyze import analyze
from excerpt.engine import Engine
from excerpt.store.segment import Segment, write_segment
from excerpt.types import Principal


def test_round_trip_of_ids_postings_lengths_vectors_and_meta(tmp_path: Path) -> None:
    tokens = [["x", "y", "x"], ["y"], ["z", "x"]]
    vectors = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    write_segment(tmp_path / "s", ["a", "b", "c"], tokens, [()] * 3, [()] * 3, vectors,
                  {"embed_model": "m", "analyzer": "v1"})
    seg = Segment(tmp_path / "s", "snap")
    assert (seg.ids, seg.ordinal_of, seg.size) == (["a", "b", "c"], {"a": 0, "b": 1, "c": 2}, 3)
    assert seg.term_ids == {"x": 0, "y": 1, "z": 2}  # sorted vocabulary
    expected = {"x": ([0, 2], [2.0, 1.0]), "y": ([0, 1], [1.0, 1.0]), "z": ([2], [1.0])}
    for term, (docs, tf) in expected.items():
        post = seg.postings(term)
        assert post is not None
        assert (post.docs.tolist(), post.tf.tolist()) == (docs, tf), term
        assert seg.doc_freq(term) == len(docs)
    assert seg.postings("w") is None and seg.doc_freq("w") == 0
    assert seg.doc_len.tolist() == [3.0, 1.0, 2.0] and seg.total_length == 6.0
    assert seg.vectors is not None and seg.vectors.dtype == np.float32
    np.testing.assert_array_equal(seg.vectors, vectors)
    assert seg.embed_model == "m"
    assert seg.meta["analyzer"] == "v1"
    assert {k: seg.meta[k] for k in ("nodes", "terms", "postings", "dim")} == {
        "nodes": 3, "terms": 3, "postings": 5, "dim": 2}
    assert seg.meta == json.loads((tmp_path / "s" / "meta.json").read_text("utf-8"))


def test_without_vectors_there_is_no_model(tmp_path: Path) -> None:
    write_segment(tmp_path / "s", ["a"], [["x"]], [()], [()], None, {"embed_model": "m"})
    seg = Segment(tmp_path / "s", "snap")
    assert seg.vectors is None and seg.embed_model is None
    assert seg.meta["dim"] == 0 and not (tmp_path / "s" / "vectors.npy").exists()


def test_the_folder_must_not_exist(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    with pytest.raises(FileExistsError):
        write_segment(tmp_path / "s", ["a"], [["x"]], [()], [()], None, {})


# node id -> (ACL tags, classification labels)
NODES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "n0": ((), ()),                       # public
    "n1": (("hr",), ()),                  # one tag
    "n2": (("eng", "hr"), ()),            # two tags: either one is enough
    "n3": ((), ("secret",)),              # one label
    "n4": ((), ("pii", "secret")),        # two labels: both are needed
    "n5": (("eng",), ("secret",)),        # a tag and a label: both rules apply
    "n6": (("fin",), ("pii",)),
}
# principal -> the nodes it sees
TABLE: list[tuple[Principal, set[str]]] = [
    (Principal.anonymous(), {"n0"}),
    (Principal.admin(), set(NODES)),
    (Principal(frozenset({"hr"})), {"n0", "n1", "n2"}),
    (Principal(frozenset({"eng"})), {"n0", "n2"}),
    (Principal(frozenset({"eng"}), frozenset({"secret"})), {"n0", "n2", "n3", "n5"}),
    (Principal(clearances=frozenset({"secret"})), {"n0", "n3"}),
    (Principal(clearances=frozenset({"pii"})), {"n0"}),
    (Principal(clearances=frozenset({"pii", "secret"})), {"n0", "n3", "n4"}),
    (Principal(frozenset({"fin", "hr"}), frozenset({"pii"})), {"n0", "n1", "n2", "n6"}),
    (Principal(frozenset({"eng", "fin", "hr"}), frozenset({"pii", "secret"})), set(NODES)),
    (Principal(frozenset({"ops"}), frozenset({"top"})), {"n0"}),  # unknown to the segment
]


@pytest.fixture()
def secured(tmp_path: Path) -> Segment:
    ids = sorted(NODES)
    write_segment(tmp_path / "s", ids, [["x"]] * len(ids), [NODES[i][0] for i in ids],
                  [NODES[i][1] for i in ids], None, {})
    return Segment(tmp_path / "s", "snap")


@pytest.mark.parametrize("principal, sees", TABLE)
def test_visible_mask(secured: Segment, principal: Principal, sees: set[str]) -> None:
    mask = secured.visible(principal)
    assert mask.dtype == np.bool_
    assert {i for i, ok in zip(secured.ids, mask.tolist(), strict=True) if ok} == sees
    # the same rule as Principal.can_see, node by node
    assert sees == {i for i, (tags, labels) in NODES.items() if principal.can_see(tags, labels)}
    assert secured.visible(principal) is mask  # computed once per principal


def test_untagged_segment_is_public(tmp_path: Path) -> None:
    write_segment(tmp_path / "s", ["a", "b"], [["x"], ["y"]], [()] * 2, [()] * 2, None, {})
    seg = Segment(tmp_path / "s", "snap")
    assert seg.visible(Principal.anonymous()).tolist() == [True, True]


def test_write_segment_keeps_the_order_it_is_given(tmp_path: Path) -> None:
    # the contract: nodes arrive in ordinal order; sorting them by id is the caller's job
    write_segment(tmp_path / "s", ["b", "a"], [["x"], ["y"]], [()] * 2, [()] * 2, None, {})
    seg = Segment(tmp_path / "s", "snap")
    assert seg.ids == ["b", "a"]
    post = seg.postings("y")
    assert post is not None and post.docs.tolist() == [1]


def test_ingested_segments_are_in_id_order(tmp_path: Path) -> None:
    records = [("m2", "mango"), ("a10", "apple"), ("z", "zucchini"), ("a9", "avocado")]
    corpus = tmp_path / "beir" / "corpus.jsonl"
    corpus.parent.mkdir()
    corpus.write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in records),
                      "utf-8")
    engine = Engine(tmp_path / "home")
    try:
        result = engine.ingest([corpus], fmt="beir", embedder="none")
        assert result.snapshot_id is not None
        seg = engine.store.segment(result.snapshot_id)
        assert seg.ids == ["a10", "a9", "m2", "z"]
        for node_id, text in records:  # each node's postings moved with it
            post = seg.postings(analyze(text)[0])
            assert post is not None and post.docs.tolist() == [seg.ordinal_of[node_id]]
    finally:
        engine.close()


def test_derived_arrays_are_kept_per_view_statistics_and_bounded(tmp_path: Path) -> None:
    """length_norm, term_weights and metadata_mask are computed once per key, their bits those
    of retrieve/lexical.py's term_weight, and each cache keeps at most its limit, oldest out."""
    from excerpt.retrieve.lexical import term_weight
    from excerpt.store import segment as module

    tokens = [["x", "y", "x"], ["y"], ["z", "x"]]
    write_segment(tmp_path / "s", ["a", "b", "c"], tokens, [()] * 3, [()] * 3, None, {})
    seg = Segment(tmp_path / "s", "snap")
    norm = seg.length_norm(2.0, 1.2, 0.75)
    assert seg.length_norm(2.0, 1.2, 0.75) is norm
    weights = seg.term_weights(2.0, 1.2, 0.75)
    assert weights is not None and seg.term_weights(2.0, 1.2, 0.75) is weights
    np.testing.assert_array_equal(
        weights, term_weight(seg.post_tf, seg.doc_len[seg.post_docs], 2.0, 1.2, 0.75))
    asked: list[str] = []

    def answer(name: str, ordinals: list[int]) -> Callable[[], list[int]]:
        def ordinals_of() -> list[int]:
            asked.append(name)
            return ordinals
        return ordinals_of

    mask = seg.metadata_mask("page", 12, answer("12", [1]))
    assert mask.tolist() == [False, True, False]
    assert seg.metadata_mask("page", 12, answer("again", [0])) is mask
    assert seg.metadata_mask("page", "12", answer("'12'", [2])) is not mask
    assert asked == ["12", "'12'"]
    for avgdl in range(1, 2 * module.NORMS_KEPT):
        seg.length_norm(float(avgdl), 1.2, 0.75)
        seg.term_weights(float(avgdl), 1.2, 0.75)
    assert len(seg._norms) == module.NORMS_KEPT and (2.0, 1.2, 0.75) not in seg._norms
    assert len(seg._weights) == module.WEIGHTS_KEPT
    assert (float(2 * module.NORMS_KEPT - 1), 1.2, 0.75) in seg._weights


def test_threads_asking_for_new_term_weights_at_once_compute_them_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit changes the view's statistics for every thread of a server at once: one
    computes the segment's term weights under them, the others wait and take the same array."""
    import threading

    tokens = [[f"w{i % 7}", f"w{i % 5}"] for i in range(5000)]
    write_segment(tmp_path / "s", [f"n{i:05d}" for i in range(5000)], tokens, [()] * 5000,
                  [()] * 5000, None, {})
    seg = Segment(tmp_path / "s", "snap")
    computed: list[str] = []
    real = Segment.length_norm

    def counted(self: Segment, avgdl: float, k1: float, b: float) -> object:
        computed.append(threading.current_thread().name)
        return real(self, avgdl, k1, b)

    monkeypatch.setattr(Segment, "length_norm", counted)
    start, got = threading.Barrier(6), []

    def ask() -> None:
        start.wait()
        got.append(seg.term_weights(2.0, 1.2, 0.75))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(computed) == 1 and len(got) == 6 and all(w is got[0] for w in got)
