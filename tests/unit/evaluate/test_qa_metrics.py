"""The QA checks on answers written by hand: facts, citation support, verbatim quotes,
numbering, and a whole row scored from an ask result built here (issue 16 item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.compose.ask import AskResult
from excerpt.compose.composer import Citation, ComposedAnswer
from excerpt.compose.quotes import Quote
from excerpt.errors import InputError
from excerpt.evaluate.qa import Question, load_qa, score_answer, summarise
from excerpt.evaluate.qa_metrics import (
    cited_sentences,
    is_verbatim,
    is_verbatim_spaces,
    numbering_problems,
    sentence_support,
    states_fact,
    states_phrase,
)
from excerpt.types import Hit, Node


def test_facts_match_whole_words_case_insensitively() -> None:
    assert states_phrase("Dorian feared his SINS.", "sins")
    assert not states_phrase("a single portrait", "sin")
    assert states_phrase("a sinful life", "sin*")
    assert states_phrase("Achilles\u2019 friend", "achilles' friend")
    assert states_phrase("his dearest\n  friend", "dearest friend")
    assert states_fact("the picture grew old", ("ageing", "old"))
    assert not states_fact("the picture", ("ageing", "old"))


def test_korean_facts_match_as_substrings_without_spaces() -> None:
    assert states_phrase("휴학은 2년을 넘을 수 없다", "휴학")
    assert states_phrase("장학금 지급 기준", "장학금지급")
    assert not states_phrase("등록금 납부", "휴학")


def test_a_latin_phrase_ends_where_a_korean_particle_begins() -> None:
    """"1.50" had to be followed by a non-word character, and Hangul is one: "평점평균이 1.50에
    미달된 자" did not state 1.50, and every Korean answer giving a number was scored wrong."""
    assert states_phrase("평점평균이 1.50에 미달된 자", "1.50")
    assert states_phrase("SQL문을 실행한다", "sql")
    assert not states_phrase("평점평균이 1.505에 미달", "1.50")


def test_answer_sentences_carry_their_markers() -> None:
    answer = "Basil paints him. [1] He hides it [2, 3]. Then nothing cites this"
    assert cited_sentences(answer) == [("Basil paints him.", (1,)), ("He hides it", (2, 3)),
                                       (". Then nothing cites this", ())]
    assert cited_sentences("One. [1][2] Two. [2]") == [("One.", (1, 2)), ("Two.", (2,))]


def test_a_sentence_is_supported_only_by_the_quote_it_cites() -> None:
    quotes = {1: "Dorian hid the portrait in the old schoolroom.",
              2: "Lord Henry spoke of youth."}
    answer = "Dorian hid the portrait in the old schoolroom. [1] Dorian hid the portrait. [2]"
    assert sentence_support(answer, quotes) == [True, False]
    assert sentence_support("In the schoolroom, Dorian hid the portrait. [1]", quotes) == [True]
    assert sentence_support("The portrait was sold. [1]", quotes) == [False]
    assert sentence_support("Dorian hid the portrait. [7]", quotes) == [False]


def test_a_quote_is_verbatim_only_as_an_exact_substring() -> None:
    stored = "He said: \u201cGo.\u201d\nThen he left the\nroom."
    assert is_verbatim("Then he left the\nroom.", stored)
    assert not is_verbatim("Then he left the room.", stored)  # line break re-flowed
    assert is_verbatim_spaces("Then he left the room.", stored)
    assert not is_verbatim("He said: \u201cGo.\u201d; Then he left", stored)  # joined with ";"
    assert not is_verbatim_spaces("Then he left the house.", stored)
    assert not is_verbatim("anything", None)


def test_numbering_runs_one_to_n_each_cited_no_node_twice() -> None:
    good = [(1, "a"), (2, "b")]
    assert numbering_problems("X. [1] Y. [2]", good) == []
    assert numbering_problems("X. [1] Y. [3]", [(1, "a"), (3, "b")]) == [
        "citations numbered [1, 3], not 1..2"]
    assert numbering_problems("X. [1]", good) == ["lists [2], never cited"]
    assert numbering_problems("X. [1] Y. [2]", [(1, "a"), (2, "a")]) == [
        "a listed under several numbers"]
    assert numbering_problems("X. [1] Y. [4]", good) == ["cites [4], not listed",
                                                          "lists [2], never cited"]


def _result(answer: str, quotes: list[tuple[str, str]], cited: list[tuple[int, str]],
            documents: dict[str, str], cautious: bool = False) -> AskResult:
    composed = ComposedAnswer(answer, cautious, [Quote(i, t, 1.0, 0) for i, t in quotes],
                              [Citation(n, i, "", "", {}) for n, i in cited])
    hits = [Hit(Node(i, i, t), 1.0, "books@1") for i, t in documents.items()]
    return AskResult("q", "en", [], {}, hits, hits, composed, None,
                     {"retrieval": 2.0, "compose": 1.0, "total": 3.0})


QUESTION = Question("q1", "Why does Dorian hide the portrait?", (("sins", "sin*"), ("age*",)),
                    ("n1", "n9"), True, "tune", "dorian")
STORED = {"n1": "The portrait showed his sins.\nIt would age for him.",
          "n2": "Basil loved the picture."}


def test_a_row_scores_each_check_from_the_answer() -> None:
    result = _result("The portrait showed his sins. [1] It would age for him. [2]",
                     [("n1", "The portrait showed his sins."),
                      ("n1", "It would age for him.")],
                     [(1, "n1"), (2, "n1")], STORED)
    row = score_answer(QUESTION, result, lambda ids: {})
    assert row["fact_stated"] and row["fact_in_quotes"]
    assert row["gold_recall@k"] == 0.5 and row["gold_in_quotes"] == 0.5
    assert row["missed_gold"] == ["n9"]
    assert (row["sentences_cited"], row["sentences_supported"]) == (2, 2)
    assert (row["quotes_total"], row["quotes_verbatim"]) == (2, 2)
    assert not row["citation_numbering"]  # n1 under two numbers
    assert row["numbering_problems"] == ["n1 listed under several numbers"]


def test_a_non_verbatim_quote_and_a_missing_fact_are_caught() -> None:
    result = _result("The portrait showed his sins; It would age [1]",
                     [("n1", "The portrait showed his sins; It would age")],
                     [(1, "n1")], STORED)
    row = score_answer(QUESTION, result, lambda ids: {})
    assert row["quotes_verbatim"] == 0 and row["quotes_verbatim_spaces"] == 0
    assert row["citation_numbering"]
    result = _result("Basil loved the picture. [1]", [("n2", "Basil loved the picture.")],
                     [(1, "n2")], {"n1": STORED["n1"]})
    fetched: list[str] = []

    def fetch(ids: object) -> dict[str, str]:
        fetched.extend(ids)  # type: ignore[arg-type]
        return {"n2": STORED["n2"]}

    row = score_answer(QUESTION, result, fetch)
    assert fetched == ["n2"] and row["quotes_verbatim"] == 1  # text fetched, not in documents
    assert row["fact_stated"] is False and row["facts_missing"] == [["sins", "sin*"], ["age*"]]


def test_abstention_precision_recall_and_accuracy() -> None:
    def row(answerable: bool, cautious: bool) -> dict[str, object]:
        return {"answerable": answerable, "cautious": cautious, "fact_stated": answerable,
                "fact_in_quotes": None, "gold_recall@k": None, "gold_in_quotes": None,
                "sentences_cited": 1, "sentences_supported": 1, "quotes_total": 0,
                "quotes_verbatim": 0, "quotes_verbatim_spaces": 0, "citation_numbering": True,
                "latency_ms": 10.0, "stages_ms": {"total": 10.0}}

    rows = [row(False, True), row(False, False), row(True, True), row(True, False),
            row(True, False)]
    m = summarise(rows)
    assert m["cautious_precision"] == 0.5  # 2 cautious, one of them unanswerable
    assert m["cautious_recall"] == 0.5  # 2 unanswerable, one answered cautiously
    assert m["cautious_on_answerable"] == pytest.approx(1 / 3)
    assert m["abstention_accuracy"] == 0.6  # right on 3 of 5
    assert m["quotes_verbatim"] is None  # no quote to count


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "qa.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_qa_file_loads_with_its_defaults(tmp_path: Path) -> None:
    qa = load_qa(_write(tmp_path, """
kind: qa
collection: demo
questions:
  - {id: a, question: "Who?", facts: [[x, y], z], gold: n1, split: tune}
  - {id: b, question: "Where?", answerable: false, split: heldout, corpus: other}
"""))
    assert qa.collection == "demo"
    assert qa.questions[0].facts == (("x", "y"), ("z",)) and qa.questions[0].gold == ("n1",)
    assert qa.questions[0].corpus == "demo" and qa.questions[1].corpus == "other"
    assert not qa.questions[1].answerable and qa.questions[1].facts == ()


@pytest.mark.parametrize(("body", "message"), [
    ("kind: qa\nquestions: []", "non-empty list 'questions'"),
    ("questions: [{id: a}]", "not a QA file"),
    ("kind: qa\nquestions: [{id: a, question: Q, split: test, facts: [x], gold: [n]}]",
     "question 1 (a): split must be one of tune, heldout"),
    ("kind: qa\nquestions: [{id: a, question: Q, split: tune}]",
     "question 1 (a): an answerable question needs facts and gold"),
    ("kind: qa\nquestions: [{id: a, question: Q, split: tune, answerable: no2}]",
     "answerable must be true or false"),
    ("kind: qa\nquestions: [{id: a, question: Q, split: tune, answerable: false, facts: [x]}]",
     "an unanswerable question has no facts"),
    ("kind: qa\nquestions: [{id: a, question: Q, split: tune, facts: [[1]], gold: [n]}]",
     "each fact must be a list of non-empty strings"),
    ("kind: qa\nquestions: [{id: a, question: Q, split: tune, facts: [x], gold: [n]},"
     " {id: a, question: R, split: tune, facts: [x], gold: [n]}]", "question ids repeat: a"),
    ("kind: qa\nquestions: [{question: Q}]", "question 1: missing id, split"),
    ("kind: qa\nquestions: [x: [", "not valid YAML"),
])
def test_a_bad_qa_file_names_the_question_and_field(tmp_path: Path, body: str,
                                                    message: str) -> None:
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")) as caught:
        load_qa(_write(tmp_path, body))
    assert "qa.yaml" in str(caught.value)
