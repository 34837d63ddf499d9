"""Seed 004, log artifacts: pipeline traces and the human-readable logs, without leaks."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.graph import GraphLimits
from excerpt.settings import Settings
from excerpt.types import Filters, Principal

from .conftest import FakeEnterprise

WHO = Principal(frozenset({"finance", "security"}), frozenset({"internal", "sensitive"}))


def test_search_graph_context_write_traces_and_logs(fake_enterprise: FakeEnterprise,
                                                    tmp_path: Path) -> None:
    logs = tmp_path / "log"
    engine = Engine(fake_enterprise.home, Settings(log_dir=str(logs)))
    filters = Filters("code", snapshot_id=fake_enterprise.snapshot_a)
    found = engine.search("payments invoices VAT", filters, WHO, "hybrid", 5)
    tree = engine.graph(["C0005"], filters, WHO, GraphLimits(2, 120))
    engine.context(["C0005"], ["C0006"], filters, WHO, 300)

    traces = sorted((logs / "pipeline_traces").glob("2*.json"))
    assert [json.loads(t.read_text())["kind"] for t in traces] == ["search", "graph", "context"]
    latest = json.loads((logs / "pipeline_traces" / "latest.json").read_text())
    assert latest["kind"] == "context"
    first = json.loads(traces[0].read_text())
    for stage in first["stages"]:
        assert set(stage) >= {"stage", "state_before", "state_after"}
    applied = first["stages"][0]["state_after"]["retrieval_filters"]
    assert applied == {"collection": "code", "repo": "Fake",
                       "snapshot_id": fake_enterprise.snapshot_a,
                       "acl_tags_any": ["finance", "security"],
                       "classification_labels_all": ["internal", "sensitive"]}
    hits = first["stages"][1]["state_after"]["hits"]
    assert [h["id"] for h in hits] == [h.node.id for h in found.hits]

    results_log = (logs / "test_results_latest.log").read_text()
    for heading in ("Question:", "Search mode:", "Applied filters:", "Observed results:",
                    "Observed security:"):
        assert heading in results_log
    assert "Question: payments invoices VAT" in results_log
    graph_log = (logs / "graph_results_latest.log").read_text()
    assert '"graph_max_depth": 2' in graph_log and "Seed nodes: C0005" in graph_log
    assert f"{tree.removed_nodes} nodes and {tree.removed_edges} edges removed" in graph_log


def test_hidden_nodes_never_reach_a_trace_or_log(fake_enterprise: FakeEnterprise,
                                                 tmp_path: Path) -> None:
    logs = tmp_path / "log"
    engine = Engine(fake_enterprise.home, Settings(log_dir=str(logs)))
    admin_engine = Engine(fake_enterprise.home)
    filters = Filters("code", snapshot_id=fake_enterprise.snapshot_a)
    segment = admin_engine.store.segment(fake_enterprise.snapshot_a)
    hidden = {i for i, ok in zip(segment.ids, segment.visible(WHO), strict=True) if not ok}
    assert "C0003" in hidden and "C0027" in hidden
    for query in ("query routing RouteRequest", "proc_ProcessPayment", "architecture"):
        engine.search(query, filters, WHO, "hybrid", 20)
    tree = engine.graph(["C0001"], filters, WHO, GraphLimits(3, 120))
    assert tree.removed_nodes >= 1  # C0001 -> C0002 (hr only) is cut
    engine.context(["C0001", "C0002", "C0003"], [], filters, WHO, 1000)
    written = "\n".join(p.read_text() for p in logs.rglob("*") if p.is_file())
    named = set(re.findall(r"\bC\d{4}\b", written))
    assert named & hidden <= {"C0002", "C0003"}  # only as the caller's own context request
    context_trace = json.loads(sorted((logs / "pipeline_traces").glob("2*-context.json"))[0]
                               .read_text())
    assert context_trace["stages"][1]["state_after"]["skipped"] == [
        {"id": "C0002", "reason": "not found"}, {"id": "C0003", "reason": "not found"}]
    without_context = written.replace(json.dumps(context_trace, indent=2), "")
    for trace in (logs / "pipeline_traces").glob("2*-context.json"):
        without_context = without_context.replace(trace.read_text(), "")
    assert not set(re.findall(r"\bC\d{4}\b", without_context)) & hidden
    graph_trace = json.loads(sorted((logs / "pipeline_traces").glob("2*-graph.json"))[0]
                             .read_text())
    assert graph_trace["stages"][1]["state_after"]["nodes"][0]["id"] == "C0001"


def test_cli_log_dir(fake_enterprise: FakeEnterprise, tmp_path: Path) -> None:
    logs = tmp_path / "cli-log"
    out = CliRunner().invoke(cli, ["--home", str(fake_enterprise.home), "--log-dir", str(logs),
                                   "search", "DependencyTreeExpander", "--collection", "code",
                                   "--mode", "bm25", "--all-access", "--json"],
                             obj={"json": False})
    assert out.exit_code == 0, out.output
    assert (logs / "pipeline_traces" / "latest.json").is_file()
    assert "Question: DependencyTreeExpander" in (logs / "test_results_latest.log").read_text()
