"""What trips a newcomer at the command line (issue 18, item 6), on the handbook in examples/:
`collections` (counts, delete), `snapshots delete`, a mistyped collection answered with the
closest name the caller may see, `snapshots` of an unknown collection failing, source paths
never cut, `eval` naming its run and report and embedding nothing for BM25, and `--explain`
readable without `--json`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from excerpt.cli.main import cli
from excerpt.engine import Engine

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
MINI_BEIR = Path(__file__).resolve().parents[1] / "data" / "mini-beir"
SECRET = "# Payroll\n\nThe payroll run closes on the 25th of every month.\n"


def run(home: Path, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], input=stdin,
                              obj={"json": False})


def ok(home: Path, *args: str) -> dict[str, object]:
    result = run(home, *args, "--json")
    assert result.exit_code == 0, result.output
    payload: dict[str, object] = json.loads(result.stdout)
    return payload


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    """'books': the handbook (public); 'secret': one file only the hr group may see."""
    home = tmp_path / "home"
    ok(home, "ingest", str(HANDBOOK), "--collection", "books", "--embedder", "none",
       "--no-progress")
    hidden = tmp_path / "hr"
    hidden.mkdir()
    (hidden / "payroll.md").write_text(SECRET, "utf-8")
    ok(home, "ingest", str(hidden), "--collection", "secret", "--acl-tag", "hr",
       "--embedder", "none", "--no-progress")
    return home


def test_collections_lists_what_the_caller_may_see_with_counts(home: Path) -> None:
    anonymous = ok(home, "collections")
    assert anonymous["collections"] == [{"name": "books", "snapshots": 1, "documents": 4,
                                         "nodes": 6}]
    hr = ok(home, "collections", "--acl-tag", "hr")["collections"]
    assert [(c["name"], c["nodes"]) for c in hr] == [("books", 6), ("secret", 1)]  # type: ignore[index]
    plain = run(home, "collections")
    assert plain.exit_code == 0 and "books" in plain.stdout and "secret" not in plain.stdout


@pytest.mark.parametrize("command", [
    ["search", "snapshots"], ["ask", "snapshots", "--no-llm"], ["graph", "01-snapshots.md:0000"],
    ["context", "--seed", "01-snapshots.md:0000"], ["snapshots"],
])
def test_a_mistyped_collection_names_the_closest_one_the_caller_may_see(
        home: Path, command: list[str]) -> None:
    result = run(home, *command, "--collection", "bokks")
    assert result.exit_code == 1
    assert "no collection 'bokks'; did you mean 'books'?" in result.stderr
    hidden = run(home, *command, "--collection", "secrit")
    assert hidden.exit_code == 1 and "secret" not in hidden.stderr  # never named to anonymous
    member = run(home, *command, "--collection", "secrit", "--acl-tag", "hr")
    assert "did you mean 'secret'?" in member.stderr


def test_eval_on_a_mistyped_collection_suggests_too(home: Path, tmp_path: Path) -> None:
    scenarios = tmp_path / "s.yaml"
    scenarios.write_text("collection: bokks\nscenarios:\n- id: s1\n  query: snapshots\n"
                         "  gold: ['01-snapshots.md:0000']\n  reference: Snapshots.\n", "utf-8")
    result = run(home, "eval", str(scenarios), "--mode", "bm25", "--no-progress")
    assert result.exit_code == 1 and "did you mean 'books'?" in result.stderr


def test_snapshots_of_an_unknown_or_unseen_collection_is_an_error(home: Path) -> None:
    for name in ("nowhere", "secret"):  # absent; present but nothing the caller may see
        result = run(home, "snapshots", "--collection", name, "--json")
        assert result.exit_code == 1
        assert json.loads(result.stdout)["kind"] == "not_found"
        assert f"no collection {name!r}" in result.stderr
    assert ok(home, "snapshots", "--collection", "secret", "--acl-tag", "hr")["snapshots"]


def test_the_snapshots_table_shows_a_long_source_path_whole(home: Path, tmp_path: Path) -> None:
    deep = tmp_path / "a-rather-long-folder-name-for-the-notes" / "of-the-second-edition-2026"
    deep.mkdir(parents=True)
    (deep / "note.md").write_text("# Note\n\nTides follow the moon.\n", "utf-8")
    ok(home, "ingest", str(deep), "--collection", "notes", "--embedder", "none", "--no-progress")
    table = run(home, "snapshots", "--collection", "notes").stdout
    cells = [line.split("│")[3].strip() for line in table.splitlines() if line.count("│") > 3]
    assert "".join(cells) == str(deep.resolve())


def test_snapshots_delete_removes_one_snapshot_whole(home: Path, tmp_path: Path) -> None:
    book = tmp_path / "book.md"
    book.write_text("# Ed\n\nThe first edition speaks of herons.\n", "utf-8")
    first = ok(home, "ingest", str(book), "--collection", "ed", "--source", "ed",
               "--embedder", "none", "--no-progress")["snapshot_id"]
    book.write_text("# Ed\n\nThe second edition speaks of cranes.\n", "utf-8")
    second = str(ok(home, "ingest", str(book), "--collection", "ed", "--source", "ed",
                    "--embedder", "none", "--no-progress")["snapshot_id"])
    ok(home, "snapshot-set", "latest", second, "--collection", "ed")
    refused = run(home, "snapshots", "delete", second, stdin="n\n")
    assert refused.exit_code == 1 and "nothing deleted" in refused.stderr
    assert (home / "segments" / f"run-{second.rsplit('-r', 1)[1]}").is_dir()
    done = ok(home, "snapshots", "delete", second, "--yes")
    assert done["snapshot_id"] == second and done["collection"] == "ed"
    listed = ok(home, "snapshots", "--collection", "ed")
    assert [s["snapshot_id"] for s in listed["snapshots"]] == [first]  # type: ignore[index]
    assert listed["sets"] == []  # the set lost its only member
    assert not (home / "segments" / f"run-{second.rsplit('-r', 1)[1]}").exists()
    hits = ok(home, "search", "herons cranes", "--collection", "ed", "--mode", "bm25")["hits"]
    assert [h["snapshot_id"] for h in hits] == [first]  # type: ignore[index, union-attr]
    assert run(home, "snapshots", "delete", second, "--yes").exit_code == 1  # gone


def test_a_failed_delete_leaves_the_snapshot_whole(home: Path) -> None:
    """A failure inside the delete transaction (a trigger refusing the last statement) rolls
    back the content rows already deleted: the snapshot still reads whole."""
    engine = Engine(home)
    sid = engine.store.latest_snapshots("books")[0].snapshot_id
    conn = sqlite3.connect(home / "excerpt.db")
    conn.execute("CREATE TRIGGER keep BEFORE DELETE ON snapshots "
                 "BEGIN SELECT RAISE(ABORT, 'refused'); END")
    conn.commit()
    with pytest.raises(sqlite3.DatabaseError, match="refused"):
        engine.catalogue.delete_snapshot(sid)
    assert len(engine.store.nodes_by_id(sid, ["01-snapshots.md:0000"])) == 1
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE snapshot_id = ?", (sid,)
                        ).fetchone()[0] == 6
    conn.close()
    engine.close()
    assert ok(home, "search", "snapshot", "--collection", "books", "--mode", "bm25")["hits"]


def test_collections_delete_asks_then_deletes_everything_of_it(home: Path) -> None:
    assert run(home, "collections", "delete", "secret", stdin="n\n").exit_code == 1
    unasked = run(home, "collections", "delete", "secret", "--json")  # no input at all
    assert unasked.exit_code == 1 and json.loads(unasked.stdout)["kind"] == "input"
    assert [c["name"] for c in ok(home, "collections", "--all-access")["collections"]] == [  # type: ignore[index, union-attr]
        "books", "secret"]
    assert run(home, "collections", "delete", "secert", "--yes").exit_code == 1
    assert ok(home, "collections", "delete", "secret", "--yes")["snapshots"] == 1
    assert [c["name"] for c in ok(home, "collections", "--all-access")["collections"]] == [  # type: ignore[index, union-attr]
        "books"]
    assert run(home, "search", "payroll", "--collection", "secret",
               "--acl-tag", "hr").exit_code == 1
    assert [p.name for p in (home / "segments").iterdir()] == ["run-1"]


def test_eval_prints_its_run_and_report_and_bm25_embeds_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run(home, "eval", str(MINI_BEIR), "--mode", "bm25", "--no-progress",
                 "--report", str(tmp_path / "report"))
    assert result.exit_code == 0, result.output
    assert "run #1 stored" in result.stdout
    assert f"report: {tmp_path / 'report' / 'report.html'}" in result.stdout
    engine = Engine(home)
    assert [s.embed_model for s in engine.store.snapshots()] == [None]
    engine.close()


def test_explain_without_json_prints_readable_provenance(home: Path) -> None:
    result = run(home, "ask", "How are snapshots published?", "--collection", "books",
                 "--mode", "bm25", "--explain", "--no-llm")
    assert result.exit_code == 0, result.output
    text = result.stdout.split("provenance:\n", 1)[1]
    assert "  question:\n    query: How are snapshots published?" in text
    assert "    candidate: #1 books-r1/" in text and "    cites: books-r1/" in text
    assert "http://" not in text and "urn:" not in text


def test_deleting_on_postgresql_removes_every_row_of_the_snapshot(pg_url: str,
                                                                    tmp_path: Path) -> None:
    """The same commands with --store: the snapshot's nodes, vectors, postings, edges and
    documents go in one transaction; the collection goes with its last snapshot."""
    import psycopg

    home = tmp_path / "scratch"
    first = ok(home, "--store", pg_url, "ingest", str(HANDBOOK), "--collection", "books",
               "--no-progress")  # embedded: vectors and postings too
    second = ok(home, "--store", pg_url, "ingest", str(HANDBOOK), "--collection", "books",
                "--source", "again", "--embedder", "none", "--no-progress")
    tables = ("documents", "nodes", "node_vectors", "postings", "edges")

    def rows(conn: psycopg.Connection) -> dict[str, int]:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t} WHERE snapshot_id = %s",
                                (first["snapshot_id"],)).fetchone()[0] for t in tables}

    with psycopg.connect(pg_url) as conn:
        before = rows(conn)
    assert before["node_vectors"] == 6 and before["postings"] > 0 and before["documents"] == 4
    assert ok(home, "--store", pg_url, "snapshots", "delete", str(first["snapshot_id"]),
              "--yes")["nodes"] == 6
    with psycopg.connect(pg_url) as conn:
        assert rows(conn) == dict.fromkeys(tables, 0)
        assert conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0] == 6  # the other one
    listed = ok(home, "--store", pg_url, "collections")["collections"]
    assert listed == [{"name": "books", "snapshots": 1, "documents": 4, "nodes": 6}]
    assert second["snapshot_id"] != first["snapshot_id"]
    ok(home, "--store", pg_url, "collections", "delete", "books", "--yes")
    assert ok(home, "--store", pg_url, "collections", "--all-access")["collections"] == []
