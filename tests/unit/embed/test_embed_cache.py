"""The vector cache: unchanged text is never embedded twice."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest

from excerpt.embed import (
    Embedder,
    FloatMatrix,
    MemoryVectorCache,
    VectorCache,
    embed_with_cache,
    get_embedder,
    text_hash,
)


class Counting:
    """The real model, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.calls: list[int] = []

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        self.calls.append(len(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> FloatMatrix:
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return get_embedder("minilm")


TEXTS = [
    "Aspirin reduces the risk of heart attack.",
    "Statins lower LDL cholesterol.",
    "Aspirin reduces the risk of heart attack.",  # duplicate
    "Exercise improves insulin sensitivity.",
    "",
]


def test_text_hash_is_sha256_of_utf8() -> None:
    assert text_hash("abc") == hashlib.sha256(b"abc").hexdigest()
    assert text_hash("장학금") == hashlib.sha256("장학금".encode()).hexdigest()
    assert len(text_hash("")) == 64


def test_memory_cache_round_trip_and_model_isolation() -> None:
    cache = MemoryVectorCache()
    assert isinstance(cache, VectorCache)
    v = np.arange(4, dtype=np.float32)
    cache.put_many("m1", {"h1": v})
    v[0] = 99  # the cache holds a copy
    got = cache.get_many("m1", ["h1", "h2"])
    assert list(got) == ["h1"]
    np.testing.assert_array_equal(got["h1"], np.arange(4, dtype=np.float32))
    assert cache.get_many("m2", ["h1"]) == {}
    assert len(cache) == 1


def test_second_run_embeds_nothing(minilm: Embedder) -> None:
    model = Counting(minilm)
    cache = MemoryVectorCache()
    first, n_first = embed_with_cache(model, TEXTS, cache, batch_size=2)
    assert n_first == 4  # the duplicate is embedded once
    assert sum(model.calls) == 4
    assert first.shape == (5, 384)
    assert first.dtype == np.float32
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)

    model.calls.clear()
    second, n_second = embed_with_cache(model, TEXTS, cache, batch_size=2)
    assert n_second == 0
    assert model.calls == []
    np.testing.assert_array_equal(first, second)


def test_only_changed_text_is_embedded(minilm: Embedder) -> None:
    model = Counting(minilm)
    cache = MemoryVectorCache()
    before, _ = embed_with_cache(model, TEXTS, cache)
    changed = [*TEXTS[:3], "Exercise improves insulin sensitivity in adults.", TEXTS[4]]
    model.calls.clear()
    after, n = embed_with_cache(model, changed, cache)
    assert n == 1
    assert model.calls == [1]
    np.testing.assert_array_equal(after[:3], before[:3])
    assert not np.allclose(after[3], before[3])


def test_models_do_not_share_vectors(minilm: Embedder) -> None:
    cache = MemoryVectorCache()
    embed_with_cache(minilm, TEXTS[:2], cache)
    e5 = get_embedder("e5")
    vectors, n = embed_with_cache(e5, TEXTS[:2], cache)
    assert n == 2
    np.testing.assert_allclose(vectors, e5.embed_documents(TEXTS[:2]), atol=1e-6)


def test_progress_reports_cumulative_counts(minilm: Embedder) -> None:
    cache = MemoryVectorCache()
    seen: list[int] = []
    embed_with_cache(minilm, TEXTS[:2], cache)  # warm two of them
    _, n = embed_with_cache(minilm, TEXTS, cache, batch_size=1, progress=seen.append)
    assert n == 2  # "Exercise ..." and ""
    assert seen == [4, 5]  # 3 known (incl. the duplicate) + 1, then + 1
    seen.clear()
    embed_with_cache(minilm, TEXTS, cache, progress=seen.append)
    assert seen == [5]


def test_empty_input(minilm: Embedder) -> None:
    out, n = embed_with_cache(minilm, [], MemoryVectorCache())
    assert out.shape == (0, 384)
    assert out.dtype == np.float32
    assert n == 0


def test_wrong_shape_in_cache_is_re_embedded(minilm: Embedder) -> None:
    cache = MemoryVectorCache()
    cache.put_many(minilm.name, {text_hash(TEXTS[0]): np.ones(3, dtype=np.float32)})
    out, n = embed_with_cache(minilm, TEXTS[:1], cache)
    assert n == 1
    assert out.shape == (1, 384)
    assert cache.get_many(minilm.name, [text_hash(TEXTS[0])])[text_hash(TEXTS[0])].shape == (384,)


def test_bad_batch_size(minilm: Embedder) -> None:
    with pytest.raises(ValueError):
        embed_with_cache(minilm, TEXTS, MemoryVectorCache(), batch_size=0)
