"""ask --mmr on an embedded corpus: the passages are re-ordered for diversity, none lost."""

from __future__ import annotations

from pathlib import Path

from excerpt.compose.ask import AskOptions
from excerpt.engine import Engine
from excerpt.types import Filters, Principal

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"


def test_mmr_reorders_the_same_passages(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    engine.ingest(HANDBOOK, collection="demo", embedder="minilm")
    question = "How are snapshots published and searched?"
    who, filters = Principal.anonymous(), Filters("demo")
    plain = engine.ask(question, filters, who, "hybrid", AskOptions(doc_limit=6))
    diverse = engine.ask(question, filters, who, "hybrid",
                         AskOptions(doc_limit=6, mmr_lambda=0.3))
    ids = [p.node.id for p in plain.documents]
    assert sorted(ids) == sorted(p.node.id for p in diverse.documents)
    assert "mmr" in diverse.timings_ms and "mmr" not in plain.timings_ms
    assert diverse.documents[0].node.id == ids[0]  # the most relevant passage stays first
    bm25 = engine.ask(question, filters, who, "bm25", AskOptions(doc_limit=6, mmr_lambda=0.3))
    assert "mmr" not in bm25.timings_ms  # no vectors asked for in bm25 mode
