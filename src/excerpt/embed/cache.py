"""Vectors keyed by (model name, sha256 of the text), so unchanged text is never embedded twice.

:class:`VectorCache` is the protocol; :class:`MemoryVectorCache` keeps vectors in a dict (tests,
one-off runs), and the store provides a SQLite implementation of the same protocol.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from excerpt.embed.base import Embedder, FloatMatrix


def text_hash(text: str) -> str:
    """sha256 hex digest of the UTF-8 text: the cache key of its vector."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@runtime_checkable
class VectorCache(Protocol):
    """Where embedded vectors are kept between runs."""

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, FloatMatrix]:
        """The vectors known for ``hashes`` under ``model``; unknown hashes are left out."""
        ...

    def put_many(self, model: str, items: Mapping[str, FloatMatrix]) -> None:
        """Remember ``hash -> vector`` under ``model`` (overwriting)."""
        ...


class MemoryVectorCache:
    """A :class:`VectorCache` in a dict; copies on the way in and out."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], FloatMatrix] = {}
        self._lock = threading.Lock()

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, FloatMatrix]:
        with self._lock:
            return {h: self._data[(model, h)].copy() for h in hashes if (model, h) in self._data}

    def put_many(self, model: str, items: Mapping[str, FloatMatrix]) -> None:
        with self._lock:
            for h, vector in items.items():
                self._data[(model, h)] = np.array(vector, dtype=np.float32, copy=True)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


BatchRunner = Callable[[Embedder, list[list[str]]], Iterator[tuple[int, FloatMatrix]]]
"""runner(embedder, batches) yields ``(index of the batch, its vectors)`` for every batch, in
any order: in this process (:func:`run_in_order`) or spread over a cluster
(:mod:`excerpt.embed.ray_embed`)."""


def run_in_order(embedder: Embedder, batches: list[list[str]]) -> Iterator[tuple[int, FloatMatrix]]:
    """Each batch embedded here, one after the other (the embedder uses the cores itself)."""
    for index, batch in enumerate(batches):
        yield index, embedder.embed_documents(batch)


def embed_with_cache(
    embedder: Embedder,
    texts: Sequence[str],
    cache: VectorCache,
    batch_size: int = 64,
    progress: Callable[[int], None] | None = None,
    runner: BatchRunner = run_in_order,
) -> tuple[FloatMatrix, int]:
    """Vectors for ``texts`` (``(len(texts), dim)`` float32), embedding only what the cache lacks.

    Returns the matrix and how many texts were actually embedded: each distinct uncached text
    once, however often it occurs.  New vectors go to the cache after every batch, so an
    interrupted run keeps what it finished.  A cached vector of the wrong shape is re-embedded.

    ``progress(done)`` is called after each embedded batch with how many of ``texts`` have a
    vector so far (cache hits and duplicates included), ending at ``len(texts)``; when nothing
    needs embedding it is called once with ``len(texts)``.

    ``runner`` embeds the batches; whatever runs them, the batches are the same (the missing
    texts in order, ``batch_size`` at a time), so the vectors are those of a local run.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, not {batch_size}")
    dim = embedder.dim
    out = np.zeros((len(texts), dim), dtype=np.float32)
    if len(texts) == 0:
        return out, 0

    rows_of: dict[str, list[int]] = {}
    first_text: dict[str, str] = {}
    for row, text in enumerate(texts):
        h = text_hash(text)
        rows_of.setdefault(h, []).append(row)
        first_text.setdefault(h, text)
    unique = list(rows_of)

    done = 0
    have: set[str] = set()
    for h, vector in cache.get_many(embedder.name, unique).items():
        v = np.asarray(vector, dtype=np.float32)
        if h in rows_of and v.shape == (dim,):
            out[rows_of[h]] = v
            done += len(rows_of[h])
            have.add(h)
    missing = [h for h in unique if h not in have]

    batches = [missing[start : start + batch_size]
               for start in range(0, len(missing), batch_size)]
    texts_of = [[first_text[h] for h in batch] for batch in batches]
    for index, vectors in runner(embedder, texts_of):
        batch = batches[index]
        if vectors.shape != (len(batch), dim):
            raise ValueError(
                f"{embedder.name} returned shape {vectors.shape} for {len(batch)} texts"
            )
        fresh: dict[str, FloatMatrix] = {}
        for h, vector in zip(batch, vectors, strict=True):
            out[rows_of[h]] = vector
            done += len(rows_of[h])
            fresh[h] = vector
        cache.put_many(embedder.name, fresh)
        if progress is not None:
            progress(done)
    if not missing and progress is not None:
        progress(len(texts))
    return out, len(missing)
