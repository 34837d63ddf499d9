"""Small C# and T-SQL sources the code search tests share (identifier search, graph
directions, context from a query): an interface and its repository with an overload, a
service calling it, tables in two schemas, a view, procedures that read and write them; and a
secret procedure, imported with an ACL tag, that writes a public table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.settings import Settings

ORDERS_CS = """\
using System.Data;
using System.Data.SqlClient;

namespace Contoso.Data
{
    public interface IOrderRepository
    {
        Order GetOrder(int id);
    }

    public class Order
    {
        public int Id { get; set; }
        public string Customer { get; set; }
    }

    public class OrderRepository : IOrderRepository
    {
        private readonly string _connection;

        public OrderRepository(string connection)
        {
            _connection = connection;
        }

        public Order GetOrder(int id)
        {
            return GetOrder(id, false);
        }

        public Order GetOrder(int id, bool archived)
        {
            var connection = new SqlConnection(_connection);
            using (var command = new SqlCommand("dbo.usp_Order_Get", connection))
            {
                command.CommandType = CommandType.StoredProcedure;
                command.Parameters.AddWithValue("@Id", id);
                return new Order { Id = id };
            }
        }

        public void ImportOrders()
        {
            var connection = new SqlConnection(_connection);
            using (var command = new SqlCommand("Sales.usp_Order_Import", connection))
            {
                command.CommandType = CommandType.StoredProcedure;
                command.ExecuteNonQuery();
            }
        }
    }

    public class OrderService
    {
        private readonly OrderRepository _repository = new OrderRepository("db");

        public Order Show(int id)
        {
            return _repository.GetOrder(id);
        }

        public void Nightly()
        {
            _repository.ImportOrders();
        }
    }
}
"""

SCHEMA_SQL = """\
CREATE TABLE Sales.[Order] (
    Id INT NOT NULL PRIMARY KEY,
    Customer NVARCHAR(100) NOT NULL,
    TenantId INT NOT NULL
);
GO
CREATE TABLE dbo.Tenants (
    TenantId INT NOT NULL PRIMARY KEY,
    TenantName NVARCHAR(100) NOT NULL
);
GO
CREATE TABLE Sales.OrderStaging (
    Id INT NOT NULL,
    Customer NVARCHAR(100) NOT NULL
);
GO
CREATE VIEW dbo.TenantOrders AS
SELECT t.TenantName, o.Id FROM dbo.Tenants t JOIN Sales.[Order] o ON o.TenantId = t.TenantId;
GO
CREATE PROCEDURE Sales.usp_Order_Import
AS
BEGIN
    INSERT INTO Sales.[Order] (Id, Customer, TenantId)
    SELECT Id, Customer, 1 FROM Sales.OrderStaging;
END
GO
CREATE PROCEDURE dbo.usp_Order_Get @Id INT
AS
BEGIN
    SELECT Id, Customer FROM Sales.[Order] WHERE Id = @Id;
END
GO
CREATE PROCEDURE dbo.usp_Tenant_Rename @TenantId INT, @Name NVARCHAR(100)
AS
BEGIN
    UPDATE dbo.Tenants SET TenantName = @Name WHERE TenantId = @TenantId;
END
GO
"""

SECRET_SQL = """\
CREATE PROCEDURE dbo.usp_Tenant_Purge @TenantId INT
AS
BEGIN
    DELETE FROM dbo.Tenants WHERE TenantId = @TenantId;
END
GO
"""


def write_sources(folder: Path) -> Path:
    """The public sources in ``folder`` (created); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Orders.cs").write_text(ORDERS_CS, "utf-8")
    (folder / "schema.sql").write_text(SCHEMA_SQL, "utf-8")
    return folder


def write_secret(folder: Path) -> Path:
    """The secret procedure alone in ``folder`` (created); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "purge.sql").write_text(SECRET_SQL, "utf-8")
    return folder


def guarded_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """An engine on the store ``request.param`` names (sqlite or postgres) holding the small
    sources in public and the secret procedure (writes dbo.Tenants) under the tag ``dba``."""
    store = None
    if request.param == "postgres":
        from excerpt.store.postgres import PostgresStore

        store = PostgresStore(request.getfixturevalue("pg_url"), tmp_path / "scratch")
    engine = Engine(tmp_path / "home", Settings(), store=store)
    engine.ingest(write_sources(tmp_path / "public"), collection="c", fmt="code",
                  embedder="none", source="public")
    engine.ingest(write_secret(tmp_path / "secret"), collection="c", fmt="code",
                  embedder="none", source="secret", acl_tags=["dba"])
    return engine


def wingtip_engine(shared_data: Callable[..., Path],
                   tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The real wingtip-saas application ingested (BM25 only) into collection ``w``."""
    engine = Engine(tmp_path_factory.mktemp("wingtip") / "home")
    engine.ingest(shared_data("code", "wingtip-saas"), collection="w", fmt="code",
                  embedder="none")
    return engine


WINGTIP_NAMES: dict[str, str] = {
    # bench/wingtip.py times the same queries
    # query -> the node it names first (a constructor, an overload or a second definition
    # ``#2`` of the same name follows it)
    "TenantRepository": "CS:Events_Tenant.Common.Repositories.TenantRepository",
    "ITenantRepository": "CS:Events_Tenant.Common.Interfaces.ITenantRepository",
    "ITenantRepository.GetVenueDetails":
        "CS:Events_Tenant.Common.Interfaces.ITenantRepository.GetVenueDetails",
    "CatalogRepository.GetAllTenants":
        "CS:Events_Tenant.Common.Repositories.CatalogRepository.GetAllTenants",
    "Mapper.ToEventModel": "CS:Events_Tenant.Common.Mapping.Mapper.ToEventModel",
    "TenantDbContext": "CS:Events_TenantUserApp.EF.TenantsDB.TenantDbContext",
    "sp_DeleteEvent": "SQL:dbo.sp_DeleteEvent",
    "sp_NewVenue": "SQL:dbo.sp_NewVenue",
    "dbo.Venues": "SQL:dbo.Venues",
    "[dbo].[Tenants]": "SQL:dbo.Tenants",
    "dbo.TenantsExtended": "SQL:dbo.TenantsExtended",
    "VenueTicketPurchases": "SQL:dbo.VenueTicketPurchases",
    "rawCustomers": "SQL:dbo.rawCustomers",
    "EventFacts": "SQL:dbo.EventFacts",
}
