"""Raw C# / T-SQL folders: declarations as nodes, their relations as typed edges.

The sample under ``tests/data/code_sample`` is a small payments service; its node ids and its
whole edge set are written out here by hand.  The small tests below write one snippet each to
``tmp_path`` and check one rule.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.unit.ingest.files import write_file

from excerpt.errors import CorpusError, InputError
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.code.source import load_code_source
from excerpt.ingest.documents.text import read_text_file
from excerpt.types import IngestIssue

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "code_sample"
P = "CS:Contoso.Payments."
CTRL = P + "Controllers.PaymentsController"
IREPO = P + "Data.IPaymentRepository"
REPO = P + "Data.PaymentRepository"
PAY = P + "Models.Payment"
STATUS = P + "Models.PaymentStatus"
QUOTE = P + "Models.ShipmentQuote"
SVC = P + "Services.PaymentService"
SHIP = P + "Services.ShippingCalculator"
RATES = SHIP + ".RateTable"

SAMPLE_NODE_IDS = [
    CTRL, f"{CTRL}.Pay", f"{CTRL}.PayRequest", f"{CTRL}.PayRequest.Amount",
    f"{CTRL}.PayRequest.OrderId", f"{CTRL}.PayRequest.WeightKg", f"{CTRL}.PaymentsController",
    f"{CTRL}.Refund",
    IREPO, f"{IREPO}.GetPayment", f"{IREPO}.ProcessPayment", f"{IREPO}.RefundPayment",
    REPO, f"{REPO}.GetPayment", f"{REPO}.Map", f"{REPO}.PaymentRepository",
    f"{REPO}.ProcessPayment", f"{REPO}.RefundPayment",
    PAY, f"{PAY}.Amount", f"{PAY}.CreatedAt", f"{PAY}.IsRefundable", f"{PAY}.OrderId",
    f"{PAY}.PaymentId", f"{PAY}.Status", STATUS, QUOTE,
    SVC, f"{SVC}.Pay", f"{SVC}.PaymentService", f"{SVC}.Refund", f"{SVC}.Refund#2",
    SHIP, f"{SHIP}.Quote", f"{SHIP}.RateProcedure", RATES, f"{RATES}.Lookup",
    "SQL:dbo.AuditLog", "SQL:dbo.Customers", "SQL:dbo.Orders", "SQL:dbo.Payments",
    "SQL:dbo.Payments.IX_Payments_OrderId", "SQL:dbo.ShippingRates", "SQL:dbo.fn_ShippingRate",
    "SQL:dbo.proc_GetPayment", "SQL:dbo.proc_GetShippingRate", "SQL:dbo.proc_ProcessPayment",
    "SQL:dbo.proc_RefundPayment", "SQL:dbo.proc_WriteAudit", "SQL:dbo.trg_Payments_Audit",
    "SQL:dbo.vw_OrderPayments",
]  # fmt: skip

CONTAINS = {
    (CTRL, m) for m in (f"{CTRL}.Pay", f"{CTRL}.PayRequest", f"{CTRL}.PaymentsController",
                        f"{CTRL}.Refund")
} | {
    (f"{CTRL}.PayRequest", f"{CTRL}.PayRequest.{p}") for p in ("Amount", "OrderId", "WeightKg")
} | {
    (IREPO, f"{IREPO}.{m}") for m in ("GetPayment", "ProcessPayment", "RefundPayment")
} | {
    (REPO, f"{REPO}.{m}") for m in ("GetPayment", "Map", "PaymentRepository", "ProcessPayment",
                                     "RefundPayment")
} | {
    (PAY, f"{PAY}.{m}") for m in ("Amount", "CreatedAt", "IsRefundable", "OrderId", "PaymentId",
                                   "Status")
} | {
    (SVC, f"{SVC}.{m}") for m in ("Pay", "PaymentService", "Refund", "Refund#2")
} | {
    (SHIP, f"{SHIP}.Quote"), (SHIP, f"{SHIP}.RateProcedure"), (SHIP, RATES),
    (RATES, f"{RATES}.Lookup"),
}  # fmt: skip

REFERENCES = {
    (CTRL, SVC),                        # field PaymentService _service
    (f"{CTRL}.PaymentsController", SVC),  # constructor parameter
    (f"{CTRL}.Pay", f"{CTRL}.PayRequest"),  # parameter of a nested type
    (f"{CTRL}.Pay", PAY),               # local Payment payment
    (f"{IREPO}.GetPayment", PAY),       # return type
    (f"{IREPO}.ProcessPayment", PAY),   # parameter
    (REPO, IREPO),                      # base type (the interface implemented)
    (f"{REPO}.GetPayment", PAY),
    (f"{REPO}.ProcessPayment", PAY),
    (f"{REPO}.Map", PAY),               # return type and new Payment { … }
    (f"{REPO}.Map", STATUS),            # cast (PaymentStatus)
    (f"{PAY}.Status", STATUS),          # property type
    (f"{PAY}.IsRefundable", STATUS),    # static member PaymentStatus.Paid
    (SVC, IREPO), (SVC, SHIP),          # fields
    (f"{SVC}.PaymentService", IREPO), (f"{SVC}.PaymentService", SHIP),
    (f"{SVC}.Pay", PAY), (f"{SVC}.Pay", QUOTE),
    (f"{SVC}.Refund#2", PAY),
    (SHIP, RATES),                      # field of the nested type, new RateTable()
    (f"{SHIP}.Quote", QUOTE),
}  # fmt: skip

CALLS = {
    (f"{CTRL}.Pay", f"{SVC}.Pay"),                        # _service.Pay(…): field's type
    (f"{CTRL}.Refund", f"{SVC}.Refund"),                  # both overloads of Refund
    (f"{CTRL}.Refund", f"{SVC}.Refund#2"),
    (f"{REPO}.GetPayment", f"{REPO}.Map"),                # Map(reader): own class
    (f"{SVC}.Pay", f"{IREPO}.ProcessPayment"),            # through the interface field
    (f"{SVC}.Pay", f"{SHIP}.Quote"),
    (f"{SVC}.Refund", f"{IREPO}.GetPayment"),
    (f"{SVC}.Refund", f"{SVC}.Refund#2"),                 # Refund(…) overload, no self edge
    (f"{SVC}.Refund#2", f"{IREPO}.RefundPayment"),
    (f"{SVC}.Refund#2", f"{PAY}.IsRefundable"),           # parameter Payment payment
    (f"{SHIP}.Quote", f"{RATES}.Lookup"),                 # field of the nested type
}  # fmt: skip

EXECUTES = {
    (f"{REPO}.GetPayment", "SQL:dbo.proc_GetPayment"),          # new SqlCommand + StoredProcedure
    (f"{REPO}.ProcessPayment", "SQL:dbo.proc_ProcessPayment"),  # bracketed name
    (f"{REPO}.RefundPayment", "SQL:dbo.proc_RefundPayment"),    # "EXEC dbo.proc_… @…"
    ("SQL:dbo.proc_ProcessPayment", "SQL:dbo.proc_WriteAudit"),
    ("SQL:dbo.proc_RefundPayment", "SQL:dbo.proc_WriteAudit"),
}  # fmt: skip

SQL_EDGES = {
    ("SQL:dbo.Orders", "FK", "SQL:dbo.Customers"),
    ("SQL:dbo.Payments", "FK", "SQL:dbo.Orders"),
    ("SQL:dbo.AuditLog", "FK", "SQL:dbo.Orders"),
    ("SQL:dbo.Payments.IX_Payments_OrderId", "On", "SQL:dbo.Payments"),
    ("SQL:dbo.trg_Payments_Audit", "On", "SQL:dbo.Payments"),
    ("SQL:dbo.trg_Payments_Audit", "WritesTo", "SQL:dbo.AuditLog"),
    ("SQL:dbo.vw_OrderPayments", "ReadsFrom", "SQL:dbo.Orders"),
    ("SQL:dbo.vw_OrderPayments", "ReadsFrom", "SQL:dbo.Payments"),
    ("SQL:dbo.vw_OrderPayments", "ReadsFrom", "SQL:dbo.Customers"),
    ("SQL:dbo.proc_ProcessPayment", "ReadsFrom", "SQL:dbo.Orders"),     # INSERT #… SELECT FROM
    ("SQL:dbo.proc_ProcessPayment", "ReadsFrom", "SQL:dbo.Payments"),   # inside the CTE
    ("SQL:dbo.proc_ProcessPayment", "WritesTo", "SQL:dbo.Payments"),
    ("SQL:dbo.proc_ProcessPayment", "WritesTo", "SQL:dbo.Orders"),      # UPDATE o … FROM … o
    ("SQL:dbo.proc_GetPayment", "ReadsFrom", "SQL:dbo.vw_OrderPayments"),
    ("SQL:dbo.proc_RefundPayment", "WritesTo", "SQL:dbo.Payments"),
    ("SQL:dbo.proc_RefundPayment", "WritesTo", "SQL:dbo.Refunds"),      # not defined: kept
    ("SQL:dbo.proc_WriteAudit", "WritesTo", "SQL:dbo.AuditLog"),
    ("SQL:dbo.fn_ShippingRate", "ReadsFrom", "SQL:dbo.ShippingRates"),
    ("SQL:dbo.proc_GetShippingRate", "ReadsFrom", "SQL:dbo.fn_ShippingRate"),
}  # fmt: skip

SAMPLE_EDGES = (
    {(a, "Contains", b) for a, b in CONTAINS}
    | {(a, "References", b) for a, b in REFERENCES}
    | {(a, "Calls", b) for a, b in CALLS}
    | {(a, "Executes", b) for a, b in EXECUTES}
    # a literal equal to a parsed procedure's name, sent to no command: mentioned, not executed
    | {(f"{SHIP}.RateProcedure", "Mentions", "SQL:dbo.proc_GetShippingRate")}
    | SQL_EDGES
    | {(REPO, "Implements", IREPO), (IREPO, "ImplementedBy", REPO)}
    | {(f"{IREPO}.{m}", "ImplementedBy", f"{REPO}.{m}")
       for m in ("GetPayment", "ProcessPayment", "RefundPayment")}
)


@pytest.fixture(scope="module")
def sample() -> LoadedCorpus:
    return load_code_source([SAMPLE])


def _triples(corpus: LoadedCorpus) -> set[tuple[str, str, str]]:
    return {(e.from_id, e.relation, e.to_id) for e in corpus.edges}


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        write_file(root / name, content)
    return root


def _load(tmp_path: Path, files: dict[str, str | bytes]) -> LoadedCorpus:
    return load_code_source([_write(tmp_path / "src", files)])


# --- the sample --------------------------------------------------------------------------------


def test_sample_node_ids(sample: LoadedCorpus) -> None:
    assert [n.id for n in sample.nodes] == SAMPLE_NODE_IDS
    assert len(sample.nodes) == 51
    assert sample.source == str(SAMPLE.resolve())


def test_sample_edges_exactly(sample: LoadedCorpus) -> None:
    got = _triples(sample)
    assert got == SAMPLE_EDGES, (sorted(got - SAMPLE_EDGES), sorted(SAMPLE_EDGES - got))
    assert len(sample.edges) == len(SAMPLE_EDGES) == 92  # no duplicates
    assert all(e.from_id != e.to_id for e in sample.edges)
    assert [(e.from_id, e.relation, e.to_id) for e in sample.edges] == sorted(SAMPLE_EDGES)


def test_sample_temp_tables_variables_and_ctes_are_no_targets(sample: LoadedCorpus) -> None:
    targets = {e.to_id.lower() for e in sample.edges if e.to_id.startswith("SQL:")}
    for name in ("openorders", "paidsofar", "touched", "inserted", "#", "@"):
        assert not any(name in t for t in targets), name


def test_sample_documents(sample: LoadedCorpus) -> None:
    assert [(d.id, d.title, dict(d.metadata)) for d in sample.documents] == [
        (doc_id, doc_id.rsplit("/", 1)[-1], {"code_language": lang, "file": doc_id})
        for doc_id, lang in [
            ("app/Controllers/PaymentsController.cs", "csharp"),
            ("app/Data/IPaymentRepository.cs", "csharp"),
            ("app/Data/PaymentRepository.cs", "csharp"),
            ("app/Models/Payment.cs", "csharp"),
            ("app/Services/PaymentService.cs", "csharp"),
            ("app/Services/ShippingCalculator.cs", "csharp"),
            ("db/AuditAndShipping.sql", "sql"),
            ("db/PaymentProcs.sql", "sql"),
            ("db/Tables.sql", "sql"),
            ("db/Views.sql", "sql"),
        ]
    ]  # README.md is not code: ignored, not an error


def test_sample_broken_files_are_reported_and_the_rest_loads(sample: LoadedCorpus) -> None:
    assert sample.errors == [
        IngestIssue(str(SAMPLE / "app" / "Broken.cs"),
                    "C# does not parse: syntax error at line 1, no declaration found", 1),
        IngestIssue(str(SAMPLE / "db" / "Broken.sql"),
                    "T-SQL does not parse: Expecting ) (line 6; batch skipped)", 6),
    ]
    assert not any("Broken" in d.id for d in sample.documents)
    assert not any("Unfinished" in n.id for n in sample.nodes)


def test_sample_text_is_the_exact_slice_of_the_file(sample: LoadedCorpus) -> None:
    docs = {d.id for d in sample.documents}
    for node in sample.nodes:
        assert node.document_id in docs
        text, _ = read_text_file(SAMPLE / node.document_id)
        assert text is not None
        if node.metadata.get("member") or node.id.startswith("SQL:"):
            assert node.text == text[node.start : node.end], node.id
        else:  # a type's node is its outline (tests/unit/ingest/test_csharp_nodes.py)
            assert node.text.split("\n")[0] == text[node.start : node.end].split("\n")[0]
        assert node.source == node.document_id  # relative to the folder ingested


def test_sample_node_text_title_and_metadata(sample: LoadedCorpus) -> None:
    nodes = {n.id: n for n in sample.nodes}
    refund = nodes[f"{SVC}.Refund#2"]
    assert refund.text.startswith("/// <summary>Refund a loaded payment")  # its doc comment
    assert refund.text.rstrip().endswith('"customer request");\n    }')
    assert refund.title == "PaymentService.Refund"
    assert dict(refund.metadata) == {
        "code_language": "csharp", "file": "app/Services/PaymentService.cs",
        "namespace": "Contoso.Payments.Services", "class": "PaymentService", "member": "Refund",
        "type": "Method",
    }  # fmt: skip
    pay = nodes[f"{CTRL}.Pay"]
    assert pay.text.startswith("[HttpPost]\n        public IActionResult Pay(")  # attributes
    lookup = nodes[f"{RATES}.Lookup"]
    assert lookup.title == "ShippingCalculator.RateTable.Lookup"
    assert lookup.metadata["class"] == "ShippingCalculator.RateTable"
    cls = nodes[SHIP]  # a type's node is its outline: fields and member signatures
    assert cls.text.startswith("/// <summary>Quotes shipping")
    assert cls.text.endswith("public class RateTable { … }\n    }")
    assert "public ShipmentQuote Quote(decimal weightKg) { … }" in cls.text
    assert "public decimal Lookup(" not in cls.text
    assert (cls.metadata["type"], cls.metadata["member"], cls.title) == ("Class", "", SHIP[-18:])
    assert nodes[STATUS].metadata["type"] == "Enum"
    assert nodes[QUOTE].metadata["type"] == "Record"
    assert nodes[IREPO].metadata["type"] == "Interface"
    assert nodes[f"{SVC}.PaymentService"].metadata["type"] == "Constructor"
    assert nodes[f"{PAY}.Status"].metadata["type"] == "Property"
    assert nodes[PAY].metadata["namespace"] == "Contoso.Payments.Models"  # file-scoped


def test_sample_sql_node_text_title_and_metadata(sample: LoadedCorpus) -> None:
    nodes = {n.id: n for n in sample.nodes}
    proc = nodes["SQL:dbo.proc_RefundPayment"]
    assert proc.text.startswith("-- Written without semicolons")
    assert proc.text.endswith("@OrderId = NULL\nEND")  # the batch, up to (not with) GO
    assert proc.title == "dbo.proc_RefundPayment"
    assert dict(proc.metadata) == {"code_language": "sql", "file": "db/PaymentProcs.sql",
                                   "schema": "dbo", "name": "proc_RefundPayment",
                                   "type": "Procedure"}
    assert nodes["SQL:dbo.Payments"].text.endswith("SYSUTCDATETIME()\n);")  # to its ';'
    assert nodes["SQL:dbo.ShippingRates"].text.startswith("CREATE TABLE dbo.ShippingRates")
    assert nodes["SQL:dbo.Customers"].text.startswith("-- Customers who place orders.\nCREATE")
    kinds = {n.id: n.metadata["type"] for n in sample.nodes if n.id.startswith("SQL:")}
    assert kinds["SQL:dbo.vw_OrderPayments"] == "View"
    assert kinds["SQL:dbo.fn_ShippingRate"] == "Function"
    assert kinds["SQL:dbo.trg_Payments_Audit"] == "Trigger"
    index = nodes["SQL:dbo.Payments.IX_Payments_OrderId"]
    assert (index.metadata["type"], index.metadata["name"]) == ("Index", "IX_Payments_OrderId")


def test_sample_load_is_deterministic(sample: LoadedCorpus, tmp_path: Path) -> None:
    again = load_code_source([SAMPLE])
    assert again == sample
    copy = tmp_path / "code_sample"  # files created in another order, elsewhere
    for f in sorted(SAMPLE.rglob("*"), reverse=True):
        if f.is_file():
            target = copy / f.relative_to(SAMPLE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
    moved = load_code_source([copy])
    assert [(n.id, n.text, n.start, n.end) for n in moved.nodes] == [
        (n.id, n.text, n.start, n.end) for n in sample.nodes
    ]
    assert moved.edges == sample.edges
    assert [d.id for d in moved.documents] == [d.id for d in sample.documents]


def test_security_fields_on_every_node() -> None:
    corpus = load_code_source(
        [SAMPLE], LoadOptions(acl_tags=("payments", "eng", "eng", ""),
                              classification_labels=("internal",)),
    )
    assert corpus.nodes
    for node in corpus.nodes:
        assert node.acl_tags == ("eng", "payments")
        assert node.classification_labels == ("internal",)
    assert all(n.acl_tags == () for n in load_code_source([SAMPLE]).nodes)


# --- files -------------------------------------------------------------------------------------


def test_bad_files_are_reported_and_others_loaded(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {
        "ok.cs": "class Ok { }",
        "empty.cs": "",
        "blank.sql": "  \n\n",
        "binary.cs": b"class X { }\x00\x01",
        "latin1.sql": "CREATE TABLE caf\u00e9 (Id INT)".encode("latin-1"),
        "notes.txt": "not code",
        ".hidden/skip.cs": "class Hidden { }",
    })  # fmt: skip
    assert [d.id for d in corpus.documents] == ["ok.cs"]
    assert [(Path(i.path).name, i.reason.split(" (")[0]) for i in corpus.errors] == [
        ("binary.cs", "binary file"),
        ("blank.sql", "file holds only whitespace"),
        ("empty.cs", "empty file"),
        ("latin1.sql", "not valid UTF-8: byte 0xe9 at offset 16"),
    ]


def test_named_file_and_several_paths(tmp_path: Path) -> None:
    root = _write(tmp_path / "shop", {"a/A.cs": "class A { }", "b/B.sql": "CREATE TABLE t (x INT)",
                                      "b/readme.md": "hi"})
    corpus = load_code_source([root / "b" / "B.sql", root / "a"])
    assert [d.id for d in corpus.documents] == ["A.cs", "B.sql"]
    assert Path(corpus.source).name == "shop"  # the folder both paths are in
    corpus = load_code_source([root / "a", root / "b" / "readme.md"])
    assert [Path(i.path).name for i in corpus.errors] == ["readme.md"]  # named, not code
    with pytest.raises(InputError):
        load_code_source([root / "missing"])
    with pytest.raises(CorpusError, match="no readable C# or T-SQL file"):
        load_code_source([_write(tmp_path / "none", {"x.txt": "text"})])


def test_offsets_with_bom_crlf_and_non_ascii(tmp_path: Path) -> None:
    src = "namespace Ü\r\n{\r\n    /// Größe\r\n    class Maß { void Zähle() { } }\r\n}\r\n"
    corpus = _load(tmp_path, {"m.cs": b"\xef\xbb\xbf" + src.encode("utf-8")})
    text = src.replace("\r\n", "\n")
    assert [n.id for n in corpus.nodes] == ["CS:Ü.Maß", "CS:Ü.Maß.Zähle"]
    assert corpus.nodes[1].text == text[corpus.nodes[1].start : corpus.nodes[1].end]
    assert text[corpus.nodes[0].start : corpus.nodes[0].end].startswith("/// Größe\n    class")
    assert corpus.nodes[0].text == "/// Größe\n    class Maß { void Zähle() { … } }"  # outline
    assert corpus.nodes[1].text == "void Zähle() { }"


# --- C# declarations ---------------------------------------------------------------------------


def test_csharp_ids_namespaces_nesting_overloads_and_partials(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {
        "a.cs": "namespace A { namespace B.C { public class K { public class In { void M() {} }"
                " void O(int x) {} void O(string s) {} void O() {} public K() {} int P {get;} }"
                " } }",
        "b.cs": "namespace F;\npartial class G { void M() {} }\nstruct S { }\ninterface I { }",
        "c.cs": "partial class Top { } namespace F { partial class G { void M(int x) {} } }",
    })  # fmt: skip
    assert [n.id for n in corpus.nodes] == [
        "CS:A.B.C.K", "CS:A.B.C.K.In", "CS:A.B.C.K.In.M", "CS:A.B.C.K.K", "CS:A.B.C.K.O",
        "CS:A.B.C.K.O#2", "CS:A.B.C.K.O#3", "CS:A.B.C.K.P",
        "CS:F.G", "CS:F.G#2", "CS:F.G.M", "CS:F.G.M#2", "CS:F.I", "CS:F.S", "CS:Top",
    ]  # fmt: skip
    assert {(e.from_id, e.to_id) for e in corpus.edges if e.relation == "Contains"} == {
        ("CS:A.B.C.K", "CS:A.B.C.K.In"), ("CS:A.B.C.K.In", "CS:A.B.C.K.In.M"),
        ("CS:A.B.C.K", "CS:A.B.C.K.K"), ("CS:A.B.C.K", "CS:A.B.C.K.O"),
        ("CS:A.B.C.K", "CS:A.B.C.K.O#2"), ("CS:A.B.C.K", "CS:A.B.C.K.O#3"),
        ("CS:A.B.C.K", "CS:A.B.C.K.P"), ("CS:F.G", "CS:F.G.M"), ("CS:F.G#2", "CS:F.G.M#2"),
    }  # fmt: skip


def test_csharp_partly_broken_file_keeps_what_parses(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {
        "half.cs": "class Good { void Ok() { } }\nclass Bad { void Broken( { }",
        "usings.cs": "global using System;\n[assembly: System.CLSCompliant(true)]\n",
        "junk.cs": "}}} not ((( C#",
    })  # fmt: skip
    ids = [n.id for n in corpus.nodes]
    assert "CS:Good" in ids and "CS:Good.Ok" in ids
    assert [d.id for d in corpus.documents] == ["half.cs", "usings.cs"]  # usings: no nodes
    [issue] = corpus.errors
    assert Path(issue.path).name == "junk.cs" and issue.line == 1


def _cs_edges(tmp_path: Path, code: str, relation: str) -> set[tuple[str, str]]:
    corpus = _load(tmp_path, {"x.cs": code})
    return {(e.from_id, e.to_id) for e in corpus.edges if e.relation == relation}


def test_calls_this_plain_static_field_base_and_overloads(tmp_path: Path) -> None:
    code = """namespace N {
    class Base { protected void Log() {} }
    class Repo { public void Save() {} public void Save(int x) {} }
    static class Util { public static void Fmt() {} }
    class Svc : Base {
        private readonly Repo _repo;
        void A() { this.B(); B(); Util.Fmt(); _repo.Save(); this._repo.Save(1); Log(); A(); }
        void B() { var r = new Repo(); r?.Save(); Repo typed = null; typed.Save(); }
    }
}"""
    assert _cs_edges(tmp_path, code, "Calls") == {
        ("CS:N.Svc.A", "CS:N.Svc.B"),          # this.B() and B(); A() itself: no self edge
        ("CS:N.Svc.A", "CS:N.Util.Fmt"),       # static call on a parsed class
        ("CS:N.Svc.A", "CS:N.Repo.Save"),      # field of a parsed type: every overload
        ("CS:N.Svc.A", "CS:N.Repo.Save#2"),
        ("CS:N.Svc.A", "CS:N.Base.Log"),       # inherited from a parsed base
        ("CS:N.Svc.B", "CS:N.Repo.Save"),      # var r = new Repo(); typed local
        ("CS:N.Svc.B", "CS:N.Repo.Save#2"),
    }  # fmt: skip


def test_calls_with_unknown_receiver_need_a_unique_name(tmp_path: Path) -> None:
    code = """class A { public void Only() {} public void Twice() {} }
class B { public void Twice() {} }
class C {
    void M(dynamic d, System.Data.SqlClient.SqlCommand cmd) {
        d.Only(); d.Twice(); cmd.Only(); GetThing().Only(); Missing();
    }
    object GetThing() => null;
}"""
    assert _cs_edges(tmp_path, code, "Calls") == {
        ("CS:C.M", "CS:A.Only"),       # unknown receiver type, one method of that name
        ("CS:C.M", "CS:C.GetThing"),   # not d.Twice (two candidates), not cmd.Only (known
    }                                  # type that was not parsed), not Missing()


def test_references_fields_parameters_new_bases_generics_and_nesting(tmp_path: Path) -> None:
    code = """using System.Collections.Generic;
namespace Shop.Models {
    public class Order { } public enum State { Open } public interface IRepo { }
}
namespace Shop.Core {
    using Shop.Models;
    public class Repo : IRepo {
        private List<Order> _orders;
        public Repo(Order seed) { var o = new Order(); var t = typeof(Order); }
        public State Get() => State.Open;
        public class Cache { private Dictionary<int, Order[]> _byId; }
        public string Name { get; set; }
    }
}"""
    assert _cs_edges(tmp_path, code, "References") == {
        ("CS:Shop.Core.Repo", "CS:Shop.Models.IRepo"),         # base type
        ("CS:Shop.Core.Repo", "CS:Shop.Models.Order"),         # field List<Order>
        ("CS:Shop.Core.Repo.Repo", "CS:Shop.Models.Order"),    # parameter, new, typeof
        ("CS:Shop.Core.Repo.Get", "CS:Shop.Models.State"),     # return type, static member
        ("CS:Shop.Core.Repo.Cache", "CS:Shop.Models.Order"),   # nested type's own field
    }  # fmt: skip


def test_references_resolve_by_namespace_when_names_clash(tmp_path: Path) -> None:
    code = """namespace A { class Item { } class UseA { Item i; } }
namespace B { class Item { } class UseB { Item i; } }
namespace C { class UseC { Item i; } }"""
    assert _cs_edges(tmp_path, code, "References") == {
        ("CS:A.UseA", "CS:A.Item"), ("CS:B.UseB", "CS:B.Item"),  # C: ambiguous, no edge
    }


def test_executes_from_csharp_strings(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {
        "db.sql": "CREATE PROCEDURE sales.proc_Known AS SELECT 1\nGO\n"
                  "CREATE PROCEDURE dbo.proc_Plain AS SELECT 1",
        "r.cs": """class R {
    void Ado() {
        var cmd = new SqlCommand("[app].[proc_Save]", conn);
        cmd.CommandType = CommandType.StoredProcedure;
        reader.GetOrdinal("Amount");
    }
    void Text() { cmd.CommandText = "EXEC dbo.proc_Text @Id"; var s = @"exec proc_Verbatim"; }
    void Dapper() { conn.Execute("proc_Dapper", p, commandType: CommandType.StoredProcedure); }
    void NoContext() { var x = new SqlCommand("proc_NotSp", conn); Log("proc_Plain"); }
    const string Known = "sales.proc_Known";
    void Dynamic() { var s = "EXEC sp_executesql @sql"; }
}""",
    })  # fmt: skip
    assert {(e.from_id, e.to_id) for e in corpus.edges if e.relation == "Executes"} == {
        ("CS:R.Ado", "SQL:app.proc_Save"),
        ("CS:R.Text", "SQL:dbo.proc_Text"),
        ("CS:R.Dapper", "SQL:dbo.proc_Dapper"),
        ("CS:R.NoContext", "SQL:dbo.proc_NotSp"),  # command text that is a name runs it
    }  # fmt: skip
    # sent to no command: only mentioned (tests/unit/ingest/test_csharp_exec_ef.py)
    assert {(e.from_id, e.to_id) for e in corpus.edges if e.relation == "Mentions"} == {
        ("CS:R.Text", "SQL:dbo.proc_Verbatim"),
        ("CS:R.NoContext", "SQL:dbo.proc_Plain"),  # equal to a parsed procedure's name
        ("CS:R", "SQL:sales.proc_Known"),          # a field initialiser: from the type
    }  # fmt: skip


# --- T-SQL -------------------------------------------------------------------------------------


def _sql_edges(tmp_path: Path, sql: str) -> set[tuple[str, str, str]]:
    return _triples(_load(tmp_path, {"x.sql": sql}))


def test_sql_reads_writes_and_exclusions(tmp_path: Path) -> None:
    sql = """CREATE PROCEDURE [sales].[proc_Move] AS
BEGIN
    DECLARE @t TABLE (Id INT);
    WITH recent AS (SELECT Id FROM sales.Orders)
    INSERT INTO #work (Id) SELECT r.Id FROM recent r JOIN [sales].[Lines] l ON l.Id = r.Id;
    INSERT INTO @t SELECT Id FROM #work;
    UPDATE x SET x.Done = 1 FROM sales.Queue AS x JOIN @t t ON t.Id = x.Id;
    DELETE FROM Archive WHERE Id IN (SELECT Id FROM @t);
    MERGE INTO sales.Stock AS s USING sales.Incoming AS i ON s.Id = i.Id
        WHEN MATCHED THEN UPDATE SET s.Q = i.Q;
    SELECT * INTO sales.Snapshot FROM sales.Stock;
    TRUNCATE TABLE sales.Incoming;
    EXEC sales.proc_Move;
END"""
    m = "SQL:sales.proc_Move"
    assert _sql_edges(tmp_path, sql) == {
        (m, "ReadsFrom", "SQL:sales.Orders"), (m, "ReadsFrom", "SQL:sales.Lines"),
        (m, "WritesTo", "SQL:sales.Queue"), (m, "WritesTo", "SQL:dbo.Archive"),
        (m, "WritesTo", "SQL:sales.Stock"), (m, "ReadsFrom", "SQL:sales.Incoming"),
        (m, "WritesTo", "SQL:sales.Snapshot"), (m, "ReadsFrom", "SQL:sales.Stock"),
        (m, "WritesTo", "SQL:sales.Incoming"),
    }  # no #work, @t, recent, no self edge for the recursive EXEC


def test_sql_without_semicolons_is_read_from_tokens(tmp_path: Path) -> None:
    sql = """create or alter procedure dbo.proc_Batch @Id int as
begin
    set nocount on
    declare c cursor for select Id from dbo.Jobs
    open c
    fetch next from c into @Id
    ;with w as (select * from dbo.Jobs) update w set Done = 1
    update j set j.Done = 1 from dbo.Jobs j join #seen s on s.Id = j.Id
    insert into dbo.Log (Id) exec dbo.proc_Source @Id
    begin try exec @rc = dbo.proc_Next end try begin catch throw end catch
    delete from inserted
end"""
    b = "SQL:dbo.proc_Batch"
    assert _sql_edges(tmp_path, sql) == {
        (b, "ReadsFrom", "SQL:dbo.Jobs"), (b, "WritesTo", "SQL:dbo.Jobs"),
        (b, "WritesTo", "SQL:dbo.Log"), (b, "Executes", "SQL:dbo.proc_Source"),
        (b, "Executes", "SQL:dbo.proc_Next"),
    }  # no cursor c, CTE w, #seen, inserted


def test_sql_tables_foreign_keys_indexes_triggers_synonyms(tmp_path: Path) -> None:
    sql = """CREATE TABLE dbo.A (Id INT PRIMARY KEY) CREATE TABLE dbo.B (Id INT,
    AId INT REFERENCES A (Id))
GO
CREATE TABLE [dbo].[C] (Id INT, BId INT, CONSTRAINT FK FOREIGN KEY (BId) REFERENCES [dbo].[B] (Id))
ALTER TABLE dbo.C WITH CHECK ADD CONSTRAINT FK_C_X FOREIGN KEY (Id) REFERENCES ext.X (Id)
GO
CREATE UNIQUE NONCLUSTERED INDEX IX_B ON dbo.B (AId)
go 2
CREATE TRIGGER trg_C ON dbo.C AFTER INSERT, UPDATE AS
    INSERT INTO dbo.Audit (Id) SELECT Id FROM inserted
GO
CREATE SYNONYM dbo.Remote FOR otherdb.dbo.Thing
GO"""
    corpus = _load(tmp_path, {"x.sql": sql})
    assert [n.id for n in corpus.nodes] == [
        "SQL:dbo.A", "SQL:dbo.B", "SQL:dbo.B.IX_B", "SQL:dbo.C", "SQL:dbo.Remote", "SQL:dbo.trg_C",
    ]
    assert _triples(corpus) == {
        ("SQL:dbo.B", "FK", "SQL:dbo.A"), ("SQL:dbo.C", "FK", "SQL:dbo.B"),
        ("SQL:dbo.C", "FK", "SQL:ext.X"),  # ALTER TABLE … REFERENCES
        ("SQL:dbo.B.IX_B", "On", "SQL:dbo.B"), ("SQL:dbo.trg_C", "On", "SQL:dbo.C"),
        ("SQL:dbo.trg_C", "WritesTo", "SQL:dbo.Audit"),
        ("SQL:dbo.Remote", "SynonymFor", "SQL:dbo.Thing"),
    }  # fmt: skip
    nodes = {n.id: n for n in corpus.nodes}
    assert nodes["SQL:dbo.A"].text == "CREATE TABLE dbo.A (Id INT PRIMARY KEY)"
    assert nodes["SQL:dbo.C"].text.endswith("REFERENCES [dbo].[B] (Id))")  # not the ALTER


def test_sql_names_case_insensitive_duplicates_and_undefined_targets(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {
        "1.sql": "CREATE TABLE dbo.Orders (Id INT)\nGO\n"
                 "CREATE VIEW v1 AS SELECT * FROM DBO.ORDERS JOIN dbo.missing m ON 1 = 1",
        "2.sql": "CREATE VIEW dbo.V1 AS SELECT * FROM dbo.orders o JOIN dbo.Missing ON 1 = 1",
    })  # fmt: skip
    # dbo.V1 in 2.sql is dbo.v1 again: one node (the first definition), edges merged
    assert [n.id for n in corpus.nodes] == ["SQL:dbo.Orders", "SQL:dbo.v1"]
    assert _triples(corpus) == {
        ("SQL:dbo.v1", "ReadsFrom", "SQL:dbo.Orders"),
        ("SQL:dbo.v1", "ReadsFrom", "SQL:dbo.Missing"),
    }  # one spelling per name; objects not in the folder are kept as targets


def test_sql_broken_batch_is_reported_the_others_loaded(tmp_path: Path) -> None:
    sql = ("CREATE TABLE dbo.Ok (Id INT)\nGO\n\n"
           "CREATE VIEW dbo.Bad AS SELECT (Id FROM dbo.Ok\nGO\n"
           "CREATE PROCEDURE dbo.Fine AS SELECT Id FROM dbo.Ok\nGO\n"
           "SELECT 'unterminated\n")
    corpus = _load(tmp_path, {"x.sql": sql})
    assert [n.id for n in corpus.nodes] == ["SQL:dbo.Fine", "SQL:dbo.Ok"]
    assert [d.id for d in corpus.documents] == ["x.sql"]
    assert [(i.line, i.reason.split(":")[0]) for i in corpus.errors] == [
        (4, "T-SQL does not parse"), (8, "T-SQL batch does not tokenize"),
    ]
    assert corpus.errors[0].path == str(tmp_path / "src" / "x.sql")


def test_sql_try_catch_and_statements_sqlglot_rejects(tmp_path: Path) -> None:
    sql = """CREATE PROCEDURE dbo.proc_Safe AS
BEGIN
    SET NOCOUNT ON;
    BEGIN TRY
        BEGIN TRANSACTION;
        UPDATE dbo.Accounts SET Balance = 0;
        COMMIT TRANSACTION;
    END TRY
    BEGIN CATCH
        IF @@TRANCOUNT > 0
        BEGIN
            ROLLBACK TRANSACTION;
        END
        EXECUTE [dbo].[proc_LogError];
    END CATCH;
END;
GO
CREATE PROCEDURE [dbo].[usp_Get] @Id int
AS
BEGIN
    SET NOCOUNT ON;
    SELECT x.*, y.Name FROM dbo.X x WITH (NOLOCK) LEFT OUTER JOIN dbo.Y y ON y.Id = x.YId
    IF @@ROWCOUNT = 0
        RAISERROR('not found', 16, 1)
END
GO"""
    corpus = _load(tmp_path, {"x.sql": sql})
    assert corpus.errors == []  # sqlglot raises on usp_Get; it balances, so it is read anyway
    assert _triples(corpus) == {
        ("SQL:dbo.proc_Safe", "WritesTo", "SQL:dbo.Accounts"),
        ("SQL:dbo.proc_Safe", "Executes", "SQL:dbo.proc_LogError"),  # after END: not lost
        ("SQL:dbo.usp_Get", "ReadsFrom", "SQL:dbo.X"),
        ("SQL:dbo.usp_Get", "ReadsFrom", "SQL:dbo.Y"),
    }


@pytest.mark.parametrize(("batch", "reason"), [
    ("CREATE TABL dbo.Bad (Id INT)", "unknown object type 'TABL' after CREATE"),
    ("CREATE PROCEDUR dbo.BadProc AS SELECT 1", "unknown object type 'PROCEDUR' after CREATE"),
    ("ALTER VEIW dbo.V AS SELECT 1", "unknown object type 'VEIW' after ALTER"),
    ("CREATE OR ALTER FUNCTOIN dbo.f() RETURNS INT AS BEGIN RETURN 1 END",
     "unknown object type 'FUNCTOIN' after CREATE"),
    ("DROP TABL dbo.Old", "unknown object type 'TABL' after DROP"),
    ("SET NOCOUNT ON; SELEC 1", "unknown statement 'SELEC'"),
])
def test_sql_misspelled_batches_sqlglot_keeps_as_text_are_reported(
        tmp_path: Path, batch: str, reason: str) -> None:
    """sqlglot reads these as raw commands without a word; each is an issue with its line."""
    sql = f"CREATE TABLE dbo.Good (Id INT)\nGO\n-- the broken one\n{batch}\nGO\n"
    corpus = _load(tmp_path, {"x.sql": sql})
    assert [n.id for n in corpus.nodes] == ["SQL:dbo.Good"]
    assert [(i.line, i.reason) for i in corpus.errors] == [
        (4, f"T-SQL does not parse: {reason} (line 4; batch skipped)")]


def test_sql_valid_statements_that_look_odd_are_not_reported(tmp_path: Path) -> None:
    sql = ("CREATE TABLE dbo.A (Id INT)\nGO\n"
           "GRANT ALTER ON dbo.A TO app; DENY CREATE TABLE TO app; GRANT SELECT, ALTER ON dbo.A"
           " TO app\nGO\n"
           "ALTER TABLE dbo.A ALTER COLUMN Id BIGINT; ALTER TABLE dbo.A DROP CONSTRAINT c\nGO\n"
           "CREATE UNIQUE NONCLUSTERED INDEX ix ON dbo.A (Id)\nGO\n"
           "CREATE TYPE dbo.T AS TABLE (Id INT)\nGO\nCREATE SCHEMA app\nGO\n"
           "CREATE PROCEDURE dbo.p AS BEGIN SET NOCOUNT ON; retry: SELECT 1; "
           "RAISERROR('x', 16, 1); WAITFOR DELAY '00:00:01'; RETURN 0; END\nGO\n"
           "sp_configure 'show advanced options', 1\nGO\n")
    corpus = _load(tmp_path, {"x.sql": sql})
    assert corpus.errors == []
    assert [n.id for n in corpus.nodes] == ["SQL:dbo.A", "SQL:dbo.A.ix", "SQL:dbo.p"]


def test_wingtip_imports_without_false_alarms(shared_data: Callable[..., Path]) -> None:
    """The real application: every batch parses, so nothing is flagged."""
    corpus = load_code_source([shared_data("code", "wingtip-saas")])
    assert corpus.errors == []
    sql = sum(n.id.startswith("SQL:") and "~" not in n.id for n in corpus.nodes)  # no parts
    # 57 definitions: the 15 objects both databases define alike are one node each (the table
    # and the view dbo.Venues stay two)
    assert sql == 42
    csharp = sum(n.id.startswith("CS:") for n in corpus.nodes)
    assert csharp == 476 and len(corpus.documents) == 119  # C#: 8 of them parts
