"""Exact BM25 top k of a query of common words, from their impact orders (store/impacts.py).

Block-max pruning (retrieve/pruning.py) skips blocks of ordinals whose bound is below the
threshold; a word in nearly every node has nearly the same bound in every block, so a query
made of such words reads every block.  Their impact orders hold each such term's postings in
runs of one tf, shortest node first, so the run's first node bounds it.  The top is found as
in Fagin's threshold algorithms, a few thousand postings per term:

1. each impact-ordered term reads its best runs; every posting of the other terms is read;
2. a candidate's partial score is what the runs read gave it (a lower bound of its score);
   adding the best bound left of each term whose runs did not hold it gives an upper bound;
   a node no run held weighs at most the sum of those bounds;
3. the threshold is the depth-th best of the partial scores, raised by exact scores of the
   best candidates; once the sum of the bounds left is below it, the top is among the
   candidates whose upper bound reaches it, and only those are scored exactly;
4. else the next round reads more runs, chosen by how much each lowers the sum of bounds
   left per posting read (:class:`_Plan`): the fewest that bring the sum below the
   threshold when they are within a sixteenth of the segment, else four times the postings
   read so far; a round past that sixteenth gives up (None: the blocks decide).

Scores returned are :meth:`bounds.PartQuery.exact`'s, so the ranking is the exhaustive one to the
bit; partial and upper bounds only choose which nodes to score, with ``SLACK`` for rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from excerpt.retrieve.bounds import SLACK, PartQuery, kth, ranges
from excerpt.retrieve.view import Matches, ViewPart
from excerpt.store.impacts import Impacts

FIRST = 1024  # postings read per impact-ordered term in the first round
SHARE = 16  # give up when a round would read more than size / SHARE postings
ROUNDS = 6
EXACT = 2048  # candidates of best upper bound scored exactly each round (raise the threshold)
GROWTH = 4  # each round reads at most this many times the postings read before
Float64 = npt.NDArray[np.float64]


class _Runs:
    """A term's impact runs, best bound first, under the view's statistics."""

    def __init__(self, imp: Impacts, weight: float, avgdl: float, k1: float, b: float) -> None:
        norm = np.asarray(k1 * (1.0 - b + b * imp.length / avgdl), dtype=np.float32)
        bound = (imp.tf / (imp.tf + norm)).astype(np.float64) * weight * (1.0 + SLACK)
        order = np.argsort(-bound, kind="stable")
        ends = np.append(imp.start[1:], len(imp.docs))
        self.start, self.end, self.tf = imp.start[order], ends[order], imp.tf[order]
        self.left = np.append(bound[order], 0.0)  # after reading c runs, at most left[c]
        self.read = np.append(0, np.cumsum(self.end - self.start))  # postings in c runs
        self.docs, self.weight = imp.docs, weight

    def runs_for(self, postings: int) -> int:
        """How many of the best runs hold ``postings`` postings (all of them at most)."""
        return min(int(np.searchsorted(self.read, postings)), len(self.left) - 1)

    def taken(self, runs: int, norm: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int64],
                                                                        Float64]:
        """The nodes of the first ``runs`` runs and the term's contributions there."""
        keep = np.zeros(len(self.start), dtype=bool)
        keep[:runs] = True
        at = ranges(self.start, self.end, keep)
        docs = self.docs[at].astype(np.int64)
        tf = np.repeat(self.tf[:runs], (self.end - self.start)[:runs])
        return docs, (tf / (tf + norm[docs])).astype(np.float64) * self.weight


def impact_matches(query: PartQuery, depth: int, floor: float = -np.inf,
                   held: Sequence[Impacts | None] | None = None) -> Matches | None:
    """The part's matches holding its exact top ``depth`` (ties at the cut included) with
    their exact scores, read from the impact orders of its common terms; None when no query
    term has one, when the other terms' postings alone are many, or when the rounds would
    read too much (module docstring).  ``floor`` as :func:`pruning.pruned_matches` has it;
    ``held``: each term's impact order when the caller has read them already."""
    part, terms, avgdl, k1, b = query.part, query.given, query.avgdl, query.k1, query.b
    seg = part.segment
    held = held if held is not None else [seg.impacts(term) for term, *_ in terms]
    if all(imp is None for imp in held):
        return None
    limit = seg.size // SHARE
    rest = [(docs, tf, weight) for (_, docs, tf, weight), imp in zip(terms, held, strict=True)
            if imp is None]
    if sum(len(docs) for docs, _, _ in rest) > limit:
        return None
    runs = [_Runs(imp, weight, avgdl, k1, b)
            for (_, _, _, weight), imp in zip(terms, held, strict=True) if imp is not None]
    norm = seg.length_norm(avgdl, k1, b)
    cuts = [r.runs_for(FIRST) for r in runs]
    plan: _Plan | None = None
    for _ in range(ROUNDS):
        outside = _left(runs, cuts)
        docs, partial, upper = _candidates(part, rest, runs, cuts, norm, outside)
        threshold = max(floor, kth(partial, depth))
        if outside >= threshold and len(docs):  # exact scores of the likeliest raise it
            best = docs[np.argsort(-upper, kind="stable")[:max(EXACT, 2 * depth)]]
            threshold = max(threshold, kth(query.exact(np.sort(best)), depth))
        if outside < threshold or outside == 0.0:
            found = docs[upper >= threshold]
            return found.astype(np.intp), query.exact(found)
        plan = plan or _Plan(runs)
        cuts = plan.cuts(cuts, threshold, _read(runs, cuts) * GROWTH, limit)
        if _read(runs, cuts) > limit:
            return None
    return None


def _left(runs: list[_Runs], cuts: list[int]) -> float:
    """The most a node no run read holds: the best bound left of each term, summed."""
    return sum(float(r.left[c]) for r, c in zip(runs, cuts, strict=True))


def _read(runs: list[_Runs], cuts: list[int]) -> int:
    return sum(int(r.read[c]) for r, c in zip(runs, cuts, strict=True))


Rest = list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float32], float]]


def _candidates(part: ViewPart, rest: Rest, runs: list[_Runs], cuts: list[int],
                norm: npt.NDArray[np.float32], outside: float
                ) -> tuple[npt.NDArray[np.int64], Float64, Float64]:
    """Every visible node read so far (the other terms' postings, the runs read), its
    partial score and an upper bound of its score (``outside``: :func:`_left`)."""
    nodes: list[npt.NDArray[np.int64]] = []
    contrib: list[Float64] = []
    seen: list[Float64] = []  # per posting read, its term's bound left (not to add)
    for docs, tf, weight in rest:
        nodes.append(docs.astype(np.int64))
        contrib.append((tf / (tf + norm[docs])).astype(np.float64) * weight)
        seen.append(np.zeros(len(docs)))
    for run, cut in zip(runs, cuts, strict=True):
        read, weights = run.taken(cut, norm)
        nodes.append(read)
        contrib.append(weights)
        seen.append(np.full(len(read), run.left[cut]))
    every, value, known = np.concatenate(nodes), np.concatenate(contrib), np.concatenate(seen)
    if part.visible != part.segment.size:
        visible = part.mask[every]
        every, value, known = every[visible], value[visible], known[visible]
    found, inverse = np.unique(every, return_inverse=True)
    partial = np.asarray(np.bincount(inverse, value, minlength=len(found)), dtype=np.float64)
    upper = partial + outside - np.bincount(inverse, known, minlength=len(found))
    return found, partial, np.asarray(upper * (1.0 + SLACK), dtype=np.float64)


class _Plan:
    """Where each term may stop (after ``FIRST`` postings, twice that, four times...), and
    the steps between those stops of all terms in one sequence, those that lower the bound
    left most per posting read first.  A term's steps are the lower convex hull of its
    stops, so their rates fall and every prefix of the sequence is a prefix of each term's:
    the best way found to spend that many postings."""

    def __init__(self, runs: list[_Runs]) -> None:
        steps: list[tuple[float, int, int, int, float]] = []  # (-rate, term, runs, read, drop)
        for t, run in enumerate(runs):
            stops = _hull(run)
            for (_, r0, l0), (c1, r1, l1) in pairwise(stops):
                steps.append((-(l0 - l1) / max(r1 - r0, 1), t, c1, r1 - r0, l0 - l1))
        steps.sort()
        self.term = np.array([s[1] for s in steps], dtype=np.int64)
        self.until = np.array([s[2] for s in steps], dtype=np.int64)
        self.read = np.cumsum([s[3] for s in steps]).astype(np.int64)
        self.left = sum(float(r.left[0]) for r in runs) - np.cumsum([s[4] for s in steps])
        self.runs = runs

    def cuts(self, done: list[int], threshold: float, budget: int, limit: int) -> list[int]:
        """Runs per term, no fewer than ``done``: the fewest whose bounds left sum below
        ``threshold`` when ``limit`` postings suffice, else the best ``budget`` postings."""
        steps = int(np.searchsorted(self.read, budget, side="right"))
        if threshold > 0.0:  # left decreases: the first prefix below the threshold
            need = int(np.searchsorted(-self.left, -threshold, side="right")) + 1
            if need <= len(self.read) and self.read[need - 1] <= limit:
                steps = need
        cuts = list(done)
        for t, until in zip(self.term[:steps].tolist(), self.until[:steps].tolist(),
                            strict=True):
            cuts[t] = max(cuts[t], until)
        return cuts


def _hull(run: _Runs) -> list[tuple[int, int, float]]:
    """The term's stops (runs read, postings read, bound left) at FIRST x 2^j postings and
    at its end, reduced to their lower convex hull."""
    stops = [(0, 0, float(run.left[0]))]
    wanted, last = FIRST, len(run.left) - 1
    while stops[-1][0] < last:
        c = run.runs_for(wanted)
        if c > stops[-1][0]:
            point = (c, int(run.read[c]), float(run.left[c]))
            while len(stops) >= 2 and _above(stops[-2], stops[-1], point):
                stops.pop()
            stops.append(point)
        wanted *= 2
    return stops


def _above(a: tuple[int, int, float], b: tuple[int, int, float],
           c: tuple[int, int, float]) -> bool:
    """Whether ``b`` lies on or above the segment from ``a`` to ``c`` (not on the hull)."""
    return (b[2] - a[2]) * (c[1] - a[1]) >= (c[2] - a[2]) * (b[1] - a[1])
