"""A hybrid ask embeds its question once (search's dense leg, the sentence scores and MMR
share the vector: excerpt.embed.queries), and a kept vector is the one the model gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from excerpt.embed.queries import CachedQueries
from excerpt.engine import Engine
from excerpt.types import Filters

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
QUESTION = "How does excerpt keep a snapshot from being half written?"


def test_a_hybrid_ask_embeds_its_question_once(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine(tmp_path / "home")
    engine.ingest(HANDBOOK, collection="demo", embedder="minilm")
    model = engine._embedder("minilm")
    embedded: list[str] = []
    real = model.embed_query

    def spy(text: str) -> Any:
        embedded.append(text)
        return real(text)

    monkeypatch.setattr(model, "embed_query", spy)
    options = engine.ask_options(mmr=True)  # MMR reads the question's vector too
    first = engine.ask(QUESTION, Filters("demo"), mode="hybrid", options=options)
    assert embedded.count(QUESTION) == 1
    again = engine.ask(QUESTION, Filters("demo"), mode="hybrid", options=options)
    assert embedded.count(QUESTION) == 1 and again.composed.answer == first.composed.answer
    engine.close()


def test_kept_vectors_are_the_models_own_and_read_only() -> None:
    class Counting:
        calls = 0

        def embed_query(self, text: str) -> Any:
            Counting.calls += 1
            return np.full(3, float(len(text)), dtype=np.float32)

        def embed_documents(self, texts: Any) -> Any:
            return np.zeros((len(texts), 3), dtype=np.float32)

    kept = CachedQueries(Counting(), size=2)
    a = kept.embed_query("ab")
    assert kept.embed_query("ab") is a and Counting.calls == 1
    assert list(a) == [2.0, 2.0, 2.0] and not a.flags.writeable
    kept.embed_query("abc")
    kept.embed_query("abcd")  # "ab" is the oldest of three: dropped
    kept.embed_query("ab")
    assert Counting.calls == 4
