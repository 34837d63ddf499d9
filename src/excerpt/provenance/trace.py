"""Pipeline traces (JSON) and the human-readable logs of seed 004, written under a log folder.

Layout of ``log_dir``::

    pipeline_traces/<utc time>-<pid>-<n>-<kind>.json   one trace per search, graph or context
    pipeline_traces/latest.json                        the last trace written
    test_results_latest.log                            searches: Question, Search mode, Applied
                                                       filters, Observed results, Observed security
    graph_results_latest.log                           graph expansions: settings, seeds, counts,
                                                       relations, security trim

A trace is a list of stages, each with ``state_before`` and ``state_after``. Everything in it
comes from the caller's own request or from results the caller was allowed to see: a hidden node
appears only as a count, as in every other output.

Concurrent requests, in threads or processes sharing ``log_dir``, never lose or corrupt each
other's traces: every file is written under a temporary name of its own and renamed into place
(a reader sees a whole file or none), and a log entry is appended with one ``O_APPEND`` write
under a thread lock and an exclusive ``flock`` of the log file.  A trace that cannot be written
is logged as a warning and never fails the request it describes.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from excerpt.context.fetch import ContextResult
from excerpt.graph.expand import GraphResult
from excerpt.store.base import SnapshotInfo
from excerpt.types import Filters, Hit, Principal

if sys.platform != "win32":
    import fcntl

_counter = itertools.count(1)  # next() is atomic: names are unique per process with the pid
_append_lock = threading.Lock()
_log = logging.getLogger(__name__)


def retrieval_filters(infos: list[SnapshotInfo], filters: Filters,
                      principal: Principal) -> dict[str, Any]:
    """The filters as the seed names them: repo, snapshot id(s) and the caller's security."""
    out: dict[str, Any] = {"collection": filters.collection,
                           "repo": sorted({i.source for i in infos})}
    if len(out["repo"]) == 1:
        out["repo"] = out["repo"][0]
    ids = [i.snapshot_id for i in infos]
    if len(ids) == 1:
        out["snapshot_id"] = ids[0]
    else:
        out["snapshot_ids_any"] = ids
    if filters.snapshot_set:
        out["snapshot_set"] = filters.snapshot_set
    if filters.metadata:
        out["metadata"] = dict(filters.metadata)
    out.update(principal.describe())
    return out


@dataclass
class Trace:
    kind: str  # "search" | "graph" | "context"
    stages: list[dict[str, Any]] = field(default_factory=list)

    def stage(self, name: str, before: dict[str, Any], after: dict[str, Any],
              ms: float | None = None) -> None:
        entry: dict[str, Any] = {"stage": name, "state_before": before, "state_after": after}
        if ms is not None:
            entry["ms"] = round(ms, 3)
        self.stages.append(entry)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "created_at": _now(), "stages": self.stages}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class TraceLog:
    """Writes traces and log entries under ``folder`` (created on first write)."""

    RESULTS_LOG = "test_results_latest.log"
    GRAPH_LOG = "graph_results_latest.log"

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)

    def write(self, trace: Trace, log_name: str, lines: list[str]) -> Path | None:
        """The trace's file, latest.json and the entry in ``log_name``; the trace's path, or
        None when it could not be written (logged: a trace never fails its request)."""
        try:
            return self._write(trace, log_name, lines)
        except (OSError, TypeError, ValueError) as exc:  # a full disk, a lost folder, bad JSON
            _log.warning("excerpt: a %s trace was not written under %s: %s", trace.kind,
                         self.folder, exc)
            return None

    def _write(self, trace: Trace, log_name: str, lines: list[str]) -> Path:
        traces = self.folder / "pipeline_traces"
        traces.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        path = traces / f"{stamp}-{os.getpid()}-{next(_counter)}-{trace.kind}.json"
        text = json.dumps(trace.to_json(), ensure_ascii=False, indent=2)
        _write_whole(path, text)
        _write_whole(traces / "latest.json", text)
        entry = "\n".join([f"=== {_now()} {trace.kind} ({path.name})", *lines, ""]) + "\n"
        _append(self.folder / log_name, entry)
        return path


def _write_whole(path: Path, text: str) -> None:
    """``text`` into ``path`` by rename from a temporary name no other writer uses, so
    concurrent writers never remove each other's file and a reader never sees half of one."""
    tmp = path.with_name(f".{path.stem}-{os.getpid()}-{next(_counter)}.tmp")
    try:
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _append(path: Path, entry: str) -> None:
    """``entry`` at the end of ``path`` as one piece: threads take the lock, processes the
    file's flock; O_APPEND puts each write at the end whoever wrote last."""
    data = entry.encode("utf-8")
    with _append_lock:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if sys.platform != "win32":
                fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def search_entry(query: str, mode: str, k: int, applied: dict[str, Any], hits: list[Hit],
                 timings: dict[str, float]) -> tuple[Trace, list[str]]:
    """The trace and the log lines of one search (hits are already inside the caller's rights)."""
    trace = Trace("search")
    trace.stage("retrieval_filters", {"query": query, "mode": mode, "k": k},
                {"retrieval_filters": applied}, timings.get("filter"))
    trace.stage("retrieve", {"mode": mode, "k": k},
                {"hits": [{"id": h.node.id, "score": round(h.score, 6),
                           "snapshot_id": h.snapshot_id, "source": h.node.source}
                          for h in hits]},
                timings.get("total"))
    lines = [
        f"Question: {query}",
        f"Search mode: {mode}",
        f"Applied filters: {_json(applied)}",
        "Observed results: " + ("; ".join(f"{h.node.id} ({h.node.source}, {h.score:.4f})"
                                          for h in hits) or "none"),
        "Observed security: " + ("; ".join(
            f"{h.node.id} acl_tags_any={list(h.node.acl_tags)} "
            f"classification_labels_all={list(h.node.classification_labels)}"
            for h in hits) or "none"),
    ]
    return trace, lines


def graph_entry(applied: dict[str, Any], result: GraphResult) -> tuple[Trace, list[str]]:
    trace = Trace("graph")
    payload = result.to_json()
    trace.stage("retrieval_filters", {"seeds": result.seeds}, {"retrieval_filters": applied})
    trace.stage("graph_expand", {"seeds": result.seeds, "settings": payload["settings"]},
                {k: payload[k] for k in ("nodes", "edges", "removed_by_security")})
    relations = sorted({e.relation for e in result.edges})
    lines = [
        f"Pipeline settings: {_json(payload['settings'])}",
        f"Applied filters: {_json(applied)}",
        f"Seed nodes: {', '.join(result.seeds)}",
        f"Expanded nodes: {len(result.nodes)}; edges: {len(result.edges)}",
        f"Relations: {', '.join(relations) or 'none'}",
        f"Security trim: {result.removed_nodes} nodes and {result.removed_edges} edges removed",
    ]
    return trace, lines


def context_entry(applied: dict[str, Any], result: ContextResult) -> tuple[Trace, list[str]]:
    trace = Trace("context")
    payload = result.to_json()
    trace.stage("retrieval_filters", {}, {"retrieval_filters": applied})
    trace.stage("fetch_node_texts",
                {k: payload[k] for k in ("budget_tokens", "max_chars", "prioritization")},
                {"node_texts": [{k: n[k] for k in ("id", "group", "tokens", "chars")}
                                for n in payload["node_texts"]],
                 "total_tokens": payload["total_tokens"], "skipped": payload["skipped"]})
    lines = [
        f"Applied filters: {_json(applied)}",
        f"Context: {len(result.node_texts)} texts, {result.total_tokens} tokens, "
        f"{result.total_chars} chars; skipped {len(result.skipped)}",
    ]
    return trace, lines
