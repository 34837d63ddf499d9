"""Searches over the two real books in ../shared/data/books (skipped when absent)."""

from __future__ import annotations

from collections.abc import Callable
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
