"""The collection overview (issue 32, the web UI's start page): ``service.overview``, ``GET
/v1/collections/{collection}/overview`` and ``excerpt collections overview NAME``.

On real data (the handbook of examples/, the two books and the Korean regulation book of the
shared data): the counts are what a search reads, the example questions are made from the
collection's own headings in its language and are answerable (a search for each finds the
heading's node first, or its answer is not cautious), and the three doors give one answer.
Attacks: a key without the board's tag sees no board-only source, snapshot, count, metadata
value or example from a hidden heading; a collection it sees nothing of is the 404 an unknown
one is, as ``/v1/snapshots`` answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.browser import HANDBOOK
from tests.http import add_keys, call, excerpt_serve
from tests.ui_office import BOARD_MD, OLD_MD, PUBLIC_MD

from excerpt import service
from excerpt.analyze.language import HANGUL
from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.errors import InputError, NotFoundError
from excerpt.server.app import create_app
from excerpt.types import Filters, Principal

KEYS: dict[str, str] = {}
"""The keys of the office's cast (alice: public; bob: board, secret; root: admin)."""
BOB = Principal(frozenset({"board"}), frozenset({"secret"}))


def _ingest_handbook(home: Path) -> Engine:
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="handbook", embedder="none")
    return engine


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the handbook, collection "c" (a public document, a board-only secret one,
    a retired one) and "vault" (board-only), and the keys of tests/http.py's cast."""
    root = tmp_path_factory.mktemp("overview")
    for name, text in (("public.md", PUBLIC_MD), ("board.md", BOARD_MD), ("old.md", OLD_MD)):
        (root / name).write_text(text, "utf-8")
    home = root / "home"
    engine = _ingest_handbook(home)
    engine.ingest(root / "old.md", collection="c", embedder="none", source="old")
    engine.ingest(root / "public.md", collection="c", embedder="none", source="public")
    engine.ingest(root / "board.md", collection="c", embedder="none", source="board",
                  acl_tags=["board"], classification_labels=["secret"])
    engine.ingest(root / "board.md", collection="vault", embedder="none", source="board",
                  acl_tags=["board"], classification_labels=["secret"])
    engine.store.retire_sources("c", ["old"])  # what a sync does when old.md is deleted
    engine.close()
    KEYS.update(add_keys(home))
    return home


def _searched(engine: Engine, collection: str, principal: Principal) -> int:
    """How many nodes a search of ``collection`` ranks among (its view's visible rows)."""
    _, _, view = engine._open_view(Filters(collection), principal)
    return int(view.visible)


def _answerable(engine: Engine, collection: str, example: dict[str, Any],
                principal: Principal) -> bool:
    """A search for the question finds the heading's node first, or its answer is sure."""
    hits = engine.search(example["question"], Filters(collection), principal, k=3).hits
    if hits and hits[0].node.id == example["node_id"]:
        return True
    return not engine.ask(example["question"], Filters(collection), principal).cautious


def test_the_handbook_overview_counts_what_a_search_reads(office: Path) -> None:
    engine = Engine(office)
    got = service.overview(engine, service.OverviewRequest("handbook"), Principal.anonymous())
    assert got["counts"] == {"sources": 1, "snapshots": 1, "documents": 4,
                             "nodes": _searched(engine, "handbook", Principal.anonymous())}
    assert got["counts"]["nodes"] == 6
    [source] = got["sources"]
    [snapshot] = got["snapshots"]
    assert source["live"] and not source["retired"] and not snapshot["retired"]
    assert source["snapshot_id"] == snapshot["snapshot_id"]
    assert got["last_import"] == snapshot["created_at"] == source["created_at"]
    keys = {k["key"]: k for k in got["metadata"]["keys"]}
    assert {"section", "path", "language", "format"} <= set(keys)
    assert "chunk" not in keys and "headings" not in keys  # positional, or a list of another
    assert {v["value"] for v in keys["path"]["values"]} == {
        "01-snapshots.md", "02-search.md", "03-access.md", "04-ingestion.md"}
    assert got["language"] == "en" and not got["metadata"]["sampled"]
    sections = {v["value"] for v in keys["section"]["values"]}
    assert len(got["examples"]) == 3
    for example in got["examples"]:
        assert example["language"] == "en" and example["question"].endswith("?")
        assert any(example["heading"] in s for s in sections)
        assert _answerable(engine, "handbook", example, Principal.anonymous()), example
    again = service.overview(engine, service.OverviewRequest("handbook"), Principal.anonymous())
    assert again == got  # deterministic


@pytest.fixture(scope="module")
def books(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Engine:
    engine = Engine(tmp_path_factory.mktemp("overview-books") / "home")
    engine.ingest(shared_data("books"), collection="books", embedder="none")
    return engine


def test_the_books_examples_come_from_the_iliads_book_titles(books: Engine) -> None:
    got = service.overview(books, service.OverviewRequest("books"), Principal.anonymous())
    assert got["counts"]["documents"] == 2
    assert got["counts"]["nodes"] == _searched(books, "books", Principal.anonymous())
    keys = {k["key"]: k for k in got["metadata"]["keys"]}
    assert {"book", "chapter", "author", "part", "language"} <= set(keys)
    assert {v["value"] for v in keys["author"]["values"]} == {"Homer", "Oscar Wilde"}
    assert len(got["examples"]) == 3
    for example in got["examples"]:
        assert example["node_id"].startswith("pg6130:b")  # a book's argument, its title
        heading = example["heading"]
        assert heading != heading.upper() and heading in example["question"]  # re-cased
        assert _answerable(books, "books", example, Principal.anonymous()), example
    names = " ".join(e["heading"] for e in got["examples"])
    assert any(word[0].isupper() for word in names.split())  # a name keeps its capital


def test_korean_regulations_get_korean_questions(regulation_book: Path) -> None:
    engine = Engine(regulation_book)
    got = service.overview(engine, service.OverviewRequest("reg"), Principal.anonymous())
    assert got["language"] == "ko"
    assert got["counts"]["nodes"] == _searched(engine, "reg", Principal.anonymous())
    keys = {k["key"] for k in got["metadata"]["keys"]}
    assert {"regulation", "article", "chapter", "department"} <= keys
    assert "line" not in keys and "order" not in keys
    assert len(got["examples"]) == 3
    for example in got["examples"]:
        question = example["question"]
        assert example["language"] == "ko" and HANGUL.search(question)
        assert question.endswith("?") and example["heading"] in question
        regulation = example["node_id"].split(" ")[0]
        assert regulation in question  # the article's regulation is named
        assert _answerable(engine, "reg", example, Principal.anonymous()), example


def test_a_key_without_the_boards_tag_sees_nothing_of_the_board(office: Path) -> None:
    engine = Engine(office)
    alice = service.overview(engine, service.OverviewRequest("c"), Principal.anonymous())
    bob = service.overview(engine, service.OverviewRequest("c"), BOB)
    shown = json.dumps(alice, ensure_ascii=False)
    for hidden in ("board", "Northwind", "merger", "dividend", "secret"):
        assert hidden not in shown, hidden
    assert {s["source"] for s in alice["sources"]} == {"public", "old"}
    assert {s["source"] for s in bob["sources"]} == {"public", "old", "board"}
    assert alice["counts"] == {"sources": 2, "snapshots": 2, "documents": 1,
                               "nodes": _searched(engine, "c", Principal.anonymous())}
    assert bob["counts"]["nodes"] == _searched(engine, "c", BOB) > alice["counts"]["nodes"]
    retired = {s["source"]: s for s in alice["sources"]}["old"]
    assert retired["retired"] and not retired["live"]
    assert [s["retired"] for s in alice["snapshots"] if s["source"] == "old"] == [True]
    assert {e["heading"] for e in alice["examples"]} <= {"Cafeteria hours", "Weekend brunch"}
    assert any("Northwind" in e["heading"] or "dividend" in e["heading"]
               for e in bob["examples"])  # the board's headings exist: bob is asked them
    assert alice["last_import"] < bob["last_import"]  # the board's import is not told


def test_unknown_and_unseen_collections_are_the_same_not_found(office: Path) -> None:
    engine = Engine(office)
    refusals = []
    for name in ("nowhere", "vault"):
        with pytest.raises(NotFoundError) as caught:
            service.overview(engine, service.OverviewRequest(name), Principal.anonymous())
        refusals.append(str(caught.value).replace(repr(name), "NAME"))
    assert refusals[0] == refusals[1] and "vault" not in refusals[1]
    assert service.overview(engine, service.OverviewRequest("vault"), BOB)["counts"]["nodes"]
    with pytest.raises(InputError):
        service.OverviewRequest(" ")
    with pytest.raises(InputError):
        service.OverviewRequest("c", examples=11)


def _cli(home: Path, *args: str) -> tuple[int, Any]:
    out = CliRunner().invoke(cli, ["--home", str(home), "collections", "overview", *args,
                                   "--json"])
    return out.exit_code, json.loads(out.stdout)


def test_rest_cli_and_service_give_the_same_overview(office: Path,
                                                     free_port: Callable[[], int]) -> None:
    """Through a real ``excerpt serve`` (this checkout's code: PYTHONPATH reaches it)."""
    engine = Engine(office)
    with excerpt_serve(["--home", str(office)], free_port()) as url:
        for key, options, principal in ((KEYS["alice"], [], Principal.anonymous()),
                                        (KEYS["bob"], ["--acl-tag", "board", "--clearance",
                                                       "secret"], BOB)):
            for name in ("handbook", "c"):
                status, rest = call(f"{url}/v1/collections/{name}/overview", key)
                assert status == 200, rest
                code, printed = _cli(office, name, *options)
                assert code == 0, printed
                direct = service.overview(engine, service.OverviewRequest(name), principal)
                assert rest == printed == direct
        status, two = call(f"{url}/v1/collections/handbook/overview?examples=1", KEYS["alice"])
        assert status == 200 and len(two["examples"]) == 1
        _, document = call(f"{url}/openapi.json")
        operation = document["paths"]["/v1/collections/{collection}/overview"]["get"]
        assert {"401", "404"} <= set(operation["responses"])


def test_rest_refuses_as_the_other_routes_do(office: Path,
                                             serving: Callable[[Any],
                                                               AbstractContextManager[str]]
                                             ) -> None:
    app = create_app(Engine(office), KeyRing.load(office / "keys.yaml"))
    alice, bob = KEYS["alice"], KEYS["bob"]
    with serving(app) as url:
        overview = f"{url}/v1/collections/{{}}/overview"
        answers = {}
        for name in ("nowhere", "vault"):
            status, answer = call(overview.format(name), alice)
            assert status == 404 and answer["kind"] == "not_found", answer
            listed = call(f"{url}/v1/snapshots?collection={name}", alice)
            assert listed == (404, answer)  # the words /v1/snapshots answers with
            answers[name] = answer["error"].replace(repr(name), "NAME")
        assert answers["nowhere"] == answers["vault"]
        assert call(overview.format("vault"), bob)[0] == 200
        # parameters narrow a key's rights, never widen them
        status, widened = call(overview.format("c") + "?acl_tag=board&clearance=secret", alice)
        assert status == 200 and "Northwind" not in json.dumps(widened)
        status, narrowed = call(overview.format("c") + "?acl_tag=none", bob)
        assert status == 200 and "Northwind" not in json.dumps(narrowed)
        assert call(overview.format("c") + "?all_access=true", alice)[0] == 403
        status, everything = call(overview.format("c") + "?all_access=true", KEYS["root"])
        assert status == 200 and everything["all_access"] is True
        assert "Northwind" in json.dumps(everything)
        assert call(overview.format("c"))[0] == 401
        assert call(overview.format("c") + "?examples=11", alice)[0] == 400
        assert call(overview.format("c") + "?examples=-1", alice)[0] == 400


def test_both_stores_give_the_same_overview(where: tuple[str, str], tmp_path: Path) -> None:
    """The overview reads rows through the store's roles (``visible_rows``,
    ``nodes_by_ordinal``): PostgreSQL answers what the embedded store does."""
    kind, place = where
    for name, text in (("public.md", PUBLIC_MD), ("board.md", BOARD_MD)):
        (tmp_path / name).write_text(text, "utf-8")
    engine = (Engine(tmp_path / "home", store_url=place) if kind == "postgres"
              else Engine(place))
    engine.ingest(tmp_path / "public.md", collection="c", embedder="none", source="public")
    engine.ingest(tmp_path / "board.md", collection="c", embedder="none", source="board",
                  acl_tags=["board"], classification_labels=["secret"])
    alice = service.overview(engine, service.OverviewRequest("c"), Principal.anonymous())
    bob = service.overview(engine, service.OverviewRequest("c"), BOB)
    assert "Northwind" not in json.dumps(alice) and "Northwind" in json.dumps(bob)
    assert (alice["counts"]["nodes"], bob["counts"]["nodes"]) == (2, 4)
    assert [e["heading"] for e in alice["examples"]] == ["Cafeteria hours", "Weekend brunch"]
    engine.close()
