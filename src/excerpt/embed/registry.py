"""Embedders by name, one instance per process; and which one a language gets."""

from __future__ import annotations

import threading
from collections.abc import Callable

from excerpt.embed import e5, minilm
from excerpt.embed.base import Embedder

MINILM = "minilm"
E5 = "e5"

_FACTORIES: dict[str, Callable[..., Embedder]] = {
    MINILM: minilm.MiniLMEmbedder,
    E5: e5.E5Embedder,
}
_ALIASES: dict[str, str] = {
    MINILM: MINILM,
    minilm.MODEL_NAME.lower(): MINILM,
    "all-minilm-l6-v2": MINILM,
    E5: E5,
    e5.MODEL_NAME.lower(): E5,
    "multilingual-e5-small": E5,
}

_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def embedder_names() -> tuple[str, ...]:
    """The short names :func:`get_embedder` knows (aliases aside)."""
    return tuple(_FACTORIES)


def canonical_name(name: str) -> str:
    """``"minilm"`` or ``"e5"`` for a short name or a full model id; ValueError otherwise."""
    key = _ALIASES.get(name.strip().lower())
    if key is None:
        known = ", ".join(sorted({*_FACTORIES, minilm.MODEL_NAME, e5.MODEL_NAME}))
        raise ValueError(f"unknown embedder {name!r} (known: {known})")
    return key


def get_embedder(name: str) -> Embedder:
    """The process-wide embedder for ``name`` (``minilm``, ``e5`` or a full model id).

    Cheap: the model itself loads on first use.  Raises :class:`excerpt.errors.DependencyError`
    (with a ``pip install`` hint) when the model's package is missing.
    """
    key = canonical_name(name)
    with _cache_lock:
        found = _cache.get(key)
        if found is None:
            found = _FACTORIES[key]()
            _cache[key] = found
        return found


def new_embedder(name: str, workers: int) -> Embedder:
    """A fresh embedder for ``name`` running on ``workers`` threads, not the shared one: a
    cluster worker holds one of its own, sized to the cores it was given."""
    return _FACTORIES[canonical_name(name)](workers=workers)


def clear_embedder_cache() -> None:
    """Forget the cached instances (tests)."""
    with _cache_lock:
        _cache.clear()


def choose_embedder_for_language(lang: str) -> str:
    """``"e5"`` for Korean or mixed text, ``"minilm"`` for everything else."""
    return E5 if lang.strip().lower() in {"ko", "kor", "korean", "mixed"} else MINILM
