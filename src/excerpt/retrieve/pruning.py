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

Bounds and exact scores come from :class:`~excerpt.retrieve.bounds.PartQuery`.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

from excerpt.retrieve.bounds import SLACK, PartQuery, kth
from excerpt.retrieve.view import Matches

FIRST_ROUND = 8  # blocks scored before there is a threshold; each round after is GROWTH x
GROWTH = 4

_I = TypeVar("_I", bound=np.integer)
_F = TypeVar("_F", bound=np.floating)


def pruned_matches(query: PartQuery, depth: int, floor: float = -np.inf) -> Matches | None:
    """The part's matches holding its exact top ``depth`` (ties at the cut included), with
    their exact scores; blocks and nodes that cannot reach the top are skipped.  None when
    pruning cannot skip enough to pay: the caller scores the part exhaustively.

    ``floor``: a score the view's top ``depth`` is known to reach already (the depth-th best
    of the parts searched before this one): nodes below it are skipped from the start, and
    only those at or above it are sure to be returned.

    The nodes holding a term with short postings are scored first (a rare word's nodes
    usually make the top and give a high threshold at once), then the blocks of best bound
    until there is a threshold, then MaxScore over the rest."""
    bound = query.bound
    order = np.flatnonzero(bound > 0)
    order = order[np.argsort(-bound[order], kind="stable")]
    seeds = query.short_docs()
    found: list[Matches] = [(seeds.astype(np.intp), query.exact(seeds))]
    scored, at, size, growth = len(seeds), 0, FIRST_ROUND, GROWTH
    threshold = max(floor, kth(found[0][1], depth))
    while at < len(order):
        batch = order[at:at + size]
        batch = batch[bound[batch] >= threshold]  # bounds decrease: a prefix
        if not len(batch):
            break
        found.append(_without(query.score(np.sort(batch)), seeds))
        scored += len(found[-1][0])
        at, size = at + size, size * growth
        if scored >= depth or threshold > -np.inf:
            values = np.concatenate([f[1] for f in found])
            threshold = max(floor, kth(values, depth))
            if at < len(order):  # MaxScore over the remaining blocks
                rest = _maxscore(query, np.sort(order[:at]), values, threshold, depth, seeds)
                if rest is None:  # every term needed: scoring all that is left costs less
                    return None  # in one exhaustive pass than in rounds of blocks
                found.append(rest)
                break
    return (np.concatenate([f[0] for f in found]), np.concatenate([f[1] for f in found]))


def _without(matches: tuple[npt.NDArray[_I], npt.NDArray[_F]],
             seeds: npt.NDArray[np.int64]) -> tuple[npt.NDArray[_I], npt.NDArray[_F]]:
    """``matches`` without the nodes already scored as seeds (each node counts once)."""
    docs, values = matches
    if not len(seeds) or not len(docs):
        return docs, values
    pos = np.minimum(np.searchsorted(seeds, docs), len(seeds) - 1)
    keep = seeds[pos] != docs
    return docs[keep], values[keep]


def _maxscore(query: PartQuery, done: npt.NDArray[np.intp], values: npt.NDArray[np.float32],
              threshold: float, depth: int, seeds: npt.NDArray[np.int64]) -> Matches | None:
    """MaxScore over the blocks not yet scored (``done`` are): the terms whose bounds sum
    below the threshold cannot make a top node alone, so only nodes holding one of the others
    are candidates; a candidate whose partial score plus those bounds stays below the
    threshold is dropped; the rest are scored exactly.  None: every term is needed."""
    upper = np.asarray(query.upper)
    by_upper = np.argsort(upper, kind="stable")
    sums = np.cumsum(upper[by_upper])
    optional = int(np.searchsorted(sums, threshold, side="left"))
    if optional == 0:
        return None
    rest = float(sums[optional - 1])
    allowed = query.bound >= threshold
    allowed[done] = False
    docs, partial = _without(query.partial([int(t) for t in by_upper[optional:]], allowed),
                             seeds)
    # Partial scores are lower bounds of distinct nodes' scores too.
    threshold = max(threshold, kth(np.concatenate([values.astype(np.float64), partial]),
                                    depth))
    keep = (partial + rest) * (1.0 + SLACK) >= threshold
    docs, partial = docs[keep], partial[keep]
    for j in range(optional - 1, -1, -1):  # optional terms, largest bound first
        if len(docs) <= 4 * depth:
            break
        hit, contrib = query.lookup(int(by_upper[j]), docs)
        partial[hit] += contrib
        rest = float(sums[j - 1]) if j else 0.0
        threshold = max(threshold, kth(np.concatenate([values.astype(np.float64), partial]),
                                        depth))
        keep = (partial + rest) * (1.0 + SLACK) >= threshold
        docs, partial = docs[keep], partial[keep]
    return docs.astype(np.intp), query.exact(docs)
