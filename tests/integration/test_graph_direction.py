"""`excerpt graph --direction in|out|both` (issue 17, item 4): who calls, writes or reads a
node. Edges are reported as stored whichever way they were walked; the limits, the allow-list
and the caller's rights hold as for outgoing expansion (a hidden node is neither returned nor
walked through), on both stores, through the engine, the CLI and HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.code_sources import guarded_engine, wingtip_engine, write_sources
from tests.http import call

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.graph.expand import GraphResult
from excerpt.types import Filters, Principal

ANON = Principal.anonymous()
DBA = Principal(frozenset({"dba"}))
NIGHTLY = """\
CREATE PROCEDURE dbo.usp_Nightly
AS
BEGIN
    EXEC dbo.usp_Tenant_Purge @TenantId = 1;
END
GO
"""


def nodes(result: GraphResult) -> dict[str, int]:
    return dict(result.nodes)


def edges(result: GraphResult) -> list[tuple[str, str, str]]:
    return [(e.from_id, e.relation, e.to_id) for e in result.edges]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("graphdir")
    engine = Engine(root / "home")
    engine.ingest(write_sources(root / "src"), collection="c", fmt="code", embedder="none")
    yield engine
    engine.close()


def expand(engine: Engine, seed: str, direction: str, depth: int = 1,
           allow: tuple[str, ...] = (), principal: Principal = ANON) -> GraphResult:
    return engine.graph([seed], Filters("c"), principal,
                        engine.graph_limits(depth, None, allow, direction=direction))


def test_in_returns_the_writers_and_readers_of_a_table(small: Engine) -> None:
    result = expand(small, "SQL:dbo.Tenants", "in")
    assert nodes(result) == {"SQL:dbo.Tenants": 0, "SQL:dbo.TenantOrders": 1,
                             "SQL:dbo.usp_Tenant_Rename": 1}
    assert edges(result) == [("SQL:dbo.TenantOrders", "ReadsFrom", "SQL:dbo.Tenants"),
                             ("SQL:dbo.usp_Tenant_Rename", "WritesTo", "SQL:dbo.Tenants")]
    writers = expand(small, "SQL:dbo.Tenants", "in", allow=("WritesTo",))
    assert nodes(writers) == {"SQL:dbo.Tenants": 0, "SQL:dbo.usp_Tenant_Rename": 1}
    assert result.to_json()["settings"]["direction"] == "in"


def test_in_walks_back_from_a_procedure_to_its_callers(small: Engine) -> None:
    result = expand(small, "SQL:Sales.usp_Order_Import", "in", depth=2)
    assert nodes(result) == {"SQL:Sales.usp_Order_Import": 0,
                             "CS:Contoso.Data.OrderRepository.ImportOrders": 1,
                             "CS:Contoso.Data.OrderService.Nightly": 2}
    assert expand(small, "SQL:Sales.usp_Order_Import", "in", depth=0).nodes == [
        ("SQL:Sales.usp_Order_Import", 0)]


def test_out_is_the_default_and_both_goes_both_ways(small: Engine) -> None:
    default = small.graph(["SQL:Sales.usp_Order_Import"], Filters("c"), ANON,
                          small.graph_limits(1))
    assert nodes(default) == {"SQL:Sales.usp_Order_Import": 0, "SQL:Sales.Order": 1,
                              "SQL:Sales.OrderStaging": 1}
    both = expand(small, "CS:Contoso.Data.OrderRepository.ImportOrders", "both")
    assert nodes(both) == {"CS:Contoso.Data.OrderRepository.ImportOrders": 0,
                           "CS:Contoso.Data.OrderService.Nightly": 1,
                           "SQL:Sales.usp_Order_Import": 1}
    with pytest.raises(InputError, match="direction"):
        small.graph_limits(direction="sideways")


def test_max_nodes_holds_walking_backwards(small: Engine) -> None:
    result = small.graph(["SQL:Sales.Order"], Filters("c"), ANON,
                         small.graph_limits(1, 2, direction="in"))
    # a node's edges are walked in (relation, other end) order, as outgoing ones are:
    # ReadsFrom (TenantOrders, usp_Order_Get) before WritesTo (usp_Order_Import)
    assert nodes(result) == {"SQL:Sales.Order": 0, "SQL:dbo.TenantOrders": 1}


@pytest.fixture(params=["sqlite", "postgres"])
def guarded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """Public sources; a secret procedure writing dbo.Tenants; a public one executing it."""
    engine = guarded_engine(request, tmp_path)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "nightly.sql").write_text(NIGHTLY, "utf-8")
    engine.ingest(tmp_path / "jobs", collection="c", fmt="code", embedder="none",
                  source="jobs")
    yield engine
    engine.close()


def test_a_hidden_writer_is_neither_returned_nor_walked_through(guarded: Engine) -> None:
    insider = expand(guarded, "SQL:dbo.Tenants", "in", depth=2, principal=DBA)
    assert nodes(insider) == {"SQL:dbo.Tenants": 0, "SQL:dbo.TenantOrders": 1,
                              "SQL:dbo.usp_Tenant_Purge": 1, "SQL:dbo.usp_Tenant_Rename": 1,
                              "SQL:dbo.usp_Nightly": 2}
    outsider = expand(guarded, "SQL:dbo.Tenants", "in", depth=2)
    assert nodes(outsider) == {"SQL:dbo.Tenants": 0, "SQL:dbo.TenantOrders": 1,
                               "SQL:dbo.usp_Tenant_Rename": 1}
    assert "usp_Tenant_Purge" not in json.dumps(outsider.to_json())
    both = expand(guarded, "SQL:dbo.usp_Nightly", "both", depth=2)
    assert nodes(both) == {"SQL:dbo.usp_Nightly": 0}  # its only edge leads to the hidden one
    assert both.removed_nodes == 1 and "usp_Tenant_Purge" not in json.dumps(both.to_json())
    hidden_seed = expand(guarded, "SQL:dbo.usp_Tenant_Purge", "in")
    assert hidden_seed.nodes == [] and hidden_seed.unknown_seeds == ["SQL:dbo.usp_Tenant_Purge"]


@pytest.fixture(scope="module")
def wingtip(shared_data: Callable[..., Path],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = wingtip_engine(shared_data, tmp_path_factory)
    yield engine
    engine.close()


def test_wingtip_who_writes_and_reads_venues(wingtip: Engine) -> None:
    # sp_NewVenue.sql:24 INSERT INTO [dbo].Venues; sp_DeleteVenue.sql:22 DELETE [dbo].[Venues]
    # (App/WingtipSaaSDatabase/WingtipMultiTenantDB/dbo/StoredProcedures); the view
    # VenueEvents reads Venues (WingtipTenantDB/dbo/Views/VenueEvents.sql:2)
    limits = wingtip.graph_limits(1, None, ("WritesTo",), direction="in")
    writers = wingtip.graph(["SQL:dbo.Venues"], Filters("w"), ANON, limits)
    assert {"SQL:dbo.sp_NewVenue", "SQL:dbo.sp_DeleteVenue"} <= set(nodes(writers))
    assert all(e.relation == "WritesTo" and e.to_id == "SQL:dbo.Venues" for e in writers.edges)
    limits = wingtip.graph_limits(1, None, ("ReadsFrom",), direction="in")
    readers = wingtip.graph(["SQL:dbo.Venues"], Filters("w"), ANON, limits)
    assert "SQL:dbo.VenueEvents" in nodes(readers)
    assert "SQL:dbo.sp_NewVenue" not in nodes(readers)


def test_seed_bundle_invoices_table_in_both_directions(shared_data: Callable[..., Path],
                                                       tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    engine.ingest(shared_data("fake_enterprise", "Release_FAKE_ENTERPRISE_1.0.zip"),
                  collection="code", embedder="none")
    admin = Principal.admin()
    into = engine.graph(["SQL:dbo.table_Invoices"], Filters("code"), admin,
                        engine.graph_limits(1, direction="in"))
    assert {"SQL:dbo.proc_GenerateInvoice", "SQL:dbo.view_FinanceOverview"} <= set(nodes(into))
    anon = engine.graph(["SQL:dbo.table_Invoices"], Filters("code"), ANON,
                        engine.graph_limits(1, direction="in"))
    assert "SQL:dbo.proc_GenerateInvoice" not in nodes(anon)  # the bundle's ACL hides it
    engine.close()


def test_cli_and_http_take_the_direction(tmp_path: Path,
                                         serving: Callable[[Any], Any]) -> None:
    from excerpt.edge.keys import KeyRing
    from excerpt.server.app import create_app

    engine = Engine(tmp_path / "home")
    engine.ingest(write_sources(tmp_path / "src"), collection="c", fmt="code", embedder="none")
    out = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "graph", "SQL:dbo.Tenants",
                                   "--collection", "c", "--direction", "in", "--max-depth", "1",
                                   "--json"])
    assert out.exit_code == 0, out.output
    assert [n["id"] for n in json.loads(out.output)["nodes"]] == [
        "SQL:dbo.Tenants", "SQL:dbo.TenantOrders", "SQL:dbo.usp_Tenant_Rename"]
    ring = KeyRing(tmp_path / "keys.yaml")
    _, key = ring.add("ana")
    ring.save()
    with serving(create_app(engine, KeyRing.load(tmp_path / "keys.yaml"))) as url:
        status, body = call(f"{url}/v1/graph", key, {
            "seeds": ["SQL:dbo.Tenants"], "collection": "c", "direction": "in", "max_depth": 1})
        assert status == 200
        assert [n["id"] for n in body["nodes"]] == [
            "SQL:dbo.Tenants", "SQL:dbo.TenantOrders", "SQL:dbo.usp_Tenant_Rename"]
        status, _ = call(f"{url}/v1/graph", key, {"seeds": ["x"], "direction": "up"})
        assert status == 400
    engine.close()
