"""An import reports, per kind and with counts, what its code refers to but does not hold
(issue 17 item 5): edges to objects the folder does not define stay in the graph (they are
true) and are listed, and SQL built at run time is counted, never guessed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from excerpt.cli.main import cli

PROCS = """CREATE TABLE dbo.Orders (Id int PRIMARY KEY);
GO
CREATE PROCEDURE dbo.usp_Archive AS
BEGIN
    BEGIN TRY
        INSERT INTO archive.OldOrders SELECT * FROM dbo.Orders;
        EXEC dbo.usp_NotHere;
    END TRY
    BEGIN CATCH
        THROW;
    END CATCH
END
GO
CREATE PROCEDURE dbo.usp_Dynamic @table sysname AS
BEGIN
    DECLARE @sql nvarchar(max) = N'SELECT * FROM ' + QUOTENAME(@table);
    EXEC sp_executesql @sql;
END
"""


def test_an_import_lists_what_it_refers_to_but_does_not_hold(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    (folder / "procs.sql").write_text(PROCS, encoding="utf-8")
    home = str(tmp_path / "home")
    args = ["--home", home, "ingest", str(folder), "--format", "code", "--collection", "c",
            "--embedder", "none", "--no-progress"]
    out = CliRunner().invoke(cli, [*args, "--json"])
    assert out.exit_code == 0, out.output
    unresolved = json.loads(out.output)["unresolved"]
    assert unresolved == {
        "Executes": {"count": 1, "names": ["SQL:dbo.usp_NotHere"]},
        "WritesTo": {"count": 1, "names": ["SQL:archive.OldOrders"]},
        "dynamic SQL": {"count": 1, "names": ["SQL:dbo.usp_Dynamic"]},
    }
    plain = CliRunner().invoke(cli, [*args[:7], "c2", *args[8:]])
    assert plain.exit_code == 0, plain.output
    assert ("unresolved (kept as edges to objects not in the import): Executes 1 "
            "(SQL:dbo.usp_NotHere); WritesTo 1 (SQL:archive.OldOrders); dynamic SQL 1 "
            "(SQL:dbo.usp_Dynamic)") in plain.output
