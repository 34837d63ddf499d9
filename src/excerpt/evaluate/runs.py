"""Stored evaluation runs, and the quality gates a CI can put on them.

Every ``excerpt eval`` keeps one run in the store: what was measured (dataset, split,
collection and snapshot ids, mode, and the principal it ran as: the run holds only what that
principal may see), every setting that shaped the result (k, reranker and the
pipeline settings), which excerpt did it (version, git commit when run from a checkout), the
summary metrics, per-stage latency percentiles, and per query its metrics, latency, stage
timings and top hits. Reports (evaluate/report.py) and comparisons (evaluate/compare.py) read
runs back from the store.

A gate is ``METRIC=VALUE[,METRIC=VALUE...]`` (``ndcg@10=0.70,recall@100=0.90``): the run fails
it when a metric of its summary is below its bar. A QA run's metric of one split or corpus is
``SPLIT.METRIC`` (``heldout.fact_stated=0.8``).
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

from excerpt.errors import InputError
from excerpt.settings import Settings

SUMMARY_KEYS = ("queries", "scenarios", "ndcg@10", "recall@10", "recall@100", "mrr@10",
                "context_recall", "gold_recall", "faithfulness", "answer_relevancy",
                "latency_ms",
                # QA runs (evaluate/qa.py)
                "questions", "answerable", "unanswerable", "answerer", "llm_model",
                "llm_answers", "fact_stated", "fact_in_quotes", "gold_recall@k",
                "gold_in_quotes", "citation_precision", "quotes_verbatim",
                "quotes_verbatim_spaces", "citation_numbering", "cautious_precision",
                "cautious_recall", "cautious_on_answerable", "abstention_accuracy",
                "by_split", "by_corpus")
PER_ITEM = {"beir": "per_query", "scenarios": "per_scenario", "qa": "per_question"}


def git_commit() -> str | None:
    """The commit of the checkout excerpt runs from, when it runs from one."""
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def run_record(kind: str, dataset: Path, report: Mapping[str, Any],
               settings: Settings) -> dict[str, Any]:
    """What the store keeps of one evaluation (``kind``: "beir", "scenarios" or "qa"; a QA
    run also keeps who answered: "extractive", or the reader and its model, "openai:<model>"
    or "local:<model>")."""
    return {
        "kind": kind,
        "dataset": str(dataset.resolve()),
        "split": report.get("split"),
        "collection": report["collection"],
        "snapshot_ids": list(report.get("snapshot_ids", [])),
        "mode": report["mode"],
        "principal": dict(report["principal"]),
        "settings": {"k": report["k"], "reranker": report.get("reranker", "none"),
                     **({"answerer": report["answerer"]} if "answerer" in report else {}),
                     **dataclasses.asdict(settings)},
        "version": version("excerpt"),
        "git_commit": git_commit(),
        "summary": {key: report[key] for key in SUMMARY_KEYS if key in report},
        "stage_latency_ms": dict(report.get("stage_latency_ms", {})),
        "items": list(report.get(PER_ITEM[kind], [])),
    }


def principal_label(principal: Mapping[str, Any]) -> str:
    """Who a run ran as: "all access", "anonymous", or its ACL tags and clearances."""
    if principal.get("all_access"):
        return "all access"
    tags = list(principal.get("acl_tags_any", []))
    labels = list(principal.get("classification_labels_all", []))
    if not tags and not labels:
        return "anonymous"
    return " ".join([*(f"tag:{t}" for t in tags), *(f"clearance:{c}" for c in labels)])


def parse_gates(text: str) -> dict[str, float]:
    """``ndcg@10=0.70,recall@100=0.90`` -> {"ndcg@10": 0.7, "recall@100": 0.9}."""
    gates: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--fail-under: {part!r} is not METRIC=VALUE")
        try:
            gates[name.strip().lower()] = float(value)
        except ValueError:
            raise InputError(f"--fail-under: {value!r} is not a number") from None
    return gates


def failed_gates(summary: Mapping[str, Any], gates: Mapping[str, float]) -> list[str]:
    """One line per metric below its bar; InputError for a metric the run does not have."""
    failed = []
    for name, bar in gates.items():
        value = _metric(summary, name)
        if value is None:
            known = ", ".join(k for k, v in summary.items()
                              if isinstance(v, int | float) and not isinstance(v, bool))
            raise InputError(f"--fail-under: this evaluation has no metric {name!r} "
                             f"(it has {known})")
        if value < bar:
            failed.append(f"{name} {value:.4f} < {bar}")
    return failed


def _metric(summary: Mapping[str, Any], name: str) -> float | None:
    """A summary metric by name; a QA run's ``GROUP.METRIC`` (``heldout.fact_stated``,
    ``books.gold_recall@k``) reads it from the split or corpus of that name."""
    value = summary.get(name)
    if value is None and "." in name:
        group, _, metric = name.partition(".")
        for groups in (summary.get("by_split") or {}, summary.get("by_corpus") or {}):
            if isinstance(groups.get(group), Mapping):
                value = groups[group].get(metric)
                break
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
