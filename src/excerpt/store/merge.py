"""Merging segments: the rows of several segments written as one (issue 30).

A synced folder imports each file as its own snapshot, so a view of 10,000 files read 10,000
segments, and every query paid a loop over them. A merged segment holds the rows of its input
segments one after another, in the order given (input ``i``'s ordinal ``o`` becomes
``offsets[i] + o``), and ``meta["members"]`` says which rows belong to which snapshot, so
that every snapshot keeps its own rows, its history and its place in a view: a merge changes
where rows are kept, never what they are.

Nothing is re-analysed or re-embedded: the arrays are combined as they are.

* **Postings**: the vocabularies are united (sorted, as :func:`write_segment` keeps them); each
  input's term ids are mapped into it, its node ordinals shifted by its offset, and the
  postings of all inputs put in term order by a stable sort (within a term an input's
  ordinals already increase, and inputs come in offset order, so the merged postings increase
  too). Term frequencies and lengths are kept raw, so BM25 statistics are still the view's.
* **Block maxima** are computed again over the merged postings (store/blocks.py).
* **Rights**: each input's ACL tags and classification labels are CSR arrays over its own
  vocabulary; they are mapped into the united vocabularies (a node's rights are unchanged).
* **Edges**: targets and relations are united and mapped the same way; the order of a node's
  edges (by relation, then target) is kept, both vocabularies being sorted.
* **Vectors** are concatenated (inputs of one embedding model and dimension only); an IVF
  index is built when the merged segment reaches ``ann.min_nodes`` (store/ann.py).

The merged folder is written whole (every file synced) before anyone points to it; the store
then switches its snapshots to it in one transaction (store/sqlite.py), so a process killed
while merging leaves the inputs serving and an unreferenced folder that recovery removes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.errors import StoreError
from excerpt.store.ann import AnnConfig
from excerpt.store.ann import build as build_ann
from excerpt.store.blocks import block_maxima
from excerpt.store.segment import (
    BLOCK_SHIFT,
    LONG_POSTINGS,
    SEGMENT_FORMAT,
    IntArray,
    Segment,
    save_array,
)

Member = tuple[str, int, int]
"""(snapshot id, first row, rows) of one snapshot in a segment."""


def members(segment: Segment) -> list[Member]:
    """The snapshots whose rows ``segment`` holds: its ``meta["members"]``, or for a segment
    written by one import, its own snapshot over every row."""
    listed = segment.meta.get("members")
    if listed:
        return [(str(s), int(a), int(n)) for s, a, n in listed]
    return [(segment.snapshot_id, 0, segment.size)]


def _mergeable(inputs: Sequence[Segment]) -> None:
    if not inputs:
        raise StoreError("nothing to merge")
    keys = {(s.meta.get("analyzer"), s.embed_model, int(s.meta.get("dim") or 0),
             s.block_shift is not None) for s in inputs}
    if len(keys) > 1:
        raise StoreError("segments of different analyzers, embedding models or formats "
                         f"cannot be merged: {sorted(map(str, keys))}")


def _united(vocabs: Sequence[Sequence[str]]) -> tuple[list[str], list[IntArray]]:
    """The sorted union of ``vocabs`` and, per input, its ids' place in the union."""
    union = sorted(set().union(*vocabs)) if vocabs else []
    index = {v: i for i, v in enumerate(union)}
    return union, [np.fromiter((index[v] for v in vocab), dtype=np.int64, count=len(vocab))
                   for vocab in vocabs]


def _text_lines(segment: Segment, name: str) -> list[str]:
    text = (segment.folder / name).read_text("utf-8")
    return text.split("\n") if text else []


def _postings(inputs: Sequence[Segment], offsets: Sequence[int]
              ) -> tuple[list[str], IntArray, npt.NDArray[np.int32], npt.NDArray[np.float32]]:
    vocab, maps = _united([_text_lines(s, "terms.txt") for s in inputs])
    terms, docs, tfs = [], [], []
    for seg, offset, mapping in zip(inputs, offsets, maps, strict=False):
        indptr = np.asarray(seg._indptr, dtype=np.int64)
        terms.append(np.repeat(mapping, np.diff(indptr)))
        docs.append(np.asarray(seg.post_docs, dtype=np.int64) + offset)
        tfs.append(np.asarray(seg.post_tf, dtype=np.float32))
    term = np.concatenate(terms) if terms else np.zeros(0, dtype=np.int64)
    order = np.argsort(term, kind="stable")
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=len(vocab)), out=indptr[1:])
    return (vocab, indptr, np.concatenate(docs)[order].astype(np.int32),
            np.concatenate(tfs)[order])


def _rights(inputs: Sequence[Segment], kind: str, vocab_key: str
            ) -> tuple[list[str], IntArray, IntArray]:
    vocab, maps = _united([list(s.meta[vocab_key]) for s in inputs])
    indptrs, ids, at = [np.zeros(1, dtype=np.int64)], [], 0
    for seg, mapping in zip(inputs, maps, strict=True):
        indptr = np.asarray(seg._array(f"{kind}_indptr.npy"), dtype=np.int64)
        indptrs.append(indptr[1:] + at)
        at += int(indptr[-1])
        ids.append(mapping[np.asarray(seg._array(f"{kind}_ids.npy"), dtype=np.int64)])
    return vocab, np.concatenate(indptrs), np.concatenate(ids) if ids else np.zeros(
        0, dtype=np.int64)


def _edges(folder: Path, inputs: Sequence[Segment]) -> list[str]:
    relations, rel_maps = _united([list(s.meta.get("relations", ())) for s in inputs])
    targets, target_maps = _united([_text_lines(s, "edge_targets.txt") if s.has_edges else []
                                    for s in inputs])
    indptrs, to, rel, at = [np.zeros(1, dtype=np.int64)], [], [], 0
    for seg, rel_map, target_map in zip(inputs, rel_maps, target_maps, strict=True):
        if not seg.has_edges:
            indptrs.append(np.full(seg.size, at, dtype=np.int64))
            continue
        indptr = np.asarray(seg._array("edge_indptr.npy"), dtype=np.int64)
        indptrs.append(indptr[1:] + at)
        at += int(indptr[-1])
        to.append(target_map[np.asarray(seg._array("edge_to.npy"), dtype=np.int64)])
        rel.append(rel_map[np.asarray(seg._array("edge_rel.npy"), dtype=np.int64)])
    save_array(folder, "edge_indptr.npy", np.concatenate(indptrs))
    save_array(folder, "edge_to.npy", np.concatenate(to).astype(np.int32) if to
          else np.zeros(0, dtype=np.int32))
    save_array(folder, "edge_rel.npy", np.concatenate(rel).astype(np.int16) if rel
          else np.zeros(0, dtype=np.int16))
    (folder / "edge_targets.txt").write_text("\n".join(targets), encoding="utf-8")
    return relations


def _vectors(inputs: Sequence[Segment]) -> npt.NDArray[np.float32] | None:
    if not all(s.vectors is not None for s in inputs):
        return None
    return np.concatenate([np.asarray(s.vectors, dtype=np.float32) for s in inputs])


def merge_segments(folder: Path, inputs: Sequence[Segment], ann: AnnConfig | None = None,
                   long_postings: int = LONG_POSTINGS) -> list[Member]:
    """Write the rows of ``inputs``, in order, as one segment in ``folder`` (which must not
    exist yet); returns its members (module docstring). Every file is synced before
    ``meta.json``, the last one written: a folder without it is not a segment."""
    _mergeable(inputs)
    offsets = np.cumsum([0] + [s.size for s in inputs]).tolist()
    folder.mkdir(parents=True)
    ids = [i for s in inputs for i in s.ids]
    vocab, indptr, docs, tfs = _postings(inputs, offsets)
    doc_len = np.concatenate([np.asarray(s.doc_len, dtype=np.float32) for s in inputs])
    shift = inputs[0].block_shift or BLOCK_SHIFT
    blocks = block_maxima(indptr, docs, tfs, doc_len, shift, long_postings)
    acl_vocab, acl_indptr, acl_ids = _rights(inputs, "acl", "acl_tags")
    label_vocab, label_indptr, label_ids = _rights(inputs, "label", "classification_labels")
    relations = _edges(folder, inputs)
    (folder / "ids.txt").write_text("\n".join(ids), encoding="utf-8")
    (folder / "terms.txt").write_text("\n".join(vocab), encoding="utf-8")
    blk_names = ("blk_indptr.npy", "blk_ids.npy", "blk_start.npy", "blk_max_tf.npy",
                 "blk_min_len.npy")
    arrays: list[tuple[str, npt.NDArray[Any]]] = [
        *zip(blk_names, list[npt.NDArray[Any]](blocks), strict=True),
        ("post_indptr.npy", indptr), ("post_docs.npy", docs), ("post_tf.npy", tfs),
        ("doc_len.npy", doc_len), ("acl_indptr.npy", acl_indptr), ("acl_ids.npy", acl_ids),
        ("label_indptr.npy", label_indptr), ("label_ids.npy", label_ids)]
    for name, arr in arrays:
        save_array(folder, name, arr)
    vectors = _vectors(inputs)
    if vectors is not None:
        save_array(folder, "vectors.npy", vectors)
    indexed = (vectors is not None and ann is not None and ann.min_nodes > 0
               and len(vectors) >= ann.min_nodes and build_ann(folder, vectors, ann))
    merged = [(sid, offset + first, n) for seg, offset in zip(inputs, offsets, strict=False)
              for sid, first, n in members(seg)]
    first = inputs[0].meta
    meta = {"analyzer": first.get("analyzer"), "embed_model": first.get("embed_model"),
            "format": SEGMENT_FORMAT, "nodes": len(ids), "terms": len(vocab),
            "postings": int(indptr[-1]), "total_length": float(doc_len.sum()),
            "acl_tags": acl_vocab, "classification_labels": label_vocab,
            "dim": int(first.get("dim") or 0), "relations": relations, "block_shift": shift,
            "ann": "ivf-sq8" if indexed else None, "members": [list(m) for m in merged]}
    (folder / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return merged
