"""The plain-text table of a QA evaluation (``excerpt eval FILE.yaml`` without ``--json``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from excerpt.evaluate.runs import principal_label

COLUMNS = (("stated", "fact_stated"), ("quotes", "fact_in_quotes"),
           ("read", "fact_in_documents"), ("found", "fact_in_candidates"),
           ("gold@k", "gold_recall@k"), ("cite", "citation_precision"),
           ("verbatim", "quotes_verbatim"), ("numbers", "citation_numbering"),
           ("caut-P", "cautious_precision"), ("caut-R", "cautious_recall"),
           ("caut-ans", "cautious_on_answerable"), ("abstain", "abstention_accuracy"))


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"


def _row(label: str, m: Mapping[str, Any]) -> str:
    lat = m["latency_ms"]
    cells = "".join(f"{_cell(m[key]):>9}" for _, key in COLUMNS)
    return (f"  {label:<16}{m['questions']:>4}{cells}"
            f"{lat['p50']:>8.0f}{lat['p95']:>8.0f}")


def qa_lines(report: Mapping[str, Any]) -> str:
    """A header line, then one row overall, per split and per corpus, then the misses."""
    head = "".join(f"{name:>9}" for name, _ in COLUMNS)
    lines = [
        f"{report['questions']} questions ({report['mode']}, k={report['k']}, split "
        f"{report['split']}, collection {report['collection']}, answered by "
        f"{report['answerer']}, as {principal_label(report['principal'])}):",
        f"  {'':<16}{'n':>4}{head}{'p50 ms':>8}{'p95 ms':>8}",
        _row("all", report),
        *(_row(split, m) for split, m in report["by_split"].items()),
    ]
    if len(report["by_corpus"]) > 1:
        lines += [_row(corpus, m) for corpus, m in report["by_corpus"].items()]
    stages = report.get("stage_latency_ms", {})
    if stages:
        lines.append("  stages p50/p95 ms: " + "  ".join(
            f"{s} {v['p50']:.0f}/{v['p95']:.0f}" for s, v in stages.items()))
    return "\n".join(lines)
