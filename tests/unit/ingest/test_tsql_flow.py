"""T-SQL control flow, dynamic SQL, built-ins and repeated CREATEs, on small sources written here.

Each source is loaded as a folder by ``load_code_source`` (what ``excerpt ingest --format code``
runs), and the edges it yields are compared with what the SQL does.
"""

from __future__ import annotations

from pathlib import Path

from excerpt.ingest.base import LoadedCorpus
from excerpt.ingest.code.source import load_code_source
from excerpt.ingest.code.tsql import read_sql
from excerpt.ingest.code.tsql_flow import split
from excerpt.ingest.code.tsql_scan import tokenize


def _load(tmp_path: Path, files: dict[str, str]) -> LoadedCorpus:
    root = tmp_path / "src"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return load_code_source([root])


def _edges(corpus: LoadedCorpus, source: str) -> set[tuple[str, str]]:
    return {(e.relation, e.to_id) for e in corpus.edges if e.from_id == source}


def test_try_catch_keeps_the_first_statement_of_each_block(tmp_path: Path) -> None:
    """``BEGIN TRY EXEC …`` was read by sqlglot as a BEGIN aliased TRY: the EXEC vanished."""
    sql = """CREATE PROCEDURE dbo.usp_Import AS
BEGIN
    BEGIN TRY
        EXEC dbo.usp_Stage @batch = 1;
        INSERT INTO dbo.Orders (Id) SELECT Id FROM dbo.Staging;
    END TRY
    BEGIN CATCH
        UPDATE dbo.ImportLog SET Failed = 1;
        THROW;
    END CATCH
END
GO
CREATE PROCEDURE dbo.usp_Read AS
BEGIN TRY
    SELECT Id FROM dbo.Customers
END TRY
BEGIN CATCH
    EXEC dbo.usp_LogError
END CATCH
GO"""
    corpus = _load(tmp_path, {"procs.sql": sql})
    assert corpus.errors == []
    assert _edges(corpus, "SQL:dbo.usp_Import") == {
        ("Executes", "SQL:dbo.usp_Stage"), ("WritesTo", "SQL:dbo.Orders"),
        ("ReadsFrom", "SQL:dbo.Staging"), ("WritesTo", "SQL:dbo.ImportLog"),
    }  # fmt: skip
    assert _edges(corpus, "SQL:dbo.usp_Read") == {
        ("ReadsFrom", "SQL:dbo.Customers"), ("Executes", "SQL:dbo.usp_LogError"),
    }  # fmt: skip


def test_if_else_with_and_without_blocks_while_and_nested_blocks(tmp_path: Path) -> None:
    sql = """CREATE PROCEDURE dbo.usp_Flow @mode INT AS
SET NOCOUNT ON
DECLARE @n INT = (SELECT COUNT(*) FROM dbo.Counters)
IF NOT EXISTS (SELECT 1 FROM dbo.Settings WHERE Name = 'x')
    INSERT dbo.Settings (Name) VALUES ('x')
ELSE IF @mode = 1
BEGIN
    BEGIN
        DELETE dbo.Archive WHERE Id < 0
    END
    EXEC dbo.usp_Nested
END
ELSE
    UPDATE dbo.Settings SET Name = 'y'
WHILE @n > 0
BEGIN
    INSERT INTO dbo.Queue (Id) SELECT TOP 1 Id FROM dbo.Pending
    SET @n = @n - 1
    IF @n = 5 BREAK
END
RETURN 0
GO
CREATE PROCEDURE dbo.usp_Short AS
BEGIN
    IF @@ROWCOUNT = 0 UPDATE dbo.A SET a = 1;
    ELSE DELETE FROM dbo.B;
    WHILE 1 = 0 INSERT INTO dbo.C (a) VALUES (1);
    IF @@TRANCOUNT > 0
    BEGIN TRY
        EXEC dbo.usp_Guarded;
    END TRY
    BEGIN CATCH
        ROLLBACK;
    END CATCH
END;
GO"""
    corpus = _load(tmp_path, {"flow.sql": sql})
    assert corpus.errors == []
    assert _edges(corpus, "SQL:dbo.usp_Short") == {
        ("WritesTo", "SQL:dbo.A"), ("WritesTo", "SQL:dbo.B"), ("WritesTo", "SQL:dbo.C"),
        ("Executes", "SQL:dbo.usp_Guarded"),
    }  # fmt: skip
    assert _edges(corpus, "SQL:dbo.usp_Flow") == {
        ("ReadsFrom", "SQL:dbo.Counters"), ("ReadsFrom", "SQL:dbo.Settings"),  # IF condition
        ("WritesTo", "SQL:dbo.Settings"), ("WritesTo", "SQL:dbo.Archive"),
        ("Executes", "SQL:dbo.usp_Nested"), ("WritesTo", "SQL:dbo.Queue"),
        ("ReadsFrom", "SQL:dbo.Pending"),
    }  # fmt: skip


def test_statements_without_semicolons_are_cut_where_the_next_begins() -> None:
    sql = ("SET IDENTITY_INSERT dbo.T ON INSERT INTO dbo.T (a) SELECT a FROM dbo.S UNION ALL "
           "SELECT b FROM dbo.S2 ;WITH c AS (SELECT 1 x) UPDATE dbo.T SET a = 1 FROM c "
           "DECLARE k CURSOR FOR SELECT a FROM dbo.X FOR UPDATE OF a "
           "IF @x = 1 ROLLBACK ELSE SELECT CASE WHEN 1 = 1 THEN 2 ELSE 3 END END")
    tokens = tokenize(sql)
    statements, problems = split(tokens)
    kinds = [(s.kind, s.guarded, s.condition) for s in statements]
    assert kinds == [
        ("SET", False, False), ("INSERT", False, False), ("UPDATE", False, False),
        ("DECLARE", False, False), ("IF", False, True), ("ROLLBACK", True, False),
        ("SELECT", True, False),
    ]  # fmt: skip
    assert problems == [(len(tokens) - 1, "END without BEGIN")]  # the last END closes nothing


def test_a_broken_statement_in_a_body_is_reported_with_its_line(tmp_path: Path) -> None:
    sql = ("CREATE PROCEDURE dbo.p AS\nBEGIN TRY\n    SELECT 1\nEND TRY\n"
           "BEGIN CATCH\n    SELECT 2\nEND\nGO\n")  # END, not END CATCH
    out = read_sql(sql)
    assert out.objects == []
    assert out.issues == [(7, "T-SQL does not parse: END closes BEGIN CATCH (line 7; "
                              "batch skipped)")]


def test_dynamic_sql_by_literal_and_by_literal_variable(tmp_path: Path) -> None:
    sql = """CREATE PROCEDURE dbo.usp_Dynamic AS
DECLARE @read NVARCHAR(200) = N'SELECT * FROM dbo.DynRead', @other INT
DECLARE @write NVARCHAR(200)
SET @write = N'UPDATE dbo.DynWrite ' + N'SET a = 1'
EXEC sp_executesql N'DELETE FROM dbo.DynDelete WHERE Id = @id', N'@id INT', @id = 1
EXEC sys.sp_executesql @read
EXEC (@write)
EXEC ('EXEC dbo.usp_Inner')
GO"""
    corpus = _load(tmp_path, {"dyn.sql": sql})
    assert corpus.errors == []
    assert _edges(corpus, "SQL:dbo.usp_Dynamic") == {
        ("WritesTo", "SQL:dbo.DynDelete"), ("ReadsFrom", "SQL:dbo.DynRead"),
        ("WritesTo", "SQL:dbo.DynWrite"), ("Executes", "SQL:dbo.usp_Inner"),
    }  # fmt: skip
    node = next(n for n in corpus.nodes if n.id == "SQL:dbo.usp_Dynamic")
    assert "unresolved_dynamic_sql" not in node.metadata


def test_dynamic_sql_built_at_run_time_is_counted_not_guessed(tmp_path: Path) -> None:
    sql = """CREATE PROCEDURE dbo.usp_Guess @table SYSNAME AS
DECLARE @sql NVARCHAR(MAX) = N'DELETE FROM dbo.Maybe'
SET @sql = @sql + N' WHERE 1 = 0'
EXEC (@sql)
EXEC ('TRUNCATE TABLE ' + @table)
SELECT @sql = Text FROM dbo.Scripts
EXEC sp_executesql @sql
GO"""
    out = read_sql(sql)
    (obj, edges), = out.objects
    assert edges == {("ReadsFrom", "SQL:dbo.Scripts")}  # no dbo.Maybe, nothing guessed
    assert obj.metadata["unresolved_dynamic_sql"] == "3"
    assert [line for line, _ in out.unresolved] == [4, 5, 7]
    corpus = _load(tmp_path, {"guess.sql": sql})
    assert corpus.errors == []  # unresolved is not an error of the file


def test_built_in_table_functions_and_catalog_views_are_not_tables(tmp_path: Path) -> None:
    sql = """CREATE PROCEDURE dbo.usp_Builtins @list NVARCHAR(MAX), @json NVARCHAR(MAX) AS
SELECT s.value FROM STRING_SPLIT(@list, ',') AS s JOIN dbo.Tags t ON t.Name = s.value
SELECT * FROM OPENJSON(@json) WITH (Id INT '$.id')
SELECT value FROM GENERATE_SERIES(1, 10)
SELECT name FROM sys.tables
SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES
EXEC sp_rename 'dbo.A', 'B'
GO
CREATE VIEW dbo.vw_Split AS SELECT value FROM STRING_SPLIT('a,b', ',')
GO"""
    corpus = _load(tmp_path, {"b.sql": sql})
    assert corpus.errors == []
    assert _edges(corpus, "SQL:dbo.usp_Builtins") == {("ReadsFrom", "SQL:dbo.Tags")}
    assert _edges(corpus, "SQL:dbo.vw_Split") == set()
    targets = {e.to_id.lower() for e in corpus.edges}
    assert not any(name in t for t in targets
                   for name in ("string_split", "openjson", "generate_series", "sys.",
                                "information_schema", "sp_rename"))


def test_conditional_create_in_a_patch_script_makes_no_second_node(tmp_path: Path) -> None:
    table = ("CREATE TABLE dbo.Orders (\n    Id INT PRIMARY KEY,\n"
             "    CustomerId INT REFERENCES dbo.Customers (Id)\n)\nGO\n")
    patch = """IF NOT EXISTS (SELECT * FROM sys.tables WHERE name = 'Orders')
BEGIN
    CREATE TABLE dbo.Orders (Id INT PRIMARY KEY, RegionId INT REFERENCES dbo.Regions (Id))
END
GO
"""
    # the patch sorts first ("0-patch.sql"), yet the unguarded definition wins
    corpus = _load(tmp_path, {"0-patch.sql": patch, "tables/Orders.sql": table})
    assert corpus.errors == []
    orders = [n for n in corpus.nodes if n.id.lower().startswith("sql:dbo.orders")]
    assert [n.id for n in orders] == ["SQL:dbo.Orders"]
    assert orders[0].document_id == "tables/Orders.sql"
    assert _edges(corpus, "SQL:dbo.Orders") == {("FK", "SQL:dbo.Customers"),
                                                ("FK", "SQL:dbo.Regions")}  # merged


def test_a_second_create_in_another_file_merges_into_the_first(tmp_path: Path) -> None:
    corpus = _load(tmp_path, {
        "a.sql": "CREATE PROCEDURE dbo.p AS SELECT * FROM dbo.A\nGO\n",
        "b.sql": "CREATE PROCEDURE dbo.P AS BEGIN TRY EXEC dbo.q END TRY BEGIN CATCH END CATCH\n"
                 "GO\n",
    })  # fmt: skip
    assert [n.id for n in corpus.nodes] == ["SQL:dbo.p"]
    assert corpus.nodes[0].document_id == "a.sql"
    assert _edges(corpus, "SQL:dbo.p") == {("ReadsFrom", "SQL:dbo.A"), ("Executes", "SQL:dbo.q")}
