"""Exact BM25 top k over a large segment without scoring every match (block-max pruning).

A segment's ordinals are cut in blocks of ``2**block_shift``; for each term with long postings
the segment stores, per block it occurs in, its largest tf and the shortest node holding it
(store/segment.py).  Under the view's statistics (avgdl, idf: retrieve/lexical.py) those give
a bound on the term's weight anywhere in the block, since a term's BM25 weight grows with tf
and shrinks with length; short postings are bounded exactly, node by node.  The sum over the
query's terms bounds every score in the block.

Blocks are then scored exhaustively, best bound first, in rounds of growing size.  Once
``depth`` nodes are scored, the depth-th best score is a threshold: a block whose bound is
below it holds no node of the top ``depth`` (ties included) and is never read.  What is scored
is scored exactly as the exhaustive path does (same float32 term weights, float64 sums in the
query's term order, cast to float32), so the result is the exhaustive top ``depth`` to the bit.

Bounds are computed in float64 from float32 inputs and raised by ``SLACK`` so that the float32
rounding of an actual score can never exceed its block's bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from excerpt.retrieve.view import Matches, ViewPart
from excerpt.store.segment import Blocks

SLACK = 1e-5
FIRST_ROUND = 8  # blocks scored before there is a threshold; each round after is GROWTH x
GROWTH = 4

Term = tuple[str, npt.NDArray[np.int32], npt.NDArray[np.float32], float]
"""(term, visible postings' ordinals, their tf, query weight = qtf x idf)."""
Float64 = npt.NDArray[np.float64]


def _weights(tf: npt.NDArray[np.float32], length: npt.NDArray[np.float32], avgdl: float,
             k1: float, b: float) -> npt.NDArray[np.float32]:
    """retrieve/lexical.py's ``term_weight``, repeated to avoid an import cycle."""
    return np.asarray(tf / (tf + k1 * (1.0 - b + b * length / avgdl)), dtype=np.float32)


class _Exact(NamedTuple):
    """A term scored node by node: its visible postings, their blocks and weights."""

    docs: npt.NDArray[np.int32]
    block: npt.NDArray[np.int32]
    contrib: Float64


class _Query:
    """One part's query terms with their bounds per block."""

    def __init__(self, part: ViewPart, terms: Sequence[Term], avgdl: float, k1: float,
                 b: float) -> None:
        seg = part.segment
        self.part, self.avgdl, self.k1, self.b = part, avgdl, k1, b
        self.shift = int(seg.block_shift or 0)
        self.bound: Float64 = np.zeros((seg.size >> self.shift) + 1, dtype=np.float64)
        self.terms = [self._add(term, docs, tf, weight) for term, docs, tf, weight in terms]
        self.bound *= 1.0 + SLACK

    def _add(self, term: str, docs: npt.NDArray[np.int32], tf: npt.NDArray[np.float32],
             weight: float) -> tuple[_Exact | Blocks, float]:
        """Add the term's bound per block; keep what scoring it needs later."""
        blocks = self.part.segment.blocks(term)
        if blocks is None or len(docs) < len(blocks.ids):  # short, or few visible: exact
            contrib = _weights(tf, self.part.segment.doc_len[docs], self.avgdl, self.k1,
                               self.b).astype(np.float64) * weight
            block = docs >> self.shift
            if len(block):
                first = np.flatnonzero(np.diff(block, prepend=-1))
                self.bound[block[first]] += np.maximum.reduceat(contrib, first)
            return _Exact(docs, block, contrib), weight
        lengths = blocks.min_len.astype(np.float64)
        tf_max = blocks.max_tf.astype(np.float64)
        self.bound[blocks.ids] += weight * tf_max / (
            tf_max + self.k1 * (1.0 - self.b + self.b * lengths / self.avgdl))
        return blocks, weight

    def score(self, chosen: npt.NDArray[np.bool_]) -> Matches:
        """Exact scores of the visible matches in the chosen blocks."""
        docs_all, contrib_all = [], []
        seg, mask = self.part.segment, self.part.mask
        masked = self.part.visible != seg.size
        for held, weight in self.terms:
            if isinstance(held, _Exact):
                keep = chosen[held.block]
                docs_all.append(held.docs[keep])
                contrib_all.append(held.contrib[keep])
                continue
            sel = np.flatnonzero(chosen[held.ids])
            at = _ranges(held.start[sel], held.end[sel])
            docs, tf = seg.post_docs[at], seg.post_tf[at]
            if masked:
                visible = mask[docs]
                docs, tf = docs[visible], tf[visible]
            docs_all.append(docs)
            contrib_all.append(_weights(tf, seg.doc_len[docs], self.avgdl, self.k1, self.b)
                               .astype(np.float64) * weight)
        docs = np.concatenate(docs_all)
        if not len(docs):
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
        ordinals, inverse = np.unique(docs, return_inverse=True)
        sums = np.bincount(inverse, np.concatenate(contrib_all), minlength=len(ordinals))
        return ordinals.astype(np.intp), sums.astype(np.float32)


def _ranges(starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The positions of every [start, end) range, concatenated, in order."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return np.asarray(np.arange(total, dtype=np.int64) + offsets, dtype=np.int64)


def pruned_matches(part: ViewPart, terms: Sequence[Term], avgdl: float, k1: float, b: float,
                   depth: int) -> Matches:
    """The part's matches holding its exact top ``depth`` (ties at the cut included), with
    their exact scores; blocks that cannot reach the top are skipped."""
    query = _Query(part, terms, avgdl, k1, b)
    bound = query.bound
    order = np.flatnonzero(bound > 0)
    order = order[np.argsort(-bound[order], kind="stable")]
    found: list[Matches] = []
    scored, threshold, at, size, growth = 0, -np.inf, 0, FIRST_ROUND, GROWTH
    while at < len(order):
        batch = order[at:at + size]
        batch = batch[bound[batch] >= threshold]  # bounds decrease: a prefix
        if not len(batch):
            break
        chosen = np.zeros(len(bound), dtype=bool)
        chosen[batch] = True
        found.append(query.score(chosen))
        scored += len(found[-1][0])
        if scored >= depth:
            values = np.concatenate([f[1] for f in found])
            threshold = float(np.partition(values, scored - depth)[scored - depth])
        at, size = at + size, size * growth
    if not found:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
    return (np.concatenate([f[0] for f in found]), np.concatenate([f[1] for f in found]))
