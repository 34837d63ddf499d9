"""The real wingtip-saas application (MIT, ../shared/data/code/wingtip-saas): T-SQL dependency
facts checked by hand in its .sql files (file:line in each comment), asserted on the graph
``excerpt ingest --format code`` stores, read through graph expansion as ``excerpt graph``
shows it.  Paths are under App/WingtipSaaSDatabase/; Tenant = WingtipTenantDB, Multi =
WingtipMultiTenantDB, Catalog = WingtipCatalogDB.

The two tenant databases define the same objects (dbo.Events, dbo.Tickets, sp_DeleteEvent…):
each is one node whose edges are those of both definitions (excerpt.ingest.code.tsql_merge).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.graph import GraphLimits
from excerpt.ingest.pipeline import IngestResult
from excerpt.types import Filters, Principal

SQL_RELATIONS = ("ReadsFrom", "WritesTo", "Executes", "FK", "On", "SynonymFor")
Triples = set[tuple[str, str, str]]


@pytest.fixture(scope="module")
def ingested(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Engine, IngestResult]:
    engine = Engine(tmp_path_factory.mktemp("home"))
    result = engine.ingest(shared_data("code", "wingtip-saas"), collection="wt", fmt="code",
                           embedder="none")
    return engine, result


@pytest.fixture(scope="module")
def out(ingested: tuple[Engine, IngestResult]) -> Callable[[str], Triples]:
    engine, _ = ingested

    def edges(seed: str) -> Triples:
        found = engine.graph([seed], Filters("wt"), Principal.admin(),
                             GraphLimits(1, 500, SQL_RELATIONS)).to_json()
        return {(e["from_id"], e["relation"], e["to_id"]) for e in found["edges"]
                if e["from_id"] == seed}

    return edges


def _has(out: Callable[[str], Triples], a: str, rel: str, b: str) -> bool:
    return (f"SQL:dbo.{a}", rel, f"SQL:dbo.{b}") in out(f"SQL:dbo.{a}")


def test_procedures_read_write_inside_if_while_and_cursors(out: Callable[[str], Triples]) -> None:
    # Tenant/dbo/StoredProcedures/sp_DeleteEvent.sql:7 DECLARE @Tickets = (SELECT … dbo.Tickets)
    assert _has(out, "sp_DeleteEvent", "ReadsFrom", "Tickets")
    # sp_DeleteEvent.sql:15 and :18, after IF @Tickets > 0 BEGIN RAISERROR … RETURN 1 END
    assert _has(out, "sp_DeleteEvent", "WritesTo", "EventSections")
    assert _has(out, "sp_DeleteEvent", "WritesTo", "Events")
    # Tenant/dbo/StoredProcedures/sp_ResetEventDates.sql:15 DECLARE … CURSOR FOR SELECT … Events
    assert _has(out, "sp_ResetEventDates", "ReadsFrom", "Events")
    # sp_ResetEventDates.sql:25 and :27, inside WHILE @@Fetch_Status = 0 BEGIN … END
    assert _has(out, "sp_ResetEventDates", "WritesTo", "Events")
    assert _has(out, "sp_ResetEventDates", "WritesTo", "TicketPurchases")
    # sp_ResetEventDates.sql:31 INNER JOIN [Tickets] in the UPDATE's derived table
    assert _has(out, "sp_ResetEventDates", "ReadsFrom", "Tickets")
    # Multi/dbo/StoredProcedures/sp_NewVenue.sql:24 INSERT INTO [dbo].Venues, after two
    # IF … BEGIN RAISERROR … RETURN 1 END blocks; :42 and :55 after SET IDENTITY_INSERT … ON;
    assert _has(out, "sp_NewVenue", "WritesTo", "Venues")
    assert _has(out, "sp_NewVenue", "WritesTo", "Events")
    assert _has(out, "sp_NewVenue", "WritesTo", "EventSections")
    # Multi/dbo/StoredProcedures/sp_DeleteVenue.sql:10 and :22 DELETE [dbo].[Tickets] / [Venues]
    assert _has(out, "sp_DeleteVenue", "WritesTo", "Tickets")
    assert _has(out, "sp_DeleteVenue", "WritesTo", "Venues")
    # Tenant/dbo/StoredProcedures/SaveLastCopiedRowVersion.sql:20-21 INSERT INTO [dbo].[CopyTracker]
    assert out("SQL:dbo.SaveLastCopiedRowVersion") == {
        ("SQL:dbo.SaveLastCopiedRowVersion", "WritesTo", "SQL:dbo.CopyTracker")}


def test_views_read_their_tables(ingested: tuple[Engine, IngestResult],
                                 out: Callable[[str], Triples]) -> None:
    # Tenant/dbo/Views/EventsWithNoTickets.sql:2-3 FROM dbo.Events … (SELECT … FROM dbo.Tickets)
    assert out("SQL:dbo.EventsWithNoTickets") == {
        ("SQL:dbo.EventsWithNoTickets", "ReadsFrom", "SQL:dbo.Events"),
        ("SQL:dbo.EventsWithNoTickets", "ReadsFrom", "SQL:dbo.Tickets"),
    }
    # Tenant/dbo/Views/TicketFacts.sql:5-9 TicketPurchases, Tickets, Events, Customers, Venue
    for table in ("TicketPurchases", "Tickets", "Events", "Customers", "Venue"):
        assert _has(out, "TicketFacts", "ReadsFrom", table), table
    # Catalog/dbo/Views/TenantsExtended.sql:19-24 [dbo].[Tenants], Databases, Servers
    for table in ("Tenants", "Databases", "Servers"):
        assert _has(out, "TenantsExtended", "ReadsFrom", table), table
    # …and TenantsExtended.sql:20 [__ShardManagement].[ShardMappingsGlobal], a table the
    # elastic-database client creates (no file defines it): the edge is stored all the same
    engine, result = ingested
    assert result.snapshot_id is not None
    assert ("SQL:dbo.TenantsExtended", "ReadsFrom", "SQL:__ShardManagement.ShardMappingsGlobal"
            ) in engine.store.edge_triples(result.snapshot_id)


def test_foreign_keys_and_indexes(out: Callable[[str], Triples]) -> None:
    # Tenant/dbo/Tables/Tickets.sql:9-10 REFERENCES [TicketPurchases], [EventSections]
    assert _has(out, "Tickets", "FK", "TicketPurchases")
    assert _has(out, "Tickets", "FK", "EventSections")
    # Tenant/dbo/Tables/Venue.sql:11-12 REFERENCES [Countries], [VenueTypes]
    assert _has(out, "Venue", "FK", "Countries")
    assert _has(out, "Venue", "FK", "VenueTypes")
    # Multi/dbo/Tables/Events.sql:9 REFERENCES [Venues] (merged into the one dbo.Events node)
    assert _has(out, "Events", "FK", "Venues")
    # Tenant/dbo/Tables/Tickets.sql:15 CREATE UNIQUE INDEX [IX_Tickets] ON [dbo].[Tickets]
    assert out("SQL:dbo.Tickets.IX_Tickets") == {
        ("SQL:dbo.Tickets.IX_Tickets", "On", "SQL:dbo.Tickets")}


def test_one_node_per_object_and_none_for_built_ins(ingested: tuple[Engine, IngestResult],
                                                   out: Callable[[str], Triples]) -> None:
    engine, result = ingested
    assert result.snapshot_id is not None
    assert result.errors == []  # every batch of every .sql file is read, nothing flagged
    triples = {t for t in engine.store.edge_triples(result.snapshot_id)
               if t[0].startswith("SQL:")}  # what the SQL files say
    ids = {x for a, _, b in triples for x in (a, b)}
    # dbo.Events is created in Tenant/dbo/Tables/Events.sql:1 and Multi/dbo/Tables/Events.sql:1
    assert not any(i.startswith("SQL:") and "#" in i and not i.startswith("SQL:dbo.Venues#")
                   for i in ids)  # only the table/view pair dbo.Venues stays two nodes
    # Tenant/dbo/Views/Venues.sql:1 CREATE VIEW [dbo].[Venues]; Multi/dbo/Tables/Venues.sql: a
    # table of the same name in the other database: two kinds, two nodes
    assert ("SQL:dbo.Venues#2", "ReadsFrom", "SQL:dbo.Venue") in out("SQL:dbo.Venues#2")
    found = engine.store.nodes_by_id(result.snapshot_id, ["SQL:dbo.Events", "SQL:dbo.Events#2"])
    assert [n.id for n in found] == ["SQL:dbo.Events"]
    # sp_RemoveShardManagement.sql:7-45 reads sys.schemas, sys.tables, sys.foreign_keys and
    # INFORMATION_SCHEMA.*; sp_CpuLoadGenerator.sql:43 sys.dm_db_resource_stats: SQL Server's
    # own catalog, no node and no edge
    assert not any(i.lower().startswith(("sql:sys.", "sql:information_schema.")) for i in ids)
    assert out("SQL:dbo.sp_RemoveShardManagement") == set()
    assert engine.store.nodes_by_id(result.snapshot_id, ["SQL:sys.tables"]) == []
    # sp_RemoveShardManagement.sql:52 EXECUTE sp_executesql @Sql, @Sql built from the catalog
    # at run time (:12-47): counted as unresolved on the node, not guessed
    node, = engine.store.nodes_by_id(result.snapshot_id, ["SQL:dbo.sp_RemoveShardManagement"])
    assert node.metadata["unresolved_dynamic_sql"] == "1"
