"""Segments that merge (issue 30): a collection synced file by file answers exactly as before
its segments were merged, in every mode, for every caller, with metadata filters, old
snapshots and sets; a deleted snapshot's rows leave with the next merge; a merge killed at any
moment leaves the old segments serving and nothing behind.

The collection: paragraphs of The Picture of Dorian Gray cut into files, synced as three
folders (public; tagged ``hr``; labelled ``secret``), then three files changed and two deleted
(history: old snapshots and retired sources). ``before`` never merges (``merge_factor`` 0);
``after`` is a copy of it merged."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from excerpt.engine import Engine
from excerpt.settings import Settings
from excerpt.store.sqlite import SQLiteStore
from excerpt.sync import SyncOptions
from excerpt.types import Filters, Principal

NEVER = Settings().with_(merge_factor=0)
FOLDERS = (("pub", (), ()), ("hr", ("hr",), ()), ("secret", (), ("secret",)))
FILES = 24  # per folder
QUERIES = ("the portrait in the locked room", "Lord Henry's influence on Dorian",
           "Sibyl Vane acting Juliet", "Basil Hallward painter", "opium den by the docks",
           "yellow book", "mother brother sailor Australia")
CALLERS = (Principal.anonymous(), Principal(acl_tags=frozenset({"hr"})),
           Principal(clearances=frozenset({"secret"})), Principal.admin())


def paragraphs(book: Path) -> list[str]:
    text = book.read_text("utf-8")
    body = text[text.index("CHAPTER I."):]
    return [" ".join(p.split()) for p in body.split("\n\n") if len(p.split()) > 25]


def write_files(root: Path, book: Path) -> None:
    paras = paragraphs(book)
    at = 0
    for name, _, _ in FOLDERS:
        for i in range(FILES):
            path = root / name / f"part{i:03d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {name} {i}\n\n" + "\n\n".join(paras[at:at + 3]) + "\n", "utf-8")
            at += 3


def sync_all(engine: Engine, root: Path) -> None:
    for name, tags, labels in FOLDERS:
        result = engine.sync(root / name, SyncOptions(
            collection="book", acl_tags=tags, classification_labels=labels, embedder="minilm"))
        assert not result.failed


@pytest.fixture(scope="module")
def homes(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory
          ) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("merges")
    write_files(root / "files", shared_data("books", "pg174_dorian_gray.txt"))
    engine = Engine(root / "before", NEVER)
    sync_all(engine, root / "files")
    old = {s.source: s.snapshot_id for s in engine.store.latest_snapshots("book")}
    for i in (1, 5, 9):  # history: a second snapshot of three files
        path = root / "files" / "pub" / f"part{i:03d}.md"
        path.write_text(path.read_text("utf-8") + "\nThe lantern burned all night.\n", "utf-8")
    for i in (2, 3):  # retired sources
        (root / "files" / "hr" / f"part{i:03d}.md").unlink()
    sync_all(engine, root / "files")
    engine.close()
    shutil.copytree(root / "before", root / "after")
    after = Engine(root / "after")
    merges = after.store.merge("book", factor=10)
    after.close()
    return {"root": root, "merges": merges, "old": old}


def copy_of(home: Path, to: Path) -> Path:
    """A copy of a home of the module's fixture, for a test that changes it."""
    shutil.copytree(home, to)
    return to


def segments_read(home: Path) -> int:
    """The segments that hold the collection's snapshots (what a query may open)."""
    engine = Engine(home, NEVER)
    found = {engine.store.segment(s.snapshot_id).folder for s in engine.store.snapshots("book")}
    engine.close()
    return len(found)


def answers(home: Path, mode: str, principal: Principal, filters: Filters) -> list[Any]:
    engine = Engine(home, NEVER)
    try:
        out = []
        for query in QUERIES:
            result = engine.search(query, filters, principal, mode, 8)
            out.append([(h.node.id, h.snapshot_id, h.node.text, round(h.score, 4))
                        for h in result.hits])
            out.append(sorted(result.filters["snapshot_ids"]))
        return out
    finally:
        engine.close()


@pytest.mark.parametrize("mode", ["bm25", "semantic", "hybrid"])
def test_a_merged_collection_answers_as_before_for_every_caller(
        homes: dict[str, Any], mode: str) -> None:
    root = homes["root"]
    assert homes["merges"] >= 1  # 72 one-file segments and their history merged
    assert segments_read(root / "after") * 5 < segments_read(root / "before")
    for principal in CALLERS:
        for filters in (Filters(collection="book"),
                        Filters(collection="book", metadata={"section": "secret 7"})):
            before = answers(root / "before", mode, principal, filters)
            assert before == answers(root / "after", mode, principal, filters), (
                principal, filters)
    assert any(before[0::2])  # the queries found something (the last: admin, one section)


def test_old_snapshots_and_sets_read_the_same_after_a_merge(homes: dict[str, Any]) -> None:
    root, old = homes["root"], homes["old"]
    changed = old["sync:pub/part001.md"]
    for home in (root / "before", root / "after"):
        engine = Engine(home, NEVER)
        latest = {s.source: s.snapshot_id for s in engine.store.latest_snapshots("book")}
        engine.snapshot_set("both", [changed, latest["sync:pub/part001.md"],
                                     latest["sync:pub/part004.md"]], "book")
        engine.close()
    for filters in (Filters(collection="book", snapshot_id=changed),
                    Filters(collection="book", snapshot_set="both"),
                    Filters(collection="book", snapshot_id=old["sync:hr/part002.md"])):
        before = answers(root / "before", "hybrid", Principal.admin(), filters)
        assert before == answers(root / "after", "hybrid", Principal.admin(), filters)
    shown = []
    for home in (root / "before", root / "after"):  # a passage in its place, around it
        engine = Engine(home, NEVER)
        hits = engine.search("Dorian portrait", Filters(collection="book"), CALLERS[1],
                             "bm25", 5).hits
        shown.append([engine.passage(h.node.id, Filters(collection="book"), CALLERS[1], 2)
                      for h in hits])
        engine.close()
    assert shown[0] == shown[1] and shown[0]


def test_bm25_statistics_of_the_view_do_not_move(homes: dict[str, Any]) -> None:
    root = homes["root"]
    stats = []
    for home in (root / "before", root / "after"):
        engine = Engine(home, NEVER)
        for principal in CALLERS:
            _, _, view = engine._open_view(Filters(collection="book"), principal)
            stats.append((view.visible, round(view.avg_length, 6)))
        engine.close()
    assert stats[:len(CALLERS)] == stats[len(CALLERS):]


def test_deleted_snapshots_rows_leave_with_the_next_merge(homes: dict[str, Any]) -> None:
    """Deleted, a snapshot's rows stay in the merged segment others still hold (no view reads
    them); once they are more than a tenth of it, the next merge rewrites it without them."""
    root = homes["root"]
    home = copy_of(root / "after", root / "deleting")
    engine = Engine(home, NEVER)
    victims = [s for s in engine.store.latest_snapshots("book")
               if s.source.startswith("sync:secret/")]
    folder = engine.store.segment(victims[0].snapshot_id).folder.name
    engine.catalogue.delete_snapshot(victims[0].snapshot_id)
    assert (home / "segments" / folder).exists()  # the other snapshots' rows are in it
    hits = engine.search("portrait", Filters(collection="book"), Principal.admin(), "bm25", 50)
    assert victims[0].snapshot_id not in {h.snapshot_id for h in hits.hits}
    assert engine.store.merge("book") == 0  # one row in a hundred: left until it is worth it
    for victim in victims[1:]:
        engine.catalogue.delete_snapshot(victim.snapshot_id)
    expected = answers(home, "hybrid", Principal.admin(), Filters(collection="book"))
    assert engine.store.merge("book") == 1
    held = {engine.store.segment(s.snapshot_id).folder: s for s in engine.store.snapshots("book")}
    rows = sum(engine.store.segment(s.snapshot_id).member_range(s.snapshot_id)[1]
               for s in engine.store.snapshots("book"))
    assert sum(engine.store.segment(s.snapshot_id).size for s in held.values()) == rows
    assert folder not in {f.name for f in held}
    engine.close()
    assert answers(home, "hybrid", Principal.admin(), Filters(collection="book")) == expected


MERGE = """
import sys
from excerpt.store.sqlite import SQLiteStore
SQLiteStore(sys.argv[1]).merge("book", factor=10)
"""


def test_a_merge_killed_at_any_moment_leaves_the_old_segments_serving(
        homes: dict[str, Any], tmp_path: Path) -> None:
    root = homes["root"]
    expected = answers(root / "before", "hybrid", CALLERS[1], Filters(collection="book"))
    started = time.perf_counter()
    probe = tmp_path / "probe"
    shutil.copytree(root / "before", probe)
    subprocess.run([sys.executable, "-c", MERGE, str(probe)], check=True)
    span = time.perf_counter() - started
    for attempt, share in enumerate((0.2, 0.45, 0.6, 0.75, 0.9)):
        home = copy_of(root / "before", tmp_path / f"home{attempt}")
        proc = subprocess.Popen([sys.executable, "-c", MERGE, str(home)])
        time.sleep(span * share)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        store = SQLiteStore(home)  # recovery: the staging folder of a dead merge goes
        leftovers = [p.name for p in (home / "segments").iterdir()
                     if p.name not in set(store._folders().values()) | store.kept_folders()]
        store.close()
        assert leftovers == [], attempt
        assert answers(home, "hybrid", CALLERS[1], Filters(collection="book")) == expected
        assert not os.path.exists(home / "segments" / f".merge-{proc.pid}")


def test_a_merge_killed_while_it_writes_its_segment_changes_nothing(
        homes: dict[str, Any], tmp_path: Path) -> None:
    """Killed the moment its folder appears (surely mid-write): the snapshots still point at
    their old segments, the answers are the same, recovery removes the half-written folder
    and the next merge completes."""
    root = homes["root"]
    home = copy_of(root / "before", tmp_path / "home")
    expected = answers(home, "bm25", CALLERS[0], Filters(collection="book"))
    proc = subprocess.Popen([sys.executable, "-c", MERGE, str(home)])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.name.startswith(".merge-") for p in (home / "segments").iterdir()):
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the merge ended before it could be killed"
    assert segments_read(home) == segments_read(root / "before")  # nothing moved
    assert not any(p.name.startswith(".merge-") for p in (home / "segments").iterdir())
    assert answers(home, "bm25", CALLERS[0], Filters(collection="book")) == expected
    store = SQLiteStore(home)
    assert store.merge("book") >= 1
    store.close()
    assert answers(home, "bm25", CALLERS[0], Filters(collection="book")) == expected


def test_excerpt_merge_merges_a_store_synced_before_segments_merged(
        homes: dict[str, Any], tmp_path: Path) -> None:
    root = homes["root"]
    home = copy_of(root / "before", tmp_path / "home")
    expected = answers(home, "bm25", CALLERS[1], Filters(collection="book"))
    command = [sys.executable, "-m", "excerpt", "--home", str(home), "merge", "--json",
               "--no-progress"]
    done = subprocess.run([*command, "--collection", "book"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["merges"]["book"] >= 1
    assert segments_read(home) * 5 < segments_read(root / "before")
    assert answers(home, "bm25", CALLERS[1], Filters(collection="book")) == expected
    again = subprocess.run(command, capture_output=True, text=True)  # every collection
    assert json.loads(again.stdout) == {"merges": {"book": 0}}  # nothing left to merge
    missing = subprocess.run([*command, "--collection", "nope"], capture_output=True,
                             text=True)
    assert missing.returncode == 1 and "nope" in missing.stderr


def test_serve_merges_small_imports_in_the_background(
        homes: dict[str, Any], tmp_path: Path, free_port: Callable[[], int]) -> None:
    """A server's collection of many small imports is merged by ``serve`` itself (every
    ``merge_interval_s``), while it answers: the same results before and after."""
    from tests.http import add_keys, call, excerpt_serve

    root = homes["root"]
    home = copy_of(root / "before", tmp_path / "home")
    keys = add_keys(home)
    settings = tmp_path / "fast.toml"
    settings.write_text("merge_interval_s = 0.3\n", "utf-8")
    unmerged = segments_read(home)
    query = "/v1/search?q=portrait+locked+room&collection=book&mode=bm25&k=8"
    with excerpt_serve(["--home", str(home), "--settings", str(settings)], free_port()) as url:
        status, before = call(url + query, keys["root"])
        assert status == 200 and before["hits"]
        deadline = time.monotonic() + 60
        while segments_read(home) == unmerged and time.monotonic() < deadline:
            time.sleep(0.2)
        status, after = call(url + query, keys["root"])
    assert segments_read(home) * 5 < unmerged
    assert status == 200 and [(h["id"], h["score"]) for h in after["hits"]] == [
        (h["id"], h["score"]) for h in before["hits"]]


def test_the_folders_a_merge_replaced_go_once_their_grace_is_over(
        homes: dict[str, Any], tmp_path: Path) -> None:
    """Kept for readers still in them (GRACE_S), then removed; what a snapshot names stays."""
    root = homes["root"]
    home = copy_of(root / "after", tmp_path / "home")
    expected = answers(home, "bm25", CALLERS[2], Filters(collection="book"))
    store = SQLiteStore(home)
    named = set(store._folders().values())
    replaced = [p.name for p in (home / "segments").iterdir() if p.name not in named]
    assert len(replaced) > 10  # every one-file segment the merge took
    store.remove_replaced()  # within the grace: all kept
    assert all((home / "segments" / name).exists() for name in replaced)
    store.remove_replaced(grace_s=0)
    assert sorted(p.name for p in (home / "segments").iterdir()) == sorted(named)
    store.close()
    assert answers(home, "bm25", CALLERS[2], Filters(collection="book")) == expected
