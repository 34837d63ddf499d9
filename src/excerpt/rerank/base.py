"""What every reranker looks like to the rest of excerpt, and the factory by name.

A reranker takes the query and the texts of the first stage's candidates (in first-stage
order: ``documents[0]`` is the best candidate retrieval found) and returns the positions it
keeps, best first::

    >>> from excerpt.rerank import get_reranker
    >>> get_reranker("none").rerank("q", ["a", "b", "c"], limit=2)
    [RerankResult(index=0, score=1.0), RerankResult(index=1, score=0.5)]

Names: ``none`` (keeps the first-stage order), ``late-interaction`` (MaxSim over MiniLM token
vectors), ``features`` (lexical coverage / proximity blended with the first-stage rank),
``cross-encoder:/path/to/model.onnx`` (an ONNX cross-encoder with ``tokenizer.json`` beside
it), or plain ``cross-encoder`` for the model the ``cross_encoder_model`` setting names.  A
request to the service may only name one of :data:`OFFERED` (:func:`offered_reranker`): paths
come from the operator's settings, never from a request.  Constructors are cheap; models load
on first use.  :data:`DEFAULT_RERANKER` is the one measured to help on SciFact, or ``none`` when
none did (bench/rerank.py, bench/RESULTS.md).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from excerpt.errors import InputError

NONE = "none"
LATE_INTERACTION = "late-interaction"
FEATURES = "features"
CROSS_ENCODER = "cross-encoder"
CROSS_ENCODER_PREFIX = CROSS_ENCODER + ":"
OFFERED = (NONE, FEATURES, LATE_INTERACTION, CROSS_ENCODER)
"""The rerankers a request to the service (REST, MCP) may name."""

DEFAULT_RERANKER = NONE
"""No offline reranker improved SciFact nDCG@10 over excerpt's hybrid ranking beyond noise
(features +0.003, p ≈ 0.09; late interaction +0.002 to +0.004, at 1.7-2.2 s a query without
cached token vectors); see bench/RESULTS.md ("Rerank").  Set a reranker by name to opt in:
``late-interaction`` is worth it over a BM25-only collection (+0.027)."""


@dataclass(frozen=True)
class RerankResult:
    index: int  # position in the `documents` given
    score: float


@runtime_checkable
class Reranker(Protocol):
    """Orders candidate texts for a query.

    ``rerank`` returns at most ``limit`` results sorted by score descending (ties: lower index
    first), each index at most once; ``[]`` for no documents or ``limit == 0``, without loading
    or computing anything.  A negative ``limit`` is a ``ValueError``.
    """

    name: str

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]: ...


def check_limit(limit: int) -> None:
    if limit < 0:
        raise ValueError(f"limit must be >= 0, not {limit}")


def ranked(scores: Sequence[float], limit: int) -> list[RerankResult]:
    """Results for ``scores[i]`` of document ``i``: score descending, ties by lower index,
    truncated to ``limit``.  A NaN score sorts last (a broken model never promotes a text)."""
    check_limit(limit)

    def key(i: int) -> tuple[int, float, int]:
        s = float(scores[i])
        return (1, 0.0, i) if math.isnan(s) else (0, -s, i)

    order = sorted(range(len(scores)), key=key)[:limit]
    return [RerankResult(i, float(scores[i])) for i in order]


def rerank_with(scores: Callable[[str, Sequence[str]], Sequence[float]], query: str,
                documents: Sequence[str], limit: int) -> list[RerankResult]:
    """The protocol's ``rerank`` for a backend that scores every document: nothing is computed
    for no documents or ``limit == 0``."""
    check_limit(limit)
    if not documents or limit == 0:
        return []
    return ranked(scores(query, documents), limit)


class KeepOrder:
    """The identity reranker: first-stage order, score ``1 / (1 + index)``."""

    name: str = NONE

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]:
        check_limit(limit)
        return [RerankResult(i, 1.0 / (1 + i)) for i in range(min(limit, len(documents)))]

    def __repr__(self) -> str:
        return "KeepOrder()"


def _late_interaction() -> Reranker:
    from excerpt.rerank.late_interaction import LateInteractionReranker

    return LateInteractionReranker()


def _features() -> Reranker:
    from excerpt.rerank.features import FeatureReranker

    return FeatureReranker()


_FACTORIES: dict[str, Callable[[], Reranker]] = {
    NONE: KeepOrder,
    LATE_INTERACTION: _late_interaction,
    FEATURES: _features,
}


_cache: dict[str, Reranker] = {}
_cache_lock = threading.Lock()


def reranker_names() -> tuple[str, ...]:
    """The names :func:`get_reranker` knows; ``cross-encoder:PATH`` takes a model path."""
    return (*_FACTORIES, CROSS_ENCODER, f"{CROSS_ENCODER_PREFIX}PATH")


def offered_reranker(name: str | None) -> str | None:
    """``name`` as a request may give it: one of :data:`OFFERED` (any case), or None for the
    server's setting. A path (``cross-encoder:PATH``) or an unknown name is an InputError that
    says the same whatever the path, so a request can neither probe nor load a server file."""
    if name is None:
        return None
    key = name.strip().lower()
    if key not in OFFERED:
        raise InputError(f"rerank {name[:80]!r} is not a reranker this server offers "
                         f"(choose one of: {', '.join(OFFERED)}); a request names a reranker, "
                         "never a model path")
    return key


def get_reranker(name: str, cross_encoder_model: str = "") -> Reranker:
    """The process-wide reranker for ``name`` (one instance per name, so a model loads once;
    constructors are cheap and models load on first ``rerank``). ``cross-encoder`` alone is
    the model at ``cross_encoder_model`` (the setting of that name).

    :class:`excerpt.errors.InputError` for an unknown name (listing the known ones),
    ``cross-encoder:`` without a path, or a cross-encoder path that does not exist.
    """
    if name.strip().lower() == CROSS_ENCODER:
        if not cross_encoder_model:
            raise InputError("no cross-encoder is configured: set the cross_encoder_model "
                             "setting to the ONNX model's path")
        name = CROSS_ENCODER_PREFIX + cross_encoder_model
    key = name.strip()
    if key.lower().startswith(CROSS_ENCODER_PREFIX):
        key = CROSS_ENCODER_PREFIX + key[len(CROSS_ENCODER_PREFIX):].strip()
    else:
        key = key.lower()
    with _cache_lock:
        found = _cache.get(key)
        if found is None:
            found = _cache[key] = _build(name, key)
        return found


def _build(name: str, key: str) -> Reranker:
    if key.startswith(CROSS_ENCODER_PREFIX):
        path = key[len(CROSS_ENCODER_PREFIX):]
        if not path:
            raise InputError(f"{name!r}: give the model file, as cross-encoder:/path/model.onnx")
        from excerpt.rerank.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(path)
    factory = _FACTORIES.get(key)
    if factory is None:
        raise InputError(f"unknown reranker {name!r} (known: {', '.join(reranker_names())})")
    return factory()


def clear_reranker_cache() -> None:
    """Forget the cached instances (tests)."""
    with _cache_lock:
        _cache.clear()
