"""Release bundles: zip and folder read alike; every malformed part fails the whole import."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.errors import CorpusError, InputError
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.code.bundle import load_code_bundle, looks_like_code_bundle
from excerpt.ingest.detect import detect_format

GOOD = {
    "repo_meta.json": json.dumps({"Repo": "Shop", "Branch": "main", "SnapshotId": "abc123"}),
    "regular_code_bundle/chunks.json": json.dumps([
        {"Id": "C0001", "File": "src/Pay.cs", "Class": "Pay", "Member": "Run", "Type": "Method",
         "Text": "class Pay { void Run() {} }", "acl_tags_any": ["finance"],
         "classification_labels_all": []},
        {"Id": "C0002", "File": "src/Log.cs", "Class": "Log", "Member": "Write",
         "Type": "Method", "Text": "class Log {}"},
    ]),
    "regular_code_bundle/dependencies.json": json.dumps({"C0001": ["C0002"], "C0002": []}),
    "sql_bundle/graph/nodes.csv": "key,kind,name,schema,file\n"
                                  "SQL:dbo.proc_Pay,PROC,proc_Pay,dbo,db/proc_Pay.sql\n",
    "sql_bundle/graph/edges.csv": "from,to,relation,to_kind,file\n"
                                  "SQL:dbo.proc_Pay,SQL:dbo.table_Pay,WritesTo,TABLE,db/p.sql\n",
    "sql_bundle/docs/sql_bodies.jsonl": json.dumps(
        {"key": "SQL:dbo.proc_Pay", "kind": "Procedure", "schema": "dbo", "name": "proc_Pay",
         "file": "db/proc_Pay.sql", "body": "CREATE PROCEDURE proc_Pay AS SELECT 1",
         "acl_tags_any": [], "classification_labels_all": ["internal"]}) + "\n",
}


def folder(tmp: Path, files: dict[str, str], top: str = "Release_1") -> Path:
    for name, text in files.items():
        path = tmp / top / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return tmp


def zipped(tmp: Path, files: dict[str, str]) -> Path:
    path = tmp / "Release_1.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(f"Release_1/{name}", text)
    return path


@pytest.mark.parametrize("make", [folder, zipped], ids=["folder", "zip"])
def test_bundle_nodes_edges_and_snapshot(tmp_path: Path,
                                         make: Callable[[Path, dict[str, str]], Path]) -> None:
    path = make(tmp_path, GOOD)
    assert looks_like_code_bundle(path) and detect_format([path]) == "code-bundle"
    corpus = load_code_bundle([path], LoadOptions(acl_tags=("eng",)))
    assert corpus.source == "Shop" and corpus.snapshot_hint == "abc123"
    nodes = {n.id: n for n in corpus.nodes}
    assert sorted(nodes) == ["C0001", "C0002", "SQL:dbo.proc_Pay"]
    assert nodes["C0001"].acl_tags == ("finance",)  # its own tags, not widened by the import's
    assert nodes["C0002"].acl_tags == ("eng",)  # no tags of its own: the import's
    assert nodes["C0001"].metadata["class"] == "Pay" and nodes["C0001"].title == "Pay.Run"
    assert nodes["SQL:dbo.proc_Pay"].classification_labels == ("internal",)
    assert nodes["SQL:dbo.proc_Pay"].text.startswith("CREATE PROCEDURE")
    assert [(e.from_id, e.relation, e.to_id) for e in corpus.edges] == [
        ("C0001", "Calls", "C0002"), ("SQL:dbo.proc_Pay", "WritesTo", "SQL:dbo.table_Pay")]
    assert {d.id for d in corpus.documents} == {"src/Pay.cs", "src/Log.cs", "db/proc_Pay.sql"}


@pytest.mark.parametrize(("name", "text", "message"), [
    ("repo_meta.json", "{broken", "repo_meta.json line 1"),
    ("repo_meta.json", json.dumps({"SnapshotId": "x"}), "missing field 'Repo'"),
    ("repo_meta.json", json.dumps({"Repo": "R"}), "neither SnapshotId nor HeadSha"),
    ("regular_code_bundle/chunks.json", json.dumps({"Id": "C1"}), "JSON list"),
    ("regular_code_bundle/chunks.json", json.dumps([{"Id": "C1", "File": "a.cs"}]),
     "missing field 'Text'"),
    ("regular_code_bundle/chunks.json",
     json.dumps([{"Id": "C1", "File": "a", "Text": "x", "acl_tags_any": "finance"}]),
     "must be a list of strings"),
    ("regular_code_bundle/dependencies.json", json.dumps(["C1"]), "map ids to lists"),
    ("sql_bundle/docs/sql_bodies.jsonl", "{nope\n", "sql_bodies.jsonl line 1"),
    ("sql_bundle/graph/edges.csv", "from,to,relation\nA,,Calls\n", "missing field 'to'"),
    ("sql_bundle/graph/nodes.csv", "key\nSQL:dbo.ghost\n", "no body for it"),
])
def test_malformed_part_fails(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = folder(tmp_path, {**GOOD, name: text})
    with pytest.raises(CorpusError, match=message.replace("(", r"\(")):
        load_code_bundle([path])


def test_duplicate_ids_and_not_a_bundle(tmp_path: Path) -> None:
    chunks = json.loads(GOOD["regular_code_bundle/chunks.json"])
    dup = folder(tmp_path / "d", {**GOOD, "regular_code_bundle/chunks.json":
                                  json.dumps([chunks[0], chunks[0]])})
    with pytest.raises(CorpusError, match="duplicate node id 'C0001'"):
        load_code_bundle([dup])
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="not a code bundle"):
        load_code_bundle([tmp_path / "empty"])
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    with pytest.raises(CorpusError, match="not a readable zip"):
        load_code_bundle([tmp_path / "x.zip"])
    with pytest.raises(InputError, match="one bundle per run"):
        load_code_bundle([dup, dup])


def test_failed_import_leaves_nothing(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    engine.ingest(folder(tmp_path / "ok", GOOD), collection="c", embedder="none")
    broken = folder(tmp_path / "bad", {**GOOD, "sql_bundle/docs/sql_bodies.jsonl": "{x\n",
                                        "repo_meta.json": json.dumps({"Repo": "Shop",
                                                                      "SnapshotId": "def"})})
    with pytest.raises(CorpusError):
        engine.ingest(broken, collection="c", embedder="none")
    assert [s["snapshot_id"] for s in engine.snapshots("c")["snapshots"]] == ["abc123"]
    assert [r.status for r in engine.store.runs()] == ["completed", "failed"]
    with pytest.raises(InputError, match="already exists"):  # the same release twice
        engine.ingest(folder(tmp_path / "again", GOOD), collection="c", embedder="none")
