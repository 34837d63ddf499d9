"""A query's terms over one part, bounded per block and scored exactly node by node: what
block-max pruning (retrieve/pruning.py) and the impact rounds (retrieve/impacts.py) both read.
One :class:`PartQuery` per part serves both when the impact rounds give up to the blocks.

Bounds are computed in float64 from float32 inputs and raised by ``SLACK`` so that the float32
rounding of an actual score can never exceed its block's bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from excerpt.retrieve.view import Matches, ViewPart
from excerpt.store.blocks import Blocks

SLACK = 1e-5

Term = tuple[str, npt.NDArray[np.int32], npt.NDArray[np.float32], float]
"""(term, visible postings' ordinals, their tf, query weight = qtf x idf)."""
Float64 = npt.NDArray[np.float64]


class _Exact(NamedTuple):
    """A term scored node by node: its visible postings, their blocks and weights."""

    docs: npt.NDArray[np.int32]
    block: npt.NDArray[np.int32]
    contrib: Float64


class PartQuery:
    """One part's query terms with their bounds per block, and exact scores of any of its
    nodes (what block pruning and the impact rounds both read)."""

    def __init__(self, part: ViewPart, terms: Sequence[Term], avgdl: float, k1: float,
                 b: float) -> None:
        seg = part.segment
        self.part, self.avgdl, self.k1, self.b = part, avgdl, k1, b
        self.norm = seg.length_norm(avgdl, k1, b)
        self.shift = int(seg.block_shift or 0)
        self.bound: Float64 = np.zeros((seg.size >> self.shift) + 1, dtype=np.float64)
        self.upper: list[float] = []  # per term, its largest weight anywhere (with SLACK)
        self.given = terms
        self.terms = [self._add(term, docs, tf, weight) for term, docs, tf, weight in terms]
        self.bound *= 1.0 + SLACK

    def _add(self, term: str, docs: npt.NDArray[np.int32], tf: npt.NDArray[np.float32],
             weight: float) -> tuple[_Exact | Blocks, float]:
        """Add the term's bound per block; keep what scoring it needs later."""
        blocks = self.part.segment.blocks(term)
        if blocks is None or len(docs) < len(blocks.ids):  # short, or few visible: exact
            contrib = (tf / (tf + self.norm[docs])).astype(np.float64) * weight
            block = docs >> self.shift
            if len(block):
                first = np.flatnonzero(np.diff(block, prepend=-1))
                self.bound[block[first]] += np.maximum.reduceat(contrib, first)
            self.upper.append(float(contrib.max(initial=0.0)) * (1.0 + SLACK))
            return _Exact(docs, block, contrib), weight
        lengths = blocks.min_len.astype(np.float64)
        tf_max = blocks.max_tf.astype(np.float64)
        per_block = weight * tf_max / (
            tf_max + self.k1 * (1.0 - self.b + self.b * lengths / self.avgdl))
        self.bound[blocks.ids] += per_block
        self.upper.append(float(per_block.max()) * (1.0 + SLACK))
        return blocks, weight

    def _visible(self, held: _Exact | Blocks, weight: float, allowed: npt.NDArray[np.bool_]
                 ) -> tuple[npt.NDArray[np.int64], Float64]:
        """The term's visible (node, contribution) in the ``allowed`` blocks, node order."""
        if isinstance(held, _Exact):
            keep = allowed[held.block]
            return held.docs[keep].astype(np.int64), held.contrib[keep]
        seg = self.part.segment
        wanted = allowed[held.ids]
        if np.count_nonzero(wanted) * 2 > len(wanted):  # most blocks: filter the whole list
            start, end = int(held.start[0]), int(held.end[-1])
            docs, tf = seg.post_docs[start:end], seg.post_tf[start:end]
            keep = allowed[docs >> self.shift]
            docs, tf = docs[keep], tf[keep]
        else:
            at = ranges(held.start, held.end, wanted)
            docs, tf = seg.post_docs[at], seg.post_tf[at]
        if self.part.visible != seg.size:
            visible = self.part.mask[docs]
            docs, tf = docs[visible], tf[visible]
        return docs.astype(np.int64), (tf / (tf + self.norm[docs])).astype(np.float64) * weight

    def partial(self, which: list[int], allowed: npt.NDArray[np.bool_]
                ) -> tuple[npt.NDArray[np.int64], Float64]:
        """Nodes of the ``allowed`` blocks holding one of the terms ``which`` (indexes into
        the query's terms), increasing, with the sum of those terms' contributions."""
        got = [self._visible(*self.terms[t], allowed) for t in which]
        if len(got) == 1:
            return got[0]
        sums = np.bincount(np.concatenate([g[0] for g in got]),
                           np.concatenate([g[1] for g in got]))
        docs = np.flatnonzero(sums != 0)
        return docs, np.asarray(sums[docs], dtype=np.float64)

    def short_docs(self) -> npt.NDArray[np.int64]:
        """The visible nodes holding a term scored node by node, increasing."""
        short = [held.docs for held, _ in self.terms if isinstance(held, _Exact)]
        if not short:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(short)).astype(np.int64)

    def exact(self, docs: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """Exact scores of visible ``docs`` (increasing): each term's contribution looked up
        in its postings and added in the query's term order from 0.0, as ``np.bincount``
        adds them in the exhaustive path, then cast to float32."""
        acc = np.zeros(len(docs), dtype=np.float64)
        for t in range(len(self.terms)):
            hit, contrib = self.lookup(t, docs)
            acc[hit] += contrib
        return acc.astype(np.float32)

    def lookup(self, t: int, docs: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.bool_],
                                                                    Float64]:
        """Which of visible ``docs`` (increasing) hold term ``t``, and its contributions."""
        held, weight = self.terms[t]
        seg = self.part.segment
        if isinstance(held, _Exact):
            post, base = held.docs, 0
        else:
            base = int(held.start[0])
            post = seg.post_docs[base:int(held.end[-1])]
        if not len(post) or not len(docs):
            return np.zeros(len(docs), dtype=bool), np.zeros(0, dtype=np.float64)
        # Needles of the postings' dtype: int64 ones would convert the whole list first.
        pos = np.minimum(np.searchsorted(post, docs.astype(post.dtype)), len(post) - 1)
        hit = post[pos] == docs
        if isinstance(held, _Exact):
            return hit, held.contrib[pos[hit]]
        tf = seg.post_tf[base + pos[hit]]
        return hit, (tf / (tf + self.norm[docs[hit]])).astype(np.float64) * weight

    def score(self, chosen: npt.NDArray[np.intp]) -> Matches:
        """Exact scores of the visible matches in the ``chosen`` blocks (increasing)."""
        local = np.full(len(self.bound), -1, dtype=np.int64)  # block -> its rank in chosen
        local[chosen] = np.arange(len(chosen))
        docs_all, contrib_all = [], []
        seg, mask, shift = self.part.segment, self.part.mask, self.shift
        masked = self.part.visible != seg.size
        for held, weight in self.terms:
            if isinstance(held, _Exact):
                keep = local[held.block] >= 0
                docs_all.append(held.docs[keep])
                contrib_all.append(held.contrib[keep])
                continue
            at = ranges(held.start, held.end, local[held.ids] >= 0)
            docs, tf = seg.post_docs[at], seg.post_tf[at]
            if masked:
                visible = mask[docs]
                docs, tf = docs[visible], tf[visible]
            docs_all.append(docs)
            contrib_all.append((tf / (tf + self.norm[docs])).astype(np.float64) * weight)
        docs = np.concatenate(docs_all).astype(np.int64)
        if not len(docs):
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
        low = (1 << shift) - 1
        slot = local[docs >> shift] << shift | (docs & low)  # position among chosen blocks
        sums = np.bincount(slot, np.concatenate(contrib_all))
        hit = np.flatnonzero(sums != 0)
        ordinals = chosen[hit >> shift].astype(np.int64) << shift | (hit & low)
        return ordinals.astype(np.intp), sums[hit].astype(np.float32)


def ranges(starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64],
            keep: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """The positions of every kept [start, end) range, concatenated, in order."""
    starts, ends = starts[keep], ends[keep]
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return np.asarray(np.arange(total, dtype=np.int64) + offsets, dtype=np.int64)


def kth(values: npt.NDArray[np.floating], depth: int) -> float:
    """The depth-th largest value (-inf when fewer): the least score a top node has."""
    if len(values) < depth:
        return -np.inf
    return float(np.partition(values, len(values) - depth)[len(values) - depth])


