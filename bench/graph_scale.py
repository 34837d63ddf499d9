"""Graph expansion on a synthetic graph: 200k nodes, 1M typed edges, depth 2.

Run:  .venv/bin/python bench/graph_scale.py [--nodes 200000] [--edges 1000000] [--queries 300]

The snapshot is written through the production segment writer and store (nodes with random ACL
tags, edges with relations drawn from the seed's allowlist plus two that it excludes), then
`Engine.graph` expands random seeds to depth 2 for a principal who sees ~6 in 7 nodes.
Reported: build time, the first call (opens the segment's memory-mapped edge arrays), and
expansion p50/p95 with the default limits (120 nodes) and with no node limit.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.graph import GraphLimits
from excerpt.store.base import SnapshotPayload
from excerpt.store.segment import write_segment
from excerpt.store.sqlite import SQLiteStore
from excerpt.types import Document, Edge, Filters, Node, Principal

RELATIONS = ["Calls", "ReadsFrom", "WritesTo", "Executes", "FK", "References", "Contains"]


def build(home: Path, n: int, m: int, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    ids = [f"N{i:07d}" for i in range(n)]
    acl = [("team",) if i % 7 == 0 else () for i in range(n)]
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    rel = rng.integers(0, len(RELATIONS), m)
    edges = [Edge(ids[a], RELATIONS[r], ids[b]) for a, b, r in zip(src, dst, rel, strict=True)]
    store = SQLiteStore(home)
    t = time.perf_counter()
    run = store.begin_run("graph", "synthetic", "synthetic")
    write_segment(store.staging_dir(run), ids, [["x"] for _ in ids], acl, [() for _ in ids],
                  None, {"analyzer": "synthetic", "embed_model": None},
                  [(e.from_id, e.relation, e.to_id) for e in edges])
    nodes = [Node(i, "doc", i, acl_tags=a) for i, a in zip(ids, acl, strict=True)]
    store.publish(run, SnapshotPayload("graph", "synthetic", [Document("doc", "synthetic", "")],
                                       nodes, edges, [], store.staging_dir(run)), 0.0)
    store.close()
    return time.perf_counter() - t


def measure(engine: Engine, seeds: list[str], limits: GraphLimits) -> dict[str, object]:
    who = Principal(frozenset({"other"}))
    lat, sizes = [], []
    for s in seeds:
        t = time.perf_counter()
        result = engine.graph([s], Filters("graph"), who, limits)
        lat.append((time.perf_counter() - t) * 1000)
        sizes.append(len(result.nodes))
    return {"latency_ms": latency_summary(lat), "median_nodes": float(np.median(sizes))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=200_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", type=Path, default=Path("bench/out/graph"))
    args = parser.parse_args()
    home = args.out / "home"
    shutil.rmtree(home, ignore_errors=True)
    row: dict[str, object] = {"nodes": args.nodes, "edges": args.edges,
                              "build_and_publish_s": build(home, args.nodes, args.edges)}
    engine = Engine(home)
    rng = np.random.default_rng(1)
    seeds = [f"N{i:07d}" for i in rng.integers(0, args.nodes, args.queries) if i % 7]
    t = time.perf_counter()
    engine.graph([seeds[0]], Filters("graph"), Principal(frozenset({"other"})))
    row["first_call_s"] = time.perf_counter() - t
    row["depth2_default_limits"] = measure(engine, seeds, GraphLimits(2, 120))
    row["depth2_no_node_limit"] = measure(engine, seeds, GraphLimits(2, 10**9))
    print(json.dumps(row, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
