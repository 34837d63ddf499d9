"""Maximal Marginal Relevance: diversify a ranked candidate list.

Carbonell & Goldstein (1998), "The use of MMR, diversity-based reranking for reordering
documents and producing summaries", SIGIR '98, eq. (1)::

    MMR = argmax_{D_i in R \\ S} [ λ · Sim1(D_i, Q) − (1 − λ) · max_{D_j in S} Sim2(D_i, D_j) ]

picked greedily: ``S`` starts empty and each step moves the argmax from the candidates ``R``
to ``S``.  Here ``Sim1`` is ``relevance`` (or the cosine to ``query_vec`` when it is ``None``)
and ``Sim2`` the cosine between candidate vectors.  The two should be on comparable scales;
cosine relevances are, raw BM25 scores are not (min-max them first).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.floating]


def _unit_rows(matrix: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
    m = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    out: npt.NDArray[np.float64] = m / np.maximum(norms, 1e-12)
    return out


def mmr(
    query_vec: Vector | None,
    doc_vecs: npt.NDArray[np.floating],
    relevance: Sequence[float] | npt.NDArray[np.floating] | None,
    k: int,
    lambda_: float = 0.7,
) -> list[int]:
    """Indices of up to ``k`` rows of ``doc_vecs`` in MMR order.

    ``relevance[i]`` is candidate ``i``'s relevance to the query; when ``None`` it is the cosine
    of ``doc_vecs[i]`` with ``query_vec``.  ``lambda_`` = 1 is pure relevance order, 0 pure
    novelty.  Deterministic: equal marginal scores go to the lower index.
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError(f"lambda_ must be in [0, 1], not {lambda_}")
    if k < 0:
        raise ValueError(f"k must be >= 0, not {k}")
    docs = np.asarray(doc_vecs)
    n = 0 if docs.size == 0 and docs.ndim < 2 else docs.shape[0]
    if n == 0 or k == 0:
        return []
    units = _unit_rows(docs.reshape(n, -1))
    if relevance is None:
        if query_vec is None:
            raise ValueError("give relevance or query_vec")
        rel = units @ _unit_rows(np.asarray(query_vec).reshape(1, -1))[0]
    else:
        rel = np.asarray(relevance, dtype=np.float64).reshape(-1)
        if rel.shape[0] != n:
            raise ValueError(f"{rel.shape[0]} relevance scores for {n} candidates")
    chosen: list[int] = []
    left = np.ones(n, dtype=bool)
    redundancy = np.full(n, -np.inf)  # max similarity to anything chosen so far
    for _ in range(min(k, n)):
        penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
        marginal = lambda_ * rel - (1.0 - lambda_) * penalty
        marginal = np.where(left, marginal, -np.inf)
        best = int(np.argmax(marginal))  # first maximum: ties go to the lower index
        chosen.append(best)
        left[best] = False
        redundancy = np.maximum(redundancy, units @ units[best])
    return chosen
