"""The embedded store keeps the catalogue's read view (collections, latest snapshots) until the
database changes (store/sqlite.py ``_memo``): a search never sees a stale view, whoever wrote.

Each test searches first (so the view is cached), changes the store from somewhere else (another
process, another connection in this process, another thread, this very connection) and checks
the next search sees the change: a new source published, a source retired, a collection deleted.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.errors import NotFoundError
from excerpt.types import Filters, Principal

ADMIN = Principal.admin()
FILTERS = Filters(collection="docs")


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def sources(engine: Engine, query: str = "lantern river meadow") -> list[str]:
    hits = engine.search(query, FILTERS, ADMIN, "bm25", 10).hits
    return sorted({h.node.source for h in hits})


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = Engine(tmp_path / "home")
    engine.ingest(write(tmp_path / "a", "river.txt", "The river runs past the mill."),
                  collection="docs", embedder="none", source="river")
    assert sources(engine) == ["river"]
    return engine


def ingest_meadow(home: Path, tmp_path: Path) -> None:
    other = Engine(home)
    other.ingest(write(tmp_path / "b", "meadow", "Violet flowers in the meadow."),
                 collection="docs", embedder="none", source="meadow")
    other.close()


def test_a_snapshot_published_by_another_process_is_seen(engine: Engine, tmp_path: Path
                                                         ) -> None:
    path = write(tmp_path / "b", "lantern.txt", "A lantern burns in the harbor.")
    code = ("import sys; from excerpt.engine import Engine; "
            "Engine(sys.argv[1]).ingest(sys.argv[2], collection='docs', embedder='none', "
            "source='lantern')")
    subprocess.run([sys.executable, "-c", code, str(engine.home), str(path)], check=True)
    assert sources(engine) == ["lantern", "river"]


def test_another_connection_and_another_thread_are_seen(engine: Engine, tmp_path: Path
                                                        ) -> None:
    ingest_meadow(engine.home, tmp_path)  # another store instance: its own connection
    assert sources(engine) == ["meadow", "river"]
    worker = threading.Thread(target=lambda: engine.ingest(
        write(tmp_path / "c", "lantern.txt", "A lantern in the harbor."),
        collection="docs", embedder="none", source="lantern"))
    worker.start()  # the same store, the worker thread's own connection
    worker.join()
    assert sources(engine) == ["lantern", "meadow", "river"]


def test_this_connections_own_writes_are_seen(engine: Engine, tmp_path: Path) -> None:
    ingest_meadow(engine.home, tmp_path)
    assert sources(engine) == ["meadow", "river"]
    engine.store.retire_sources("docs", ["meadow"])  # the searching thread's connection
    assert sources(engine) == ["river"]


def test_a_source_retired_elsewhere_is_gone(engine: Engine, tmp_path: Path) -> None:
    ingest_meadow(engine.home, tmp_path)
    assert sources(engine) == ["meadow", "river"]
    other = Engine(engine.home)
    other.store.retire_sources("docs", ["river"])
    other.close()
    assert sources(engine) == ["meadow"]


def test_a_collection_deleted_by_another_process_is_not_found(engine: Engine) -> None:
    code = ("import sys; from excerpt.engine import Engine; "
            "Engine(sys.argv[1]).catalogue.delete_collection('docs')")
    subprocess.run([sys.executable, "-c", code, str(engine.home)], check=True)
    with pytest.raises(NotFoundError, match="no collection 'docs'"):
        engine.search("river", FILTERS, ADMIN, "bm25", 10)


def test_cached_reads_cannot_be_changed_by_a_caller(engine: Engine) -> None:
    """The latest view is shared by every read until the database changes (a folder of
    10,000 synced files would be copied at every search), so it is read-only; a copy is the
    caller's own. Other cached reads are copies."""
    first = engine.store.latest_snapshots("docs")
    with pytest.raises(TypeError, match="shared by every read"):
        first.clear()
    mine = list(first)
    mine.clear()
    assert len(engine.store.latest_snapshots("docs")) == 1
    names = engine.store.collections()
    names.clear()
    assert engine.store.collections() == ["docs"]


def test_the_threads_of_a_process_share_one_read_and_all_see_a_change(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server answers on many threads: the latest view is read once for all of them (a
    folder of 10,000 synced files made each thread read 10,000 snapshots again after every
    commit of a sync), and a commit from another connection reaches every thread."""
    from excerpt.store.sources import SourceRecords

    reads: list[str] = []
    real = SourceRecords.latest_snapshots

    def counted(store: object, collection: str) -> object:
        reads.append(threading.current_thread().name)
        return real(store, collection)  # type: ignore[arg-type]

    monkeypatch.setattr(SourceRecords, "latest_snapshots", counted)

    def from_threads() -> list[list[str]]:
        found: list[list[str]] = []
        threads = [threading.Thread(target=lambda: found.append(sources(engine)))
                   for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return found

    assert from_threads() == [["river"]] * 6
    reads.clear()
    assert from_threads() == [["river"]] * 6  # six new threads: nothing read again
    assert reads == []
    ingest_meadow(engine.home, tmp_path)
    assert from_threads() == [["meadow", "river"]] * 6
    assert reads  # (threads meeting the change at once may each read it)
    reads.clear()
    assert from_threads() == [["meadow", "river"]] * 6
    assert reads == []


def test_threads_meeting_a_new_view_lay_it_out_once(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a commit, a server's threads all meet the new view at once: one lays it out
    (grouping 10,000 synced files' snapshots by segment took 97 ms) and the others wait for
    it, instead of each laying it out while a sync commits again (p95 1.4 s -> 88 ms)."""
    from excerpt.retrieve import access

    ingest_meadow(engine.home, tmp_path)
    laid: list[str] = []
    real = access.lay_out

    def counted(*args: object) -> object:
        laid.append(threading.current_thread().name)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(access, "lay_out", counted)
    start = threading.Barrier(6)
    found: list[list[str]] = []

    def search() -> None:
        start.wait()
        found.append(sources(engine))

    threads = [threading.Thread(target=search) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [["meadow", "river"]] * 6
    assert len(laid) == 1
