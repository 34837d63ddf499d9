"""Embedders by name, one instance per process; and which one a language gets."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

from excerpt import embedder_names as names
from excerpt.embed.base import Embedder
from excerpt.embedder_names import for_language, spec_named


def _factory(name: str) -> Callable[..., Embedder]:
    """The class that makes the embedder ``name`` (a short name), imported now."""
    spec = spec_named(name)
    assert spec is not None and spec.name == name
    module, _, cls = spec.factory.partition(":")
    return getattr(importlib.import_module(module), cls)  # type: ignore[no-any-return]


_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def embedder_names() -> tuple[str, ...]:
    """The short names :func:`get_embedder` knows (aliases aside)."""
    return tuple(spec.name for spec in names.SPECS)


def canonical_name(name: str) -> str:
    """The short name (``"minilm"``, ``"e5"``) for a short name, a model id or an alias;
    ValueError otherwise."""
    spec = spec_named(name)
    if spec is None:
        known = ", ".join(sorted({n for s in names.SPECS for n in (s.name, s.model)}))
        raise ValueError(f"unknown embedder {name!r} (known: {known})")
    return spec.name


def get_embedder(name: str) -> Embedder:
    """The process-wide embedder for ``name`` (``minilm``, ``e5`` or a full model id).

    Cheap: the model itself loads on first use.  Raises :class:`excerpt.errors.DependencyError`
    (with a ``pip install`` hint) when the model's package is missing.
    """
    key = canonical_name(name)
    with _cache_lock:
        found = _cache.get(key)
        if found is None:
            found = _factory(key)()
            _cache[key] = found
        return found


def new_embedder(name: str, workers: int) -> Embedder:
    """A fresh embedder for ``name`` running on ``workers`` threads, not the shared one: a
    cluster worker holds one of its own, sized to the cores it was given."""
    return _factory(canonical_name(name))(workers=workers)


def clear_embedder_cache() -> None:
    """Forget the cached instances (tests)."""
    with _cache_lock:
        _cache.clear()


def choose_embedder_for_language(lang: str) -> str:
    """``"e5"`` for Korean or mixed text, ``"minilm"`` for everything else (the languages
    each embedder's line in excerpt.embedder_names gives it)."""
    return for_language(lang)
