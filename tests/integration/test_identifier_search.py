"""Identifier search and edge-aware code questions (issue 17, items 3 and 4).

A query that names a type, a member or a SQL object puts that node first in every mode; a
question such as "which procedure writes the Tenants table" puts the writers first, then the
table. Checked on small sources written here (every mode, with the default embedder), on the
real wingtip-saas application (BM25; the modes are measured in bench/code_search.py) and on
the seed 004 bundle; hidden nodes are never pinned, on both stores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.code_sources import WINGTIP_NAMES, guarded_engine, wingtip_engine, write_sources

from excerpt.engine import Engine
from excerpt.retrieve.identifiers import Name, SuffixIndex, bare_name, query_name
from excerpt.retrieve.relations import read_question
from excerpt.types import Filters, Principal, SearchMode

ANON = Principal.anonymous()
REPO = "CS:Contoso.Data.OrderRepository"
NAMED: dict[str, list[str]] = {
    "OrderRepository": [REPO, f"{REPO}.OrderRepository"],  # the class and its constructor
    "GetOrder": ["CS:Contoso.Data.IOrderRepository.GetOrder", f"{REPO}.GetOrder",
                 f"{REPO}.GetOrder#2"],
    "OrderRepository.GetOrder": [f"{REPO}.GetOrder", f"{REPO}.GetOrder#2"],
    "IOrderRepository.GetOrder": ["CS:Contoso.Data.IOrderRepository.GetOrder"],
    "Contoso.Data.OrderService.Show()": ["CS:Contoso.Data.OrderService.Show"],
    "usp_Order_Import": ["SQL:Sales.usp_Order_Import"],
    "Sales.Order": ["SQL:Sales.Order"],
    "dbo.Tenants": ["SQL:dbo.Tenants"],
    "[dbo].[Tenants]": ["SQL:dbo.Tenants"],
    "DBO.TENANTS": ["SQL:dbo.Tenants"],  # T-SQL names ignore case
    "TenantOrders view": ["SQL:dbo.TenantOrders"],
    "Order table": ["SQL:Sales.Order"],  # the kind word keeps the table, not the C# class
}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The small sources with the default embedder (every mode can run)."""
    root = tmp_path_factory.mktemp("idsearch")
    engine = Engine(root / "home")
    engine.ingest(write_sources(root / "src"), collection="c", fmt="code", embedder="minilm")
    yield engine
    engine.close()


def ranked(engine: Engine, query: str, mode: SearchMode, k: int = 8,
           principal: Principal = ANON, collection: str = "c") -> tuple[list[str], list[str]]:
    result = engine.search(query, Filters(collection), principal, mode, k)
    return [h.node.id for h in result.hits], list(result.analysis.get("named_nodes", []))


@pytest.mark.parametrize("mode", ["bm25", "semantic", "hybrid"])
def test_a_named_object_comes_first_in_every_mode(small: Engine, mode: SearchMode) -> None:
    for query, expected in NAMED.items():
        hits, named = ranked(small, query, mode)
        assert named == expected, query
        assert hits[:len(expected)] == expected, (query, hits)


def test_a_partial_dotted_name_matches_only_as_a_suffix(small: Engine) -> None:
    hits, named = ranked(small, "Repo.GetOrder", "bm25")
    assert named == [] and hits  # BM25 still ranks its words
    _, named = ranked(small, "Data.OrderRepository.GetOrder", "bm25")
    assert named == [f"{REPO}.GetOrder", f"{REPO}.GetOrder#2"]


def test_csharp_names_match_their_case_first() -> None:
    index = SuffixIndex.build(["CS:N.Order", "CS:N.Shop.order", "SQL:dbo.ORDER"])
    assert index.lookup(Name("Order")) == [0, 2]  # exact C# case, SQL in any case
    assert index.lookup(Name("order")) == [1, 2]
    assert index.lookup(Name("ORDER")) == [0, 1, 2]  # no exact C# match: any case
    assert index.lookup(Name("Shop.Order", ("CS:",))) == [1]
    parts = SuffixIndex.build(["CS:N.A.Run", "CS:N.A.Run#2", "CS:N.A.Run~2", "CS:N.A.Runner"])
    assert parts.lookup(Name("A.Run")) == [0, 1, 2]  # overload and a later part, by id


def test_a_lone_kind_word_is_still_a_name() -> None:
    assert query_name("Index") == Name("Index")
    assert query_name("Index method") is None  # the kind word names nothing itself
    question = read_question("what calls Index")
    assert question is not None and [n.text for n in question.names] == ["Index"]
    question = read_question("Which table does the view read")
    assert question is None  # "Which", "table", "view" are not names


def test_a_sentence_pins_nothing_by_its_names_alone(small: Engine) -> None:
    assert query_name("which repository method returns an order by id") is None
    assert query_name("OrderRepository GetOrder") is None
    for mode in ("bm25", "hybrid"):
        _, named = ranked(small, "the OrderRepository class returns an Order", mode)
        assert named == []


RELATIONS: dict[str, list[str]] = {
    # writers first (graph order), then the object they write
    "which procedure writes the Tenants table": ["SQL:dbo.usp_Tenant_Rename", "SQL:dbo.Tenants"],
    "what inserts into Sales.Order": ["SQL:Sales.usp_Order_Import", "SQL:Sales.Order"],
    "what reads the Order table": ["SQL:dbo.TenantOrders", "SQL:dbo.usp_Order_Get",
                                   "SQL:Sales.Order"],
    # GetOrder calls its overload: it is a caller and a named object, and stays with the objects
    "who calls OrderRepository.GetOrder": ["CS:Contoso.Data.OrderService.Show", f"{REPO}.GetOrder",
                                           f"{REPO}.GetOrder#2"],
    "what executes usp_Order_Import": [f"{REPO}.ImportOrders", "SQL:Sales.usp_Order_Import"],
    "who implements IOrderRepository": [REPO, "CS:Contoso.Data.IOrderRepository"],
    # "does" turns the way round: what the named object writes, implements
    "what does usp_Order_Import write": ["SQL:Sales.Order", "SQL:Sales.usp_Order_Import"],
    "which interface does OrderRepository implement": ["CS:Contoso.Data.IOrderRepository", REPO],
}


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_relation_questions_put_the_related_nodes_first(small: Engine, mode: SearchMode) -> None:
    for question, expected in RELATIONS.items():
        hits, named = ranked(small, question, mode)
        assert named == expected, question
        assert hits[:len(expected)] == expected, question


def test_relation_words_are_data_and_only_english_is_read() -> None:
    question = read_question("who registers IOrderRepository")
    assert question is not None and ("Registers", "in") in question.relations
    assert read_question("which procedure writes") is None  # names nothing
    assert read_question("dbo.Tenants") is None  # no relation word


def test_ask_over_code_reads_the_writer_first(small: Engine) -> None:
    for mode in ("bm25", "hybrid"):
        answer = small.ask("which procedure writes the Tenants table", Filters("c"), ANON,
                           mode)
        assert [p.node.id for p in answer.candidates[:2]] == ["SQL:dbo.usp_Tenant_Rename",
                                                              "SQL:dbo.Tenants"]


@pytest.fixture(params=["sqlite", "postgres"])
def guarded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """The small sources in public, the secret procedure (writes dbo.Tenants) under a tag."""
    engine = guarded_engine(request, tmp_path)
    yield engine
    engine.close()


def test_a_hidden_node_is_never_pinned(guarded: Engine) -> None:
    insider = Principal(frozenset({"dba"}))
    hits, named = ranked(guarded, "usp_Tenant_Purge", "bm25", principal=insider)
    assert named == ["SQL:dbo.usp_Tenant_Purge"] and hits[0] == named[0]
    hits, named = ranked(guarded, "usp_Tenant_Purge", "bm25")
    assert named == [] and "SQL:dbo.usp_Tenant_Purge" not in hits
    question = "which procedure deletes from dbo.Tenants"
    _, named = ranked(guarded, question, "bm25", principal=insider)
    assert named == ["SQL:dbo.usp_Tenant_Purge", "SQL:dbo.usp_Tenant_Rename", "SQL:dbo.Tenants"]
    hits, named = ranked(guarded, question, "bm25")
    assert named == ["SQL:dbo.usp_Tenant_Rename", "SQL:dbo.Tenants"]
    assert "SQL:dbo.usp_Tenant_Purge" not in hits


@pytest.fixture(scope="module")
def wingtip(shared_data: Callable[..., Path],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = wingtip_engine(shared_data, tmp_path_factory)
    yield engine
    engine.close()


def test_wingtip_identifiers_come_first(wingtip: Engine) -> None:
    for query, expected in WINGTIP_NAMES.items():
        hits, named = ranked(wingtip, query, "bm25", 10, collection="w")
        assert named[:1] == [expected], query
        name = query.replace("[", "").replace("]", "")
        assert all(bare_name(n).endswith(name) for n in named), (query, named)
        assert hits[:len(named)] == named, query


def test_wingtip_relation_questions(wingtip: Engine) -> None:
    # sp_DeleteVenue deletes from dbo.Venues, sp_NewVenue inserts into it (both under
    # App/Database/TenantDatabase/...): the writers first, then the table
    hits, named = ranked(wingtip, "which procedure writes the Venues table", "bm25",
                         collection="w")
    assert named == ["SQL:dbo.sp_DeleteVenue", "SQL:dbo.sp_NewVenue", "SQL:dbo.Venues"]
    assert hits[:3] == named
    _, readers = ranked(wingtip, "what reads dbo.Venues", "bm25", 20, collection="w")
    assert {"SQL:dbo.VenueEvents", "SQL:dbo.VenueTickets", "SQL:dbo.rawEvents"} <= set(readers)
    assert readers[-1] == "SQL:dbo.Venues"


def test_seed_bundle_sql_names_and_writers(shared_data: Callable[..., Path],
                                           tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    engine.ingest(shared_data("fake_enterprise", "Release_FAKE_ENTERPRISE_1.0.zip"),
                  collection="code", embedder="none")
    admin = Principal.admin()  # the bundle's procedures carry ACL tags
    hits, named = ranked(engine, "proc_ProcessPayment", "bm25", principal=admin,
                         collection="code")
    assert named == ["SQL:dbo.proc_ProcessPayment"] == hits[:1]
    hits, named = ranked(engine, "which procedure writes table_Invoices", "bm25",
                         principal=admin, collection="code")
    assert named == ["SQL:dbo.proc_GenerateInvoice", "SQL:dbo.table_Invoices"] == hits[:2]
    engine.close()
