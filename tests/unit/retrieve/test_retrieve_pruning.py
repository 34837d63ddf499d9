"""Block-max pruning returns exactly the exhaustive BM25 top k (ids, order and scores, to the
bit) on random corpora, masks and queries; segments without block maxima still search."""

from __future__ import annotations

import json
import tempfile
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.views import masked_view

from excerpt.retrieve import impacts as impact_path
from excerpt.retrieve import pruning
from excerpt.retrieve.bounds import PartQuery
from excerpt.retrieve.lexical import K1, B, bm25_scores, gather, search_bm25
from excerpt.retrieve.view import Candidate, View
from excerpt.store.segment import Segment, write_segment


def segment(folder: Path, name: str, docs: list[list[str]], shift: int = 2,
            long_postings: int = 3, first: int = 0, impacts: int = 10**9) -> Segment:
    ids = [f"n{first + i:05d}" for i in range(len(docs))]
    write_segment(folder / name, ids, docs, [() for _ in docs], [() for _ in docs], None, {},
                  block_shift=shift, long_postings=long_postings, impact_postings=impacts)
    return Segment(folder / name, name)


def exhaustive(v: View, query: dict[str, float], depth: int) -> list[Candidate]:
    """The reference: every finite score of bm25_scores, sorted by (-score, id), cut."""
    pool = [Candidate(i, o, part.segment.ids[o], float(s[o]))
            for i, (part, s) in enumerate(zip(v.parts, bm25_scores(v, query), strict=True))
            for o in np.flatnonzero(np.isfinite(s)).tolist()]
    return sorted(pool, key=lambda c: (-c.score, c.id))[:depth]


def random_corpus(rng: np.random.Generator, n_docs: int, vocab: int) -> list[list[str]]:
    """Documents of 1-12 words drawn from a skewed law: a few common words, many rare."""
    weights = 1.0 / np.arange(1, vocab + 1)
    law = weights / weights.sum()
    return [[f"w{w}" for w in rng.choice(vocab, int(rng.integers(1, 13)), p=law)]
            for _ in range(n_docs)]


CASES = given(
    n_docs=st.integers(1, 300), vocab=st.integers(1, 30), pieces=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1), shift=st.integers(0, 4), long_postings=st.integers(1, 8),
    depth=st.integers(1, 15), n_terms=st.integers(1, 5), hidden=st.sampled_from([0, 0.3, 0.9]),
    rounds=st.sampled_from([(1, 2), (2, 3), (8, 4)]),
    impacts=st.sampled_from([(10**9, 1, 16), (1, 1, 16), (4, 2, 1), (2, 64, 2)]))


def check_pruned_equals_exhaustive(n_docs: int, vocab: int, pieces: int, seed: int,
                                   shift: int, long_postings: int, depth: int, n_terms: int,
                                   hidden: float, rounds: tuple[int, int],
                                   impacts: tuple[int, int, int]) -> None:
    """Random corpora in one to four segments (a later one starts from the floor the earlier
    ones set), a random mask (nodes hidden), a random query
    (weights as expansions give them, a word no node holds): pruned == exhaustive.  Small
    first rounds make the threshold prune often (the production 8 blocks growing 4x seldom
    prune on corpora this small); ``impacts`` (postings from which a term has an impact
    order, postings read in the first impact round, the share of the segment they stop at)
    sends queries of common words through their impact orders, answered there or given up.
    """
    rng = np.random.default_rng(seed)
    docs = random_corpus(rng, n_docs, vocab)
    query = {f"w{int(rng.integers(0, vocab + 2))}": float(rng.choice([1.0, 2.0, 0.5, 0.25]))
             for _ in range(n_terms)}
    cuts = [0, *sorted(int(c) for c in rng.integers(0, n_docs + 1, pieces - 1)), n_docs]
    saved = pruning.FIRST_ROUND, pruning.GROWTH, impact_path.FIRST, impact_path.SHARE
    pruning.FIRST_ROUND, pruning.GROWTH = rounds
    impact_path.FIRST, impact_path.SHARE = impacts[1:]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            segs = [segment(Path(tmp), f"s{i}", docs[a:z], shift, long_postings, a,
                            impacts[0])
                    for i, (a, z) in enumerate(pairwise(cuts)) if z > a]
            masks = [rng.random(s.size) >= hidden for s in segs]
            v = masked_view(segs, masks)
            want = exhaustive(v, query, depth)
            assert search_bm25(v, query, depth, prune_from=0) == want
            assert search_bm25(v, query, depth, prune_from=10**9) == want
            held = masked_view(segs, masks, present=True)  # the cached weights, masked
            assert all(p.whole for p in held.parts)
            assert search_bm25(held, query, depth, prune_from=10**9) == want
    finally:
        (pruning.FIRST_ROUND, pruning.GROWTH, impact_path.FIRST, impact_path.SHARE) = saved


@settings(max_examples=12, deadline=None)
@CASES
def test_pruned_top_k_equals_exhaustive(**case: object) -> None:
    check_pruned_equals_exhaustive(**case)  # type: ignore[arg-type]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@CASES
def test_pruned_top_k_equals_exhaustive_many(**case: object) -> None:
    check_pruned_equals_exhaustive(**case)  # type: ignore[arg-type]


def test_pruning_skips_blocks_and_keeps_the_top(tmp_path: Path) -> None:
    """A rare word in a few nodes among many common ones: the answer is exact and the blocks
    holding only common words are never scored."""
    rng = np.random.default_rng(7)
    docs = [["common"] * int(rng.integers(1, 4)) + ["filler"] for _ in range(4096)]
    for i in (5, 1000, 3000):
        docs[i] = [*docs[i], "rare", "rare"]
    seg = segment(tmp_path, "s", docs, shift=6, long_postings=16)
    v = masked_view([seg], [np.ones(seg.size, dtype=bool)])
    query = {"rare": 1.0, "common": 1.0}
    scored: list[int] = []
    real = PartQuery.score

    def counting(self: PartQuery, chosen: np.ndarray) -> object:
        scored.append(len(chosen))
        return real(self, chosen)

    PartQuery.score = counting  # type: ignore[method-assign,assignment]
    try:
        got = search_bm25(v, query, 3, prune_from=0)
    finally:
        PartQuery.score = real  # type: ignore[method-assign]
    assert got == exhaustive(v, query, 3)
    assert [c.ordinal for c in got] == [5, 1000, 3000] or {c.ordinal for c in got} == {
        5, 1000, 3000}
    assert sum(scored) < seg.size >> 6, f"blocks scored per round: {scored}"
    # The count above stays 0 when pruning gives up (None: the caller scores exhaustively),
    # so check that the pruned path itself answered, with a small part of the 4,096 matches.
    found = pruning.pruned_matches(
        PartQuery(v.parts[0], next(gather(v, query)), v.avg_length, K1, B), 3)
    assert found is not None and len(found[0]) < seg.size // 16


def test_a_segment_without_block_maxima_is_searched_exhaustively(tmp_path: Path) -> None:
    """Format-2 segments (before block maxima) have no blk_* files and no block_shift."""
    docs = [["a", "b"], ["a"], ["b", "b", "c"], ["c"]] * 10
    segment(tmp_path, "s", docs)
    for name in ("blk_indptr", "blk_ids", "blk_start", "blk_max_tf", "blk_min_len"):
        (tmp_path / "s" / f"{name}.npy").unlink()
    meta = json.loads((tmp_path / "s" / "meta.json").read_text())
    del meta["block_shift"]
    meta["format"] = 2
    (tmp_path / "s" / "meta.json").write_text(json.dumps(meta))
    old = Segment(tmp_path / "s", "s")
    assert old.block_shift is None and old.blocks("a") is None
    v = masked_view([old], [np.ones(old.size, dtype=bool)])
    assert search_bm25(v, {"a": 1.0, "c": 1.0}, 5, prune_from=0) == exhaustive(
        v, {"a": 1.0, "c": 1.0}, 5)


def test_a_query_of_words_in_every_node_is_read_from_their_impact_orders(
        tmp_path: Path) -> None:
    """Words in nearly every node have the same bound in every block, so blocks skip
    nothing; their impact orders give the exact top from a small share of the postings,
    whatever the caller may see and whatever floor the segments before set."""
    rng = np.random.default_rng(11)
    docs = [["the"] * int(rng.integers(1, 8)) + ["of"] * int(rng.integers(0, 5))
            + [f"f{int(w)}" for w in rng.integers(0, 300, int(rng.integers(2, 60)))]
            for _ in range(8192)]
    seg = segment(tmp_path, "s", docs, shift=6, long_postings=64, impacts=512)
    query = {"the": 1.0, "of": 1.0, "f7": 0.5}
    read: list[int] = []
    real = impact_path._candidates

    def counting(*args: object) -> object:
        found = real(*args)  # type: ignore[arg-type]
        read.append(len(found[0]))
        return found

    impact_path._candidates = counting  # type: ignore[assignment]
    first, impact_path.FIRST = impact_path.FIRST, 64  # a segment of 8,192 nodes, not 1M
    try:
        for hidden in (0.0, 0.5):
            mask = rng.random(seg.size) >= hidden
            v = masked_view([seg], [mask])
            terms = next(gather(v, query))
            part_query = PartQuery(v.parts[0], terms, v.avg_length, K1, B)
            got = impact_path.impact_matches(part_query, 10)
            assert got is not None, "the impact orders gave up"
            assert len(got[0]) < seg.size // 16 and max(read) < seg.size // 8, read
            assert search_bm25(v, query, 10, prune_from=0) == exhaustive(v, query, 10)
            want = exhaustive(v, query, 10)
            floor = want[4].score  # five nodes of earlier segments are better than these
            above = impact_path.impact_matches(part_query, 10, floor)
            assert above is not None
            assert {c.ordinal for c in want[:5]} <= set(above[0].tolist())
    finally:
        impact_path._candidates, impact_path.FIRST = real, first  # type: ignore[assignment]
