"""Scenario files: loading, checking, and scoring on the bundled handbook with a real judge."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from excerpt.embed.registry import get_embedder
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.evaluate.scenarios import evaluate_scenarios, load_scenarios

HANDBOOK = Path(__file__).resolve().parents[3] / "examples" / "handbook"
ATOMIC = {
    "id": "atomic",
    "query": "What happens to a half-written snapshot when the process is killed?",
    "gold": "01-snapshots.md:0001",
    "reference": "If the process is killed at any moment before the commit, the snapshot was "
                 "never visible.",
    "kind": "natural",
}
UNSUPPORTED = {
    "id": "made-up",
    "query": "How are snapshots published?",
    "gold": ["01-snapshots.md:0001"],
    "reference": "The run publishes its snapshot at the very end.",
    "answer": "Snapshots are mailed to every customer on a floppy disk. Pigeons deliver them.",
    "kind": "natural",
}


def write(tmp_path: Path, data: object, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def handbook(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    engine = Engine(tmp_path_factory.mktemp("handbook") / "home")
    engine.ingest(HANDBOOK, collection="demo", embedder="none")
    return engine


def test_scores_a_found_answer_and_an_unsupported_one(handbook: Engine, tmp_path: Path) -> None:
    file = load_scenarios(write(tmp_path, {"collection": "demo",
                                           "scenarios": [ATOMIC, UNSUPPORTED]}))
    report = evaluate_scenarios(handbook, file, mode="bm25", judge=get_embedder("minilm"))
    found, made_up = report["per_scenario"]
    assert found["gold_recall"] == 1.0 and found["missed_gold"] == []
    assert found["context_recall"] == 1.0
    assert found["faithfulness"] == 1.0  # extractive: every sentence comes from a context
    assert "[1]" in found["answer"]
    assert made_up["faithfulness"] == 0.0  # nothing about floppy disks in the handbook
    assert found["answer_relevancy"] > made_up["answer_relevancy"]
    assert report["scenarios"] == 2 and report["k"] == "adaptive"
    assert report["by_kind"]["natural"]["scenarios"] == 2
    assert 0.0 < report["answer_relevancy_mismatched"] < 1.0


def test_an_explicit_k_and_a_collection_override(handbook: Engine, tmp_path: Path) -> None:
    file = load_scenarios(write(tmp_path, {"scenarios": [ATOMIC]}))
    report = evaluate_scenarios(handbook, file, "demo", "bm25", k=1,
                                judge=get_embedder("minilm"))
    assert report["per_scenario"][0]["k"] == 1
    with pytest.raises(InputError, match="no collection"):
        evaluate_scenarios(handbook, file, mode="bm25")
    with pytest.raises(InputError, match="does not exist"):
        evaluate_scenarios(handbook, file, "nowhere", "bm25")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"scenarios": []}, "no scenarios"),
        ({"items": [ATOMIC]}, "list 'scenarios'"),
        ({"scenarios": [{**ATOMIC, "reference": ""}]}, "missing reference"),
        ({"scenarios": [{**ATOMIC, "gold": [1, 2]}]}, "gold must be a list"),
        ({"scenarios": [ATOMIC, ATOMIC]}, "ids repeat"),
        ({"scenarios": ["just a string"]}, "must be a mapping"),
    ],
)
def test_bad_files_are_refused_with_the_reason(tmp_path: Path, data: object,
                                               message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_scenarios(write(tmp_path, data))


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_scenarios(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios: [unclosed", encoding="utf-8")
    with pytest.raises(InputError, match="not valid YAML"):
        load_scenarios(bad)


def test_a_reranker_is_applied_and_reported(handbook: Engine, tmp_path: Path) -> None:
    file = load_scenarios(write(tmp_path, {"collection": "demo", "scenarios": [ATOMIC]}))
    report = evaluate_scenarios(handbook, file, mode="bm25", judge=get_embedder("minilm"),
                                reranker="features")
    assert report["reranker"] == "features"
    assert report["per_scenario"][0]["gold_recall"] == 1.0
