"""excerpt sync on the embedded store: a collection mirrors a folder, one source per file;
unchanged files cost nothing, deleted files leave the latest view but keep their history,
failures are reported without stopping the others; and `excerpt ingest` of unchanged content
is a no-op ('unchanged')."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.unit.ingest.files import write_file

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.ingest.pipeline import content_hash
from excerpt.sync import SyncOptions
from excerpt.types import Filters, Principal

OPTIONS = SyncOptions(collection="docs", embedder="none")


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        write_file(folder / name, content)
    return folder


FILES: dict[str, str | bytes] = {
    "river.txt": "The river runs past the old stone mill.",
    "harbor/lantern.md": "# Harbor\n\nA lantern burns in the harbor all night.",
    "meadow.txt": "Violet flowers in the meadow by the orchard.",
}


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return Engine(tmp_path / "home")


def sources(engine: Engine) -> list[str]:
    return sorted(s.source for s in engine.store.latest_snapshots("docs"))


def found(engine: Engine, query: str) -> list[str]:
    hits = engine.search(query, Filters(collection="docs"), Principal.anonymous(), "bm25", 5)
    return [h.node.source for h in hits.hits]


def test_every_file_becomes_its_own_source(engine: Engine, tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", FILES)
    result = engine.sync(folder, OPTIONS)
    assert (result.added, result.changed, result.unchanged, result.deleted, result.failed) == (
        ["harbor/lantern.md", "meadow.txt", "river.txt"], [], 0, [], [])
    assert sources(engine) == ["sync:notes/harbor/lantern.md", "sync:notes/meadow.txt",
                               "sync:notes/river.txt"]
    assert found(engine, "lantern harbor")[0] == "sync:notes/harbor/lantern.md"
    assert result.to_json()["added"] == 3 and set(result.snapshots) == set(result.added)


def test_unchanged_files_cost_no_run_and_no_snapshot(engine: Engine, tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", FILES)
    engine.sync(folder, OPTIONS)
    runs, snaps = len(engine.store.runs()), len(engine.store.snapshots())
    again = engine.sync(folder, OPTIONS)
    assert (again.added, again.changed, again.unchanged, again.deleted) == ([], [], 3, [])
    # no import run begun (so nothing loaded, parsed or embedded) and no snapshot made
    assert (len(engine.store.runs()), len(engine.store.snapshots())) == (runs, snaps)


def test_a_changed_file_is_a_new_snapshot_and_the_old_one_stays(engine: Engine,
                                                                tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", FILES)
    first = engine.sync(folder, OPTIONS).snapshots["river.txt"]
    write(folder, {"river.txt": "The river floods the copper canyon."})
    result = engine.sync(folder, OPTIONS)
    assert (result.changed, result.unchanged) == (["river.txt"], 2)
    assert result.snapshots["river.txt"] != first
    assert found(engine, "copper canyon") == ["sync:notes/river.txt"]
    assert found(engine, "stone mill") == []  # the old text left the latest view...
    old = engine.search("stone mill", Filters(collection="docs", snapshot_id=first),
                        Principal.anonymous(), "bm25", 5)
    assert [h.node.source for h in old.hits] == ["sync:notes/river.txt"]  # ...not history


def test_a_deleted_file_leaves_the_view_and_comes_back_as_a_new_snapshot(
        engine: Engine, tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", FILES)
    first = engine.sync(folder, OPTIONS).snapshots["meadow.txt"]
    (folder / "meadow.txt").unlink()
    result = engine.sync(folder, OPTIONS)
    assert (result.deleted, result.unchanged) == (["meadow.txt"], 2)
    assert "sync:notes/meadow.txt" not in sources(engine)
    assert found(engine, "violet meadow") == []
    assert engine.store.snapshot(first).source == "sync:notes/meadow.txt"  # history kept
    assert engine.store.retired_sources("docs") == ["sync:notes/meadow.txt"]
    assert engine.sync(folder, OPTIONS).deleted == []  # retired once, not again
    write(folder, {"meadow.txt": FILES["meadow.txt"]})
    back = engine.sync(folder, OPTIONS)
    assert back.added == ["meadow.txt"] and back.snapshots["meadow.txt"] != first
    assert found(engine, "violet meadow") == ["sync:notes/meadow.txt"]
    assert engine.store.retired_sources("docs") == []


def test_a_file_that_fails_is_reported_and_the_others_sync(engine: Engine,
                                                          tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", {**FILES, "broken.txt": b"\x00\x01binary", "empty.txt": ""})
    result = engine.sync(folder, OPTIONS)
    assert [f.path for f in result.failed] == ["broken.txt", "empty.txt"]
    assert "binary" in result.failed[0].reason and "empty" in result.failed[1].reason
    assert len(result.added) == 3 and len(sources(engine)) == 3
    assert result.to_json()["failed"] == 2
    assert result.to_json()["failures"][0]["path"] == "broken.txt"


def test_a_failure_remembered_by_watch_is_not_imported_again(engine: Engine,
                                                            tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", {"broken.txt": b"\x00binary", **FILES})
    remembered: dict[str, tuple[str, str]] = {}
    engine.sync(folder, OPTIONS, remembered=remembered)
    runs = len(engine.store.runs())
    again = engine.sync(folder, OPTIONS, remembered=remembered)
    assert [f.path for f in again.failed] == ["broken.txt"]
    assert len(engine.store.runs()) == runs  # no new failed run for the same bytes
    write(folder, {"broken.txt": "Now it is text about a falcon."})
    assert engine.sync(folder, OPTIONS, remembered=remembered).added == ["broken.txt"]


def test_two_folders_in_one_collection_keep_their_files(engine: Engine, tmp_path: Path) -> None:
    one = write(tmp_path / "one", {"a.txt": "thunder over the willow"})
    two = write(tmp_path / "two", {"a.txt": "ember in the marble quarry"})
    engine.sync(one, OPTIONS)
    result = engine.sync(two, OPTIONS)
    assert result.deleted == []  # a sync retires only its own folder's sources
    assert sources(engine) == ["sync:one/a.txt", "sync:two/a.txt"]
    same_name = write(tmp_path / "elsewhere" / "one", {"b.txt": "falcon"})
    named = engine.sync(same_name, SyncOptions(collection="docs", embedder="none",
                                               name="one-elsewhere"))
    assert named.deleted == [] and "sync:one-elsewhere/b.txt" in sources(engine)


def test_changed_import_options_make_a_new_snapshot(engine: Engine, tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", FILES)
    engine.sync(folder, OPTIONS)
    tagged = engine.sync(folder, SyncOptions(collection="docs", embedder="none",
                                             acl_tags=("board",)))
    assert len(tagged.changed) == 3  # the same bytes with another ACL are other nodes
    node = engine.store.nodes_by_ordinal(tagged.snapshots["river.txt"], [0])[0]
    assert node.acl_tags == ("board",)


def test_refusals(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a folder"):
        engine.sync(tmp_path / "missing", OPTIONS)
    folder = write(tmp_path / "notes", FILES)
    with pytest.raises(InputError, match="plain name"):
        engine.sync(folder, SyncOptions(collection="docs", name="a/b"))
    with pytest.raises(InputError, match="unknown embedder"):
        engine.sync(folder, SyncOptions(collection="docs", embedder="bert"))


def test_content_hash_follows_bytes_names_and_options(tmp_path: Path) -> None:
    write(tmp_path / "d", {"a.txt": "one", "b.txt": "two"})
    a, b = tmp_path / "d" / "a.txt", tmp_path / "d" / "b.txt"
    base = content_hash([a, b], {"x": 1})
    assert content_hash([b, a], {"x": 1}) == base  # argument order changes nothing
    assert content_hash([a, b], {"x": 2}) != base
    assert content_hash([tmp_path / "d"], {"x": 1}) != base
    folder_hash = content_hash([tmp_path / "d"], {"x": 1})
    b.write_text("three")
    assert content_hash([tmp_path / "d"], {"x": 1}) != folder_hash
    (tmp_path / "d" / "b.txt").rename(tmp_path / "d" / "c.txt")
    assert content_hash([tmp_path / "d"], {"x": 1}) != folder_hash


def test_ingest_of_unchanged_content_is_a_no_op(engine: Engine, tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", FILES)
    first = engine.ingest(folder, collection="docs", embedder="none")
    runs = len(engine.store.runs())
    again = engine.ingest(folder, collection="docs", embedder="none")
    assert (again.status, again.snapshot_id, again.nodes) == ("unchanged", first.snapshot_id,
                                                              first.nodes)
    assert again.import_run_id is None and len(engine.store.runs()) == runs
    assert again.to_json()["status"] == "unchanged"
    tagged = engine.ingest(folder, collection="docs", embedder="none", acl_tags=["board"])
    assert tagged.status == "completed"
    write(folder, {"river.txt": "changed"})
    assert engine.ingest(folder, collection="docs", embedder="none").status == "completed"


def test_cli_ingest_unchanged_exits_0(tmp_path: Path) -> None:
    folder = write(tmp_path / "notes", FILES)
    home = str(tmp_path / "home")
    args = ["--home", home, "ingest", str(folder), "--embedder", "none", "--no-progress"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0 and out.output.startswith("unchanged: snapshot default-r1")


def test_cli_sync_summary_and_json(tmp_path: Path) -> None:
    import json

    folder = write(tmp_path / "notes", {**FILES, "bad.txt": b"\x00"})
    args = ["--home", str(tmp_path / "home"), "sync", str(folder), "--collection", "docs",
            "--embedder", "none", "--no-progress"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    assert "3 added, 0 changed, 0 unchanged, 0 deleted, 1 failed" in out.output
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).output)
    assert {k: data[k] for k in ("added", "changed", "unchanged", "deleted", "failed")} == {
        "added": 0, "changed": 0, "unchanged": 3, "deleted": 0, "failed": 1}
    assert data["failures"][0]["path"] == "bad.txt"


def test_ingest_result_carries_the_per_format_report(engine: Engine, tmp_path: Path) -> None:
    folder = write(tmp_path / "site", {"page.md": "# Title\n\nSome harbor text.",
                                       "data.bin": b"\x00\x01"})
    result = engine.ingest(folder, collection="site", fmt="documents", embedder="none")
    assert result.formats and result.to_json()["formats"] == result.formats
