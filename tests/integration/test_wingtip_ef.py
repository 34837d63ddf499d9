"""The real wingtip-saas application (MIT): what its C# executes, reads and writes in SQL, and
which entity class is which table, as checked by hand in its ``.cs`` files.

Paths below are relative to ``App/src`` of wingtip-saas; line numbers are the code's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.types import Filters

Triple = tuple[str, str, str]
COMMON = "CS:Events_Tenant.Common"
TENANTS = f"{COMMON}.Repositories.TenantRepository"
CATALOG = f"{COMMON}.Repositories.CatalogRepository"
UTILITIES = f"{COMMON}.Utilities.Utilities"
EF = "CS:Events_TenantUserApp.EF"

FACTS: list[tuple[str, Triple]] = [
    # Events-Tenant.Common/Utilities/Utilities.cs:57, EF6 context.Database.ExecuteSqlCommand
    ("Utilities.cs:57", (f"{UTILITIES}.RegisterTenantShard", "Executes",
                         "SQL:dbo.sp_ResetEventDates")),
    # Events-Tenant.Common/Repositories/TenantRepository.cs (context = CreateContext(tenantId),
    # a TenantDbContext: the type comes from the parsed method's return type)
    ("TenantRepository.cs:39", (f"{TENANTS}.GetAllCountries", "ReadsFrom", "SQL:dbo.Countries")),
    ("TenantRepository.cs:64", (f"{TENANTS}.AddCustomer", "WritesTo", "SQL:dbo.Customers")),
    ("TenantRepository.cs:75", (f"{TENANTS}.GetCustomer", "ReadsFrom", "SQL:dbo.Customers")),
    ("TenantRepository.cs:104", (f"{TENANTS}.GetEventsForTenant", "ReadsFrom",
                                 "SQL:dbo.Events")),
    ("TenantRepository.cs:154", (f"{TENANTS}.AddTicketPurchase", "WritesTo",
                                 "SQL:dbo.TicketPurchases")),
    ("TenantRepository.cs:171", (f"{TENANTS}.AddTickets", "WritesTo", "SQL:dbo.Tickets")),
    ("TenantRepository.cs:182", (f"{TENANTS}.GetTicketsSold", "ReadsFrom", "SQL:dbo.Tickets")),
    ("TenantRepository.cs:211", (f"{TENANTS}.GetVenueDetails", "ReadsFrom", "SQL:dbo.Venue")),
    ("TenantRepository.cs:233", (f"{TENANTS}.GetVenueType", "ReadsFrom", "SQL:dbo.VenueTypes")),
    # Events-Tenant.Common/Repositories/CatalogRepository.cs (field CatalogDbContext)
    ("CatalogRepository.cs:36", (f"{CATALOG}.GetAllTenants", "ReadsFrom", "SQL:dbo.Tenants")),
    ("CatalogRepository.cs:68", (f"{CATALOG}.Add", "WritesTo", "SQL:dbo.Tenants")),
    ("CatalogRepository.cs:81", (f"{CATALOG}.Add", "ReadsFrom", "SQL:dbo.Databases")),  # from … in
    ("CatalogRepository.cs:85", (f"{CATALOG}.Add", "WritesTo", "SQL:dbo.Databases")),
    ("CatalogRepository.cs:107", (f"{CATALOG}.Add", "WritesTo", "SQL:dbo.ElasticPools")),
    ("CatalogRepository.cs:124", (f"{CATALOG}.Add", "WritesTo", "SQL:dbo.Servers")),
    # Events-TenantUserApp.EF: the contexts' DbSets and attributes
    ("CatalogDB/CatalogDbContext.cs:7", (f"{EF}.CatalogDB.Tenants", "MapsTo", "SQL:dbo.Tenants")),
    ("TenantsDB/TenantDbContext.cs:17", (f"{EF}.TenantsDB.Venue", "MapsTo", "SQL:dbo.Venue")),
    ("TenantsDB/TenantDbContext.cs:15", (f"{EF}.TenantsDB.TicketPurchases", "MapsTo",
                                         "SQL:dbo.TicketPurchases")),
    # EF6 context: the table is the pluralised class name, a view of WingtipTenantDB
    ("TenantsDdEF6/TenantContext.cs:33", (f"{EF}.TenantsDdEF6.EventsWithNoTicket", "MapsTo",
                                          "SQL:dbo.EventsWithNoTickets")),
    ("TenantsDdEF6/database_firewall_rules.cs:7", (f"{EF}.TenantsDdEF6.database_firewall_rules",
                                                   "MapsTo", "SQL:sys.database_firewall_rules")),
]

# Checked by hand too: what must NOT be there.
ABSENT: list[tuple[str, Triple]] = [
    # Utilities.cs:153: new SqlCommand("SELECT name from sys.databases …"): the system catalog
    ("Utilities.cs:153", (f"{UTILITIES}.GetAllTenantNames", "ReadsFrom", "SQL:sys.databases")),
    # TenantRepository.cs:64: Add + SaveChangesAsync only writes
    ("TenantRepository.cs:64", (f"{TENANTS}.AddCustomer", "ReadsFrom", "SQL:dbo.Customers")),
    # TenantDbContext.cs:98: entity.HasOne(…).WithMany(p => p.Customers): configuration, no read
    ("TenantDbContext.cs:99", (f"{EF}.TenantsDB.TenantDbContext.OnModelCreating", "ReadsFrom",
                               "SQL:dbo.Customers")),
]

# Every call that sends SQL in the C# of wingtip-saas (grep ExecuteSql|SqlCommand|FromSql|
# SqlQuery|Query<|Execute\( over App/): only one of them runs a procedure.
EXECUTES = {(f"{UTILITIES}.RegisterTenantShard", "SQL:dbo.sp_ResetEventDates")}
W = Filters(collection="w")
COMMAND = re.compile(r"ExecuteSql\w*\(|FromSql\w*\(|SqlQuery\w*\(|new \w*Command\(|CommandText")


@pytest.fixture(scope="module")
def wingtip(shared_data: Callable[..., Path],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, set[Triple]]]:
    engine = Engine(tmp_path_factory.mktemp("wingtip_ef") / "home")
    done = engine.ingest(shared_data("code", "wingtip-saas"), collection="w", fmt="code",
                         embedder="none")
    assert done.snapshot_id is not None
    edges = {(e.from_id, e.relation, e.to_id) for e in engine.store.edges(done.snapshot_id)}
    yield engine, edges
    engine.close()


@pytest.mark.parametrize(("where", "fact"), FACTS, ids=[w for w, _ in FACTS])
def test_hand_checked_fact_holds(wingtip: tuple[Engine, set[Triple]], where: str,
                                 fact: Triple) -> None:
    assert fact in wingtip[1], where


@pytest.mark.parametrize(("where", "fact"), ABSENT, ids=[w for w, _ in ABSENT])
def test_hand_checked_non_fact_is_absent(wingtip: tuple[Engine, set[Triple]], where: str,
                                         fact: Triple) -> None:
    assert fact not in wingtip[1], where


def test_no_false_executes(wingtip: tuple[Engine, set[Triple]]) -> None:
    engine, edges = wingtip
    executes = {(a, b) for a, rel, b in edges if rel == "Executes" and a.startswith("CS:")}
    assert executes == EXECUTES
    for source, _ in executes:  # each source holds the command that runs the procedure
        parts = [source] + [f"{source}~{i}" for i in range(2, 20)]  # a long member's parts
        texts = engine.context(parts, filters=W, budget_tokens=100_000).node_texts
        assert texts and COMMAND.search("".join(n.text for n in texts)), source


def test_every_entity_maps_to_a_defined_table_or_view(wingtip: tuple[Engine, set[Triple]],
                                                      ) -> None:
    edges = wingtip[1]
    maps = {(a, b) for a, rel, b in edges if rel == "MapsTo"}
    assert len(maps) == 15  # 4 catalog entities, 9 tenant entities, 2 EF6 ones
    defined = {x.lower() for a, _, b in edges for x in (a, b) if x.startswith("SQL:")}
    app_tables = {b for _, b in maps if not b.startswith("SQL:sys.")}
    assert {b.lower() for b in app_tables} <= defined


def test_graph_walks_from_the_repository_to_the_tables(wingtip: tuple[Engine, set[Triple]],
                                                       ) -> None:
    engine = wingtip[0]
    limits = engine.graph_limits(max_depth=1, allow=("WritesTo", "ReadsFrom"))
    result = engine.graph([f"{CATALOG}.Add"], filters=W, limits=limits)
    reached = {(e.relation, e.to_id) for e in result.edges}
    assert reached == {("WritesTo", f"SQL:dbo.{t}")
                       for t in ("Tenants", "Databases", "ElasticPools", "Servers")} | {
        ("ReadsFrom", f"SQL:dbo.{t}") for t in ("Databases", "ElasticPools", "Servers")}
