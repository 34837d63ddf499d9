"""The command-line contract (CONTRACT.md): one JSON object, exit codes, clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli


def run(home: Path, *args: str) -> tuple[int, dict[str, object], str]:
    from excerpt.cli import eval_cmd  # noqa: F401

    result = CliRunner().invoke(cli, ["--home", str(home), *args], obj={"json": False})
    payload = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    return result.exit_code, payload, result.stderr


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Tides\n\nThe moon pulls the ocean into tides.\n", "utf-8")
    (folder / "b.txt").write_text("Volcanoes form where plates meet.\n", "utf-8")
    (folder / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    (folder / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (folder / "empty.md").write_text("", "utf-8")
    return folder


def test_ingest_search_snapshots_round_trip(tmp_path: Path, corpus: Path) -> None:
    home = tmp_path / "home"
    code, out, _ = run(home, "ingest", str(corpus), "--collection", "n", "--embedder", "none",
                       "--no-progress", "--json")
    assert code == 0
    assert out["status"] == "completed" and out["nodes"] == 2 and out["documents"] == 2
    assert set(out) >= {"collection", "snapshot_id", "import_run_id", "status", "documents",
                        "nodes", "edges", "seconds", "errors"}
    reasons = {Path(e["path"]).name: e["reason"] for e in out["errors"]}  # type: ignore[index, union-attr]
    assert set(reasons) == {"binary.txt", "latin1.txt", "empty.md"}
    code, found, _ = run(home, "search", "moon tides", "--collection", "n", "--mode", "bm25",
                         "--json")
    assert code == 0
    hits = found["hits"]
    assert isinstance(hits, list) and hits[0]["id"] == "a.md:0000"
    assert set(hits[0]) >= {"id", "score", "text", "title", "source", "snapshot_id", "acl_tags",
                            "classification_labels", "metadata"}
    assert found["filters"]["collection"] == "n"  # type: ignore[index]
    assert "total" in found["timings_ms"]  # type: ignore[operator]
    assert found["k"] == 10 and found["analysis"]["k_reason"] == "default"  # type: ignore[index]
    _, given, _ = run(home, "search", "moon", "--collection", "n", "--mode", "bm25", "-k", "10",
                      "--json")
    assert given["analysis"]["k_reason"] == "given"  # type: ignore[index]
    code, snaps, _ = run(home, "snapshots", "--json")
    assert code == 0 and snaps["snapshots"][0]["snapshot_id"] == out["snapshot_id"]  # type: ignore[index]
    code, made, _ = run(home, "snapshot-set", "release", str(out["snapshot_id"]),
                        "--collection", "n", "--json")
    assert code == 0 and made == {"name": "release", "snapshot_ids": [out["snapshot_id"]]}
    code, found, _ = run(home, "search", "volcano", "--collection", "n", "--snapshot-set",
                         "release", "--mode", "bm25", "--json")
    assert code == 0 and found["hits"][0]["id"] == "b.txt:0000"  # type: ignore[index]


def test_semantic_without_embeddings_is_refused(tmp_path: Path, corpus: Path) -> None:
    home = tmp_path / "home"
    run(home, "ingest", str(corpus), "--embedder", "none", "--no-progress")
    code, out, err = run(home, "search", "moon", "--mode", "semantic", "--json")
    assert code == 1 and out["kind"] == "input" and "embeddings" in err


@pytest.mark.parametrize("args, expected", [
    (["ingest", "/definitely/not/here", "--json"], 1),
    (["search", "anything", "--collection", "nope", "--json"], 1),
    (["search", "anything", "--mode", "psychic"], 2),
    (["search", "anything", "-k", "0"], 2),
    (["snapshot-set", "s", "missing-id", "--json"], 1),
])
def test_refusals_have_exit_codes_and_reasons(tmp_path: Path, args: list[str],
                                              expected: int) -> None:
    code, out, err = run(tmp_path / "home", *args)
    assert code == expected
    assert err.strip(), "a one-line reason on stderr"
    if expected == 1 and "--json" in args:
        assert set(out) == {"error", "kind"}


def test_malformed_corpus_fails_run_and_leaves_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "bad"
    corpus.mkdir()
    (corpus / "corpus.jsonl").write_text('{"_id": "1", "text": "ok"}\n{not json\n', "utf-8")
    home = tmp_path / "home"
    code, _, err = run(home, "ingest", str(corpus), "--format", "beir", "--json")
    assert code == 1 and "corpus.jsonl" in err and "line 2" in err
    from excerpt.store.sqlite import SQLiteStore

    store = SQLiteStore(home)
    assert store.snapshots() == []
    assert [r.status for r in store.runs()] == ["failed"]
    assert [p.name for p in store.segments_dir.iterdir()] == []
