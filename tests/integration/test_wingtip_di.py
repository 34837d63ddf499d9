"""The real wingtip-saas application (MIT, ../shared/data/code/wingtip-saas): projects,
interfaces and dependency injection, as checked by hand in its .cs / .csproj / project.json
files (file:line in each assertion's comment).  Edges are read through graph expansion, as a
user of ``excerpt graph`` sees them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.graph import GraphLimits
from excerpt.ingest.code.csharp_projects import read_projects
from excerpt.types import Filters, Principal

C = "CS:Events_Tenant.Common."
APP = "CS:Events_TenantUserApp."
TESTS = "CS:Events_TenantUserApp.Tests."
ALL = ("Calls", "References", "Implements", "ImplementedBy", "Registers", "Executes")
Triples = set[tuple[str, str, str]]


@pytest.fixture(scope="module")
def wingtip(shared_data: Callable[..., Path]) -> Path:
    return shared_data("code", "wingtip-saas")


@pytest.fixture(scope="module")
def graph(wingtip: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Triples]:
    engine = Engine(tmp_path_factory.mktemp("home"))
    engine.ingest(wingtip, collection="wt", fmt="code", embedder="none")

    def edges(seed: str, depth: int = 1, allow: tuple[str, ...] = ALL) -> Triples:
        found = engine.graph([seed], Filters("wt"), Principal.admin(),
                             GraphLimits(depth, 500, allow)).to_json()
        return {(e["from_id"], e["relation"], e["to_id"]) for e in found["edges"]}

    return edges


def test_classes_implement_the_interfaces_they_list(graph: Callable[..., Triples]) -> None:
    # src/Events-Tenant.Common/Repositories/CatalogRepository.cs:15
    assert (f"{C}Repositories.CatalogRepository", "Implements",
            f"{C}Interfaces.ICatalogRepository") in graph(f"{C}Repositories.CatalogRepository")
    # src/Events-Tenant.Common/Repositories/TenantRepository.cs:16
    assert (f"{C}Repositories.TenantRepository", "Implements",
            f"{C}Interfaces.ITenantRepository") in graph(f"{C}Repositories.TenantRepository")
    # src/Events-Tenant.Common/Utilities/Utilities.cs:18
    assert (f"{C}Utilities.Utilities", "Implements",
            f"{C}Interfaces.IUtilities") in graph(f"{C}Utilities.Utilities")
    # test/Events-Tenant.Common.Tests/MockRepositories/MockCatalogRepository.cs:11 and
    # CatalogRepository.cs:15: both implement ICatalogRepository, nothing else does
    assert {e for e in graph(f"{C}Interfaces.ICatalogRepository", allow=("ImplementedBy",))
            if e[0] == f"{C}Interfaces.ICatalogRepository"} == {
        (f"{C}Interfaces.ICatalogRepository", "ImplementedBy",
         f"{C}Repositories.CatalogRepository"),
        (f"{C}Interfaces.ICatalogRepository", "ImplementedBy",
         f"{C}Tests.MockRepositories.MockCatalogRepository"),
    }


def test_interface_members_lead_to_their_implementations(graph: Callable[..., Triples]) -> None:
    # ITenantRepository.cs:58 GetVenueDetails(int) -> TenantRepository.cs:195 and the mock's
    # (test/Events-Tenant.Common.Tests/MockRepositories/MockTenantRepository.cs:9, :176)
    iface = f"{C}Interfaces.ITenantRepository.GetVenueDetails"
    assert graph(iface, allow=("ImplementedBy",)) == {
        (iface, "ImplementedBy", f"{C}Repositories.TenantRepository.GetVenueDetails"),
        (iface, "ImplementedBy", f"{C}Tests.MockRepositories.MockTenantRepository.GetVenueDetails"),
    }


def test_startup_registrations(graph: Callable[..., Triples]) -> None:
    setup = f"{APP}Startup.ConfigureServices"
    registers = {e for e in graph(setup) if e[1] == "Registers"}
    assert registers == {
        (setup, "Registers", f"{APP}EF.CatalogDB.CatalogDbContext"),  # Startup.cs:86 AddDbContext
        (setup, "Registers", f"{C}Repositories.CatalogRepository"),  # Startup.cs:89 <I, T>
        (setup, "Registers", f"{C}Repositories.TenantRepository"),  # :90 <I, T>, :91 factory
        (setup, "Registers", f"{C}Utilities.Utilities"),  # Startup.cs:96 <I, T>
    }  # :92-93 IConfiguration, ILookupClient: framework types, no edge
    # Startup.cs:91 AddSingleton<ITenantRepository>(p => new TenantRepository(...)) binds too
    assert (f"{C}Interfaces.ITenantRepository", "ImplementedBy",
            f"{C}Repositories.TenantRepository") in graph(f"{C}Interfaces.ITenantRepository")
    # test/Events-TenantUserApp.Tests/Startup.cs:18-20
    test_setup = f"{TESTS}Startup.ConfigureServices"
    assert {e[2] for e in graph(test_setup) if e[1] == "Registers"} == {
        f"{APP}Controllers.HomeController", f"{C}Repositories.CatalogRepository",
        f"{C}Repositories.TenantRepository"}


def test_a_controller_call_goes_through_the_interface(graph: Callable[..., Triples]) -> None:
    # Controllers/HomeController.cs:64 _tenantRepository.GetVenueDetails(...) (an
    # ITenantRepository field, HomeController.cs:16) -> TenantRepository.GetVenueDetails
    index = f"{APP}Controllers.HomeController.Index"
    reached = graph(index, depth=2, allow=("Calls", "ImplementedBy"))
    assert (index, "Calls", f"{C}Interfaces.ITenantRepository.GetVenueDetails") in reached
    assert (f"{C}Interfaces.ITenantRepository.GetVenueDetails", "ImplementedBy",
            f"{C}Repositories.TenantRepository.GetVenueDetails") in reached


def test_startup_reaches_the_procedure_through_the_interface(
        graph: Callable[..., Triples]) -> None:
    # Startup.cs:189 _utilities.RegisterTenantShard(...) (an IUtilities field, Startup.cs:30)
    # -> Utilities.cs:29 RegisterTenantShard
    # -> Utilities.cs:57 ExecuteSqlCommand("sp_ResetEventDates")
    configure = f"{APP}Startup.Configure"
    reached = graph(configure, depth=3, allow=("Calls", "ImplementedBy", "Executes"))
    assert {(configure, "Calls", f"{C}Interfaces.IUtilities.RegisterTenantShard"),
            (f"{C}Interfaces.IUtilities.RegisterTenantShard", "ImplementedBy",
             f"{C}Utilities.Utilities.RegisterTenantShard"),
            (f"{C}Utilities.Utilities.RegisterTenantShard", "Executes",
             "SQL:dbo.sp_ResetEventDates")} <= reached


def test_an_extension_method_call_resolves(graph: Callable[..., Triples]) -> None:
    # Repositories/TenantRepository.cs:62 customeModel.ToCustomersEntity() (a CustomerModel
    # parameter; `using Events_Tenant.Common.Mapping;` :7) -> Mapping/Mapper.cs:115
    add = f"{C}Repositories.TenantRepository.AddCustomer"
    assert (add, "Calls", f"{C}Mapping.Mapper.ToCustomersEntity") in graph(add, allow=("Calls",))


def test_the_nearest_startup_is_the_test_projects_own(graph: Callable[..., Triples]) -> None:
    # test/Events-TenantUserApp.Tests/Program.cs:14 UseStartup<Startup>() in namespace
    # Events_TenantUserApp.Tests: its own Startup, not the app's it also sees
    refs = {e[2] for e in graph(f"{TESTS}Program.Main", allow=("References",))}
    assert f"{TESTS}Startup" in refs and f"{APP}Startup" not in refs


def test_project_references(wingtip: Path) -> None:
    app = wingtip / "App"
    files = {p.relative_to(app).as_posix(): p.read_text(encoding="utf-8-sig")
             for p in [*app.rglob("*.csproj"), *app.rglob("project.json")]}
    projects = read_projects(files)
    common, ef = "src/Events-Tenant.Common", "src/Events-TenantUserApp.EF"
    web, tests, web_tests = ("src/Events-TenantUserApp", "test/Events-Tenant.Common.Tests",
                             "test/Events-TenantUserApp.Tests")
    assert projects.sees(common) == {common, ef}  # Events-Tenant.Common.csproj:154
    assert projects.sees(ef) == {ef}  # Events-TenantUserApp.EF.csproj: no ProjectReference
    assert projects.sees(web) == {web, common, ef}  # project.json:41-48 (net452)
    # Events-Tenant.Common.Tests.csproj:144-155 (the app's as an .xproj: its folder)
    assert projects.sees(tests) == {tests, common, ef, web}
    # test/Events-TenantUserApp.Tests/project.json:3, :21 (and EF through the app)
    assert projects.sees(web_tests) == {web_tests, web, common, ef}
    assert projects.project_of(f"{web}/Controllers/HomeController.cs") is projects.projects[web]


def test_the_default_expansion_goes_from_a_controller_to_the_table(wingtip: Path,
                                                                   tmp_path: Path) -> None:
    """``excerpt graph`` with the default allow-list and depth (no --allow): the page's action
    -> the interface member it calls -> the implementation -> the table it reads
    (HomeController.cs:64 -> ITenantRepository.cs:58 -> TenantRepository.cs:195, whose LINQ
    over the Venue DbSet reads dbo.Venue, TenantDbContext.cs:17)."""
    engine = Engine(tmp_path / "home")
    engine.ingest(wingtip, collection="wt", fmt="code", embedder="none")
    index = f"{APP}Controllers.HomeController.Index"
    found = engine.graph([index], Filters("wt"), Principal.admin(),
                         engine.graph_limits(max_depth=3)).to_json()
    reached = {(e["from_id"], e["relation"], e["to_id"]) for e in found["edges"]}
    impl = f"{C}Repositories.TenantRepository.GetVenueDetails"
    assert (f"{C}Interfaces.ITenantRepository.GetVenueDetails", "ImplementedBy", impl) in reached
    assert (impl, "ReadsFrom", "SQL:dbo.Venue") in reached
