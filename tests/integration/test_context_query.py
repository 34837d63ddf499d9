"""`excerpt context --query` (issue 17, item 4): search -> graph expansion of the top hits ->
budgeted pack, in one call, through the engine, the CLI and HTTP. The hits are the seeds, what
their expansion reaches the graph nodes; the budget, the caller's rights and the seeds given
by id hold as without a query.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.code_sources import write_secret, write_sources
from tests.http import call

from excerpt.cli.main import cli
from excerpt.context.fetch import ContextResult
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.tokens import count_tokens
from excerpt.types import Filters, Principal

ANON = Principal.anonymous()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("ctxquery")
    engine = Engine(root / "home")
    engine.ingest(write_sources(root / "src"), collection="c", fmt="code", embedder="none")
    engine.ingest(write_secret(root / "secret"), collection="c", fmt="code", embedder="none",
                  acl_tags=["dba"])
    yield engine
    engine.close()


def packed(result: ContextResult) -> list[tuple[str, str]]:
    return [(n.id, n.group) for n in result.node_texts]


def test_a_query_packs_its_hit_and_what_the_hit_reaches(small: Engine) -> None:
    result = small.context([], query="usp_Order_Import", search_mode="bm25", k=1,
                           filters=Filters("c"), budget_tokens=2000)
    assert packed(result) == [("SQL:Sales.usp_Order_Import", "seed"),
                              ("SQL:Sales.Order", "graph"), ("SQL:Sales.OrderStaging", "graph")]
    assert result.total_tokens <= 2000 and not result.skipped


def test_a_query_expands_backwards_when_asked(small: Engine) -> None:
    limits = small.graph_limits(1, direction="in")
    result = small.context([], query="dbo.Tenants", search_mode="bm25", k=1,
                           filters=Filters("c"), limits=limits)
    assert packed(result) == [("SQL:dbo.Tenants", "seed"), ("SQL:dbo.TenantOrders", "graph"),
                              ("SQL:dbo.usp_Tenant_Rename", "graph")]  # the secret one: not
    insider = small.context([], query="dbo.Tenants", search_mode="bm25", k=1,
                            filters=Filters("c"), principal=Principal(frozenset({"dba"})),
                            limits=limits)
    assert ("SQL:dbo.usp_Tenant_Purge", "graph") in packed(insider)


def test_the_budget_holds_and_nothing_is_cut(small: Engine) -> None:
    whole = small.context([], query="usp_Order_Import", search_mode="bm25", k=1,
                          filters=Filters("c"), budget_tokens=10_000)
    seed = whole.node_texts[0]
    budget = seed.tokens + 1  # the seed fits, no graph node does
    assert all(n.tokens > 1 for n in whole.node_texts[1:])
    tight = small.context([], query="usp_Order_Import", search_mode="bm25", k=1,
                          filters=Filters("c"), budget_tokens=budget)
    assert packed(tight) == [("SQL:Sales.usp_Order_Import", "seed")]
    assert tight.total_tokens <= budget
    assert [i for i, _ in tight.skipped] == ["SQL:Sales.Order", "SQL:Sales.OrderStaging"]
    assert tight.node_texts[0].tokens == count_tokens(tight.node_texts[0].text)


def test_a_relation_question_packs_the_writer_first(small: Engine) -> None:
    result = small.context([], query="which procedure writes the Tenants table",
                           search_mode="bm25", k=2, filters=Filters("c"),
                           limits=small.graph_limits(0))
    assert packed(result) == [("SQL:dbo.usp_Tenant_Rename", "seed"),
                              ("SQL:dbo.Tenants", "seed")]


def test_given_seeds_come_before_the_query_hits(small: Engine) -> None:
    result = small.context(["SQL:dbo.Tenants"], query="usp_Order_Import", search_mode="bm25",
                           k=1, filters=Filters("c"), limits=small.graph_limits(0))
    assert packed(result) == [("SQL:dbo.Tenants", "seed"), ("SQL:Sales.usp_Order_Import", "seed")]
    with pytest.raises(InputError, match="--query"):
        small.context([], filters=Filters("c"))


def test_a_query_naming_a_hidden_node_packs_nothing_of_it(small: Engine) -> None:
    result = small.context([], query="usp_Tenant_Purge", search_mode="bm25",
                           filters=Filters("c"))
    assert "usp_Tenant_Purge" not in json.dumps(result.to_json())


def test_wingtip_context_from_a_procedure_name(shared_data: Callable[..., Path],
                                               tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    engine.ingest(shared_data("code", "wingtip-saas"), collection="w", fmt="code",
                  embedder="none")
    result = engine.context([], query="sp_DeleteVenue", search_mode="bm25", k=1,
                            filters=Filters("w"), budget_tokens=1500,
                            limits=engine.graph_limits(1))
    ids = [n.id for n in result.node_texts]
    assert ids[0] == "SQL:dbo.sp_DeleteVenue"
    assert {"SQL:dbo.Venues", "SQL:dbo.Events"} <= set(ids)  # it deletes from both
    assert result.total_tokens <= 1500
    engine.close()


def test_cli_and_http_take_a_query(tmp_path: Path, serving: Callable[[Any], Any]) -> None:
    from excerpt.edge.keys import KeyRing
    from excerpt.server.app import create_app

    engine = Engine(tmp_path / "home")
    engine.ingest(write_sources(tmp_path / "src"), collection="c", fmt="code", embedder="none")
    want = ["SQL:dbo.Tenants", "SQL:dbo.TenantOrders", "SQL:dbo.usp_Tenant_Rename"]
    out = CliRunner().invoke(cli, [
        "--home", str(tmp_path / "home"), "context", "--query", "[dbo].[Tenants]",
        "--collection", "c", "--mode", "bm25", "-k", "1", "--direction", "in",
        "--max-depth", "1", "--budget-tokens", "3000", "--json"])
    assert out.exit_code == 0, out.output
    assert [n["id"] for n in json.loads(out.output)["node_texts"]] == want
    ring = KeyRing(tmp_path / "keys.yaml")
    _, key = ring.add("ana")
    ring.save()
    with serving(create_app(engine, KeyRing.load(tmp_path / "keys.yaml"))) as url:
        status, body = call(f"{url}/v1/context", key, {
            "query": "[dbo].[Tenants]", "collection": "c", "mode": "bm25", "k": 1,
            "direction": "in", "max_depth": 1, "budget_tokens": 3000})
        assert status == 200, body
        assert [n["id"] for n in body["node_texts"]] == want
        status, body = call(f"{url}/v1/context", key, {"collection": "c"})
        assert status == 400 and "--query" in json.dumps(body)
    engine.close()
