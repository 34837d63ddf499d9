"""``ask`` scoped to a page or a numbered section of a document, and citations that say where
(issue 19 item 4). A real Markdown file with numbered headings goes through the Markdown reader
and the structured chunker ("in section 2.1" answers from 2.1 only, "in section 2" from 2 and
everything under it); pages come from nodes carrying the page metadata the PDF reader writes
(ingest/documents/blocks.py), published as a BEIR corpus: "on page 12" finds a passage spanning
pages 11-12, and a page's printed label wins over its position. A scope that matches nothing
falls back to the whole collection. A real PDF (tests/pdfs.py: front matter labelled i, then
1, 2, 3) goes through the PDF reader: "on page 2" is its printed page 2. ``excerpt ask`` prints
the page and section of each citation and books still print theirs as before."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.page_corpus import LABELLED, MANUAL, PAGES, beir
from tests.pdfs import write_manual

from excerpt.cli.main import cli
from excerpt.compose.ask import AskResult
from excerpt.engine import Engine
from excerpt.types import Filters


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, shared_data: Callable[..., Path]) -> Path:
    root = tmp_path_factory.mktemp("pages-sections")
    (root / "manual.md").write_text(MANUAL, "utf-8")
    engine = Engine(root / "home")
    engine.ingest(root / "manual.md", collection="manual", embedder="none")
    engine.ingest(beir(root / "pump", PAGES), collection="pump", fmt="beir", embedder="none")
    engine.ingest(beir(root / "valve", LABELLED), collection="valve", fmt="beir",
                  embedder="none")
    engine.ingest(shared_data("books", "pg174_dorian_gray.txt"), collection="books",
                  embedder="none")
    engine.ingest(write_manual(root / "widgets.pdf"), collection="pdf", embedder="none")
    engine.close()
    return root / "home"


def ask(home: Path, question: str, collection: str) -> AskResult:
    engine = Engine(home)
    try:
        return engine.ask(question, Filters(collection), None, "bm25", reranker="none")
    finally:
        engine.close()


def sections(result: AskResult) -> set[str]:
    return {p.node.metadata.get("section_number", "") for p in result.candidates}


def test_in_section_2_1_answers_from_2_1_only(home: Path) -> None:
    unscoped = ask(home, "What must operators check about the boiler pressure?", "manual")
    assert len(sections(unscoped)) > 1  # the words are everywhere: only the scope narrows
    scoped = ask(home, "What must operators check about the boiler pressure in section 2.1?",
                 "manual")
    assert scoped.scope == {"section_numbers": "2.1"}
    assert sections(scoped) == {"2.1"}
    assert "gauge before each shift" in scoped.composed.answer
    assert {c.metadata["section_number"] for c in scoped.composed.citations} == {"2.1"}


def test_in_section_2_takes_everything_under_2(home: Path) -> None:
    result = ask(home, "What does section 2 say about the boiler pressure?", "manual")
    assert result.scope == {"section_numbers": "2"}
    assert sections(result) == {"2", "2.1", "2.2"}


def test_a_section_that_matches_nothing_falls_back_to_the_collection(home: Path) -> None:
    result = ask(home, "What does section 7 say about the boiler pressure?", "manual")
    assert result.scope == {} and len(sections(result)) > 1


def test_on_page_12_finds_the_passages_on_page_12(home: Path) -> None:
    result = ask(home, "What happens to the pump pressure on page 12?", "pump")
    assert result.scope == {"pages": 12}  # no printed labels: the page's position
    assert {p.node.id for p in result.candidates} == {"p11-12", "p12"}
    assert ask(home, "What is the pump pressure on page 40?", "pump").scope == {}


def test_a_printed_page_label_wins_over_the_position(home: Path) -> None:
    result = ask(home, "What is the valve pressure on page 12?", "valve")
    assert result.scope == {"page_label": "12"}
    assert [p.node.id for p in result.candidates] == ["at-24"]
    assert [p.node.id for p in ask(home, "valve pressure p. ii", "valve").candidates] == [
        "front"]


def test_a_real_pdf_is_asked_by_its_printed_pages_and_sections(home: Path) -> None:
    result = ask(home, "Which parts are listed on page 2?", "pdf")
    assert result.scope == {"page_label": "2"}  # the third sheet, printed "2"
    assert {(p.node.metadata["page"], p.node.metadata["section"])
            for p in result.candidates} == {(3, "3 Parts table")}
    result = ask(home, "How is support given in section 4.1?", "pdf")
    assert [p.node.metadata["section_number"] for p in result.candidates] == ["4.1"]
    result = ask(home, "What does the manual say about widgets on page i?", "pdf")
    assert [p.node.metadata["page"] for p in result.candidates] == [1]


def cli_ask(home: Path, question: str, collection: str) -> list[str]:
    out = CliRunner().invoke(cli, ["--home", str(home), "ask", question, "--collection",
                                   collection, "--mode", "bm25", "--no-llm"])
    assert out.exit_code == 0, out.output
    return [line for line in out.output.splitlines() if line.startswith("[")]


def test_citations_name_the_page_and_section(home: Path) -> None:
    lines = cli_ask(home, "What happens to the pump pressure on page 12?", "pump")
    assert "[1] p11-12  Pump Manual  (p. 11–12, section 4.2 Alarms)" in lines, lines
    assert "[2] p12  Pump Manual  (p. 12)" in lines, lines
    lines = cli_ask(home, "What must operators check about the boiler pressure in section 2.1?",
                    "manual")
    assert lines == ["[1] manual.md:0002  Boiler Operation Manual  (section 2.1 Requirements)"]
    lines = cli_ask(home, "What is the valve pressure on page 12?", "valve")
    assert lines == ["[1] at-24  Pump Manual  (p. 12)"]  # the printed label, not 24
    lines = cli_ask(home, "Which parts are listed on page 2?", "pdf")
    assert lines == ["[1] widgets.pdf:0002  Widgets in Practice  (p. 2, section 3 Parts table)"]


def test_book_citations_are_as_before(home: Path) -> None:
    lines = cli_ask(home, "What does Lord Henry say about youth?", "books")
    book = re.compile(r"\[\d+\] pg174:ch\d+:\d+  The Picture of Dorian Gray  "
                      r"\(chapter=\d+, author=Oscar Wilde\)")
    assert lines and all(book.fullmatch(line) for line in lines), lines
