"""Dense retrieval over real segments with hand-made unit vectors; the query embedder is a seam."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from tests.views import view_of

from excerpt.retrieve.dense import QueryEmbedder, dense_matches, search_dense
from excerpt.retrieve.view import View, rank_matches
from excerpt.store.segment import Segment, write_segment
from excerpt.types import Principal

Vec = Sequence[float]


def make_segment(tmp: Path, name: str, ids: list[str], vectors: Sequence[Vec] | None,
                 model: str = "fake", acl: list[tuple[str, ...]] | None = None) -> Segment:
    arr = None if vectors is None else np.asarray(vectors, dtype=np.float32)
    acl = acl or [() for _ in ids]
    write_segment(tmp / name, ids, [["w"] for _ in ids], acl, [() for _ in ids], arr,
                  {"embed_model": model})
    return Segment(tmp / name, name)


def embedders(queries: dict[str, Vec], calls: list[str] | None = None,
              ) -> Callable[[str], QueryEmbedder | None]:
    """embed_query(model): a query embedder returning that model's fixed vector (None: unknown)."""

    def embed_query(model: str) -> QueryEmbedder | None:
        if model not in queries:
            return None

        def embed(text: str) -> npt.NDArray[np.float32]:
            if calls is not None:
                calls.append(model)
            return np.asarray(queries[model], dtype=np.float32)

        return embed

    return embed_query


def ranked(view: View, queries: dict[str, Vec], depth: int) -> list[tuple[str, float]]:
    return [(c.id, round(c.score, 6)) for c in search_dense(view, embedders(queries), "q", depth)]


def test_cosine_ranking_across_two_segments(tmp_path: Path) -> None:
    one = make_segment(tmp_path, "one", ["a", "b"], [[1, 0], [0, 1]])
    two = make_segment(tmp_path, "two", ["c", "d"], [[0.6, 0.8], [0.8, 0.6]])
    # query (1, 0): a 1.0, d 0.8, c 0.6, b 0.0
    view = view_of([one, two])
    assert ranked(view, {"fake": [1, 0]}, 3) == [("a", 1.0), ("d", 0.8), ("c", 0.6)]
    matches = dense_matches(view, embedders({"fake": [1, 0]}), "q")
    assert [m[0].tolist() for m in matches] == [[0, 1], [0, 1]]
    np.testing.assert_allclose(matches[0][1], [1.0, 0.0])
    np.testing.assert_allclose(matches[1][1], [0.6, 0.8])
    hits = search_dense(view, embedders({"fake": [1, 0]}), "q", 2)
    assert [(c.part, c.ordinal) for c in hits] == [(0, 0), (1, 1)]


def test_hidden_nodes_are_never_scored_nor_appear(tmp_path: Path) -> None:
    seg = make_segment(tmp_path, "s", ["a", "b", "c"], [[1, 0], [0.8, 0.6], [0, 1]],
                       acl=[("hr",), (), ("hr",)])
    view = view_of([seg], Principal.anonymous())
    ordinals, scores = dense_matches(view, embedders({"fake": [1, 0]}), "q")[0]
    assert ordinals.tolist() == [1] and scores.tolist() == [pytest.approx(0.8)]
    assert ranked(view, {"fake": [1, 0]}, 10) == [("b", 0.8)]
    hr = view_of([seg], Principal(frozenset({"hr"})))
    assert [i for i, _ in ranked(hr, {"fake": [1, 0]}, 10)] == ["a", "b", "c"]


def test_nothing_visible_means_nothing_embedded(tmp_path: Path) -> None:
    seg = make_segment(tmp_path, "s", ["a"], [[1, 0]], acl=[("hr",)])
    calls: list[str] = []
    view = view_of([seg], Principal.anonymous())
    assert search_dense(view, embedders({"fake": [1, 0]}, calls), "q", 5) == []
    assert calls == []


def test_segments_without_vectors_or_model_contribute_nothing(tmp_path: Path) -> None:
    plain = make_segment(tmp_path, "plain", ["a", "b"], None)
    other = make_segment(tmp_path, "other", ["c"], [[1, 0]], model="unknown-model")
    dense = make_segment(tmp_path, "dense", ["d", "e"], [[0, 1], [1, 0]])
    view = view_of([plain, other, dense])
    matches = dense_matches(view, embedders({"fake": [1, 0]}), "q")
    assert [len(m[0]) for m in matches] == [0, 0, 2] and [len(m[1]) for m in matches] == [0, 0, 2]
    assert ranked(view, {"fake": [1, 0]}, 10) == [("e", 1.0), ("d", 0.0)]


def test_each_segment_uses_its_own_model_once(tmp_path: Path) -> None:
    s1 = make_segment(tmp_path, "s1", ["a", "b"], [[1, 0], [0, 1]], model="m1")
    s2 = make_segment(tmp_path, "s2", ["c"], [[0, 1]], model="m2")
    s3 = make_segment(tmp_path, "s3", ["d"], [[0.6, 0.8]], model="m1")
    calls: list[str] = []
    view = view_of([s1, s2, s3])
    hits = search_dense(view, embedders({"m1": [1, 0], "m2": [0, 1]}, calls), "q", 10)
    # m1 query (1, 0): a 1.0, b 0.0, d 0.6; m2 query (0, 1): c 1.0
    assert [(c.id, round(c.score, 6)) for c in hits] == [
        ("a", 1.0), ("c", 1.0), ("d", 0.6), ("b", 0.0)]
    assert sorted(calls) == ["m1", "m2"]


def test_ties_are_broken_by_id_across_parts(tmp_path: Path) -> None:
    same = [[0.6, 0.8]] * 3
    one = make_segment(tmp_path, "one", ["b", "d", "f"], same)
    two = make_segment(tmp_path, "two", ["a", "c", "e"], same)
    view = view_of([one, two])
    assert [i for i, _ in ranked(view, {"fake": [1, 0]}, 4)] == ["a", "b", "c", "d"]
    assert [i for i, _ in ranked(view_of([two, one]), {"fake": [1, 0]}, 3)] == ["a", "b", "c"]
    assert [i for i, _ in ranked(view, {"fake": [1, 0]}, 2)] == ["a", "b"]  # ties at the cut


def test_depth_beyond_the_nodes_returns_them_all(tmp_path: Path) -> None:
    one = make_segment(tmp_path, "one", ["a", "b"], [[0, 1], [1, 0]])
    two = make_segment(tmp_path, "two", ["c"], [[0.8, 0.6]])
    assert ranked(view_of([one, two]), {"fake": [1, 0]}, 50) == [
        ("b", 1.0), ("c", 0.8), ("a", 0.0)]


def test_rank_matches_keeps_ties_at_the_cut(tmp_path: Path) -> None:
    one = make_segment(tmp_path, "one", ["a", "b", "c", "d", "e"], [[1, 0]] * 5)
    values = np.array([0.1, 0.5, 0.5, 0.9, 0.5], dtype=np.float32)
    ordinals = np.arange(5)
    view = view_of([one])

    def ids(depth: int) -> list[str]:
        return [c.id for c in rank_matches(view, [(ordinals, values)], depth)]

    assert ids(1) == ["d"]
    assert ids(2) == ["d", "b"]  # of the three 0.5s, the first id
    assert ids(4) == ["d", "b", "c", "e"]
    assert ids(9) == ["d", "b", "c", "e", "a"]


def test_rank_matches_cuts_after_sorting_by_score_then_id(tmp_path: Path) -> None:
    one = make_segment(tmp_path, "one", ["b", "c"], [[1, 0], [1, 0]])
    two = make_segment(tmp_path, "two", ["a"], [[1, 0]])
    half = np.float32(0.5)
    matches = [(np.arange(2), np.array([half, half])), (np.arange(1), np.array([half]))]
    got = rank_matches(view_of([one, two]), matches, 2)
    assert [(c.part, c.ordinal, c.id, c.score) for c in got] == [(1, 0, "a", 0.5),
                                                                 (0, 0, "b", 0.5)]
