"""Rerankers by name: the factory (what every reranker is and shares: rerank/contract.py).

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

import threading
from collections.abc import Callable

from excerpt.errors import InputError
from excerpt.rerank.contract import (
    CROSS_ENCODER,
    CROSS_ENCODER_PREFIX,
    DEFAULT_RERANKER,
    FEATURES,
    LATE_INTERACTION,
    NONE,
    OFFERED,
    KeepOrder,
    Reranker,
    RerankResult,
    check_limit,
    ranked,
    rerank_with,
)

__all__ = ["CROSS_ENCODER", "CROSS_ENCODER_PREFIX", "DEFAULT_RERANKER", "FEATURES",
           "LATE_INTERACTION", "NONE", "OFFERED", "KeepOrder", "RerankResult", "Reranker",
           "check_limit", "clear_reranker_cache", "get_reranker", "offered_reranker", "ranked",
           "rerank_with", "reranker_names"]


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
