"""BM25 over segments: scores equal bm25s's Lucene variant, and equal across import splits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.views import view_of

from excerpt.retrieve.lexical import bm25_scores, idf, search_bm25
from excerpt.store.segment import Segment, write_segment
from excerpt.types import Principal

DOCS = [
    "the quick brown fox jumps over the lazy dog",
    "a fox is quick and brown and clever",
    "dogs and cats are friends",
    "the lazy cat sleeps all day long in the sun",
    "quick quick quick thinking wins the day",
    "nothing here matches at all",
]


def make_segment(tmp: Path, name: str, docs: list[str], offset: int = 0,
                 acl: list[tuple[str, ...]] | None = None) -> Segment:
    tokens = [d.split() for d in docs]
    ids = [f"d{offset + i:03d}" for i in range(len(docs))]
    acl = acl or [() for _ in docs]
    write_segment(tmp / name, ids, tokens, acl, [() for _ in docs], None, {})
    return Segment(tmp / name, name)


def test_scores_match_bm25s_lucene(tmp_path: Path) -> None:
    bm25s = pytest.importorskip("bm25s")
    seg = make_segment(tmp_path, "a", DOCS)
    query = ["quick", "fox", "lazy"]
    ours = bm25_scores(view_of([seg]), query)[0]
    ours = np.where(np.isfinite(ours), ours, 0.0)
    ref = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    ref.index([d.split() for d in DOCS], show_progress=False)
    expected = ref.get_scores(query)
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


def test_split_import_ranks_like_one_import(tmp_path: Path) -> None:
    one = make_segment(tmp_path, "one", DOCS)
    first = make_segment(tmp_path, "p1", DOCS[:3])
    second = make_segment(tmp_path, "p2", DOCS[3:], offset=3)
    query = ["quick", "lazy", "day"]
    together = [(c.id, round(c.score, 5)) for c in search_bm25(view_of([one]), query, 10)]
    split = [(c.id, round(c.score, 5)) for c in search_bm25(view_of([first, second]), query, 10)]
    assert together == split
    assert together, "the query matches something"


def test_hidden_nodes_leave_no_trace_in_scores(tmp_path: Path) -> None:
    acl = [(), (), (), ("hr",), ("hr",), ()]
    seg = make_segment(tmp_path, "a", DOCS, acl=acl)
    visible_only = make_segment(tmp_path, "b", [d for d, a in zip(DOCS, acl, strict=True) if not a])
    anon = search_bm25(view_of([seg], Principal.anonymous()), ["quick", "lazy"], 10)
    ref = search_bm25(view_of([visible_only]), ["quick", "lazy"], 10)
    assert [round(c.score, 5) for c in anon] == [round(c.score, 5) for c in ref]
    assert all(c.ordinal not in (3, 4) for c in anon)


def test_ties_are_broken_by_id(tmp_path: Path) -> None:
    seg = make_segment(tmp_path, "a", ["same words here"] * 5)
    ranked = search_bm25(view_of([seg]), ["same"], 3)
    assert [c.id for c in ranked] == ["d000", "d001", "d002"]


def test_idf_is_positive_even_for_ubiquitous_terms() -> None:
    assert idf(10, 10) > 0
    assert idf(1, 10) > idf(5, 10)


def test_no_match_gives_no_candidates(tmp_path: Path) -> None:
    seg = make_segment(tmp_path, "a", DOCS)
    assert search_bm25(view_of([seg]), ["zebra"], 5) == []
    assert search_bm25(view_of([seg]), [], 5) == []
