"""Stored evaluation runs, reports, comparisons and quality gates, through the CLI on a small
real BEIR corpus (tests/data/mini-beir)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.browser import png_size

from excerpt.cli.main import cli

MINI = Path(__file__).resolve().parents[1] / "data" / "mini-beir"


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args])


def ok(home: Path, *args: str) -> Any:
    out = run(home, *args, "--json")
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two stored runs of the same split: #1 BM25, #2 hybrid."""
    folder = tmp_path_factory.mktemp("eval") / "home"
    first = ok(folder, "eval", str(MINI), "--mode", "bm25", "--no-progress")
    second = ok(folder, "eval", str(MINI), "--mode", "hybrid", "--no-progress")
    assert (first["run_id"], second["run_id"]) == (1, 2)
    yield folder


def test_every_eval_is_stored_with_what_shaped_it(home: Path) -> None:
    listed = ok(home, "eval", "runs")["runs"]
    assert [(r["id"], r["mode"], r["kind"]) for r in listed] == [(1, "bm25", "beir"),
                                                                 (2, "hybrid", "beir")]
    assert listed[1]["summary"]["ndcg@10"] > listed[0]["summary"]["ndcg@10"] > 0.8
    from excerpt.engine import Engine

    stored = Engine(home).store.eval_run(2)
    assert stored["dataset"] == str(MINI) and stored["split"] == "test"
    assert stored["settings"]["k"] == 100 and stored["settings"]["fusion"] in ("blend", "rrf")
    assert stored["version"] and re.fullmatch(r"[0-9a-f]{40}", stored["git_commit"] or "")
    assert len(stored["snapshot_ids"]) == 1
    q1 = next(i for i in stored["items"] if i["id"] == "q1")
    assert q1["relevant"] == ["d01", "d02"] and q1["ranking"][0] == "d01"
    assert {"ndcg@10", "recall@100", "mrr@10", "latency_ms"} <= set(q1)
    assert {"analyze", "bm25", "semantic", "fusion", "total"} <= set(q1["stages_ms"])


def test_the_json_output_has_per_stage_latency(tmp_path: Path) -> None:
    report = ok(tmp_path, "eval", str(MINI), "--mode", "bm25", "--no-progress")
    stages = report["stage_latency_ms"]
    assert {"filter", "analyze", "bm25", "total"} <= set(stages)
    assert all(set(v) == {"p50", "p95", "max"} for v in stages.values())
    assert "per_query" not in report  # kept in the store, not printed


def test_quality_gates_pass_fail_and_refuse_unknown_metrics(home: Path) -> None:
    passed = run(home, "eval", str(MINI), "--mode", "bm25", "--no-progress",
                 "--fail-under", "ndcg@10=0.80,recall@100=0.85")
    assert passed.exit_code == 0, passed.output
    failed = run(home, "eval", str(MINI), "--mode", "bm25", "--no-progress",
                 "--fail-under", "ndcg@10=0.99")
    assert failed.exit_code == 3 and "below the bar: ndcg@10 0.8966 < 0.99" in failed.output
    for bad, words in (("ndcg@11=0.5", "has no metric 'ndcg@11'"),
                       ("ndcg@10", "is not METRIC=VALUE"), ("ndcg@10=high", "not a number")):
        out = run(home, "eval", str(MINI), "--mode", "bm25", "--no-progress", "--fail-under",
                  bad)
        assert out.exit_code == 1 and words in out.output, out.output


def test_compare_tests_the_difference_and_shows_changed_queries(home: Path) -> None:
    result = ok(home, "eval", "compare", "1", "2")
    ndcg = next(m for m in result["metrics"] if m["metric"] == "ndcg@10")
    assert ndcg["delta"] > 0 and 0 < ndcg["p_value"] < 1 and result["queries"] == 12
    assert result["changed"][0]["b"] > result["changed"][0]["a"]
    assert result["changed"][0]["top_a"] and result["changed"][0]["top_b"]
    same = ok(home, "eval", "compare", "1", "1")
    assert all(m["p_value"] == 1.0 and not m["significant"] for m in same["metrics"])
    assert same["changed"] == []
    missing = run(home, "eval", "compare", "1", "99")
    assert missing.exit_code == 1 and "no evaluation run 99" in missing.output


def test_reports_write_pngs_of_the_promised_size(home: Path, tmp_path: Path) -> None:
    from excerpt.evaluate.report import FIGURE_PX

    out = ok(home, "eval", "report", "1", "2", "--out", str(tmp_path / "r"))
    assert out["plots"] == ["latency.png", "metrics.png", "recall.png", "win-loss.png"]
    for name in out["plots"]:
        assert png_size((tmp_path / "r" / name).read_bytes()) == FIGURE_PX
    page = (tmp_path / "r" / "report.html").read_text("utf-8")
    assert page.count("data:image/png;base64,") == 4
    assert "http://" not in page and "https://" not in page and "<script" not in page
    single = ok(home, "eval", str(MINI), "--mode", "bm25", "--no-progress", "--report",
                str(tmp_path / "one"))
    assert Path(single["report"]).is_file() and not (tmp_path / "one" / "win-loss.png").exists()


SCENARIOS = """collection: beir-mini-beir
scenarios:
- id: s1
  query: How do vaccines train the immune system?
  gold: [d09]
  reference: Vaccines train the immune system to recognise a pathogen.
- id: s2
  query: Why do central banks raise interest rates?
  gold: [d18]
  reference: Central banks raise interest rates to slow borrowing and bring inflation down.
"""


def test_scenario_evaluations_are_stored_reported_and_gated(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "scenarios.yaml"
    path.write_text(SCENARIOS, "utf-8")
    out = ok(home, "eval", str(path), "--mode", "bm25", "--no-progress", "--report",
             str(tmp_path / "r"))
    stored = ok(home, "eval", "runs")["runs"][-1]
    assert stored["id"] == out["run_id"] and stored["kind"] == "scenarios"
    assert stored["summary"]["gold_recall"] == 1.0
    assert {"analyze", "bm25", "compose"} <= set(out["stage_latency_ms"])
    assert (tmp_path / "r" / "recall.png").is_file()
    gated = run(home, "eval", str(path), "--mode", "bm25", "--no-progress", "--fail-under",
                "faithfulness=1.01")
    assert gated.exit_code == 3
    mixed = run(home, "eval", "report", "1", str(out["run_id"]), "--out", str(tmp_path / "x"))
    assert mixed.exit_code == 1 and "mix BEIR and scenario" in mixed.output
