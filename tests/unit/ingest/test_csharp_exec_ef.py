"""C# that sends SQL to the database (command contexts) and Entity Framework mapping: what
executes, reads and writes which SQL object, and which entity is which table.

Every rule is tried on a small C# source written here, loaded with ``load_code_source``.
"""

from __future__ import annotations

from pathlib import Path

from excerpt.ingest.code.source import load_code_source

Triple = tuple[str, str, str]
SQL_RELATIONS = ("Executes", "ReadsFrom", "WritesTo", "Mentions", "MapsTo")


def _edges(tmp_path: Path, files: dict[str, str], relations: tuple[str, ...] = SQL_RELATIONS,
           ) -> set[Triple]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    corpus = load_code_source([tmp_path])
    assert corpus.errors == []
    return {(e.from_id, e.relation, e.to_id) for e in corpus.edges
            if e.relation in relations and e.from_id.startswith("CS:")}


# --- no false Executes ----------------------------------------------------------------------------


def test_a_script_written_into_a_string_builder_executes_nothing(tmp_path: Path) -> None:
    code = """using System.Text;
class ScriptWriter {
    public string Build(string db) {
        var sb = new StringBuilder();
        sb.AppendLine("USE " + db);
        sb.AppendLine("EXEC dbo.proc_Nightly @Full = 1;");
        sb.AppendLine("EXECUTE [sales].[proc_Rebuild]");
        File.WriteAllText("deploy.sql", sb.ToString());
        return sb.ToString();
    }
}"""
    got = _edges(tmp_path, {"w.cs": code})
    assert {r for _, r, _ in got} == {"Mentions"}
    assert got == {("CS:ScriptWriter.Build", "Mentions", "SQL:dbo.proc_Nightly"),
                   ("CS:ScriptWriter.Build", "Mentions", "SQL:sales.proc_Rebuild")}


def test_literals_outside_command_contexts_are_only_mentioned(tmp_path: Path) -> None:
    files = {
        "db.sql": "CREATE PROCEDURE dbo.proc_Known AS SELECT 1",
        "m.cs": """class Messages {
    const string Hint = "run EXEC dbo.proc_Fix to repair";
    string Name() { return "dbo.proc_Known"; }              // a parsed procedure's name
    void Log(ILogger log) { log.Info("EXEC dbo.proc_Audit failed"); }
    string Other() { return "proc_NotParsed"; }              // names nothing known: no edge
    string Prose() { return "Execute orders from the admin page"; }   // English, not SQL
}""",
    }
    assert _edges(tmp_path, files) == {
        ("CS:Messages", "Mentions", "SQL:dbo.proc_Fix"),
        ("CS:Messages.Name", "Mentions", "SQL:dbo.proc_Known"),
        ("CS:Messages.Log", "Mentions", "SQL:dbo.proc_Audit"),
    }


# --- command contexts ---------------------------------------------------------------------------


def test_entity_framework_raw_sql(tmp_path: Path) -> None:
    code = """class Repo {
    Shop db;
    void Raw() {
        db.Orders.FromSqlRaw("SELECT o.* FROM dbo.Orders o JOIN Sales.Lines l ON l.Id = o.Id");
    }
    void Interpolated(int id) {
        db.Orders.FromSqlInterpolated($"SELECT * FROM [Sales].[Archive] WHERE Id = {id}");
    }
    void Update() { db.Database.ExecuteSqlRaw("UPDATE Tenants SET Active = 0 WHERE Id = {0}", 5); }
    async Task Close(int id) {
        await db.Database.ExecuteSqlInterpolatedAsync($"EXEC dbo.proc_Close {id}");
    }
    void Ef6() { context.Database.ExecuteSqlCommand("sp_ResetEventDates"); }
    void Ef6Tx() {
        context.Database.ExecuteSqlCommand(TransactionalBehavior.DoNotEnsureTransaction,
                                           "DELETE FROM dbo.Log");
    }
    int Count() { return context.Database.SqlQuery<int>("SELECT COUNT(*) FROM dbo.Audit")
        .First(); }
    void Named() { db.Database.ExecuteSql(sql: $"INSERT INTO dbo.Events (Name) VALUES ({name})"); }
}"""
    assert _edges(tmp_path, {"r.cs": code}) == {
        ("CS:Repo.Raw", "ReadsFrom", "SQL:dbo.Orders"),
        ("CS:Repo.Raw", "ReadsFrom", "SQL:Sales.Lines"),
        ("CS:Repo.Interpolated", "ReadsFrom", "SQL:Sales.Archive"),
        ("CS:Repo.Update", "WritesTo", "SQL:dbo.Tenants"),
        ("CS:Repo.Close", "Executes", "SQL:dbo.proc_Close"),
        ("CS:Repo.Ef6", "Executes", "SQL:dbo.sp_ResetEventDates"),  # a bare name runs it
        ("CS:Repo.Ef6Tx", "WritesTo", "SQL:dbo.Log"),
        ("CS:Repo.Count", "ReadsFrom", "SQL:dbo.Audit"),
        ("CS:Repo.Named", "WritesTo", "SQL:dbo.Events"),
    }  # fmt: skip


def test_ado_net_commands(tmp_path: Path) -> None:
    code = """class Ado {
    void Insert() { using var cmd = new SqlCommand("INSERT INTO dbo.Orders (Id) VALUES (@Id)", c); }
    void Text() { var cmd = c.CreateCommand(); cmd.CommandText = "DELETE FROM dbo.Queue"; }
    void Init() { var cmd = new SqlCommand { CommandText = "SELECT * FROM dbo.Stock" }; }
    void Proc() {
        var cmd = new SqlCommand("[app].[proc_Save]", conn);
        cmd.CommandType = CommandType.StoredProcedure;
    }
    void Adapter() { new SqlDataAdapter("SELECT * FROM dbo.Rates", conn).Fill(table); }
    void Catalog() { new SqlCommand("SELECT name FROM sys.databases", conn); }  // not the app's
    void Unknown(string sql) { new SqlCommand(sql, conn); }                    // nothing known
}"""
    assert _edges(tmp_path, {"a.cs": code}) == {
        ("CS:Ado.Insert", "WritesTo", "SQL:dbo.Orders"),
        ("CS:Ado.Text", "WritesTo", "SQL:dbo.Queue"),
        ("CS:Ado.Init", "ReadsFrom", "SQL:dbo.Stock"),
        ("CS:Ado.Proc", "Executes", "SQL:app.proc_Save"),
        ("CS:Ado.Adapter", "ReadsFrom", "SQL:dbo.Rates"),
    }


def test_dapper_calls_and_look_alikes(tmp_path: Path) -> None:
    files = {
        "db.sql": "CREATE PROCEDURE dbo.proc_Known AS SELECT 1",
        "d.cs": """class Dapper {
    void Q() { conn.Query<Order>("SELECT * FROM dbo.Orders WHERE Id = @id", new { id }); }
    void Sp() { conn.Execute("dbo.proc_Save", p, commandType: CommandType.StoredProcedure); }
    void Known() { conn.QueryFirstOrDefaultAsync<int>("proc_Known"); }
    void Bus() { bus.Execute("RebuildIndex"); }          // a command bus: no procedure
    void Def() { conn.Query(new CommandDefinition("UPDATE dbo.Stock SET Q = 0")); }
}""",
    }
    assert _edges(tmp_path, files) == {
        ("CS:Dapper.Q", "ReadsFrom", "SQL:dbo.Orders"),
        ("CS:Dapper.Sp", "Executes", "SQL:dbo.proc_Save"),
        ("CS:Dapper.Known", "Executes", "SQL:dbo.proc_Known"),
        ("CS:Dapper.Def", "WritesTo", "SQL:dbo.Stock"),
    }


def test_locals_constants_and_builders_sent_to_a_command(tmp_path: Path) -> None:
    code = """static class Queries {
    public const string Archive = "INSERT INTO dbo.Archive SELECT * FROM dbo.Orders";
}
class Jobs {
    private const string Purge = "DELETE FROM dbo.Sessions WHERE Expires < @now";
    private const string CreateDb =
        "IF DB_ID(N'{0}') IS NULL CREATE DATABASE [{0}]; SELECT * FROM {0}";
    void Local() {
        var sql = "SELECT * FROM dbo.Customers c";
        sql += " JOIN dbo.Countries k ON k.Code = c.Code";
        new SqlCommand(sql, conn);
    }
    void Const() { new SqlCommand(Purge, conn); }
    void Other() { new SqlCommand(Queries.Archive, conn); }
    void Format(string name) { new SqlCommand(string.Format(CreateDb, name), conn); }
    void Either(bool all) {
        string sql = all ? "SELECT * FROM dbo.Everything" : "EXEC dbo.proc_Some";
        conn.Execute(sql);
    }
    void Built() {
        var sb = new StringBuilder();
        sb.Append("UPDATE dbo.Stock ");
        sb.Append("SET Q = 0");
        cmd.CommandText = sb.ToString();
    }
    void Concat(string where) { new SqlCommand("SELECT * FROM dbo.Rates WHERE " + where, c); }
}"""
    assert _edges(tmp_path, {"j.cs": code}) == {
        ("CS:Jobs.Local", "ReadsFrom", "SQL:dbo.Customers"),
        ("CS:Jobs.Local", "ReadsFrom", "SQL:dbo.Countries"),
        ("CS:Jobs.Const", "WritesTo", "SQL:dbo.Sessions"),
        ("CS:Jobs.Other", "WritesTo", "SQL:dbo.Archive"),
        ("CS:Jobs.Other", "ReadsFrom", "SQL:dbo.Orders"),
        ("CS:Jobs.Either", "ReadsFrom", "SQL:dbo.Everything"),
        ("CS:Jobs.Either", "Executes", "SQL:dbo.proc_Some"),
        ("CS:Jobs.Built", "WritesTo", "SQL:dbo.Stock"),
        ("CS:Jobs.Concat", "ReadsFrom", "SQL:dbo.Rates"),
        # the constants' own literals run nowhere by themselves; {0} is a parameter, no table
    }


# --- Entity Framework mapping ---------------------------------------------------------------------


SHOP = """using Microsoft.EntityFrameworkCore;
using System.ComponentModel.DataAnnotations.Schema;
namespace Shop {
    [Table("Order", Schema = "Sales")] public class Order { public int Id { get; set; } }
    public class Line { }
    public class Customer { }
    public class Audit { }
    public class Rate { }
    public class Note { }
    public class Ledger { }
    public class ShopContext : DbContext {
        public DbSet<Order> Orders { get; set; }
        public DbSet<Line> OrderLines { get; set; }
        public DbSet<Customer> Clients { get; set; }
        public DbSet<Audit> Audits { get; set; }
        protected override void OnModelCreating(ModelBuilder modelBuilder) {
            modelBuilder.Entity<Customer>(entity => {
                entity.ToTable("Customers", "crm");
                entity.HasMany(c => c.Orders).WithOne(o => o.Customer);
            });
            modelBuilder.Entity<Audit>().ToTable("AuditLog");
            modelBuilder.Entity<Note>();
            modelBuilder.HasDefaultSchema("shop");  // applies to the whole model, also above
        }
    }
    public class RateConfig : IEntityTypeConfiguration<Rate> {
        public void Configure(EntityTypeBuilder<Rate> builder) {
            builder.ToTable("Rates", schema: "ref");
        }
    }
    [Table("sys.database_firewall_rules")] public class FirewallRule { }
}"""


def test_entities_map_to_tables(tmp_path: Path) -> None:
    assert _edges(tmp_path, {"shop.cs": SHOP}, ("MapsTo",)) == {
        ("CS:Shop.Order", "MapsTo", "SQL:Sales.Order"),          # [Table(…, Schema = …)]
        ("CS:Shop.Line", "MapsTo", "SQL:shop.OrderLines"),       # DbSet name, default schema
        ("CS:Shop.Customer", "MapsTo", "SQL:crm.Customers"),     # fluent, in Entity<T>(e => …)
        ("CS:Shop.Audit", "MapsTo", "SQL:shop.AuditLog"),        # fluent, chained
        ("CS:Shop.Note", "MapsTo", "SQL:shop.Note"),             # Entity<T>() without DbSet
        ("CS:Shop.Rate", "MapsTo", "SQL:ref.Rates"),             # IEntityTypeConfiguration<T>
        ("CS:Shop.FirewallRule", "MapsTo", "SQL:sys.database_firewall_rules"),  # dotted name
    }  # fmt: skip


def test_ef6_context_pluralises_entity_names(tmp_path: Path) -> None:
    code = """namespace Legacy {
    using System.Data.Entity;
    public class Category { }
    public class Box { }
    public class Person { }
    public class LegacyContext : DbContext {
        public virtual DbSet<Category> AllCategories { get; set; }
        public virtual DbSet<Box> Boxes { get; set; }
        public virtual DbSet<Person> People { get; set; }
        protected override void OnModelCreating(DbModelBuilder modelBuilder) {
            modelBuilder.Entity<Person>().ToTable("hr.Staff");
        }
    }
}"""
    assert _edges(tmp_path, {"l.cs": code}, ("MapsTo",)) == {
        ("CS:Legacy.Category", "MapsTo", "SQL:dbo.Categories"),  # the class, not the DbSet
        ("CS:Legacy.Box", "MapsTo", "SQL:dbo.Boxes"),
        ("CS:Legacy.Person", "MapsTo", "SQL:hr.Staff"),          # EF6 reads schema.name
    }


def test_dbset_use_reads_and_writes_the_mapped_tables(tmp_path: Path) -> None:
    code = """namespace Shop {
    public class OrderService {
        private readonly ShopContext _db;
        private readonly Report _report;
        public void Place(Order o) { _db.Orders.Add(o); _db.SaveChanges(); }
        public void Many(List<Line> lines) { _db.OrderLines.AddRange(lines); }
        public Order Get(int id) { return _db.Orders.Find(id); }
        public List<Customer> Active() { return _db.Clients.Where(c => c.Active).ToList(); }
        public int Count() { var q = from a in _db.Audits where a.Id > 0 select a; return 1; }
        public void Typed() { foreach (var r in _db.Set<Rate>()) { } }
        public void Gone() { _db.Orders.Where(o => o.Old).ExecuteDelete(); }
        public async Task<int> Made(int id) {
            using (var context = CreateContext()) { return await context.Clients.CountAsync(); }
        }
        public void Fresh() {
            using var ctx = new ShopContext(); ctx.Audits.Remove(a); ctx.SaveChanges();
        }
        public void Unknown() {
            using var ctx = _factory.CreateDbContext(); ctx.OrderLines.ToList();
        }
        public void NotAContext() { _report.Orders.Add(1); }
        public void Lambda() { _db.Clients.Include(c => c.Orders).ToList(); }
        private ShopContext CreateContext() { return new ShopContext(); }
    }
    public class Report { public List<int> Orders { get; set; } }
}"""
    svc = "CS:Shop.OrderService"
    got = _edges(tmp_path, {"shop.cs": SHOP, "svc.cs": code}, ("ReadsFrom", "WritesTo"))
    assert got == {
        (f"{svc}.Place", "WritesTo", "SQL:Sales.Order"),
        (f"{svc}.Many", "WritesTo", "SQL:shop.OrderLines"),
        (f"{svc}.Get", "ReadsFrom", "SQL:Sales.Order"),
        (f"{svc}.Active", "ReadsFrom", "SQL:crm.Customers"),
        (f"{svc}.Count", "ReadsFrom", "SQL:shop.AuditLog"),
        (f"{svc}.Typed", "ReadsFrom", "SQL:ref.Rates"),
        (f"{svc}.Gone", "WritesTo", "SQL:Sales.Order"),          # ExecuteDelete on a query
        (f"{svc}.Made", "ReadsFrom", "SQL:crm.Customers"),       # var from a parsed method
        (f"{svc}.Fresh", "WritesTo", "SQL:shop.AuditLog"),
        (f"{svc}.Unknown", "ReadsFrom", "SQL:shop.OrderLines"),  # one context has that DbSet
        (f"{svc}.Lambda", "ReadsFrom", "SQL:crm.Customers"),     # c.Orders is no DbSet use
    }  # fmt: skip
