"""Searches over the two real books in ../shared/data/books (skipped when absent)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.types import Filters, Principal


@pytest.fixture(scope="module")
def books_engine(tmp_path_factory: pytest.TempPathFactory,
                 shared_data: Callable[..., Path]) -> Engine:
    dorian = shared_data("books", "pg174_dorian_gray.txt")
    iliad = shared_data("books", "pg6130_iliad_pope.txt")
    engine = Engine(tmp_path_factory.mktemp("books"))
    for book in (dorian, iliad):
        engine.ingest([book], collection="books", fmt="gutenberg", embedder="none")
    return engine


def search(engine: Engine, query: str, k: int = 5, **filters: object) -> list:  # type: ignore[type-arg]
    return engine.search(query, Filters("books", metadata=filters), Principal.anonymous(), "bm25",
                         k).hits


def test_lord_henry_influence(books_engine: Engine) -> None:
    hits = search(books_engine, "What does Lord Henry say about influence?")
    assert any("influence" in h.node.text.lower() for h in hits)
    assert all(h.node.id.startswith("pg174:") for h in hits)
    assert all(isinstance(h.node.metadata["chapter"], int) for h in hits)


def test_achilles_anger_in_book_one(books_engine: Engine) -> None:
    hits = search(books_engine, "Achilles wrath anger", k=10, book=1)
    assert hits and all(h.node.metadata["book"] == 1 for h in hits)
    assert any("wrath" in h.node.text.lower() for h in hits)


def test_two_books_one_after_the_other_rank_like_together(
        books_engine: Engine, shared_data: Callable[..., Path], tmp_path: Path) -> None:
    together = Engine(tmp_path / "together")
    together.ingest([shared_data("books", "pg174_dorian_gray.txt"),
                     shared_data("books", "pg6130_iliad_pope.txt")],
                    collection="books", fmt="gutenberg", embedder="none")
    for query in ("portrait painted soul", "shield of Achilles", "influence youth beauty"):
        a = [(h.node.id, round(h.score, 4)) for h in search(books_engine, query, 10)]
        b = [(h.node.id, round(h.score, 4)) for h in search(together, query, 10)]
        assert a == b, query


def test_search_is_deterministic(books_engine: Engine) -> None:
    first = [(h.node.id, h.score) for h in search(books_engine, "the gods of Olympus", 20)]
    again = [(h.node.id, h.score) for h in search(books_engine, "the gods of Olympus", 20)]
    assert first == again


# --- issue 16: apparatus left out of ask, still searchable; plain-text books keep scope -------

APPARATUS = {"contents", "front", "back", "notes", "index"}


@pytest.fixture(params=["sqlite", "postgres"])
def iliad_engine(request: pytest.FixtureRequest, tmp_path: Path,
                 shared_data: Callable[..., Path]) -> Iterator[Engine]:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    engine = Engine(tmp_path / "home", store_url=url)
    engine.ingest([shared_data("books", "pg6130_iliad_pope.txt")], collection="books",
                  fmt="gutenberg", embedder="none")
    yield engine
    engine.close()


def _ask_parts(engine: Engine, question: str, **where: object) -> list[str]:
    result = engine.ask(question, Filters("books", metadata=where), Principal.anonymous(), "bm25")
    return [p.node.metadata["part"] for p in result.documents]


def test_ask_leaves_apparatus_out_and_search_still_finds_it(iliad_engine: Engine) -> None:
    question = "What does the introduction say about scepticism and knowledge of Homer?"
    found = search(iliad_engine, question, k=10)
    assert any(h.node.metadata["part"] == "front" for h in found)  # search reads everything
    default = _ask_parts(iliad_engine, question)
    assert default and not APPARATUS & set(default)  # left out, and ask is not empty-handed
    inside = _ask_parts(iliad_engine, question, part="front")  # asking inside the apparatus
    assert inside and set(inside) == {"front"}
    iliad_engine.settings = iliad_engine.settings.with_(ask_exclude_parts=())
    assert APPARATUS & set(_ask_parts(iliad_engine, question))  # the setting turns it off


def _without_frame(book: Path, to: Path) -> Path:
    data = book.read_bytes()
    start = data.index(b"\n", data.index(b"*** START OF THE PROJECT GUTENBERG")) + 1
    to.write_bytes(data[start:data.index(b"*** END OF THE PROJECT GUTENBERG")])
    return to


def test_a_book_saved_as_plain_text_answers_inside_its_scope(
        tmp_path: Path, shared_data: Callable[..., Path]) -> None:
    engine = Engine(tmp_path / "home")
    iliad = _without_frame(shared_data("books", "pg6130_iliad_pope.txt"), tmp_path / "iliad.txt")
    para = "The miller's daughter crossed the bridge at dawn and sold her bread in town. " * 4
    tale = tmp_path / "tale.txt"
    tale.write_text("THE MILL\n\n" + "".join(f"\n\nPART {n}\n\n{para}\n\n{para}\n"
                                             for n in ("ONE", "TWO", "THREE")), "utf-8")
    for path in (iliad, tale):
        engine.ingest([path], collection="books", embedder="none")  # --format auto
    who = Principal.anonymous()
    book1 = engine.ask("Why is Achilles angry with Agamemnon in Book 1?", Filters("books"), who,
                       "bm25")
    assert book1.scope == {"book": 1} and book1.documents
    assert {p.node.metadata["book"] for p in book1.documents} == {1}
    part2 = engine.ask("Where does the miller's daughter sell bread in part 2?",
                       Filters("books"), who, "bm25")
    assert part2.documents
    assert {p.node.metadata["book"] for p in part2.documents} == {2}  # "part 2" is book 2
    assert "tale" in {p.node.document_id for p in part2.documents}
    engine.close()
