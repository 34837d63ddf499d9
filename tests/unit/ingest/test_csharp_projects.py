"""C# names across projects: ``global using``, the SDK's implicit usings, ``<Using>`` items,
``.csproj`` / ``project.json`` references, and sources stored relative to the folder ingested."""

from __future__ import annotations

from pathlib import Path

from excerpt.ingest.base import LoadedCorpus
from excerpt.ingest.code.csharp_projects import global_usings, read_projects
from excerpt.ingest.code.source import load_code_source

SDK = '<Project Sdk="{sdk}"><PropertyGroup>{props}</PropertyGroup><ItemGroup>{items}</ItemGroup>' \
      "</Project>"


def _csproj(sdk: str = "Microsoft.NET.Sdk", props: str = "", items: str = "") -> str:
    return SDK.format(sdk=sdk, props=props, items=items)


def _ref(path: str) -> str:
    return f'<ProjectReference Include="{path}" />'


def _load(root: Path, files: dict[str, str]) -> LoadedCorpus:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return load_code_source([root])


def _edges(corpus: LoadedCorpus, relation: str = "References") -> set[tuple[str, str]]:
    return {(e.from_id, e.to_id) for e in corpus.edges if e.relation == relation}


# two types named Order: a bare "Order" binds only where one of them is imported
ORDERS = {
    "Shop/Models/Order.cs": "namespace Shop.Models;\npublic class Order { }\n",
    "Shop/Legacy/Order.cs": "namespace Shop.Legacy;\npublic class Order { }\n",
}
USE_ORDER = ("namespace Shop.Services;\npublic class OrderService\n{\n"
             "    public Order Load() => null;\n}\n")


def test_global_using_in_any_file_applies_to_every_file_of_the_project(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {**ORDERS, "Shop/Shop.csproj": _csproj(),
                              "Shop/GlobalUsings.cs": "global using Shop.Models;\n",
                              "Shop/Services/OrderService.cs": USE_ORDER})
    assert ("CS:Shop.Services.OrderService.Load", "CS:Shop.Models.Order") in _edges(corpus)
    assert ("CS:Shop.Services.OrderService.Load", "CS:Shop.Legacy.Order") not in _edges(corpus)


def test_global_using_without_any_project_applies_to_every_file(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {**ORDERS, "GlobalUsings.cs": "global using Shop.Legacy;\n",
                              "OrderService.cs": USE_ORDER})
    assert _edges(corpus) >= {("CS:Shop.Services.OrderService.Load", "CS:Shop.Legacy.Order")}


def test_global_using_stays_inside_its_project(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {**ORDERS, "Shop/Shop.csproj": _csproj(),
                              "Other/Other.csproj": _csproj(items=_ref("../Shop/Shop.csproj")),
                              "Other/GlobalUsings.cs": "global using Shop.Models;\n",
                              "Shop/Services/OrderService.cs": USE_ORDER})
    assert not any(a.startswith("CS:Shop.Services.OrderService") for a, _ in _edges(corpus))


def test_a_global_using_in_a_comment_is_no_using() -> None:
    text = ("// global using Shop.Legacy;\nglobal using Shop.Models;\n"
            "global using static System.Math;\n")
    assert global_usings(text, {"Shop.Models"}) == {"Shop.Models"}


# System.Index is a common polyfill; the app has an Index of its own
INDEXES = {
    "Polyfills/Index.cs": "namespace System;\npublic readonly struct Index { }\n",
    "Web/Search/Index.cs": "namespace Web.Search;\npublic class Index { }\n",
    "Web/Pages/Home.cs": "namespace Web.Pages;\npublic class Home\n{\n    private Index _at;\n}\n",
}


def test_implicit_usings_of_the_web_sdk_resolve_a_type(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {**INDEXES, "Web/Web.csproj": _csproj(
        "Microsoft.NET.Sdk.Web", "<ImplicitUsings>enable</ImplicitUsings>",
        _ref("../Polyfills/Polyfills.csproj")), "Polyfills/Polyfills.csproj": _csproj()})
    assert _edges(corpus) == {("CS:Web.Pages.Home", "CS:System.Index")}


def test_no_implicit_usings_when_the_project_does_not_enable_them(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {**INDEXES, "Web/Web.csproj": _csproj(
        "Microsoft.NET.Sdk.Web", "<ImplicitUsings>disable</ImplicitUsings>",
        _ref("../Polyfills/Polyfills.csproj")), "Polyfills/Polyfills.csproj": _csproj()})
    # neither Index imported: the one of the file's own project is taken
    assert _edges(corpus) == {("CS:Web.Pages.Home", "CS:Web.Search.Index")}


def test_using_items_of_the_project_file_import_a_namespace(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {**INDEXES, "Web/Web.csproj": _csproj(
        items='<Using Include="System" /><Using Include="Web.Search" Alias="S" />'
              + _ref("../Polyfills/Polyfills.csproj")), "Polyfills/Polyfills.csproj": _csproj()})
    assert _edges(corpus) == {("CS:Web.Pages.Home", "CS:System.Index")}


# -- projects and their references ------------------------------------------------------------


def _helpers(namespace: str) -> str:
    return f"namespace {namespace};\npublic class Helper {{ }}\n"


def _user(namespace: str, typ: str = "Helper") -> str:
    return f"namespace {namespace};\npublic class User\n{{\n    private {typ} _h;\n}}\n"


PROJECTS = {
    "A/A.csproj": _csproj(items=_ref("../B/B.csproj")),
    "B/B.csproj": _csproj(),
    "C/C.csproj": _csproj(),
    "D/D.csproj": _csproj(items=_ref("..\\B\\B.csproj")),  # Windows separators
    "A/Helper.cs": _helpers("A.Util"),
    "B/Helper.cs": _helpers("B.Util"),
    "C/Helper.cs": _helpers("C.Util"),
    "C/Widget.cs": "namespace C.Util;\npublic class Widget { }\n",
    "A/User.cs": _user("App.A"),
    "B/User.cs": _user("App.B"),
    "D/User.cs": _user("App.D"),
    "D/Other.cs": _user("App.D2", "Widget"),
}


def test_a_name_in_several_projects_resolves_in_the_own_then_a_referenced_project(
        tmp_path: Path) -> None:
    corpus = _load(tmp_path, PROJECTS)
    assert _edges(corpus) == {
        ("CS:App.A.User", "CS:A.Util.Helper"),  # its own project's, not B's it also sees
        ("CS:App.B.User", "CS:B.Util.Helper"),
        ("CS:App.D.User", "CS:B.Util.Helper"),  # the one of the project it references
    }  # and D's Widget, declared only in C which D does not see, binds nowhere


def test_without_project_files_everything_sees_everything(tmp_path: Path) -> None:
    loose = {k: v for k, v in PROJECTS.items() if k.endswith(".cs")}
    corpus = _load(tmp_path, loose)
    assert _edges(corpus) == {("CS:App.D2.User", "CS:C.Util.Widget")}  # unique anywhere


def test_project_json_references_by_project_name(tmp_path: Path) -> None:
    deps = '{"frameworks": {"net452": {"dependencies": {"B": {"target": "project"}}}}}'
    corpus = _load(tmp_path, {**PROJECTS, "D/D.csproj": _csproj(), "D/project.json": deps})
    assert ("CS:App.D.User", "CS:B.Util.Helper") in _edges(corpus)
    sees = read_projects({"A/project.json": '{"dependencies": {"B": "1.0.0-*"}}',
                          "B/B.csproj": _csproj(), "C/C.csproj": _csproj()})
    assert sees.sees("A") == {"A", "B"}
    assert sees.project_of("A/x/y/File.cs") is sees.projects["A"]
    assert sees.project_of("Loose.cs") is None


def test_references_are_transitive_and_a_broken_project_file_is_no_project() -> None:
    found = read_projects({"A/A.csproj": _csproj(items=_ref("../B/B.csproj")),
                           "B/B.csproj": _csproj(items=_ref("../C/C.xproj")),
                           "C/project.json": "{}", "E/E.csproj": "<Project"})
    assert found.sees("A") == {"A", "B", "C"}
    assert found.sees("C") == {"C"}
    assert "E" not in found.projects


# -- sources ------------------------------------------------------------------------------------


def test_sources_are_relative_to_the_folder_ingested(tmp_path: Path) -> None:
    corpus = _load(tmp_path / "repo", {**ORDERS, "db/T.sql": "CREATE TABLE dbo.T (Id int);\n"})
    assert {d.source for d in corpus.documents} == {"Shop/Models/Order.cs",
                                                     "Shop/Legacy/Order.cs", "db/T.sql"}
    assert all(n.source == n.document_id for n in corpus.nodes)
    assert not any(str(tmp_path) in n.source for n in corpus.nodes)
    single = load_code_source([tmp_path / "repo" / "db" / "T.sql"])
    assert [n.source for n in single.nodes] == ["T.sql"]  # a file given directly: its name
