"""Impact orders (store/impacts.py): the postings of common terms sorted so that the first
node of each run bounds the run, whatever the view's statistics."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from excerpt.store.impacts import RUN
from excerpt.store.segment import Segment, write_segment


def corpus(seed: int, n: int) -> list[list[str]]:
    """Nodes of 1-40 words: ``the`` in nearly every one with tf 1-6, a few less common."""
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n):
        words = ["the"] * int(rng.integers(0 if rng.random() < 0.05 else 1, 7))
        words += [f"w{int(w)}" for w in rng.zipf(1.3, int(rng.integers(1, 35))) % 50]
        docs.append(list(rng.permutation(words)) or ["empty"])
    return docs


def test_each_run_holds_one_tf_shortest_node_first_and_the_term_whole(tmp_path: Path) -> None:
    docs = corpus(3, 3000)
    write_segment(tmp_path / "s", [f"n{i:05d}" for i in range(len(docs))], docs,
                  [() for _ in docs], [() for _ in docs], None, {}, impact_postings=200)
    seg = Segment(tmp_path / "s", "s")
    assert seg.meta["impacts"] is True
    checked = 0
    for term in seg.term_ids:
        postings = seg.postings(term)
        assert postings is not None
        imp = seg.impacts(term)
        if len(postings.docs) < 200:
            assert imp is None, term
            continue
        assert imp is not None
        checked += 1
        assert sorted(imp.docs.tolist()) == postings.docs.tolist()  # every posting, once
        tf_of = dict(zip(postings.docs.tolist(), postings.tf.tolist(), strict=True))
        ends = [*imp.start[1:].tolist(), len(imp.docs)]
        assert imp.start[0] == 0 and np.all(np.diff(imp.tf) <= 0)  # tf never rises
        for i, (a, z) in enumerate(zip(imp.start.tolist(), ends, strict=True)):
            run = imp.docs[a:z]
            assert 0 < len(run) <= RUN
            assert {tf_of[d] for d in run.tolist()} == {float(imp.tf[i])}
            lengths = seg.doc_len[run]
            assert lengths[0] == imp.length[i] and np.all(np.diff(lengths) >= 0)
            same = np.diff(lengths) == 0  # equal lengths: ordinal order
            assert np.all(np.diff(run)[same] > 0)
    assert checked >= 3  # "the" and the commonest filler words


def test_a_segment_without_common_terms_has_no_impact_files(tmp_path: Path) -> None:
    docs = corpus(4, 100)
    write_segment(tmp_path / "s", [f"n{i:05d}" for i in range(len(docs))], docs,
                  [() for _ in docs], [() for _ in docs], None, {})
    seg = Segment(tmp_path / "s", "s")
    assert seg.meta["impacts"] is False and seg.impacts("the") is None
    assert not list((tmp_path / "s").glob("imp_*"))
