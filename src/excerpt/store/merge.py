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
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.errors import StoreError
from excerpt.store.ann import AnnConfig
from excerpt.store.ann import build as build_ann
from excerpt.store.blocks import block_maxima
from excerpt.store.impacts import IMPACT_POSTINGS, impact_files
from excerpt.store.segment import (
    BLOCK_SHIFT,
    LONG_POSTINGS,
    SEGMENT_FORMAT,
    BoolArray,
    IntArray,
    Segment,
    id_ranks,
    save_array,
)

Member = tuple[str, int, int]
"""(snapshot id, first row, rows) of one snapshot in a segment (``Segment.members``)."""


def _mergeable(inputs: Sequence[Segment]) -> None:
    if not inputs:
        raise StoreError("nothing to merge")
    if old := [s.folder.name for s in inputs if not s.has_edges]:
        raise StoreError(f"segments written before segments held edges cannot be merged "
                         f"(their edges are in the store only): {', '.join(old)}")
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


def _postings(inputs: Sequence[Segment], offsets: Sequence[int], keep: BoolArray
              ) -> tuple[list[str], IntArray, npt.NDArray[np.int32], npt.NDArray[np.float32]]:
    vocab, maps = _united([_text_lines(s, "terms.txt") for s in inputs])
    terms, docs, tfs = [], [], []
    for seg, offset, mapping in zip(inputs, offsets, maps, strict=False):
        indptr = np.asarray(seg._indptr, dtype=np.int64)
        terms.append(np.repeat(mapping, np.diff(indptr)))
        docs.append(np.asarray(seg.post_docs, dtype=np.int64) + offset)
        tfs.append(np.asarray(seg.post_tf, dtype=np.float32))
    term = np.concatenate(terms) if terms else np.zeros(0, dtype=np.int64)
    doc = np.concatenate(docs) if docs else np.zeros(0, dtype=np.int64)
    tf = np.concatenate(tfs) if tfs else np.zeros(0, dtype=np.float32)
    if not keep.all():  # dropped rows' postings out, and the terms only they held
        held, rows = keep[doc], np.cumsum(keep) - 1
        term, doc, tf = term[held], rows[doc[held]], tf[held]
        used = np.bincount(term, minlength=len(vocab)) > 0
        vocab = [v for v, u in zip(vocab, used.tolist(), strict=True) if u]
        term = (np.cumsum(used) - 1)[term]
    order = np.argsort(term, kind="stable")
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=len(vocab)), out=indptr[1:])
    return vocab, indptr, doc[order].astype(np.int32), tf[order]


def _kept_rows(indptr: IntArray, values: npt.NDArray[Any], keep: BoolArray
               ) -> tuple[IntArray, npt.NDArray[Any]]:
    """A CSR over rows (``indptr``, ``values``) with the rows ``keep`` drops left out."""
    if keep.all():
        return indptr, values
    owner = np.repeat(np.arange(len(keep)), np.diff(indptr))
    held = keep[owner]
    counts = np.bincount((np.cumsum(keep) - 1)[owner[held]], minlength=int(keep.sum()))
    out = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out, values[held]


def _rights(inputs: Sequence[Segment], kind: str, vocab_key: str, keep: BoolArray
            ) -> tuple[list[str], IntArray, IntArray]:
    vocab, maps = _united([list(s.meta[vocab_key]) for s in inputs])
    indptrs, ids, at = [np.zeros(1, dtype=np.int64)], [], 0
    for seg, mapping in zip(inputs, maps, strict=True):
        indptr = np.asarray(seg._array(f"{kind}_indptr.npy"), dtype=np.int64)
        indptrs.append(indptr[1:] + at)
        at += int(indptr[-1])
        ids.append(mapping[np.asarray(seg._array(f"{kind}_ids.npy"), dtype=np.int64)])
    indptr, values = _kept_rows(np.concatenate(indptrs), np.concatenate(ids) if ids
                                else np.zeros(0, dtype=np.int64), keep)
    return vocab, indptr, values


def _edges(folder: Path, inputs: Sequence[Segment], keep: BoolArray) -> list[str]:
    relations, rel_maps = _united([list(s.meta.get("relations", ())) for s in inputs])
    targets, target_maps = _united([_text_lines(s, "edge_targets.txt") for s in inputs])
    indptrs, to, rel, at = [np.zeros(1, dtype=np.int64)], [], [], 0
    for seg, rel_map, target_map in zip(inputs, rel_maps, target_maps, strict=True):
        indptr = np.asarray(seg._array("edge_indptr.npy"), dtype=np.int64)
        indptrs.append(indptr[1:] + at)
        at += int(indptr[-1])
        to.append(target_map[np.asarray(seg._array("edge_to.npy"), dtype=np.int64)])
        rel.append(rel_map[np.asarray(seg._array("edge_rel.npy"), dtype=np.int64)])
    both = np.stack([np.concatenate(to), np.concatenate(rel)], axis=1)
    indptr, both = _kept_rows(np.concatenate(indptrs), both, keep)
    save_array(folder, "edge_indptr.npy", indptr)
    save_array(folder, "edge_to.npy", both[:, 0].astype(np.int32))
    save_array(folder, "edge_rel.npy", both[:, 1].astype(np.int16))
    (folder / "edge_targets.txt").write_text("\n".join(targets), encoding="utf-8")
    return relations


def _vectors(inputs: Sequence[Segment], keep: BoolArray) -> npt.NDArray[np.float32] | None:
    if not all(s.vectors is not None for s in inputs):
        return None
    vectors = np.concatenate([np.asarray(s.vectors, dtype=np.float32) for s in inputs])
    return vectors if keep.all() else vectors[keep]


def _members(inputs: Sequence[Segment], kept: Collection[str] | None
             ) -> tuple[list[Member], BoolArray]:
    """The merged segment's members (those of ``kept``, every one when None) with their new
    first rows, and which of the inputs' rows stay."""
    rows = sum(s.size for s in inputs)
    keep = np.ones(rows, dtype=bool)
    members: list[Member] = []
    offset = at = 0
    for seg in inputs:
        for sid, first, n in seg.members:
            if kept is None or sid in kept:
                members.append((sid, at, n))
                at += n
            else:
                keep[offset + first:offset + first + n] = False
        offset += seg.size
    return members, keep


def merge_segments(folder: Path, inputs: Sequence[Segment], ann: AnnConfig | None = None,
                   long_postings: int = LONG_POSTINGS,
                   kept: Collection[str] | None = None,
                   impact_postings: int = IMPACT_POSTINGS) -> list[Member]:
    """Write the rows of ``inputs``, in order, as one segment in ``folder`` (which must not
    exist yet); returns its members (module docstring). ``kept``: the snapshots whose rows
    stay (the others' were deleted: their rows are dropped here); every one when None.
    Every file is synced before ``meta.json``, the last one written: a folder without it is
    not a segment."""
    _mergeable(inputs)
    members, keep = _members(inputs, kept)
    offsets = np.cumsum([0] + [s.size for s in inputs]).tolist()
    folder.mkdir(parents=True)
    ids = [i for s in inputs for i in s.ids]
    ids = ids if keep.all() else [i for i, k in zip(ids, keep.tolist(), strict=True) if k]
    vocab, indptr, docs, tfs = _postings(inputs, offsets, keep)
    doc_len = np.concatenate([np.asarray(s.doc_len, dtype=np.float32) for s in inputs])[keep]
    shift = inputs[0].block_shift or BLOCK_SHIFT
    blocks = block_maxima(indptr, docs, tfs, doc_len, shift, long_postings)
    impacts = impact_files(indptr, docs, tfs, doc_len, impact_postings)
    acl_vocab, acl_indptr, acl_ids = _rights(inputs, "acl", "acl_tags", keep)
    label_vocab, label_indptr, label_ids = _rights(inputs, "label", "classification_labels",
                                                   keep)
    relations = _edges(folder, inputs, keep)
    (folder / "ids.txt").write_text("\n".join(ids), encoding="utf-8")
    save_array(folder, "id_rank.npy", id_ranks(ids).astype(np.int32))
    (folder / "terms.txt").write_text("\n".join(vocab), encoding="utf-8")
    blk_names = ("blk_indptr.npy", "blk_ids.npy", "blk_start.npy", "blk_max_tf.npy",
                 "blk_min_len.npy")
    arrays: list[tuple[str, npt.NDArray[Any]]] = [
        *zip(blk_names, list[npt.NDArray[Any]](blocks), strict=True), *impacts,
        ("post_indptr.npy", indptr), ("post_docs.npy", docs), ("post_tf.npy", tfs),
        ("doc_len.npy", doc_len), ("acl_indptr.npy", acl_indptr), ("acl_ids.npy", acl_ids),
        ("label_indptr.npy", label_indptr), ("label_ids.npy", label_ids)]
    for name, arr in arrays:
        save_array(folder, name, arr)
    vectors = _vectors(inputs, keep)
    if vectors is not None:
        save_array(folder, "vectors.npy", vectors)
    indexed = (vectors is not None and ann is not None and ann.min_nodes > 0
               and len(vectors) >= ann.min_nodes and build_ann(folder, vectors, ann))
    first = inputs[0].meta
    meta = {"analyzer": first.get("analyzer"), "embed_model": first.get("embed_model"),
            "format": SEGMENT_FORMAT, "nodes": len(ids), "terms": len(vocab),
            "postings": int(indptr[-1]), "total_length": float(doc_len.sum()),
            "acl_tags": acl_vocab, "classification_labels": label_vocab,
            "dim": int(first.get("dim") or 0), "relations": relations, "block_shift": shift,
            "impacts": bool(impacts), "ann": "ivf-sq8" if indexed else None,
            "members": [list(m) for m in members]}
    (folder / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return members
