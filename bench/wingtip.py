"""A real C# + T-SQL application end to end (issue 17): wingtip-saas (MIT,
``$EXCERPT_DATA/code/wingtip-saas``) imported with embeddings, its identifiers searched in every
mode, its graph walked.

Run:  .venv/bin/python bench/wingtip.py [--repeat 5] [--json OUT]

1. Import (``--format code``, MiniLM embeddings) into a fresh store, timed (target: under 60 s):
   documents, nodes, edges per relation, the largest node in tokens, what stayed unresolved.
2. Identifier queries (types, members, procedures, views, tables, bracketed and dotted names;
   the 14 of tests/integration/test_identifier_search.py): the share whose node comes first,
   per mode (bm25, semantic, hybrid), and the search latency p50/p95.
3. ``Engine.graph`` at depth 2 from every node, out, in and both, ``--repeat`` rounds:
   p50/p95 (target: p95 under 20 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.tokens import count_tokens
from excerpt.types import Filters, Principal

DATA = Path(os.environ.get("EXCERPT_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
APP = DATA / "code" / "wingtip-saas"


def identifier_queries() -> dict[str, str]:
    """The hand-checked query -> node of tests/integration/test_identifier_search.py."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.code_sources import WINGTIP_NAMES

    return WINGTIP_NAMES


def ingest(engine: Engine) -> dict[str, Any]:
    t = time.perf_counter()
    result = engine.ingest([APP], collection="wt", fmt="code")
    seconds = time.perf_counter() - t
    snapshot = result.snapshot_id
    assert snapshot is not None
    relations = Counter(rel for _, rel, _ in engine.store.edge_triples(snapshot))
    ids = list(engine.store.segment(snapshot).ids)
    largest = max(count_tokens(n.text) for n in engine.store.nodes_by_id(snapshot, ids))
    return {"seconds": round(seconds, 2), "documents": result.documents, "nodes": result.nodes,
            "edges": result.edges, "relations": dict(sorted(relations.items())),
            "largest_node_tokens": largest,
            "unresolved": {k: len(v) for k, v in getattr(result, "unresolved", {}).items()}}


def identifiers(engine: Engine, repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    queries = identifier_queries()
    for mode in ("bm25", "semantic", "hybrid"):
        first, times = 0, []
        for query, expected in queries.items():
            engine.search(query, Filters("wt"), Principal.admin(), mode, 10)  # warm
            for _ in range(repeat):
                t = time.perf_counter()
                hits = engine.search(query, Filters("wt"), Principal.admin(), mode, 10).hits
                times.append((time.perf_counter() - t) * 1000)
            first += bool(hits) and hits[0].node.id == expected
        out[mode] = {"first": f"{first}/{len(queries)}", **latency_summary(times)}
    return out


def graph(engine: Engine, snapshot: str, repeat: int) -> dict[str, Any]:
    ids = sorted(engine.store.segment(snapshot).ids)
    out: dict[str, Any] = {}
    for direction in ("out", "in", "both"):
        limits = engine.graph_limits(max_depth=2)
        if direction != "out" and not hasattr(limits, "direction"):
            continue  # a tree before graph directions
        limits = type(limits)(limits.max_depth, limits.max_nodes, limits.allow,
                              limits.seed_only, *([direction] if direction != "out" else []))
        times = []
        for _ in range(repeat):
            for node_id in ids:
                t = time.perf_counter()
                engine.graph([node_id], Filters("wt"), Principal.admin(), limits)
                times.append((time.perf_counter() - t) * 1000)
        out[direction] = latency_summary(times)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not APP.exists():
        print(f"{APP} not found: set EXCERPT_DATA to the shared data folder", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as home:
        engine = Engine(Path(home))
        report: dict[str, Any] = {"import": ingest(engine)}
        snapshot = engine.store.latest_snapshots("wt")[0].snapshot_id
        report["identifiers"] = identifiers(engine, args.repeat)
        report["graph_depth2_ms"] = graph(engine, snapshot, args.repeat)
        engine.close()
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
