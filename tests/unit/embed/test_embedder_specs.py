"""Embedders are one table (excerpt.embedder_names.SPECS): the names an import accepts, the
choice by language, and how answer composition may use a model derive from it.  A new
embedder is its module plus one line: shown with a small real one written here (hashed tokens
projected to 64 dimensions), which an import of Korean text then chooses and a semantic
search reads with."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.plugins import plugin_module

from excerpt import embedder_names
from excerpt.compose.extract import FAST_MODELS, SLOW_FLOORS
from excerpt.embed import registry
from excerpt.embedder_names import EMBEDDERS, SPECS, EmbedderSpec, for_language, spec_named
from excerpt.engine import Engine
from excerpt.types import Filters

HASHING = '''
"""Hashed tokens projected to 64 dimensions: a tiny real embedder."""

import hashlib

import numpy as np


class HashingEmbedder:
    name = "hashing-64"
    dim = 64

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers

    def _one(self, text: str) -> np.ndarray:
        out = np.zeros(self.dim, dtype=np.float32)
        for token in text.split():
            digest = hashlib.sha256(token.encode()).digest()
            out[digest[0] % self.dim] += 1.0 if digest[1] % 2 else -1.0
        norm = float(np.linalg.norm(out))
        return out / norm if norm else out

    def embed_documents(self, texts):
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text):
        return self._one(text)
'''


def test_the_shipped_embedders_are_their_lines() -> None:
    assert EMBEDDERS == ("auto", "minilm", "e5", "none")
    assert (for_language("en"), for_language("fr"), for_language("ko")) == ("minilm", "minilm",
                                                                         "e5")
    assert {"minilm"} == FAST_MODELS and SLOW_FLOORS == {"e5": 0.76}
    for spec in SPECS:  # the id vectors are stored under is the model's own name
        module, _, cls = spec.factory.partition(":")
        made = getattr(__import__(module, fromlist=[cls]), cls)()
        assert made.name == spec.model and spec_named(spec.model.upper()) == spec


@pytest.fixture
def hashing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The new module and its one line (first, so that Korean text gets it)."""
    with plugin_module(tmp_path, monkeypatch, "more_embedders.hashing", HASHING) as module:
        line = EmbedderSpec("hashing", "hashing-64", (), f"{module}:HashingEmbedder",
                            languages=("ko",))
        monkeypatch.setattr(embedder_names, "SPECS", (line, *SPECS))
        registry.clear_embedder_cache()
        yield
        registry.clear_embedder_cache()


def test_an_embedder_is_one_module_and_one_line(hashing: None, tmp_path: Path) -> None:
    assert registry.canonical_name("HASHING-64") == "hashing"
    assert registry.choose_embedder_for_language("ko") == "hashing"
    assert registry.get_embedder("hashing").dim == 64
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "scholarship.txt").write_text("장학금은 매 학기 정해진 기간에 신청한다.\n",
                                          encoding="utf-8")
    (rules / "parking.txt").write_text("주차장은 평일 오전에 연다.\n", encoding="utf-8")
    engine = Engine(tmp_path / "home")
    result = engine.ingest([rules], collection="rules", fmt="text", embedder="auto")
    assert result.embed_model == "hashing" and result.embedded >= 2
    found = engine.search("장학금은 매 학기", Filters("rules"), mode="semantic", k=1)
    assert found.hits and "장학금" in found.hits[0].node.text
