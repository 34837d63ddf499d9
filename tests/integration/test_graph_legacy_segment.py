"""A store written before segments held edges (format 1) still expands, from the store's edges."""

from __future__ import annotations

import json
from pathlib import Path

from excerpt.engine import Engine
from excerpt.graph import GraphLimits
from excerpt.types import Filters, Principal


def test_format_1_segment_falls_back_to_store_edges(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    (bundle / "regular_code_bundle").mkdir(parents=True)
    (bundle / "repo_meta.json").write_text(json.dumps({"Repo": "R", "SnapshotId": "r1"}))
    chunks = [{"Id": f"C{i}", "File": f"f{i}.cs", "Text": f"class C{i} {{}}"} for i in range(4)]
    (bundle / "regular_code_bundle" / "chunks.json").write_text(json.dumps(chunks))
    deps = {"C0": ["C1", "C2"], "C1": ["C3"]}
    (bundle / "regular_code_bundle" / "dependencies.json").write_text(json.dumps(deps))
    engine = Engine(tmp_path / "home")
    engine.ingest(bundle, collection="c", embedder="none")
    limits, admin = GraphLimits(2, 10), Principal.admin()
    fresh = engine.graph(["C0"], Filters("c"), admin, limits).to_json()
    segment = engine.store.segment("r1").folder
    for name in ("edge_indptr.npy", "edge_to.npy", "edge_rel.npy", "edge_targets.txt"):
        (segment / name).unlink()
    legacy = Engine(tmp_path / "home").graph(["C0"], Filters("c"), admin, limits).to_json()
    assert legacy == fresh
    assert [n["id"] for n in fresh["nodes"]] == ["C0", "C1", "C2", "C3"]
