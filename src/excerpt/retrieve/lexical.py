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

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from excerpt.retrieve.view import Candidate, View, ViewPart, top_candidates

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float32]

K1 = 1.5
B = 0.75


def idf(df: int, n: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def term_weight(
    tf: npt.NDArray[np.float32], length: npt.NDArray[np.float32], avgdl: float, k1: float, b: float
) -> npt.NDArray[np.float32]:
    return np.asarray(tf / (tf + k1 * (1.0 - b + b * length / avgdl)), dtype=np.float32)


def query_weights(tokens: Sequence[str], extra: Sequence[Sequence[str]] = (),
                  extra_weight: float = 0.5) -> dict[str, float]:
    """Query term weights: each query token counts once per occurrence; each expansion term
    (the tokens of one synonym or hypernym, e.g. 재정 지원) adds ``extra_weight`` in all, shared
    by its tokens that are not query tokens, so a two-word synonym weighs no more than a
    one-word one."""
    weights: dict[str, float] = dict(Counter(tokens))
    query = set(weights)
    for term in extra:
        new = [t for t in term if t not in query]
        for token in new:
            weights[token] = weights.get(token, 0.0) + extra_weight / len(new)
    return weights


def bm25_scores(
    view: View, query_tokens: Sequence[str] | Mapping[str, float], k1: float = K1, b: float = B
) -> list[npt.NDArray[np.float32]]:
    """Per view part, a float32 score array over ordinals: -inf where no query term matches.

    The visible postings of every query term are gathered first (df counts visible nodes across
    all parts), then each part is scored in one vectorised pass and summed per node with
    ``np.bincount``: a handful of numpy calls per query instead of a handful per term.
    """
    n, avgdl = view.visible, view.avg_length
    gathered: list[list[tuple[IntArray, FloatArray, float]]] = [[] for _ in view.parts]
    weights = query_tokens if isinstance(query_tokens, Mapping) else Counter(query_tokens)
    for term, qtf in weights.items() if n else ():
        matches = [_visible_postings(part, term) for part in view.parts]
        df = sum(len(m[0]) for m in matches if m is not None)
        if df == 0:
            continue
        weight = qtf * idf(df, n)
        for per_part, m in zip(gathered, matches, strict=True):
            if m is not None and len(m[0]):
                per_part.append((m[0], m[1], weight))
    return [_score_part(part, terms, avgdl, k1, b) for part, terms in zip(
        view.parts, gathered, strict=True)]


def _visible_postings(part: ViewPart, term: str) -> tuple[IntArray, FloatArray] | None:
    postings = part.segment.postings(term)
    if postings is None:
        return None
    if part.visible == part.segment.size:
        return postings.docs, postings.tf
    keep = part.mask[postings.docs]
    return postings.docs[keep], postings.tf[keep]


def _score_part(part: ViewPart, terms: list[tuple[IntArray, FloatArray, float]], avgdl: float,
                k1: float, b: float) -> npt.NDArray[np.float32]:
    if not terms:
        return np.full(part.segment.size, -np.inf, dtype=np.float32)
    docs = np.concatenate([t[0] for t in terms])
    tf = np.concatenate([t[1] for t in terms])
    weights = np.repeat([t[2] for t in terms], [len(t[0]) for t in terms])
    contrib = weights * term_weight(tf, part.segment.doc_len[docs], avgdl, k1, b)
    scores = np.bincount(docs, contrib, minlength=part.segment.size).astype(np.float32)
    # Every BM25 contribution is > 0 (Lucene's idf is positive), so 0 means "no term matched".
    scores[scores == 0] = -np.inf
    return scores


def search_bm25(
    view: View, query_tokens: Sequence[str] | Mapping[str, float], depth: int, k1: float = K1,
    b: float = B,
) -> list[Candidate]:
    return top_candidates(view, bm25_scores(view, query_tokens, k1, b), depth)


def idf_weights(view: View, tokens: Sequence[str]) -> dict[str, float]:
    """Each distinct token's BM25 idf over the nodes of the view the caller may see (a hidden
    node's words weigh nothing here either). A token the view never holds gets the mean weight
    of the tokens it does hold (1.0 when it holds none): it still counts as unanswered, without
    outweighing the words the passages can match."""
    n = max(view.visible, 1)
    found: dict[str, float] = {}
    missing: list[str] = []
    for term in dict.fromkeys(tokens):
        df = sum(len(p[0]) for part in view.parts if (p := _visible_postings(part, term)))
        if df:
            found[term] = idf(df, n)
        else:
            missing.append(term)
    fill = sum(found.values()) / len(found) if found else 1.0
    return {**found, **dict.fromkeys(missing, fill)}
