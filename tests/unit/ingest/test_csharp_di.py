"""Interfaces and dependency injection: ``Implements``, ``ImplementedBy`` and ``Registers``
edges, so a call through an injected interface reaches the implementation and its SQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.ingest.base import LoadedCorpus
from excerpt.ingest.code.source import load_code_source

D = "CS:Shop.Data."
W = "CS:Shop.Web."

DATA = """using System.Data;
using System.Data.SqlClient;
using Shop.Models;

namespace Shop.Data
{
    public interface IOrderRepository
    {
        Order Get(int id);
        Order Get(int id, bool deep);
        void Save(Order order);
        int Count { get; }
    }

    public interface IAudit
    {
        void Save(Order order);
    }

    public interface IReadOnlyRepository : IAuditSource { }
    public interface IAuditSource { int Count { get; } }

    public class OrderRepository : IOrderRepository, IAudit
    {
        public Order Get(int id)
        {
            using var cmd = new SqlCommand("dbo.usp_GetOrder", _conn);
            cmd.CommandType = CommandType.StoredProcedure;
            return null;
        }
        public Order Get(int id, bool deep) => null;
        public Order Get(string code) => null;
        public void Save(Order order) { }
        void IAudit.Save(Order order) { }
        public int Count => 0;
        private SqlConnection _conn;
    }

    public abstract class RepositoryBase
    {
        public void Save(Order order) { }
    }

    public class CachedRepository : RepositoryBase, IOrderRepository
    {
        public Order Get(int id) => null;
        public Order Get(int id, bool deep) => null;
        public int Count => 1;
    }

    public class Snapshot : IReadOnlyRepository
    {
        public int Count => 2;
    }
}
"""

MODELS = "namespace Shop.Models;\npublic class Order { }\n"

WEB = """using Microsoft.Extensions.DependencyInjection;
using Shop.Data;

namespace Shop.Web
{
    public static class ServiceSetup
    {
        public static IServiceCollection AddShop(this IServiceCollection services, bool cache)
        {
            if (cache)
                services.AddSingleton<IOrderRepository, CachedRepository>();
            else
                services.AddScoped(typeof(IOrderRepository), typeof(OrderRepository));
            services.AddTransient<IAudit>(sp => new OrderRepository());
            services.AddHostedService<Worker>();
            services.AddSingleton<ILogger>(new Logger());
            return services;
        }
    }

    public class Worker { }

    public class OrdersController
    {
        private readonly IOrderRepository _orders;
        public OrdersController(IOrderRepository orders) { _orders = orders; }
        public object Show(int id) => _orders.Get(id);
    }
}
"""

SQL = "CREATE PROCEDURE dbo.usp_GetOrder @Id int AS SELECT 1;\n"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> LoadedCorpus:
    root = tmp_path_factory.mktemp("shop")
    for name, text in {"Data.cs": DATA, "Order.cs": MODELS, "Web.cs": WEB,
                       "procs.sql": SQL}.items():
        (root / name).write_text(text, encoding="utf-8")
    return load_code_source([root])


def _edges(corpus: LoadedCorpus, relation: str) -> set[tuple[str, str]]:
    return {(e.from_id, e.to_id) for e in corpus.edges if e.relation == relation}


def test_a_class_implements_the_interfaces_its_base_list_names(corpus: LoadedCorpus) -> None:
    assert _edges(corpus, "Implements") == {
        (f"{D}OrderRepository", f"{D}IOrderRepository"),
        (f"{D}OrderRepository", f"{D}IAudit"),
        (f"{D}CachedRepository", f"{D}IOrderRepository"),  # not RepositoryBase: a class
        (f"{D}Snapshot", f"{D}IReadOnlyRepository"),
    }


def test_interface_members_are_implemented_by_same_name_and_arity(corpus: LoadedCorpus) -> None:
    got = _edges(corpus, "ImplementedBy")
    repo, cached = f"{D}OrderRepository", f"{D}CachedRepository"
    ifoo = f"{D}IOrderRepository"
    assert {(a, b) for a, b in got if a.startswith(ifoo + ".")} == {
        (f"{ifoo}.Get", f"{repo}.Get"),  # Get(int): not Get(string), same arity
        (f"{ifoo}.Get#2", f"{repo}.Get#2"),  # Get(int, bool)
        (f"{ifoo}.Save", f"{repo}.Save"),  # the public Save, not IAudit.Save
        (f"{ifoo}.Count", f"{repo}.Count"),  # a property
        (f"{ifoo}.Get", f"{cached}.Get"),
        (f"{ifoo}.Get#2", f"{cached}.Get#2"),
        (f"{ifoo}.Save", f"{D}RepositoryBase.Save"),  # inherited from its base class
        (f"{ifoo}.Count", f"{cached}.Count"),
    }
    assert (f"{D}IAudit.Save", f"{repo}.Save#2") in got  # the explicit IAudit.Save
    assert (f"{D}IAudit.Save", f"{repo}.Save") not in got
    # an interface inherited by the listed one is implemented too
    assert (f"{D}IAuditSource.Count", f"{D}Snapshot.Count") in got
    assert (f"{D}IAuditSource", f"{D}Snapshot") in got
    assert (ifoo, repo) in got and (ifoo, cached) in got  # interface -> class


def test_registrations_in_conditions_and_extension_methods(corpus: LoadedCorpus) -> None:
    setup = f"{W}ServiceSetup.AddShop"
    assert _edges(corpus, "Registers") == {
        (setup, f"{D}CachedRepository"),  # AddSingleton<I, T>() inside an if
        (setup, f"{D}OrderRepository"),  # AddScoped(typeof(I), typeof(T)); a factory lambda
        (setup, f"{W}Worker"),  # AddHostedService<T>()
    }  # ILogger / Logger are not parsed: no edge


def test_a_call_through_an_interface_reaches_the_procedure(corpus: LoadedCorpus) -> None:
    show = f"{W}OrdersController.Show"
    calls, impl = _edges(corpus, "Calls"), _edges(corpus, "ImplementedBy")
    assert (show, f"{D}IOrderRepository.Get") in calls
    assert (f"{D}IOrderRepository.Get", f"{D}OrderRepository.Get") in impl
    assert (f"{D}OrderRepository.Get", "SQL:dbo.usp_GetOrder") in _edges(corpus, "Executes")


EXTENSIONS = """using Microsoft.Extensions.DependencyInjection;
using Shop.Web;

namespace Shop.Host
{
    public class Startup
    {
        private readonly Invoice _invoice;
        public void ConfigureServices(IServiceCollection services)
        {
            services.AddShop(cache: true);
            _invoice.Save();
        }
    }
    public class Invoice { public void Save() { } }

    public static class OrderExtensions
    {
        public static void Save(this Shop.Models.Order order) { }
    }
}
"""


def test_a_startup_calls_the_extension_method_holding_the_registrations(tmp_path: Path) -> None:
    for name, text in {"Data.cs": DATA, "Order.cs": MODELS, "Web.cs": WEB,
                       "Host.cs": EXTENSIONS}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    calls = _edges(load_code_source([tmp_path]), "Calls")
    setup = "CS:Shop.Host.Startup.ConfigureServices"
    assert (setup, f"{W}ServiceSetup.AddShop") in calls
    # _invoice is an Invoice: its own Save, not the extension of Order beside it
    assert (setup, "CS:Shop.Host.OrderExtensions.Save") not in calls
    assert (setup, "CS:Shop.Host.Invoice.Save") in calls


def test_top_level_program_registrations_and_indexers(tmp_path: Path) -> None:
    (tmp_path / "Program.cs").write_text(
        "using Shop.Data;\nvar builder = WebApplication.CreateBuilder(args);\n"
        "if (builder.Environment.IsDevelopment())\n"
        "    builder.Services.AddScoped<IOrderRepository, OrderRepository>();\n"
        "builder.Services.AddShop();\nbuilder.Build().Run();\n", encoding="utf-8")
    (tmp_path / "Data.cs").write_text(
        "namespace Shop.Data\n{\n"
        "    public interface IOrderRepository { string this[int i] { get; } }\n"
        "    public class OrderRepository : IOrderRepository\n"
        "    {\n        public string this[int i] => \"\";\n    }\n"
        "    public static class Setup\n    {\n"
        "        public static IServiceCollection AddShop(this IServiceCollection s)\n"
        "            => s.AddTransient<OrderRepository>();\n    }\n}\n", encoding="utf-8")
    corpus = load_code_source([tmp_path])
    program = "CS:Program.<Main>$"
    assert _edges(corpus, "Registers") == {(program, f"{D}OrderRepository"),
                                           (f"{D}Setup.AddShop", f"{D}OrderRepository")}
    assert (program, f"{D}Setup.AddShop") in _edges(corpus, "Calls")
    assert (f"{D}IOrderRepository.Item", f"{D}OrderRepository.Item") in _edges(
        corpus, "ImplementedBy")
