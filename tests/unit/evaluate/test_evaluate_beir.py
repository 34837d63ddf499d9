"""BEIR folders for evaluation, and `excerpt eval` end to end on a tiny corpus."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.errors import CorpusError, InputError
from excerpt.evaluate.beir import corpus_fingerprint, load_beir_dataset

DOCS = {
    "astro": "The telescope observed a distant galaxy and its spiral arms of stars.",
    "baking": "Knead the bread dough, let the yeast rise, then bake the loaf in an oven.",
    "chess": "The grandmaster sacrificed a bishop to checkmate the opposing king.",
    "dental": "Brush your teeth twice daily and floss to prevent gum disease and cavities.",
    "engine": "The diesel engine pistons compress fuel until it ignites in the cylinder.",
    "garden": "Plant tomato seedlings in sunny soil and water the roots every morning.",
    "ocean": "Coral reefs shelter colourful fish in warm tropical ocean waters.",
    "violin": "The violinist tuned each string of the violin before the concert.",
}
QUERIES = {
    "q1": ("telescope galaxy stars", "astro"),
    "q2": ("bread dough yeast", "baking"),
    "q3": ("checkmate the king with a bishop", "chess"),
    "q4": ("coral reef fish", "ocean"),
}


def write_beir(folder: Path, docs: dict[str, str], split: str = "test") -> Path:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    corpus = "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    (folder / "corpus.jsonl").write_text(corpus, "utf-8")
    queries = [{"_id": q, "text": text} for q, (text, _) in QUERIES.items()]
    queries.append({"_id": "q9", "text": "a query nobody judged"})
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), "utf-8")
    rows = "".join(f"{q}\t{doc}\t1\n" for q, (_, doc) in QUERIES.items())
    (folder / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows, "utf-8")
    return folder


def test_loads_the_judged_queries_of_a_split(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny", DOCS)
    data = load_beir_dataset(folder, "test")
    assert data.corpus == folder / "corpus.jsonl"
    assert data.queries == {q: text for q, (text, _) in QUERIES.items()}  # q9 is not judged
    assert data.qrels == {q: {doc: 1} for q, (_, doc) in QUERIES.items()}  # header skipped


def test_graded_qrels_keep_their_grades(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny", DOCS)
    dev = "q1\tastro\t2\nq1\tocean\t0\nq2\tbaking\t1\n"
    (folder / "qrels" / "dev.tsv").write_text(dev, "utf-8")
    data = load_beir_dataset(folder, "dev")  # no header line: the first row is data
    assert data.qrels == {"q1": {"astro": 2, "ocean": 0}, "q2": {"baking": 1}}
    assert list(data.queries) == ["q1", "q2"]


@pytest.mark.parametrize("missing", ["qrels/train.tsv", "queries.jsonl", "corpus.jsonl"])
def test_a_missing_file_or_split_is_an_input_error(tmp_path: Path, missing: str) -> None:
    folder = write_beir(tmp_path / "tiny", DOCS)
    if missing != "qrels/train.tsv":
        (folder / missing).unlink()
    with pytest.raises(InputError, match=re.escape(f"{missing}: missing")):
        load_beir_dataset(folder, "train")


def test_bad_qrels_are_corpus_errors(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny", DOCS)
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tastro\tyes\n", "utf-8")
    with pytest.raises(CorpusError, match=re.escape("test.tsv:2: bad qrels row")):
        load_beir_dataset(folder, "test")
    qrels.write_text("q1\tastro\t1\nq77\tastro\t1\n", "utf-8")
    with pytest.raises(CorpusError, match=re.escape("not in queries.jsonl: ['q77']")):
        load_beir_dataset(folder, "test")


def test_scifact_train_split(shared_data: Callable[..., Path]) -> None:
    folder = shared_data("scifact", "qrels", "train.tsv").parents[1]
    data = load_beir_dataset(folder, "train")
    assert len(data.queries) == len(data.qrels) == 809
    assert sum(len(docs) for docs in data.qrels.values()) == 919  # 920 lines minus the header
    assert data.qrels["0"] == {"31715818": 1}
    assert data.queries["0"] == "0-dimensional biomaterials lack inductive properties."


def excerpt(home: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["--home", str(home), *args], obj={"json": False})
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def test_eval_end_to_end_and_reuses_unchanged_corpus(tmp_path: Path) -> None:
    folder, home = write_beir(tmp_path / "tiny", DOCS), tmp_path / "home"
    report = excerpt(home, "eval", str(folder), "--mode", "bm25", "--no-progress", "--json")
    assert set(report) >= {"queries", "ndcg@10", "recall@10", "recall@100", "mrr@10",
                           "latency_ms", "mode", "k"}
    assert set(report["latency_ms"]) == {"p50", "p95", "max"}
    assert (report["queries"], report["mode"], report["k"]) == (4, "bm25", 100)
    assert report["collection"] == "beir-tiny"
    for key in ("ndcg@10", "recall@10", "recall@100", "mrr@10"):
        assert report[key] == pytest.approx(1.0), key
    first = excerpt(home, "snapshots", "--json")["snapshots"]
    assert len(first) == 1 and first[0]["nodes"] == len(DOCS)
    assert first[0]["name"] == corpus_fingerprint(folder / "corpus.jsonl")

    excerpt(home, "eval", str(folder), "--mode", "bm25", "--no-progress", "--json")
    assert excerpt(home, "snapshots", "--json")["snapshots"] == first

    write_beir(folder, {**DOCS, "zebra": "Zebras graze on the savanna grass in herds."})
    excerpt(home, "eval", str(folder), "--mode", "bm25", "--no-progress", "--json")
    after = excerpt(home, "snapshots", "--json")["snapshots"]
    assert len(after) == 2
    assert {s["nodes"] for s in after} == {len(DOCS), len(DOCS) + 1}
    assert after[-1]["name"] == corpus_fingerprint(folder / "corpus.jsonl") != first[0]["name"]
