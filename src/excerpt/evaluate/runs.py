"""Stored evaluation runs, and the quality gates a CI can put on them.

Every ``excerpt eval`` keeps one run in the store: what was measured (dataset, split,
collection and snapshot ids, mode, and the principal it ran as: the run holds only what that
principal may see), every setting that shaped the result (k, reranker and the
pipeline settings), which excerpt did it (version, git commit when run from a checkout), the
summary metrics, per-stage latency percentiles, and per query its metrics, latency, stage
timings and top hits. Reports (evaluate/report.py) and comparisons (evaluate/compare.py) read
runs back from the store.

A gate is ``METRIC=VALUE[,METRIC=VALUE...]`` (``ndcg@10=0.70,recall@100=0.90``): the run fails
it when a metric of its summary is below its bar.
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
                "latency_ms")
PER_ITEM = {"beir": "per_query", "scenarios": "per_scenario"}


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
    """What the store keeps of one evaluation (``kind``: "beir" or "scenarios")."""
    return {
        "kind": kind,
        "dataset": str(dataset.resolve()),
        "split": report.get("split"),
        "collection": report["collection"],
        "snapshot_ids": list(report.get("snapshot_ids", [])),
        "mode": report["mode"],
        "principal": dict(report["principal"]),
        "settings": {"k": report["k"], "reranker": report.get("reranker", "none"),
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
        if name not in summary or not isinstance(summary[name], int | float):
            known = ", ".join(k for k, v in summary.items() if isinstance(v, int | float))
            raise InputError(f"--fail-under: this evaluation has no metric {name!r} "
                             f"(it has {known})")
        if float(summary[name]) < bar:
            failed.append(f"{name} {float(summary[name]):.4f} < {bar}")
    return failed
