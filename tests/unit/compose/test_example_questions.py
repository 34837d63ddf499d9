"""Example questions from headings (compose/example_questions.py): what a heading is for each
kind of node, the phrasing per language, re-casing a book's upper-case titles, the choice."""

from __future__ import annotations

from excerpt.compose.example_questions import (
    Example,
    Heading,
    examples,
    heading_of,
    question,
    recased,
)
from excerpt.types import Node


def _node(node_id: str, text: str = "", title: str = "", document: str = "d",
          **meta: object) -> Node:
    return Node(node_id, document, text, title, metadata=meta)


def test_headings_of_a_section_an_article_and_a_books_division() -> None:
    section = heading_of(_node("a:1", title="Guide", headings=["Guide", "Atomic imports"]))
    assert section is not None and (section.text, section.within, section.kind,
                                    section.language) == ("Atomic imports", "Guide",
                                                          "section", "en")
    article = heading_of(_node("교원인사규정 제15조", regulation="교원인사규정", kind="article",
                               caption="(휴직)", deleted=False))
    assert article is not None and (article.text, article.within, article.language) == (
        "휴직", "교원인사규정", "ko")
    assert heading_of(_node("x", regulation="r", kind="article", caption="(삭제)",
                            deleted=True)) is None
    division = heading_of(_node("pg:b03:0000", "BOOK III.\n\nARGUMENT.\n\n\nTHE DUEL OF "
                                "MENELAUS AND PARIS.280\n\nThe armies being ready",
                                "The Iliad", part="argument", chunk=0))
    assert division is not None and division.text == "THE DUEL OF MENELAUS AND PARIS"
    assert heading_of(_node("plain", "Just text.")) is None
    assert heading_of(_node("long", headings=["x" * 80])) is None


def test_a_books_title_takes_the_case_of_its_words_in_the_book() -> None:
    title = Heading("THE DUEL OF MENELAUS AND PARIS", "The Iliad", "division", "en", "b03",
                    "pg")
    nodes = [_node("b03", "Menelaus and Paris meet; the duel is fought.", document="pg"),
             _node("b04", "Paris flees, and Menelaus seeks him.", document="pg")]
    [again] = recased([title], nodes)
    assert again.text == "the duel of Menelaus and Paris"


def test_questions_read_naturally_in_the_headings_language() -> None:
    article = Heading("휴직", "교원인사규정", "article", "ko", "n", "d")
    assert question(article, 0) == "교원인사규정에서 휴직은 어떻게 정하고 있나요?"
    vowel = Heading("임기", "위원회규정", "article", "ko", "n", "d")
    assert question(vowel, 2) == "위원회규정에 따르면 임기는 어떻게 되나요?"
    section = Heading("Atomic imports", "Snapshots", "section", "en", "n", "d")
    assert question(section, 0) == "What should I know about atomic imports?"
    assert question(section, 1) == "What does Snapshots say about atomic imports?"
    alone = Heading("Access rights", "Access rights", "section", "en", "n", "d")
    assert "say about" not in question(alone, 1)  # a document titled by its only section
    acronym = Heading("BM25 ranking", "Guide", "section", "en", "n", "d")
    assert question(acronym, 0) == "What should I know about BM25 ranking?"


def test_examples_are_spread_deterministic_and_checked() -> None:
    headings = [Heading(f"Topic {i}", f"Doc {i // 2}", "section", "en", f"n{i}", f"d{i // 2}")
                for i in range(10)]
    first = examples(headings, 3, "en")
    assert first == examples(list(headings), 3, "en") and len(first) == 3
    assert len({e.heading.document_id for e in first}) == 3  # from different documents
    refused = {"n1", "n3"}

    def answers(example: Example) -> bool:
        return example.heading.node_id not in refused

    checked = examples(headings, 3, "en", answers)
    assert len(checked) == 3 and not {e.heading.node_id for e in checked} & refused
    assert examples(headings, 3, "en", lambda e: False) == []
    korean = [Heading("휴직", "규정", "article", "ko", "k", "k")]
    assert [e.heading.node_id for e in examples([*headings, *korean], 1, "ko")] == ["k"]
