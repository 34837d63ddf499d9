"""Inner-product search over each segment's memory-mapped, L2-normalised vectors: exact, or
through the segment's IVF index when it has one and enough of it is visible (store/ann.py;
the ranking then says it is approximate)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from excerpt.retrieve.view import Candidate, Matches, View, ViewPart, rank_matches
from excerpt.store import ann

QueryEmbedder = Callable[[str], npt.NDArray[np.float32]]


def dense_matches(
    view: View, embed_query: Callable[[str], QueryEmbedder | None], query: str,
    depth: int | None = None, config: ann.AnnConfig | None = None,
) -> list[Matches]:
    """Per part, its visible nodes' cosine similarity as (ordinals, scores): every visible
    node, or, with ``depth``, in a part with an IVF index only the nearest visible nodes its
    walk finds (``config.candidates`` per part, by their 8-bit scores) that are among the best
    :func:`~excerpt.store.ann.rescored` of every walked part, scored exactly (the part is then
    listed in ``view.approximate``). Parts without vectors, or whose model has no query
    embedder here, have none.

    ``embed_query(model)`` returns the query embedder of that model, so a view whose segments
    were embedded by different models still compares each segment with its own model.
    ``config`` defaults to ``ann.DEFAULT`` (the settings' defaults); the engine passes the one
    its settings make (:meth:`~excerpt.store.ann.AnnConfig.from_settings`), so setting
    ``ann.DEFAULT`` changes no engine search.
    """
    config = config or ann.DEFAULT
    cache: dict[str, npt.NDArray[np.float32] | None] = {}
    out: list[Matches] = []
    walked: dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = {}
    for index, part in enumerate(view.parts):
        vectors, model = part.segment.vectors, part.segment.embed_model
        if vectors is None or model is None or not part.visible:
            out.append(_NONE)
            continue
        if model not in cache:
            embedder = embed_query(model)
            cache[model] = None if embedder is None else embedder(query)
        vector = cache[model]
        out.append(_NONE)
        if vector is None:
            continue
        if (depth is not None and walks_index(part, config)
                and part.segment.ann is not None):  # (its file gone: scanned exactly)
            walked[index] = ann.nearest(part.segment.ann, part.mask, vector, depth, config)
            if index not in view.approximate:  # once, searched again or not
                view.approximate.append(index)
        else:
            scores = np.asarray(vectors @ vector, dtype=np.float32)
            ordinals = (np.arange(len(scores)) if part.visible == part.segment.size
                        else np.flatnonzero(part.mask))
            out[index] = (ordinals, scores[ordinals])
    if walked and depth is not None:
        for index, ordinals in _best_walked(walked, ann.rescored(depth, config)).items():
            part = view.parts[index]
            vector = cache[str(part.segment.embed_model)]
            assert vector is not None
            out[index] = ann.rescore(part.segment.vector_rows, ordinals, vector)
    return out


def _best_walked(walked: Mapping[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]],
                 count: int) -> dict[int, npt.NDArray[np.int64]]:
    """Per part, its walked nodes among the ``count`` best 8-bit scores of all parts (ties at
    the cut kept): only those are read and re-scored in float. Re-scoring every walked node of
    every part read 400 scattered rows per segment from files that, at 10M nodes, no longer
    fit in memory beside the process (bench/RESULTS.md, issue 30)."""
    scores = np.concatenate([found for _, found in walked.values()])
    if len(scores) <= count:
        return {index: ordinals for index, (ordinals, _) in walked.items()}
    cut = np.partition(scores, len(scores) - count)[len(scores) - count]
    return {index: ordinals[found >= cut] for index, (ordinals, found) in walked.items()}


_NONE: Matches = (np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32))


def walks_index(part: ViewPart, config: ann.AnnConfig) -> bool:
    """Whether a search of ``depth`` walks the part's IVF index (it has one, and enough of it
    is visible) rather than scanning its vectors; the index is not loaded to answer."""
    return part.segment.indexed and ann.usable(part.mask, part.visible, config)


def search_dense(
    view: View, embed_query: Callable[[str], QueryEmbedder | None], query: str, depth: int,
    config: ann.AnnConfig | None = None,
) -> list[Candidate]:
    """The ``depth`` best visible nodes; ``config``: how an IVF index is probed (default
    ``ann.DEFAULT``; the engine passes the one its settings make)."""
    return rank_matches(view, dense_matches(view, embed_query, query, depth, config), depth)


def node_vectors(
    view: View, embed_query: Callable[[str], QueryEmbedder | None], query: str,
    nodes: Sequence[tuple[str, str]],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None:
    """The query's vector and the stored vectors of ``nodes`` ((snapshot id, node id), each
    visible in the view), for MMR; None unless every node has a vector of one model."""
    parts = {i.snapshot_id: p for p in view.parts for i in p.infos}
    models = {parts[s].segment.embed_model for s, _ in nodes if s in parts}
    if len(models) != 1 or None in models or any(s not in parts for s, _ in nodes):
        return None
    model = models.pop()
    assert model is not None
    embedder = embed_query(model)
    if embedder is None:
        return None
    rows = []
    for snapshot_id, node_id in nodes:
        part = parts[snapshot_id]
        vectors, row = part.segment.vectors, part.row(node_id)
        if vectors is None or row is None:
            return None
        rows.append(vectors[row])
    return embedder(query), np.asarray(rows, dtype=np.float32)
