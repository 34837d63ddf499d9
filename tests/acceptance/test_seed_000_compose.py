"""Seed 000 (grounded answer composition), A1-A6, on the two books and the regulation book,
with every reader (tests/llm.py): a model only adds to the extractive answer, so what the seed
asks of the answer holds whoever reads; A5's length is the extractive answer's, after the
model's sentences (at most four, as its prompt asks)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from excerpt.compose.ask import AskOptions, AskResult
from excerpt.compose.quotes import content_tokens
from excerpt.compose.sentences import split_sentences, strip_citation_marks
from excerpt.engine import Engine
from excerpt.types import Filters, Principal
from tests.llm import READERS, reader_client

QUESTIONS = [
    "What does Lord Henry say about influence?",
    "How is Achilles' anger framed in Book 1?",
    "Why does Dorian hide the portrait?",
    "What does Basil Hallward think of Dorian's beauty?",
    "How does Hector say farewell to Andromache?",
    "What happens to Sibyl Vane after Dorian leaves her?",
]


@pytest.fixture(scope="module", params=READERS)
def reader(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The chat client of each reader in turn (None: extractive)."""
    with reader_client(request.param) as client:
        yield client


def ask(home: Path, question: str, reader: Any, collection: str = "books",
        **options: int) -> AskResult:
    result = Engine(home).ask(question, Filters(collection), Principal.anonymous(), "bm25",
                              AskOptions(**options), llm=reader)
    assert result.reader["name"] == (getattr(reader, "reader_name", "extractive"))
    return result


def parts(answer: str) -> tuple[str, str]:
    """(the model's sentences, the extractive answer): a model's answer opens with its
    sentences and a blank line; an extractive one has none."""
    model, _, extractive = answer.rpartition("\n\n")
    return model, extractive


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def test_a1_a_quote_speaks_of_influence(books: Path, reader: Any) -> None:
    result = ask(books, "What does Lord Henry say about influence?", reader)
    assert any("influence" in q.text.lower() for q in result.composed.quotes)
    assert not result.composed.cautious


def test_a2_citations_of_achilles_anger_come_from_book_1(books: Path, reader: Any) -> None:
    result = ask(books, "How is Achilles' anger framed in Book 1?", reader)
    assert "[1]" in result.composed.answer
    assert result.scope == {"book": 1}
    listed = {c.n: c for c in result.composed.citations}
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", result.composed.answer)}
    assert 1 in markers and markers <= set(listed)
    assert listed[1].metadata.get("book") == 1
    assert all(c.metadata.get("book") == 1 for c in listed.values())


def test_a3_out_of_domain_is_cautious_and_still_quotes(books: Path, reader: Any) -> None:
    result = ask(books, "What is the boiling point of liquid nitrogen in a vacuum pump?", reader)
    assert result.composed.cautious
    assert result.composed.answer.startswith("Based on the available passages")
    assert result.composed.quotes  # the best candidates are still listed


def test_a4_quotes_are_not_near_duplicates(books: Path, reader: Any) -> None:
    for question in ("What does Lord Henry say about influence?",
                     "Why does Dorian hide the portrait?"):
        quotes = [q.text for q in ask(books, question, reader, max_quotes=3).composed.quotes]
        assert len(quotes) >= 2
        for i, a in enumerate(quotes):
            for b in quotes[i + 1:]:
                assert levenshtein(a, b) > 0.5 * (len(a) + len(b)) / 2, (a, b)


@pytest.mark.parametrize("question", QUESTIONS)
def test_a5_answer_is_two_to_five_sentences_of_80_to_160_words(books: Path, reader: Any,
                                                               question: str) -> None:
    model, answer = parts(ask(books, question, reader).composed.answer)
    assert len(split_sentences(strip_citation_marks(model))) <= 4
    words = len(answer.split())
    sentences = split_sentences(strip_citation_marks(answer))
    assert 80 <= words <= 160, (words, answer)
    assert 2 <= len(sentences) <= 5, sentences


@pytest.mark.parametrize("question", QUESTIONS)
def test_a6_every_sentence_shares_two_content_words_with_a_quote(books: Path, reader: Any,
                                                                question: str) -> None:
    composed = ask(books, question, reader).composed
    quote_words = [set(content_tokens(q.text)) for q in composed.quotes]
    for sentence in split_sentences(strip_citation_marks(composed.answer)):
        words = set(content_tokens(sentence))
        assert max(len(words & q) for q in quote_words) >= 2, sentence


def test_korean_answer_cites_regulation_articles(regulation_book: Path, reader: Any) -> None:
    result = ask(regulation_book, "휴학 중에 장학금을 받을 수 있나요?", reader, "reg")
    composed = result.composed
    assert result.concepts == ["휴학", "장학금"]
    assert "[1]" in composed.answer and not composed.cautious
    assert all(c.metadata.get("regulation") for c in composed.citations)
    quote_words = [set(content_tokens(q.text)) for q in composed.quotes]
    for sentence in split_sentences(strip_citation_marks(composed.answer)):
        assert max(len(set(content_tokens(sentence)) & q) for q in quote_words) >= 2
