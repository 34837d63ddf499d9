"""Impact orders: the postings of a segment's most common terms sorted by what they can weigh.

Block maxima (store/blocks.py) bound a term per block of ordinals; a word in nearly every node
has nearly the same bound in every block, so a query of such words (stopwords of a language
the analyzer keeps them for, or a corpus where one word is everywhere) is scored node by node
in every block.  For those terms a segment also stores their postings in impact order: tf
decreasing, then the node's length increasing (then ordinal).  A term's BM25 weight
``tf / (tf + k1 (1 - b + b |d| / avgdl))`` grows with tf and shrinks with |d| under any view's
statistics, so inside a run of one tf the first node weighs the most, and the nodes of a
query's top are found near the start of each run (retrieve/pruning.py reads them there).

Stored per term with at least ``min_postings`` postings (store/segment.py names the files):
its ordinals in that order, cut into runs of at most ``run`` postings of one tf; per run, its
first position, its tf and the length of its first (shortest) node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

IMPACT_POSTINGS = 65_536  # terms with at least this many postings get an impact order
RUN = 256  # postings per run at most (a run's first node bounds the run)


@dataclass(frozen=True)
class Impacts:
    """A term's postings in impact order: ``docs`` (ordinals); run ``i`` is
    ``docs[start[i]:start[i + 1]]`` (the last ends with ``docs``), every posting of it has tf
    ``tf[i]`` and a length of at least ``length[i]``, its first node's."""

    docs: npt.NDArray[np.int32]
    start: IntArray
    tf: FloatArray
    length: FloatArray


def impact_orders(indptr: IntArray, docs: npt.NDArray[np.int32], tfs: FloatArray,
                  doc_len: FloatArray, min_postings: int, run: int = RUN
                  ) -> tuple[IntArray, npt.NDArray[np.int32], IntArray, IntArray, FloatArray,
                             FloatArray]:
    """Per term with at least ``min_postings`` postings, its ordinals in impact order and its
    runs: (imp_indptr, imp_docs, run_indptr, run_start, run_tf, run_len), the ``*_indptr``
    per term (``n_terms + 1``), ``run_start`` absolute positions in ``imp_docs``."""
    counts = np.diff(indptr)
    long = counts >= max(min_postings, 1)
    imp_indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.where(long, counts, 0), out=imp_indptr[1:])
    term_of = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    picked = np.flatnonzero(long[term_of]) if len(term_of) else np.zeros(0, dtype=np.int64)
    term, tf = term_of[picked], tfs[picked]
    length = doc_len[docs[picked]]
    # Postings are in ordinal order within a term, and lexsort is stable: ordinal breaks ties.
    order = np.lexsort((length, -tf, term))
    term, tf, length = term[order], tf[order], length[order]
    imp_docs = np.asarray(docs[picked[order]], dtype=np.int32)
    group = np.flatnonzero((np.diff(term, prepend=-1) != 0) | (np.diff(tf, prepend=-1) != 0))
    at = np.arange(len(term), dtype=np.int64)
    in_group = at - np.repeat(group, np.diff(np.append(group, len(term))))
    first = np.flatnonzero(in_group % run == 0)
    run_indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term[first], minlength=len(counts)), out=run_indptr[1:])
    return (imp_indptr, imp_docs, run_indptr, first.astype(np.int64),
            tf[first].astype(np.float32), length[first].astype(np.float32))


FILES = ("imp_indptr.npy", "imp_docs.npy", "imp_run_indptr.npy", "imp_run_start.npy",
         "imp_run_tf.npy", "imp_run_len.npy")


def impact_files(indptr: IntArray, docs: npt.NDArray[np.int32], tfs: FloatArray,
                 doc_len: FloatArray, min_postings: int
                 ) -> list[tuple[str, npt.NDArray[np.generic]]]:
    """The arrays a segment stores for :func:`impact_orders`, by file name; none when no
    term has ``min_postings`` postings (most imports: a segment then has no impact files)."""
    if not len(indptr) or int(np.diff(indptr).max(initial=0)) < max(min_postings, 1):
        return []
    return list(zip(FILES, impact_orders(indptr, docs, tfs, doc_len, min_postings),
                    strict=True))
