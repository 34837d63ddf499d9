"""A collection of which the caller may see no node is, to that caller, a collection that is
not there: search, ask, graph, context and passage answer the not_found an unknown name gets,
in the same words, instead of an empty answer that would tell the caller the name exists
(docs/cli.md, "collections"). A caller who sees part of it, or whose metadata filter leaves
nothing, keeps its answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from excerpt.engine import Engine
from excerpt.errors import NotFoundError
from excerpt.types import Filters, Principal

MINUTES = "# Minutes\n\nThe board cut the lunch budget of the cafeteria by a third.\n"
NOTES = "# Notes\n\nThe cafeteria opens at noon and serves soup on Fridays.\n"
BOARD, ANYONE = Principal(frozenset({"board"})), Principal.anonymous()


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("unseen")
    for name, text in (("board", MINUTES), ("public", NOTES)):
        (root / name).mkdir()
        (root / name / f"{name}.md").write_text(text, encoding="utf-8")
    engine = Engine(root / "home")
    engine.ingest(root / "board", collection="vault", acl_tags=["board"], embedder="none")
    engine.ingest(root / "public", collection="notes", embedder="none")
    yield engine
    engine.close()


READS: dict[str, Callable[[Engine, str, Principal], Any]] = {
    "search": lambda e, c, p: e.search("lunch budget", Filters(c), p, "bm25", 5),
    "ask": lambda e, c, p: e.ask("What did the board cut?", Filters(c), p, "bm25"),
    "graph": lambda e, c, p: e.graph(["board.md:0"], Filters(c), p),
    "context": lambda e, c, p: e.context(["board.md:0"], filters=Filters(c), principal=p),
}


@pytest.mark.parametrize("read", READS)
def test_a_collection_the_caller_sees_nothing_of_is_not_there(engine: Engine,
                                                              read: str) -> None:
    with pytest.raises(NotFoundError) as unknown:
        READS[read](engine, "nowhere", ANYONE)
    with pytest.raises(NotFoundError) as unseen:
        READS[read](engine, "vault", ANYONE)
    assert str(unseen.value) == str(unknown.value).replace("'nowhere'", "'vault'")
    assert "vault" not in str(unknown.value)  # never named as a suggestion either


def test_a_caller_who_sees_it_reads_it_and_an_empty_filter_stays_empty(engine: Engine) -> None:
    found = engine.search("lunch budget", Filters("vault"), BOARD, "bm25", 5)
    assert [h.node.text for h in found.hits] and "lunch budget" in found.hits[0].node.text
    narrowed = engine.search("lunch budget", Filters("vault", metadata={"lang": "xx"}), BOARD,
                             "bm25", 5)
    assert narrowed.hits == []
    assert engine.search("soup", Filters("notes"), ANYONE, "bm25", 5).hits
