"""`excerpt eval QA.yaml` (issue 16 items 1 and 8): a QA file over examples/handbook (BM25
only), asked through the real CLI; each metric checked against what the answers say, the split
filter, the stored run, the gates, bad files, the LLM path through a local OpenAI-compatible
server, and (marked data) the bench question files against the shared corpora."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.llm import ChatStandIn

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.evaluate.qa import load_qa
from excerpt.evaluate.qa_metrics import numbering_problems, states_fact, strip_marks
from excerpt.types import Filters, Principal

REPO = Path(__file__).resolve().parents[2]
HANDBOOK = REPO / "examples" / "handbook"
QA_FILE = """
kind: qa
collection: demo
questions:
  - id: anonymous
    question: What may anonymous callers see?
    facts: [[neither tags nor labels]]
    gold: ["03-access.md:0000"]
    split: tune
  - id: modes
    question: Which search modes does excerpt have?
    facts: [bm25, semantic, hybrid]
    gold: ["02-search.md:0000"]
    split: heldout
  - id: nitrogen
    question: What is the boiling point of liquid nitrogen?
    answerable: false
    split: heldout
  - id: cricket
    question: Who captained the winning cricket team in 1983?
    answerable: false
    split: tune
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("qa") / "home"
    Engine(home).ingest(HANDBOOK, collection="demo", embedder="none")
    return home


@pytest.fixture(scope="module")
def qa_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("qafile") / "handbook-qa.yaml"
    path.write_text(QA_FILE, encoding="utf-8")
    return path


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args])


def evaluate(home: Path, qa_file: Path, *args: str) -> dict[str, Any]:
    out = run(home, "eval", str(qa_file), "--mode", "bm25", "--no-progress", "--json", *args)
    assert out.exit_code == 0, out.output
    report: dict[str, Any] = json.loads(out.output)
    return report


@pytest.fixture(scope="module")
def report(home: Path, qa_file: Path) -> dict[str, Any]:
    return evaluate(home, qa_file)


def node_texts(home: Path, ids: list[str]) -> dict[str, str]:
    found = Engine(home).context(ids, filters=Filters("demo"), principal=Principal.anonymous(),
                                 budget_tokens=10**9)
    return {n.id: n.text for n in found.node_texts}


def test_every_question_is_asked_and_reported(report: dict[str, Any]) -> None:
    assert report["questions"] == 4 and report["answerable"] == 2
    assert report["answerer"] == "extractive" and report["llm_model"] is None
    assert report["principal"] == {"acl_tags_any": [], "classification_labels_all": []}
    assert set(report["by_split"]) == {"tune", "heldout"}
    assert {r["id"] for r in report["per_question"]} == {"anonymous", "modes", "nitrogen",
                                                         "cricket"}
    assert report["stage_latency_ms"]["retrieval"]["p50"] > 0
    assert report["latency_ms"]["p95"] >= report["latency_ms"]["p50"] > 0


def test_facts_are_judged_on_what_the_answer_and_quotes_say(report: dict[str, Any]) -> None:
    qa = {q.id: q for q in load_qa_text()}
    for row in (r for r in report["per_question"] if r["answerable"]):
        facts = qa[row["id"]].facts
        answer = strip_marks(row["answer"])
        quotes = "\n".join(q["text"] for q in row["quotes"])
        assert row["fact_stated"] == all(states_fact(answer, f) for f in facts)
        assert row["fact_in_quotes"] == all(states_fact(quotes, f) for f in facts)
    stated = [r["fact_stated"] for r in report["per_question"] if r["answerable"]]
    assert report["fact_stated"] == sum(stated) / len(stated)


def load_qa_text() -> tuple[Any, ...]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qa.yaml"
        path.write_text(QA_FILE, encoding="utf-8")
        return load_qa(path).questions


def test_gold_recall_counts_the_passages_that_reached_composition(
        report: dict[str, Any]) -> None:
    rows = {r["id"]: r for r in report["per_question"]}
    # BM25: only the access page has "anonymous" and "callers"; only the search page the modes
    assert "03-access.md:0000" in rows["anonymous"]["documents"]
    assert rows["anonymous"]["gold_recall@k"] == 1.0
    assert rows["modes"]["gold_recall@k"] == 1.0
    assert report["gold_recall@k"] == 1.0
    assert rows["nitrogen"]["gold_recall@k"] is None  # no gold to find


def test_quotes_are_checked_against_the_stored_node_text(home: Path,
                                                         report: dict[str, Any]) -> None:
    quotes = [q for r in report["per_question"] for q in r["quotes"]]
    assert quotes
    texts = node_texts(home, sorted({q["id"] for q in quotes}))
    exact = sum(q["text"] in texts[q["id"]] for q in quotes)
    assert sum(r["quotes_verbatim"] for r in report["per_question"]) == exact
    assert report["quotes_verbatim"] == exact / len(quotes)


def test_numbering_and_citation_precision_follow_the_answers(report: dict[str, Any]) -> None:
    for row in report["per_question"]:
        citations = list(enumerate(row["citations"], start=1))
        assert row["citation_numbering"] == (not numbering_problems(row["answer"], citations))
    cited = sum(r["sentences_cited"] for r in report["per_question"])
    supported = sum(r["sentences_supported"] for r in report["per_question"])
    assert cited and report["citation_precision"] == supported / cited


def test_unanswerable_questions_with_nothing_found_are_cautious(report: dict[str, Any]) -> None:
    rows = {r["id"]: r for r in report["per_question"]}
    for qid in ("nitrogen", "cricket"):  # no handbook word: nothing retrieved, nothing quoted
        assert rows[qid]["documents"] == [] and rows[qid]["cautious"]
        assert rows[qid]["citation_numbering"] and rows[qid]["fact_stated"] is None
    assert report["cautious_recall"] == 1.0
    cautious_answerable = sum(rows[q]["cautious"] for q in ("anonymous", "modes"))
    assert report["cautious_on_answerable"] == cautious_answerable / 2
    assert report["cautious_precision"] == 2 / (2 + cautious_answerable)
    assert report["abstention_accuracy"] == (4 - cautious_answerable) / 4


def test_the_split_option_asks_only_that_half(home: Path, qa_file: Path) -> None:
    tune = evaluate(home, qa_file, "--split", "tune")
    assert tune["split"] == "tune" and tune["questions"] == 2
    assert {r["id"] for r in tune["per_question"]} == {"anonymous", "cricket"}
    assert set(tune["by_split"]) == {"tune"}
    out = run(home, "eval", str(qa_file), "--split", "test", "--no-progress")
    assert out.exit_code == 1
    assert "QA file's splits are tune, heldout, fresh, fresh2, blind, all" in out.output


def test_the_run_is_stored_with_its_questions(home: Path, report: dict[str, Any]) -> None:
    stored = Engine(home).store.eval_run(report["run_id"])
    assert stored["kind"] == "qa" and stored["split"] == "all"
    assert stored["settings"]["answerer"] == "extractive"
    assert stored["summary"]["fact_stated"] == report["fact_stated"]
    assert stored["summary"]["by_split"]["heldout"]["questions"] == 2
    assert [i["id"] for i in stored["items"]] == [r["id"] for r in report["per_question"]]
    listed = json.loads(run(home, "eval", "runs", "--json").output)["runs"]
    assert any(r["id"] == report["run_id"] and r["kind"] == "qa" for r in listed)
    plain = run(home, "eval", "runs")
    assert f"#{report['run_id']}" in plain.output and "stated" in plain.output


def test_qa_runs_compare_and_report(home: Path, qa_file: Path, report: dict[str, Any],
                                    tmp_path: Path) -> None:
    again = evaluate(home, qa_file)
    out = run(home, "eval", "compare", str(report["run_id"]), str(again["run_id"]), "--json")
    assert out.exit_code == 0, out.output
    metrics = {m["metric"]: m for m in json.loads(out.output)["metrics"]}
    assert set(metrics) == {"fact_stated", "fact_in_quotes", "gold_recall@k",
                            "citation_numbering", "abstention_accuracy"}
    assert metrics["fact_stated"]["a"] == report["fact_stated"]  # answerable questions only
    out = run(home, "eval", "report", str(report["run_id"]), str(again["run_id"]), "--out",
              str(tmp_path / "report"), "--json")
    assert out.exit_code == 0, out.output
    assert "win-loss.png" in json.loads(out.output)["plots"]


def test_the_plain_output_is_a_table(home: Path, qa_file: Path) -> None:
    out = run(home, "eval", str(qa_file), "--mode", "bm25", "--no-progress")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert "4 questions (bm25" in lines[0] and "answered by extractive" in lines[0]
    assert "stated" in lines[1] and "abstain" in lines[1]
    assert [line.split()[0] for line in lines[2:5]] == ["all", "tune", "heldout"]


def test_fail_under_gates_on_qa_metrics(home: Path, qa_file: Path) -> None:
    base = ["eval", str(qa_file), "--mode", "bm25", "--no-progress"]
    out = run(home, *base, "--fail-under", "gold_recall@k=1.0,heldout.cautious_recall=1.0")
    assert out.exit_code == 0, out.output
    out = run(home, *base, "--fail-under", "tune.abstention_accuracy=1.01")
    assert out.exit_code == 3 and "tune.abstention_accuracy" in out.output
    out = run(home, *base, "--fail-under", "fluency=0.5")
    assert out.exit_code == 1 and "no metric 'fluency'" in out.output
    assert "fact_stated" in out.output


def test_a_bad_qa_file_is_an_error_naming_it(home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: qa\ncollection: demo\nquestions:\n  - {id: a, question: Q, "
                   "split: later, facts: [x], gold: [n]}\n", encoding="utf-8")
    out = run(home, "eval", str(bad), "--no-progress")
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "bad.yaml: question 1 (a): split must be one of tune, heldout" in out.output
    missing = tmp_path / "other.yaml"
    missing.write_text(QA_FILE.replace("collection: demo", "collection: nowhere"), "utf-8")
    out = run(home, "eval", str(missing), "--no-progress")
    assert out.exit_code == 1 and "collection 'nowhere' does not exist" in out.output


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_qa_run_is_kept_alike_on_both_stores(kind: str, qa_file: Path, tmp_path: Path,
                                               request: pytest.FixtureRequest) -> None:
    from excerpt.evaluate.qa import evaluate_qa
    from excerpt.evaluate.runs import run_record
    from excerpt.store.postgres import PostgresStore

    store = PostgresStore(request.getfixturevalue("pg_url"), tmp_path) \
        if kind == "postgres" else None
    engine = Engine(tmp_path / "home", store=store)
    try:
        engine.ingest(HANDBOOK, collection="demo", embedder="none")
        report = evaluate_qa(engine, load_qa(qa_file), mode="bm25", split="heldout")
        run_id = engine.store.save_eval_run(run_record("qa", qa_file, report, engine.settings))
        kept = engine.store.eval_run(run_id)
        assert kept["summary"]["cautious_precision"] == report["cautious_precision"]
        assert kept["summary"]["by_split"] == json.loads(json.dumps(report["by_split"]))
        assert kept["items"] == json.loads(json.dumps(report["per_question"]))
        assert kept["items"][1]["fact_stated"] is None  # the unanswerable question
        header = engine.store.eval_runs()[-1]
        assert header["kind"] == "qa" and header["summary"]["questions"] == 2
    finally:
        engine.close()


def quoting_reply(prompt: str) -> str:
    """A synthesis request is answered with its first quote cited as [1], a concepts request
    with nothing (excerpt then uses its own concepts)."""
    if prompt.startswith("Quotes:\n[1] "):
        return prompt.split("\n")[1][len("[1] "):] + " [1]"
    return ""


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatStandIn]:
    server = ChatStandIn(quoting_reply)
    monkeypatch.setenv("EXCERPT_LLM_URL", server.url)
    monkeypatch.setenv("EXCERPT_LLM_MODEL", "quoting-model")
    yield server
    server.close()


def test_with_an_llm_the_eval_measures_its_answers_and_says_so(
        home: Path, qa_file: Path, model: ChatStandIn) -> None:
    report = evaluate(home, qa_file)
    assert report["answerer"] == "openai:quoting-model" and report["llm_model"] == "quoting-model"
    assert model.requests >= 4  # concepts for every question, synthesis where it is asked
    rows = {r["id"]: r for r in report["per_question"]}
    answered = [r for r in rows.values() if not r["cautious"]]
    assert rows["anonymous"] in answered
    for row in rows.values():  # a cautious answer is never handed to the model
        if row["cautious"]:
            assert not row["llm_answer"] and row["reader"]["fell_back"]
    for row in answered:
        assert row["llm_answer"]
        answer, first = row["answer"], row["quotes"][0]["text"]
        answer, extractive = answer.split("\n\n")  # the model's first, then the extractive
        assert answer.endswith(" [1]")  # what survived the attribution check of the reply
        assert extractive.endswith("]")
        assert " ".join(strip_marks(answer).split()) in " ".join(first.split())
    assert report["llm_answers"] == len(answered)
    stored = Engine(home).store.eval_run(report["run_id"])
    assert stored["settings"]["answerer"] == "openai:quoting-model"
    assert stored["summary"]["llm_model"] == "quoting-model"
    plain = run(home, "eval", str(qa_file), "--mode", "bm25", "--no-progress", "--no-llm")
    assert "answered by extractive" in plain.output


@pytest.mark.data
@pytest.mark.slow
def test_the_bench_question_files_name_nodes_of_their_corpora(
        shared_data: Callable[..., Path], tmp_path: Path) -> None:
    """Every gold id of bench/qa/*.yaml exists in the corpus ingested as the bench does
    (BM25 only: ids do not depend on the embedder), for an anonymous reader."""
    engine = Engine(tmp_path / "home")
    corpora = {
        "books": [(shared_data("books"), "gutenberg")],
        "regulations": [(shared_data("regulations", "dongeui_regulations_9-340_20250702.txt"),
                         "regulations")],
        "code": [(shared_data("fake_enterprise", f"Release_FAKE_ENTERPRISE_{v}.zip"),
                  "code-bundle") for v in ("1.0", "1.1")],
    }
    total = unanswerable = 0
    for name, sources in corpora.items():
        qa = load_qa(REPO / "bench" / "qa" / f"{name}.yaml")
        assert qa.collection == name
        for path, fmt in sources:
            engine.ingest(path, collection=name, fmt=fmt, embedder="none")
        gold = sorted({g for q in qa.questions for g in q.gold})
        found = engine.context(gold, filters=Filters(name), principal=Principal.anonymous(),
                               budget_tokens=10**9)
        assert sorted(n.id for n in found.node_texts) == gold, found.skipped
        for answerable in (True, False):
            group = [q for q in qa.questions if q.answerable == answerable]
            tune = sum(q.split == "tune" for q in group)
            assert abs(2 * tune - len(group)) <= 1, (name, answerable)  # half and half
        total += len(qa.questions)
        unanswerable += sum(not q.answerable for q in qa.questions)
    assert total >= 60 and abs(3 * unanswerable - total) <= 3


EVIDENCE_QA = """
kind: qa
collection: demo
questions:
  - id: hybrid
    question: What does hybrid search do with the two rankings?
    facts: [[fuses, fuse*]]
    evidence: ["runs both and fuses the two   rankings, which is usually better"]
    split: blind
  - id: moon
    question: What is the capital of the moon?
    answerable: false
    out_of_collection: true
    split: blind
"""


def test_evidence_spans_find_their_gold_when_the_run_starts(home: Path, tmp_path: Path) -> None:
    """Questions written without running excerpt give verbatim spans, not node ids (issue 29):
    the nodes that hold them, white space aside, are the gold; a span no node holds is an
    error naming it."""
    path = tmp_path / "evidence.yaml"
    path.write_text(EVIDENCE_QA, "utf-8")
    result = evaluate(home, path, "--split", "blind")
    rows = {r["id"]: r for r in result["per_question"]}
    assert rows["hybrid"]["relevant"] == ["02-search.md:0000"]
    assert rows["hybrid"]["gold_recall@k"] == 1.0
    assert rows["moon"]["out_of_collection"] is True
    assert result["cautious_out_of_collection"] == float(rows["moon"]["cautious"])
    path.write_text(EVIDENCE_QA.replace("fuses the two", "melts the three"), "utf-8")
    out = run(home, "eval", str(path), "--no-progress")
    assert out.exit_code == 1 and "hybrid: no passage holds the evidence" in out.output


def test_each_stage_says_whether_it_still_held_the_facts(report: dict[str, Any]) -> None:
    """A fact quoted was in a passage composition read, and one read was in a passage
    retrieval found: the shares can only shrink from retrieval to the quotes (issue 29)."""
    for row in report["per_question"]:
        if not row["answerable"]:
            assert row["fact_in_candidates"] is None and row["fact_in_documents"] is None
            continue
        assert row["fact_in_candidates"] >= row["fact_in_documents"] >= row["fact_in_quotes"]
    assert report["fact_in_candidates"] >= report["fact_in_documents"] >= report[
        "fact_in_quotes"]
    assert report["fact_in_candidates"] > 0
