"""`excerpt eval` runs as a principal (issue 15 item 5): anonymous unless told otherwise, and
the JSON output, the stored run, `eval runs` and the HTML report say which. An anonymous run
over a corpus with a hidden node stores neither its id nor its text. And `eval` knows its
corpus by content, not by path (item 11), on both stores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from excerpt.cli.main import cli

SECRET_ID, SECRET_WORD = "h-layoffs", "Northwind"
CORPUS = {
    "d-lunch": {"text": "The cafeteria serves lunch at noon on weekdays."},
    "d-park": {"text": "Parking is free for visitors after six in the evening."},
    SECRET_ID: {"text": f"Layoffs: the lunch staff are cut in March after the {SECRET_WORD} "
                        "merger.", "acl_tags": ["hr"]},
}
QUERIES = {"q1": ("When is lunch served in the cafeteria?", "d-lunch"),
           "q2": ("lunch staff layoffs", SECRET_ID)}


def beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": i, "title": "", **r}) + "\n" for i, r in CORPUS.items()), "utf-8")
    (folder / "queries.jsonl").write_text("".join(
        json.dumps({"_id": q, "text": t}) + "\n" for q, (t, _) in QUERIES.items()), "utf-8")
    (folder / "qrels" / "test.tsv").write_text("".join(
        f"{q}\t{d}\t1\n" for q, (_, d) in QUERIES.items()), "utf-8")
    return folder


def excerpt(where: list[str], *args: str) -> Any:
    out = CliRunner().invoke(cli, [*where, *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """The global options that put the store in ``tmp_path`` or in a fresh PostgreSQL."""
    home = ["--home", str(tmp_path / "home")]
    if request.param == "postgres":
        return [*home, "--store", request.getfixturevalue("pg_url")]
    return home


def stored(where: list[str], run_id: int) -> dict[str, Any]:
    from excerpt.engine import Engine

    url = where[where.index("--store") + 1] if "--store" in where else None
    engine = Engine(Path(where[1]), store_url=url)
    try:
        return engine.store.eval_run(run_id)
    finally:
        engine.close()


def test_a_beir_eval_runs_anonymous_and_says_so(where: list[str], tmp_path: Path) -> None:
    folder = beir(tmp_path / "tiny")
    anonymous = excerpt(where, "eval", str(folder), "--mode", "bm25", "--no-progress",
                        "--report", str(tmp_path / "report"))
    assert anonymous["principal"] == {"acl_tags_any": [], "classification_labels_all": []}
    run = stored(where, anonymous["run_id"])
    assert run["principal"] == anonymous["principal"]
    assert SECRET_WORD not in json.dumps(run)  # no text, and the hidden id is in no ranking:
    assert all(SECRET_ID not in item["ranking"] for item in run["items"])  # (qrels name it)
    assert "anonymous" in (tmp_path / "report" / "report.html").read_text("utf-8")
    everything = excerpt(where, "eval", str(folder), "--mode", "bm25", "--no-progress",
                         "--all-access")
    assert everything["principal"] == {"all_access": True}
    assert everything["recall@10"] == 1.0 > anonymous["recall@10"]
    assert any(SECRET_ID in i["ranking"] for i in stored(where, everything["run_id"])["items"])
    runs = excerpt(where, "eval", "runs")["runs"]
    assert [r["principal"] for r in runs] == [anonymous["principal"], {"all_access": True}]
    human = CliRunner().invoke(cli, [*where, "eval", "runs"]).output
    assert "(anonymous)" in human and "(all access)" in human


def test_eval_knows_its_corpus_by_content(where: list[str], tmp_path: Path) -> None:
    first = beir(tmp_path / "made-once")
    report = excerpt(where, "eval", str(first), "--collection", "k", "--mode", "bm25",
                     "--no-progress", "--all-access")
    again = tmp_path / "made-again"
    shutil.copytree(first, again)  # the same dataset folder, re-made elsewhere
    second = excerpt(where, "eval", str(again), "--collection", "k", "--mode", "bm25",
                     "--no-progress", "--all-access")
    listed = excerpt(where, "snapshots", "--collection", "k", "--all-access")["snapshots"]
    assert len(listed) == 1 and second["snapshot_ids"] == report["snapshot_ids"]
    assert second["ndcg@10"] == report["ndcg@10"] == 1.0


def test_a_scenario_eval_stores_no_hidden_hit_or_answer(tmp_path: Path) -> None:
    home = ["--home", str(tmp_path / "home")]
    excerpt(home, "ingest", str(beir(tmp_path / "tiny") / "corpus.jsonl"), "--format", "beir",
            "--collection", "s", "--embedder", "none", "--no-progress")
    scenarios = tmp_path / "scenarios.yaml"
    scenarios.write_text(yaml.safe_dump({"collection": "s", "scenarios": [
        {"id": "s1", "query": "lunch staff layoffs merger", "gold": [SECRET_ID],
         "reference": "The lunch staff are cut in March."}]}), "utf-8")
    anonymous = excerpt(home, "eval", str(scenarios), "--mode", "bm25", "--no-progress")
    assert anonymous["principal"] == {"acl_tags_any": [], "classification_labels_all": []}
    run = stored(home, anonymous["run_id"])
    assert SECRET_WORD not in json.dumps(run) and run["items"][0]["hits"] == ["d-lunch"]
    hr = excerpt(home, "eval", str(scenarios), "--mode", "bm25", "--no-progress",
                 "--acl-tag", "hr")
    assert hr["principal"]["acl_tags_any"] == ["hr"] and hr["gold_recall"] == 1.0
    assert SECRET_WORD in stored(home, hr["run_id"])["items"][0]["answer"]


def test_a_corpus_the_principal_cannot_see_is_refused(tmp_path: Path) -> None:
    folder = beir(tmp_path / "secret")
    (folder / "corpus.jsonl").write_text(json.dumps(
        {"_id": SECRET_ID, "text": CORPUS[SECRET_ID]["text"], "acl_tags": ["hr"]}) + "\n",
        "utf-8")
    (folder / "qrels" / "test.tsv").write_text(f"q2\t{SECRET_ID}\t1\n", "utf-8")
    out = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "eval", str(folder),
                                   "--mode", "bm25", "--no-progress"])
    assert out.exit_code == 1 and "may see nothing of the corpus" in out.output
    assert SECRET_WORD not in out.output
