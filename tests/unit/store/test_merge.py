"""Merged segments (store/merge.py): the rows of several segments written as one are exactly
what one segment written from all their rows holds, rights, edges and vectors included."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from excerpt.errors import StoreError
from excerpt.store.merge import merge_segments
from excerpt.store.segment import Segment, write_segment
from excerpt.types import Principal

ARRAYS = ("post_indptr.npy", "post_docs.npy", "post_tf.npy", "doc_len.npy", "blk_indptr.npy",
          "blk_ids.npy", "blk_start.npy", "blk_max_tf.npy", "blk_min_len.npy", "acl_indptr.npy",
          "acl_ids.npy", "label_indptr.npy", "label_ids.npy", "edge_indptr.npy", "edge_to.npy",
          "edge_rel.npy", "vectors.npy", "imp_indptr.npy", "imp_docs.npy", "imp_run_indptr.npy",
          "imp_run_start.npy", "imp_run_tf.npy", "imp_run_len.npy")
TEXTS = ("ids.txt", "terms.txt", "edge_targets.txt")
KEYS = ("nodes", "terms", "postings", "total_length", "acl_tags", "classification_labels",
        "dim", "relations", "block_shift", "analyzer", "embed_model", "impacts")
IMPACTS = 20  # postings from which a term gets an impact order, here (production: 65,536)


def rows(seed: int, n: int, prefix: str) -> dict[str, list]:  # type: ignore[type-arg]
    """``n`` nodes of Zipf-like tokens, some tagged, some labelled, some with edges."""
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(60)]
    ids = [f"{prefix}{i:04d}" for i in range(n)]
    tokens = [rng.choices(vocab, weights=[1 / (r + 1) for r in range(60)], k=rng.randint(1, 40))
              for _ in ids]
    acl = [tuple(rng.sample(["hr", "eng", "ops"], rng.randint(0, 2))) for _ in ids]
    labels = [tuple(rng.sample(["secret", "internal"], rng.randint(0, 1))) for _ in ids]
    edges = [(i, rng.choice(["cites", "calls"]), rng.choice([*ids, "outside:x"]))
             for i in ids if rng.random() < 0.3]
    vectors = np.asarray([[rng.random() for _ in range(4)] for _ in ids], dtype=np.float32)
    return {"ids": ids, "tokens": tokens, "acl": acl, "labels": labels, "edges": edges,
            "vectors": vectors}


def write(folder: Path, parts: list[dict[str, list]]) -> None:  # type: ignore[type-arg]
    write_segment(folder, [i for p in parts for i in p["ids"]],
                  [t for p in parts for t in p["tokens"]], [a for p in parts for a in p["acl"]],
                  [lab for p in parts for lab in p["labels"]],
                  np.concatenate([p["vectors"] for p in parts]),
                  {"analyzer": "v", "embed_model": "m"},
                  [e for p in parts for e in p["edges"]], block_shift=3, long_postings=8,
                  impact_postings=IMPACTS)


def test_a_merge_writes_what_one_segment_of_all_the_rows_holds(tmp_path: Path) -> None:
    parts = [rows(1, 30, "a"), rows(2, 1, "b"), rows(3, 45, "c")]
    inputs = []
    for i, part in enumerate(parts):
        write(tmp_path / f"in{i}", [part])
        inputs.append(Segment(tmp_path / f"in{i}", f"snap{i}"))
    got = merge_segments(tmp_path / "merged", inputs, long_postings=8,
                         impact_postings=IMPACTS)
    write(tmp_path / "whole", parts)
    assert got == [("snap0", 0, 30), ("snap1", 30, 1), ("snap2", 31, 45)]
    merged, whole = Segment(tmp_path / "merged", "m"), Segment(tmp_path / "whole", "w")
    for name in ARRAYS:
        expected = np.load(tmp_path / "whole" / name)
        found = np.load(tmp_path / "merged" / name)
        assert found.dtype == expected.dtype, name
        np.testing.assert_array_equal(found, expected, err_msg=name)
    for name in TEXTS:
        assert (tmp_path / "merged" / name).read_text() == (tmp_path / "whole" / name).read_text()
    assert {k: merged.meta[k] for k in KEYS} == {k: whole.meta[k] for k in KEYS}
    for who in (Principal.anonymous(), Principal(acl_tags=frozenset({"hr"})),
                Principal(acl_tags=frozenset({"eng", "ops"}), clearances=frozenset({"secret"}))):
        assert merged.visible(who).tolist() == whole.visible(who).tolist()
    assert merged.members == got and inputs[0].members == [("snap0", 0, 30)]


def test_merged_segments_merge_again_and_keep_every_snapshot_in_order(tmp_path: Path) -> None:
    parts = [rows(i, 5 + i, f"p{i}") for i in range(4)]
    for i, part in enumerate(parts):
        write(tmp_path / f"in{i}", [part])
    seg = [Segment(tmp_path / f"in{i}", f"s{i}") for i in range(4)]
    merge_segments(tmp_path / "m01", seg[:2])
    merge_segments(tmp_path / "m23", seg[2:])
    got = merge_segments(tmp_path / "all", [Segment(tmp_path / "m01", "x"),
                                            Segment(tmp_path / "m23", "y")])
    assert got == [("s0", 0, 5), ("s1", 5, 6), ("s2", 11, 7), ("s3", 18, 8)]
    write(tmp_path / "whole", parts)
    for name in ("post_docs.npy", "post_tf.npy", "edge_to.npy", "acl_ids.npy"):
        np.testing.assert_array_equal(np.load(tmp_path / "all" / name),
                                      np.load(tmp_path / "whole" / name), err_msg=name)


def test_segments_of_different_embedding_models_are_not_merged(tmp_path: Path) -> None:
    part = rows(1, 3, "a")
    write(tmp_path / "a", [part])
    write_segment(tmp_path / "b", ["z"], [["t1"]], [()], [()], None,
                  {"analyzer": "v", "embed_model": None})
    with pytest.raises(StoreError, match="cannot be merged"):
        merge_segments(tmp_path / "m", [Segment(tmp_path / "a", "a"),
                                        Segment(tmp_path / "b", "b")])
    assert not (tmp_path / "m").exists()


def test_rows_of_deleted_snapshots_are_dropped_as_if_never_written(tmp_path: Path) -> None:
    """``kept``: the snapshots still in the store; a deleted one's rows, postings, terms,
    rights, edges and vectors go, and the rest is what one segment of the kept rows holds."""
    parts = [rows(1, 20, "a"), rows(2, 7, "b"), rows(3, 25, "c")]
    for i, part in enumerate(parts):
        write(tmp_path / f"in{i}", [part])
    inputs = [Segment(tmp_path / f"in{i}", f"snap{i}") for i in range(3)]
    got = merge_segments(tmp_path / "merged", inputs, long_postings=8,
                         kept={"snap0", "snap2"}, impact_postings=IMPACTS)
    assert got == [("snap0", 0, 20), ("snap2", 20, 25)]
    write(tmp_path / "whole", [parts[0], parts[2]])
    for name in [a for a in ARRAYS if not a.startswith(("acl", "label", "edge_to"))]:
        np.testing.assert_array_equal(np.load(tmp_path / "merged" / name),
                                      np.load(tmp_path / "whole" / name), err_msg=name)
    assert (tmp_path / "merged" / "terms.txt").read_text() == (
        tmp_path / "whole" / "terms.txt").read_text()
    merged, whole = Segment(tmp_path / "merged", "m"), Segment(tmp_path / "whole", "w")
    assert merged.ids == whole.ids
    for who in (Principal.anonymous(), Principal(acl_tags=frozenset({"hr"}))):
        assert merged.visible(who).tolist() == whole.visible(who).tolist()
    assert [merged.outgoing(o) for o in range(merged.size)] == [
        whole.outgoing(o) for o in range(whole.size)]


def test_segments_without_edges_of_their_own_are_not_merged(tmp_path: Path) -> None:
    """A segment written before segments held edges keeps them in the store only: merged,
    they would be lost, so it is refused before anything is written."""
    for name in ("a", "b"):
        write(tmp_path / name, [rows(1, 3, name)])
    for old in ("edge_indptr.npy", "edge_to.npy", "edge_rel.npy", "edge_targets.txt"):
        (tmp_path / "b" / old).unlink()
    with pytest.raises(StoreError, match=r"before segments held edges .*: b$"):
        merge_segments(tmp_path / "m", [Segment(tmp_path / "a", "a"),
                                        Segment(tmp_path / "b", "b")])
    assert not (tmp_path / "m").exists()


def test_a_merge_that_crosses_the_index_threshold_builds_the_ivf_index(tmp_path: Path) -> None:
    """Segments each under ``dense_index_min_nodes`` have no index; their merge, over it, gets
    one (as an import of that size does), and a walk through it ranks as the exact scan does."""
    from excerpt.store import ann

    config = ann.AnnConfig(min_nodes=60, nprobe=8, candidates=10)
    parts = [rows(10 + i, 25, f"x{i}") for i in range(3)]
    inputs = []
    for i, part in enumerate(parts):
        write(tmp_path / f"in{i}", [part])
        inputs.append(Segment(tmp_path / f"in{i}", f"snap{i}"))
        assert inputs[-1].ann is None
    merge_segments(tmp_path / "small", inputs[:2], config)
    assert not (tmp_path / "small" / ann.INDEX_FILE).exists()  # 50 nodes: under 60
    merge_segments(tmp_path / "merged", inputs, config)
    merged = Segment(tmp_path / "merged", "m")
    assert merged.meta["ann"] == "ivf-sq8" and merged.ann is not None
    vectors = np.asarray(merged.vectors, dtype=np.float32)
    query = np.asarray([0.9, 0.1, 0.3, 0.2], dtype=np.float32)
    found, scores = ann.search(merged.ann, merged.vector_rows,
                               np.ones(merged.size, dtype=bool), query, 5, config)
    exact = vectors @ query
    assert int(found[0]) == int(np.argmax(exact))
    np.testing.assert_allclose(scores, exact[found], rtol=1e-6)
