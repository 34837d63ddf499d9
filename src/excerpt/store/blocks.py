"""Block maxima of a segment's postings: what block-max pruning (retrieve/pruning.py) bounds
a term's BM25 weight with, per block of ordinals, under any view's statistics.

Stored per term with many postings (store/segment.py names the files), one entry per block of
``2**shift`` ordinals the term occurs in: the block, the term's first posting there, its largest
tf and the shortest node holding it.  A term's weight ``tf / (tf + k1 (1 - b + b |d| / avgdl))``
grows with tf and shrinks with |d|, so those two give its largest weight in the block whatever
avgdl the view has.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Blocks:
    """A term's block-max entries: its postings in block ``ids[i]`` are ``[start[i], end[i])``
    of the segment's postings, with tf at most ``max_tf[i]`` and lengths at least
    ``min_len[i]``."""

    ids: npt.NDArray[np.int32]
    start: IntArray
    end: IntArray
    max_tf: FloatArray
    min_len: FloatArray


def block_maxima(indptr: IntArray, docs: npt.NDArray[np.int32], tfs: FloatArray,
                 doc_len: FloatArray, shift: int, long_postings: int
                 ) -> tuple[IntArray, npt.NDArray[np.int32], IntArray, FloatArray, FloatArray]:
    """Per term with at least ``long_postings`` postings, one entry per block of ordinals it
    occurs in: the block, its first posting there, the largest tf and the shortest length."""
    counts = np.diff(indptr)
    long = counts >= max(long_postings, 1)
    term_of = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    picked = np.flatnonzero(long[term_of]) if len(term_of) else np.zeros(0, dtype=np.int64)
    key = term_of[picked] << 32 | (docs[picked].astype(np.int64) >> shift)
    first = np.flatnonzero(np.diff(key, prepend=-1)) if len(key) else np.zeros(0, np.int64)
    starts = picked[first]
    per_term = np.bincount(term_of[starts], minlength=len(counts))
    blk_indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(per_term, out=blk_indptr[1:])
    at = np.asarray(picked, dtype=np.int64)
    max_tf = np.maximum.reduceat(tfs[at], first) if len(first) else np.zeros(0, np.float32)
    min_len = (np.minimum.reduceat(doc_len[docs[at]], first) if len(first)
               else np.zeros(0, np.float32))
    return (blk_indptr, (docs[starts] >> shift).astype(np.int32), starts.astype(np.int64),
            max_tf.astype(np.float32), min_len.astype(np.float32))
