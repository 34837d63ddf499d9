"""Inner-product search over each segment's memory-mapped, L2-normalised vectors: exact, or
through the segment's IVF index when it has one and enough of it is visible (store/ann.py;
the ranking then says it is approximate)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from excerpt.retrieve.view import Candidate, View, ViewPart, top_candidates
from excerpt.store import ann

QueryEmbedder = Callable[[str], npt.NDArray[np.float32]]


def dense_scores(
    view: View, embed_query: Callable[[str], QueryEmbedder | None], query: str,
    depth: int | None = None, config: ann.AnnConfig | None = None,
) -> list[npt.NDArray[np.float32]]:
    """Cosine similarity per part (-inf for hidden nodes and for parts without vectors).

    ``embed_query(model)`` returns the query embedder of that model, so a view whose segments
    were embedded by different models still compares each segment with its own model. With
    ``depth``, a part with an IVF index scores only the ``depth`` (at least
    ``config.candidates``) nearest visible nodes it finds, exactly; the rest stay -inf and
    the part is listed in ``view.approximate``. ``config`` defaults to ``ann.DEFAULT`` (the
    settings' defaults); the engine passes the one its settings make
    (:meth:`~excerpt.store.ann.AnnConfig.from_settings`), so setting ``ann.DEFAULT`` changes
    no engine search.
    """
    config = config or ann.DEFAULT
    cache: dict[str, npt.NDArray[np.float32]] = {}
    out = []
    for index, part in enumerate(view.parts):
        scores = np.full(part.segment.size, -np.inf, dtype=np.float32)
        vectors, model = part.segment.vectors, part.segment.embed_model
        if vectors is not None and model is not None and part.visible:
            if model not in cache:
                embedder = embed_query(model)
                if embedder is None:
                    out.append(scores)
                    continue
                cache[model] = embedder(query)
            if depth is not None and _walkable(part, config):
                _walk(part, cache[model], depth, config, scores)
                if index not in view.approximate:  # once, searched again or not
                    view.approximate.append(index)
            else:
                scores = np.asarray(vectors @ cache[model], dtype=np.float32)
                if part.visible < part.segment.size:
                    scores[~part.mask] = -np.inf
        out.append(scores)
    return out


def _walkable(part: ViewPart, config: ann.AnnConfig) -> bool:
    return part.segment.ann is not None and ann.usable(part.mask, part.visible, config)


def _walk(part: ViewPart, query: npt.NDArray[np.float32], depth: int,
          config: ann.AnnConfig, scores: npt.NDArray[np.float32]) -> None:
    ordinals, exact = ann.search(part.segment.ann, part.segment.vector_rows, part.mask, query,
                                 depth, config)
    scores[ordinals] = exact


def search_dense(
    view: View, embed_query: Callable[[str], QueryEmbedder | None], query: str, depth: int,
    config: ann.AnnConfig | None = None,
) -> list[Candidate]:
    """The ``depth`` best visible nodes; ``config``: how an IVF index is probed (default
    ``ann.DEFAULT``; the engine passes the one its settings make)."""
    return top_candidates(view, dense_scores(view, embed_query, query, depth, config), depth)


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
