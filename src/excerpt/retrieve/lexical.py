"""BM25 over a view of several segments, with statistics of the whole visible view.

Scoring is Lucene's BM25 (the variant bm25s calls ``lucene``):

    idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))                  Lucene BM25Similarity
    w(t, d)     = tf / (tf + k1 * (1 - b + b * |d| / avgdl))           Lucene drops (k1 + 1)
    score(q, d) = sum over query tokens t of idf(t) * w(t, d)          repeated tokens count again

N, df and avgdl are summed over every segment of the view at query time and count only the
nodes the caller may see, so the ranking does not depend on how content was split into imports
and hidden nodes leave no trace in visible scores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from excerpt.bm25 import K1, B, idf
from excerpt.retrieve.bounds import PartQuery
from excerpt.retrieve.impacts import impact_matches
from excerpt.retrieve.pruning import pruned_matches
from excerpt.retrieve.view import Candidate, Matches, View, ViewPart, rank_matches
from excerpt.types import IdfWeights

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float32]

PRUNE_FROM = 200_000  # segment size from which pruning pays: lost at 100k, won at 300k


def term_weight(
    tf: npt.NDArray[np.float32], length: npt.NDArray[np.float32], avgdl: float, k1: float, b: float
) -> npt.NDArray[np.float32]:
    return np.asarray(tf / (tf + k1 * (1.0 - b + b * length / avgdl)), dtype=np.float32)


PartTerms = list[tuple[str, IntArray, FloatArray, float]]
"""One view part's query terms: (term, visible ordinals, their tf, qtf x idf)."""


def gather(view: View, query_tokens: Sequence[str] | Mapping[str, float]
           ) -> Iterator[PartTerms]:
    """Per part, in order, the visible postings of every query term with the term's weight:
    df counts visible nodes across all parts (from the postings' extents where a part is read
    whole); terms no visible node holds are left out. A part's postings are read as its turn
    comes, slices of the segment's map: at 10M nodes in ten segments, copying every part's
    postings of a term in nearly every node up front (to count df) cost a query 100-300 ms."""
    if len(view.parts) == 1 and view.visible:  # the usual case: df is the postings' length
        weights = query_tokens if isinstance(query_tokens, Mapping) else Counter(query_tokens)
        terms = _part_terms(view.parts[0], list(weights.items()))
        yield [(term, docs, tf, qtf * idf(len(docs), view.visible))
               for term, docs, tf, qtf in terms]
        return
    weighted = _weighted_terms(view, query_tokens)
    for part in view.parts:
        yield _part_terms(part, weighted)


def _weighted_terms(view: View, query_tokens: Sequence[str] | Mapping[str, float]
                    ) -> list[tuple[str, float]]:
    """The query's terms some visible node holds, in the query's order, with qtf x idf."""
    n = view.visible
    weights = query_tokens if isinstance(query_tokens, Mapping) else Counter(query_tokens)
    out = []
    for term, qtf in weights.items() if n else ():
        df = sum(_visible_count(part, term) for part in view.parts)
        if df:
            out.append((term, qtf * idf(df, n)))
    return out


def _visible_count(part: ViewPart, term: str) -> int:
    """How many nodes of the part the caller may read hold ``term``."""
    at = part.segment.term_range(term)
    if at is None:
        return 0
    if part.visible == part.segment.size:
        return at[1] - at[0]
    return int(np.count_nonzero(part.mask[part.segment.post_docs[at[0]:at[1]]]))


def _part_terms(part: ViewPart, weighted: Sequence[tuple[str, float]]) -> PartTerms:
    """The part's visible postings of each weighted term (terms it has none of left out), the
    weight passed through."""
    out = []
    seg = part.segment
    docs_all, tf_all, full = seg.post_docs, seg.post_tf, part.visible == seg.size
    for term, weight in weighted:
        at = seg.term_range(term)
        if at is None:
            continue
        docs, tf = docs_all[at[0]:at[1]], tf_all[at[0]:at[1]]
        if not full:
            keep = part.mask[docs]
            docs, tf = docs[keep], tf[keep]
        if len(docs):
            out.append((term, docs, tf, weight))
    return out


def bm25_scores(
    view: View, query_tokens: Sequence[str] | Mapping[str, float], k1: float = K1, b: float = B
) -> list[npt.NDArray[np.float32]]:
    """Per view part, a float32 score array over ordinals: -inf where no query term matches.

    The exhaustive scorer, and the reference :func:`search_bm25` must agree with to the bit:
    each part is scored in one vectorised pass, summed per node with ``np.bincount`` (float64,
    in the query's term order) and cast to float32.
    """
    avgdl = view.avg_length
    return [_score_part(part, terms, avgdl, k1, b)
            for part, terms in zip(view.parts, gather(view, query_tokens), strict=True)]


def _contributions(part: ViewPart, terms: PartTerms,
                   avgdl: float, k1: float, b: float) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """Every (node, qtf x idf x term weight) of the terms' postings, term after term.  The
    float32 weight is :func:`term_weight`'s to the bit (its length part comes from
    ``Segment.length_norm``), its product with the float64 term weight is float64."""
    norm = part.segment.length_norm(avgdl, k1, b)
    if len(terms) == 1:
        _, docs, tf, weight = terms[0]
        return docs, (tf / (tf + norm[docs])).astype(np.float64) * weight
    docs = np.concatenate([t[1] for t in terms])
    tf = np.concatenate([t[2] for t in terms])
    weights = np.repeat([t[3] for t in terms], [len(t[1]) for t in terms])
    return docs, weights * (tf / (tf + norm[docs]))


def _score_part(part: ViewPart, terms: PartTerms,
                avgdl: float, k1: float, b: float) -> npt.NDArray[np.float32]:
    """Every node's score, from :func:`term_weight` itself rather than the cached
    ``Segment.length_norm`` :func:`_contributions` uses: :func:`bm25_scores` is the reference
    the fast and pruned paths are tested against (to the bit), so it shares no cache with them."""
    if not terms:
        return np.full(part.segment.size, -np.inf, dtype=np.float32)
    docs = np.concatenate([t[1] for t in terms])
    tf = np.concatenate([t[2] for t in terms])
    weights = np.repeat([t[3] for t in terms], [len(t[1]) for t in terms])
    contrib = weights * term_weight(tf, part.segment.doc_len[docs], avgdl, k1, b)
    scores = np.bincount(docs, contrib, minlength=part.segment.size).astype(np.float32)
    # Every BM25 contribution is > 0 (Lucene's idf is positive), so 0 means "no term matched".
    scores[scores == 0] = -np.inf
    return scores


def _part_matches(part: ViewPart, terms: PartTerms,
                  avgdl: float, k1: float, b: float, depth: int) -> Matches:
    """:func:`_score_part`'s best ``depth`` finite scores (and any tied with the last), without
    an array over every node: one term needs no sum at all (0.0 + x is x).  Ties are decided
    on the float32 scores, as the exhaustive ranking decides them."""
    if not terms:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
    docs, contrib = _contributions(part, terms, avgdl, k1, b)
    if len(terms) == 1:
        return docs.astype(np.intp), contrib.astype(np.float32)
    return _top_of_sums(np.bincount(docs, contrib).astype(np.float32), depth)  # 0: no match


def _cached(view: View, weights: Mapping[str, float], avgdl: float, k1: float, b: float,
            depth: int) -> list[Matches] | None:
    """:func:`_part_matches` of every part, from the segments' term weights cached for the
    view's statistics (``Segment.term_weights``, the same bits as :func:`term_weight`), each
    part's postings narrowed to the rows the view has there (a merged segment holds other
    snapshots' rows too): a handful of numpy calls per term and part, whatever the query's
    length. The terms are summed in the
    query's order and df counts the visible postings of every part, as :func:`gather` does.
    None when a segment keeps no such cache (too many postings)."""
    cached: list[FloatArray] = []
    for part in view.parts:
        weight_of = part.segment.term_weights(avgdl, k1, b)
        if weight_of is None:
            return None
        cached.append(weight_of)
    n = view.visible
    terms: list[tuple[float, list[tuple[IntArray, FloatArray] | None]]] = []
    for term, qtf in weights.items():
        per_part: list[tuple[IntArray, FloatArray] | None] = []
        df = 0
        for part, weight_of in zip(view.parts, cached, strict=True):
            found = _cached_postings(part, weight_of, term)
            per_part.append(found)
            df += 0 if found is None else len(found[0])
        if df:
            terms.append((qtf * idf(df, n), per_part))
    return [_summed([(w, found) for w, per_part in terms if (found := per_part[i]) is not None],
                    depth) for i in range(len(view.parts))]


def _cached_postings(part: ViewPart, weight_of: FloatArray, term: str
                     ) -> tuple[IntArray, FloatArray] | None:
    """The term's postings the part may read, with their cached weights; None: none."""
    seg = part.segment
    at = seg.term_range(term)
    if at is None or at[1] <= at[0]:
        return None
    docs, weights = seg.post_docs[at[0]:at[1]], weight_of[at[0]:at[1]]
    if part.visible < seg.size:
        keep = part.mask[docs]
        docs, weights = docs[keep], weights[keep]
    return (docs, weights) if len(docs) else None


def _summed(terms: list[tuple[float, tuple[IntArray, FloatArray]]], depth: int) -> Matches:
    if not terms:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
    docs = np.concatenate([d for _, (d, _) in terms])
    contrib = np.repeat([w for w, _ in terms], [len(d) for _, (d, _) in terms]) * (
        np.concatenate([ws for _, (_, ws) in terms]))
    if len(terms) == 1:
        return docs.astype(np.intp), contrib.astype(np.float32)
    return _top_of_sums(np.bincount(docs, contrib).astype(np.float32), depth)


def _top_of_sums(scores: npt.NDArray[np.float32], depth: int) -> Matches:
    """Ordinals of the ``depth`` best positive scores and any tied with the last of them
    (partitioned among the matches only: a query matches a few hundred of 10,000 nodes)."""
    ordinals = np.flatnonzero(scores > 0)
    values = scores[ordinals]
    if len(values) > depth:
        kth = np.partition(values, len(values) - depth)[len(values) - depth]
        keep = values >= kth
        ordinals, values = ordinals[keep], values[keep]
    return ordinals, values


def search_bm25(
    view: View, query_tokens: Sequence[str] | Mapping[str, float], depth: int, k1: float = K1,
    b: float = B, prune_from: int | None = None,
) -> list[Candidate]:
    """The exhaustive top ``depth`` (ties by id), scored as :func:`bm25_scores` scores; parts
    of at least ``prune_from`` nodes (default :data:`PRUNE_FROM`, read at each call) whose
    segment has block maxima skip the nodes that cannot reach it (retrieve/pruning.py), or
    read the top from the impact orders of common terms (retrieve/impacts.py).  A one-term
    query is not block-pruned: its exhaustive pass has no sum and beat pruning at 1M."""
    avgdl = view.avg_length
    prune_from = PRUNE_FROM if prune_from is None else prune_from
    # From the cached term weights when every part is read whole: the view's statistics are
    # then the same whoever asks, so the cache (one array per statistics, a few kept) is not
    # rebuilt for each caller's rights or each metadata filter.
    if view.visible and all(p.whole and p.segment.size < prune_from for p in view.parts):
        weights = query_tokens if isinstance(query_tokens, Mapping) else Counter(query_tokens)
        every = _cached(view, weights, avgdl, k1, b, depth)
        if every is not None:
            return rank_matches(view, every, depth)
    matches: list[Matches] = []
    best = np.zeros(0, dtype=np.float32)  # the depth best scores of the parts read so far
    for part, terms in zip(view.parts, gather(view, query_tokens), strict=True):
        floor = float(best[0]) if len(best) == depth else -np.inf
        found = (_pruned(part, terms, avgdl, k1, b, depth, floor)
                 if part.segment.size >= prune_from else None)
        matches.append(_part_matches(part, terms, avgdl, k1, b, depth) if found is None
                       else found)
        best = _best_values(best, matches[-1][1], depth)
    return rank_matches(view, matches, depth)


def _pruned(part: ViewPart, terms: PartTerms, avgdl: float, k1: float, b: float, depth: int,
            floor: float) -> Matches | None:
    """The part's top without scoring every match: from the impact orders of its common
    terms (retrieve/impacts.py), else skipping blocks (retrieve/pruning.py), both over one
    :class:`~excerpt.retrieve.bounds.PartQuery`; None: neither pays, the caller scores every
    match."""
    seg = part.segment
    held = [seg.impacts(term) for term, *_ in terms]
    impacts = any(imp is not None for imp in held)
    blocks = len(terms) > 1 and seg.block_shift is not None
    if not (impacts or blocks):
        return None
    query = PartQuery(part, terms, avgdl, k1, b)
    found = impact_matches(query, depth, floor, held) if impacts else None
    if found is None and blocks:
        found = pruned_matches(query, depth, floor)
    return found


def _best_values(best: FloatArray, more: FloatArray, depth: int) -> FloatArray:
    """The ``depth`` largest of ``best`` and ``more``, smallest first: the first is a score
    the view's top ``depth`` reaches, whatever the parts not yet read hold."""
    values = np.concatenate([best, more.astype(np.float32, copy=False)])
    if len(values) > depth:
        values = np.partition(values, len(values) - depth)[len(values) - depth:]
    return np.sort(values)


def idf_weights(view: View, tokens: Sequence[str]) -> IdfWeights:
    """Each distinct token's BM25 idf over the nodes of the view the caller may see (a hidden
    node's words weigh nothing here either). A token the view never holds gets the mean weight
    of the tokens it does hold (1.0 when it holds none): it still counts as unanswered, without
    outweighing the words the passages can match."""
    n = max(view.visible, 1)
    found: dict[str, float] = {}
    missing: list[str] = []
    for term in dict.fromkeys(tokens):
        df = sum(_visible_count(part, term) for part in view.parts)
        if df:
            found[term] = idf(df, n)
        else:
            missing.append(term)
    fill = sum(found.values()) / len(found) if found else 1.0
    return IdfWeights({**found, **dict.fromkeys(missing, fill)}, missing)
