"""A raw C#/SQL folder through the CLI: ingest (broken files reported), search, graph, context."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from excerpt.cli.main import cli

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "code_sample"
REPO = "CS:Contoso.Payments.Data.PaymentRepository"


def run(home: Path, *args: str) -> dict[str, object]:
    out = CliRunner().invoke(cli, ["--home", str(home), *args, "--json"], obj={"json": False})
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_source_folder_is_searchable_and_expandable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = run(home, "ingest", str(SAMPLE), "--collection", "shop", "--embedder", "none",
               "--no-progress")
    assert done["status"] == "completed" and done["nodes"] == 51 and done["edges"] == 92
    broken = sorted(Path(e["path"]).name for e in done["errors"])  # type: ignore[index, union-attr]
    assert broken == ["Broken.cs", "Broken.sql"]

    found = run(home, "search", "proc_ProcessPayment", "--collection", "shop", "--mode", "bm25",
                "--all-access", "-k", "3")
    ids = [h["id"] for h in found["hits"]]  # type: ignore[union-attr, index]
    # the procedure itself and the C# method that executes it, both found by the identifier
    assert {"SQL:dbo.proc_ProcessPayment", f"{REPO}.ProcessPayment"} <= set(ids)

    tree = run(home, "graph", f"{REPO}.ProcessPayment", "--collection", "shop",
               "--max-depth", "2", "--allow", "Executes", "--allow", "WritesTo",
               "--allow", "ReadsFrom", "--all-access")
    edges = {(e["from_id"], e["relation"], e["to_id"]) for e in tree["edges"]}  # type: ignore[index, union-attr]
    assert (f"{REPO}.ProcessPayment", "Executes", "SQL:dbo.proc_ProcessPayment") in edges
    assert ("SQL:dbo.proc_ProcessPayment", "Executes", "SQL:dbo.proc_WriteAudit") in edges
    assert any(r == "WritesTo" and f == "SQL:dbo.proc_ProcessPayment" for f, r, _ in edges)

    texts = run(home, "context", "--seed", f"{REPO}.ProcessPayment", "--graph",
                "SQL:dbo.proc_ProcessPayment", "--collection", "shop", "--all-access")
    got = {n["id"]: n["text"] for n in texts["node_texts"]}  # type: ignore[union-attr, index]
    assert "proc_ProcessPayment" in got[f"{REPO}.ProcessPayment"]
    assert "CREATE" in got["SQL:dbo.proc_ProcessPayment"].upper()
