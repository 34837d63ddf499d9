"""Right-sized C# nodes: a type's node is its outline, long members are cut into parts under
the token cap with stable ids, and top-level statements are a node of their own."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from excerpt.errors import InputError
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.code.source import load_code_source
from excerpt.tokens import count_tokens
from excerpt.types import Node

CAP = 200


def _load(folder: Path, files: dict[str, str], cap: int = CAP) -> LoadedCorpus:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return load_code_source([folder], LoadOptions(max_node_tokens=cap))


def _nodes(corpus: LoadedCorpus) -> dict[str, Node]:
    return {n.id: n for n in corpus.nodes}


def _service(other_body: str = "return 1;", extra: str = "") -> str:
    steps = "\n".join(f'            Log("step {i}: move the order to the next state", {i});'
                      f"\n            total += Weigh(order, {i});" for i in range(60))
    return f"""namespace Shop
{{
    public class OrderService
    {{
{extra}        public int Other() {{ {other_body} }}

        /// <summary>Imports an order, step by step.</summary>
        public int Import(Order order)
        {{
            var total = 0;
{steps}
            return total;
        }}
    }}
}}
"""


def test_long_method_is_cut_into_parts_under_the_cap_at_statements(tmp_path: Path) -> None:
    text = _service()
    nodes = _nodes(_load(tmp_path, {"OrderService.cs": text}))
    method = "CS:Shop.OrderService.Import"
    parts = sorted((n for k, n in nodes.items() if k.split("~")[0] == method),
                   key=lambda n: n.start)
    assert len(parts) >= 3
    assert [p.id for p in parts] == [method] + [f"{method}~{i}" for i in range(2, len(parts) + 1)]
    assert all(count_tokens(p.text) <= CAP for p in parts)
    assert all(p.text == text[p.start : p.end] for p in parts)  # contiguous slices
    assert all(a.end == b.start for a, b in pairwise(parts))
    whole = "".join(p.text for p in parts)
    assert whole.startswith("/// <summary>Imports an order") and whole.rstrip().endswith("}")
    for p in parts[1:]:  # each later part starts with a whole statement (Log, then Weigh)
        assert p.text.lstrip().startswith(("Log(", "total += Weigh(", "return total"))
    assert {dict(p.metadata)["part"] for p in parts} == {str(i) for i in range(1, len(parts) + 1)}
    assert all(p.title == "OrderService.Import" for p in parts)


def test_part_ids_do_not_change_when_another_member_changes(tmp_path: Path) -> None:
    before = _nodes(_load(tmp_path / "a", {"OrderService.cs": _service()}))
    changed = _service(other_body="var x = 2;\n            return x * 3;",
                       extra="        public string Name { get; set; }\n\n"
                             "        public void Reset() { Log(\"reset\", 0); }\n\n")
    after = _nodes(_load(tmp_path / "b", {"OrderService.cs": changed}))
    ids = sorted(k for k in before if k.startswith("CS:Shop.OrderService.Import"))
    assert len(ids) >= 3
    assert ids == sorted(k for k in after if k.startswith("CS:Shop.OrderService.Import"))
    assert [before[k].text for k in ids] == [after[k].text for k in ids]


def test_parts_are_linked_from_the_first_and_edges_stay_on_the_member(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {"OrderService.cs": _service()})
    edges = {(e.from_id, e.relation, e.to_id) for e in corpus.edges}
    method = "CS:Shop.OrderService.Import"
    assert (method, "Contains", f"{method}~2") in edges
    assert ("CS:Shop.OrderService", "Contains", method) in edges
    assert not any(e.from_id.startswith(method + "~") for e in corpus.edges)


def test_one_huge_statement_is_cut_at_lines_and_one_huge_line_at_characters(
        tmp_path: Path) -> None:
    chained = "\n".join(f'                .Where(o => o.Status == "state-{i}" && o.Total > {i})'
                        for i in range(80))
    line = " + ".join(f'"part {i} of a very long literal"' for i in range(150))
    text = (f"class Q\n{{\n    int Run()\n    {{\n        return Orders\n{chained}\n"
            f"                .Count();\n    }}\n\n    string Long() {{ return {line}; }}\n}}\n")
    nodes = _nodes(_load(tmp_path, {"Q.cs": text}))
    run = sorted((n for k, n in nodes.items() if k.startswith("CS:Q.Run")), key=lambda n: n.start)
    assert len(run) >= 3 and all(count_tokens(n.text) <= CAP for n in run)
    assert all(n.text.endswith("\n") for n in run[:-1])  # cut at line starts
    assert "".join(n.text for n in run) == text[run[0].start : run[-1].end]
    long = sorted((n for k, n in nodes.items() if k.startswith("CS:Q.Long")),
                  key=lambda n: n.start)
    assert len(long) >= 2 and all(count_tokens(n.text) <= CAP for n in long)
    assert "".join(n.text for n in long) == text[long[0].start : long[-1].end]


OUTLINED = """using System;

namespace Shop.Data
{
    /// <summary>Reads and writes orders.</summary>
    [Serializable]
    public class OrderRepository : RepositoryBase, IOrderRepository
    {
        private const int PageSize = 50;
        private readonly IDbConnection _db;
        public event EventHandler Saved;

        /// <summary>Made by the container.</summary>
        public OrderRepository(IDbConnection db)
        {
            _db = db ?? throw new ArgumentNullException(nameof(db));
        }

        public int Count { get { return _db.Query("SELECT COUNT(*) FROM Orders"); } }

        public string Name { get; set; } = "orders";

        // Loads one order with its lines.
        [Obsolete("use GetOrderAsync")]
        public Order GetOrder(int id)
        {
            var order = _db.QuerySingle("SELECT * FROM Orders WHERE Id = @id", id);
            order.Lines = _db.Query("SELECT * FROM OrderLines WHERE OrderId = @id", id);
            return order;
        }

        public decimal Total(Order o) => o.Lines.Sum(l => l.Price * l.Quantity);

        public Order this[int id] => GetOrder(id);

        public static Order operator +(Order a, OrderRepository b) => a;

        ~OrderRepository() { _db.Dispose(); }

        private sealed class Cache : IDisposable
        {
            private readonly object _gate = new object();
            public void Dispose() { lock (_gate) { Clear(); } }
        }
    }
}
"""


def test_type_outline_holds_signatures_and_fields_but_no_bodies(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {"OrderRepository.cs": OUTLINED})
    nodes = _nodes(corpus)
    cls = nodes["CS:Shop.Data.OrderRepository"]
    outline = cls.text
    assert outline.startswith("/// <summary>Reads and writes orders.</summary>\n    "
                              "[Serializable]\n    public class OrderRepository : "
                              "RepositoryBase, IOrderRepository")
    for kept in ("private const int PageSize = 50;", "private readonly IDbConnection _db;",
                 "public event EventHandler Saved;",
                 "public OrderRepository(IDbConnection db) { … }",
                 "public int Count { get { … } }", 'public string Name { get; set; } = "orders";',
                 '[Obsolete("use GetOrderAsync")]\n        public Order GetOrder(int id) { … }',
                 "public decimal Total(Order o) => …;", "public Order this[int id] => …;",
                 "~OrderRepository() { … }", "private sealed class Cache : IDisposable { … }"):
        assert kept in outline, kept
    for body in ("ArgumentNullException", "SELECT", "Sum(", "Dispose()", "_gate",
                 "Made by the container", "Loads one order"):
        assert body not in outline, body
    assert outline.rstrip().endswith("}")
    assert count_tokens(outline) <= CAP
    text = OUTLINED
    assert (cls.start, cls.end) == (text.index("/// <summary>Reads"), text.rindex("}\n}") + 1)
    members = [n for n in corpus.nodes if n.metadata["member"]]
    assert {n.id.rsplit(".", 1)[1] for n in members} >= {
        "OrderRepository", "Count", "Name", "GetOrder", "Total", "Item", "op_Addition",
        "Finalize", "Dispose"}
    for n in members:  # every member is the exact slice of its file, body and comments
        assert n.text == text[n.start : n.end], n.id
    assert nodes["CS:Shop.Data.OrderRepository.GetOrder"].text.startswith("// Loads one order")
    assert "SELECT * FROM OrderLines" in nodes["CS:Shop.Data.OrderRepository.GetOrder"].text
    cache = nodes["CS:Shop.Data.OrderRepository.Cache"].text
    assert "private readonly object _gate" in cache and "Clear()" not in cache


def test_long_outline_is_cut_between_members(tmp_path: Path) -> None:
    fields = "\n".join(f"        public decimal Column{i} {{ get; set; }}" for i in range(80))
    text = f"public class Wide\n{{\n{fields}\n    public void Save() {{ Persist(); }}\n}}\n"
    nodes = _nodes(_load(tmp_path, {"Wide.cs": text}))
    parts = sorted((n for k, n in nodes.items() if k.split("~")[0] == "CS:Wide"),
                   key=lambda n: n.start)
    assert len(parts) >= 2 and all(count_tokens(n.text) <= CAP for n in parts)
    assert parts[0].start == 0 and parts[-1].end == len(text.rstrip("\n"))
    assert all(a.end == b.start for a, b in pairwise(parts))
    assert parts[-1].text.rstrip().endswith("public void Save() { … }\n}")
    assert all(n.text.lstrip().startswith(("public", "{")) for n in parts[1:])


PROGRAM = """using Microsoft.EntityFrameworkCore;
using Shop.Data;

// Start-up: services, then the pipeline.
var builder = WebApplication.CreateBuilder(args);
builder.Services.AddDbContext<ShopContext>(o => o.UseSqlServer(Connection()));
builder.Services.AddScoped<IOrderRepository, OrderRepository>();
if (builder.Environment.IsDevelopment())
{
    builder.Services.AddSingleton<IClock, FakeClock>();
}

var app = builder.Build();
app.MapControllers();
app.Run();

string Connection()
{
    return builder.Configuration.GetConnectionString("Shop") ?? "Server=.;Database=Shop";
}
"""

REPOSITORY = """namespace Shop.Data
{
    public interface IOrderRepository { }
    public class OrderRepository : IOrderRepository { }
}
"""


def test_top_level_statements_are_one_program_node(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {"Program.cs": PROGRAM, "Data/OrderRepository.cs": REPOSITORY})
    nodes = _nodes(corpus)
    program = nodes["CS:Program.<Main>$"]
    assert program.metadata["type"] == "Program"
    assert program.title == "Program (top-level statements)"
    assert program.document_id == "Program.cs"
    assert program.text.startswith("// Start-up: services, then the pipeline.\nvar builder")
    assert "builder.Services.AddScoped<IOrderRepository, OrderRepository>();" in program.text
    assert "AddSingleton<IClock, FakeClock>();" in program.text
    assert program.text.rstrip().endswith("string Connection() { … }")
    assert "GetConnectionString" not in program.text  # the local function's body is its node
    assert (program.start, program.end) == (PROGRAM.index("// Start-up"),
                                            PROGRAM.rstrip().rindex("}") + 1)
    helper = nodes["CS:Program.<Main>$.Connection"]
    assert helper.text == PROGRAM[helper.start : helper.end]
    assert helper.text.startswith("string Connection()") and "GetConnectionString" in helper.text
    assert (helper.metadata["type"], helper.title) == ("Method", "Program.Connection")
    edges = {(e.from_id, e.relation, e.to_id) for e in corpus.edges}
    assert ("CS:Program.<Main>$", "Contains", helper.id) in edges
    assert ("CS:Program.<Main>$", "Calls", helper.id) in edges
    assert ("CS:Program.<Main>$", "References", "CS:Shop.Data.OrderRepository") in edges
    assert ("CS:Program.<Main>$", "Registers", "CS:Shop.Data.OrderRepository") in edges  # DI


def test_long_top_level_program_is_cut_at_its_statements(tmp_path: Path) -> None:
    lines = "\n".join(f"builder.Services.AddScoped<IService{i}, Service{i}>();" for i in range(90))
    text = f"var builder = WebApplication.CreateBuilder(args);\n{lines}\nbuilder.Build().Run();\n"
    nodes = _nodes(_load(tmp_path, {"Program.cs": text}))
    parts = sorted((n for k, n in nodes.items() if k.startswith("CS:Program.<Main>$")),
                   key=lambda n: n.start)
    assert len(parts) >= 2 and parts[1].id == "CS:Program.<Main>$~2"
    assert all(count_tokens(n.text) <= CAP and n.text == text[n.start : n.end] for n in parts)
    assert "".join(n.text for n in parts) == text.rstrip("\n")


def test_a_class_file_has_no_program_node_and_the_cap_must_be_positive(tmp_path: Path) -> None:
    nodes = _nodes(_load(tmp_path, {"Data/OrderRepository.cs": REPOSITORY}))
    assert not any("<Main>$" in k for k in nodes)
    with pytest.raises(InputError, match="at least 1"):
        LoadOptions(max_node_tokens=0)


def test_long_sql_procedure_is_cut_after_blank_lines(tmp_path: Path) -> None:
    blocks = "\n\n".join(f"    UPDATE dbo.Orders SET Status = {i}, Note = 'step {i} of the import'"
                         f"\n    WHERE Status = {i - 1} AND Total > {i};" for i in range(40))
    text = f"CREATE PROCEDURE dbo.usp_Order_Import\nAS\nBEGIN\n{blocks}\nEND\n"
    corpus = _load(tmp_path, {"Import.sql": text})
    parts = sorted((n for n in corpus.nodes if n.id.startswith("SQL:dbo.usp_Order_Import")),
                   key=lambda n: n.start)
    assert len(parts) >= 2 and parts[1].id == "SQL:dbo.usp_Order_Import~2"
    assert all(count_tokens(n.text) <= CAP and n.text == text[n.start : n.end] for n in parts)
    assert all(n.text.startswith("    UPDATE") for n in parts[1:])  # after a blank line
    edges = {(e.from_id, e.relation, e.to_id) for e in corpus.edges}
    assert ("SQL:dbo.usp_Order_Import", "Contains", "SQL:dbo.usp_Order_Import~2") in edges
    assert ("SQL:dbo.usp_Order_Import", "WritesTo", "SQL:dbo.Orders") in edges


def test_statements_after_a_type_are_not_a_program(tmp_path: Path) -> None:
    # C# allows top-level statements only before types and namespaces (CS8803): what
    # tree-sitter reads there in a broken file is no program.
    text = "public class B { void M() { } }\n}\nfoo bar baz;\n"
    nodes = _nodes(_load(tmp_path, {"B.cs": text}))
    assert sorted(nodes) == ["CS:B", "CS:B.M"]


def test_a_call_through_a_top_level_local_reaches_the_method(tmp_path: Path) -> None:
    program = ("using Shop.Data;\n\nvar orders = new OrderRepository();\n"
               "orders.Save(42);\n")
    repository = ("namespace Shop.Data\n{\n    public class OrderRepository\n    {\n"
                  "        public void Save(int id) { }\n    }\n"
                  "    public class CustomerRepository\n    {\n"  # a second Save: the local's
                  "        public void Save(int id) { }\n    }\n}\n")  # type must decide
    corpus = _load(tmp_path, {"Program.cs": program, "Data/OrderRepository.cs": repository})
    edges = {(e.from_id, e.relation, e.to_id) for e in corpus.edges}
    assert ("CS:Program.<Main>$", "Calls", "CS:Shop.Data.OrderRepository.Save") in edges
    assert ("CS:Program.<Main>$", "Calls", "CS:Shop.Data.CustomerRepository.Save") not in edges
