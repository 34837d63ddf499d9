"""excerpt sync on both stores (the embedded one, PostgreSQL on a real server): the same
passes give the same counts, sources, latest view, retired sources and search results; the
content hash and the retirement live in the store, so a second process sees them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conformance.view_helpers import open_store

from excerpt.engine import Engine
from excerpt.sync import SyncOptions
from excerpt.types import Filters, Principal

OPTIONS = SyncOptions(collection="docs", embedder="none")
FILES = {
    "river.txt": "The river runs past the old stone mill.",
    "harbor/lantern.md": "# Harbor\n\nA lantern burns in the harbor all night.",
    "meadow.txt": "Violet flowers in the meadow by the orchard.",
}


def engine_on(where: tuple[str, str], tmp_path: Path) -> Engine:
    return Engine(tmp_path / "engine-home", store=open_store(*where, tmp_path / "scratch"))


def counts(result: Any) -> tuple[int, ...]:
    data = result.to_json()
    return tuple(data[k] for k in ("added", "changed", "unchanged", "deleted", "failed"))


def view(engine: Engine) -> tuple[list[str], list[str], list[str]]:
    latest = sorted(s.source for s in engine.store.latest_snapshots("docs"))
    hits = engine.search("harbor lantern river meadow", Filters(collection="docs"),
                         Principal.anonymous(), "bm25", 10).hits
    return latest, sorted({h.node.source for h in hits}), engine.store.retired_sources("docs")


def test_sync_passes_agree_on_both_stores(where: tuple[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    engine = engine_on(where, tmp_path)
    assert counts(engine.sync(folder, OPTIONS)) == (3, 0, 0, 0, 0)
    runs = len(engine.store.runs())
    assert counts(engine.sync(folder, OPTIONS)) == (0, 0, 3, 0, 0)
    assert len(engine.store.runs()) == runs
    (folder / "meadow.txt").unlink()
    (folder / "river.txt").write_text("The river floods the harbor.", encoding="utf-8")
    assert counts(engine.sync(folder, OPTIONS)) == (0, 1, 1, 1, 0)
    engine.close()

    again = engine_on(where, tmp_path)  # another process: hashes and retirements are stored
    latest, found, retired = view(again)
    assert latest == found == ["sync:notes/harbor/lantern.md", "sync:notes/river.txt"]
    assert retired == ["sync:notes/meadow.txt"]
    assert counts(again.sync(folder, OPTIONS)) == (0, 0, 2, 0, 0)
    meadow = [s for s in again.store.snapshots("docs") if s.source == "sync:notes/meadow.txt"]
    assert len(meadow) == 1  # its history stays
    (folder / "meadow.txt").write_text(FILES["meadow.txt"], encoding="utf-8")
    assert counts(again.sync(folder, OPTIONS)) == (1, 0, 2, 0, 0)
    assert view(again)[0] == view(again)[1] == sorted(f"sync:notes/{n}" for n in FILES)
    assert view(again)[2] == []
    collections = again.catalogue.collections(Principal.admin())["collections"]
    assert collections == [{"name": "docs", "snapshots": 5, "documents": 3, "nodes": 3}]
    again.close()


def test_ingest_no_op_on_both_stores(where: tuple[str, str], tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    book.write_text("Chapter one. The falcon over the canyon.", encoding="utf-8")
    engine = engine_on(where, tmp_path)
    first = engine.ingest(book, collection="docs", embedder="none")
    again = engine.ingest(book, collection="docs", embedder="none")
    assert (first.status, again.status) == ("completed", "unchanged")
    assert again.snapshot_id == first.snapshot_id
    assert len(engine.store.snapshots("docs")) == 1
    engine.close()


def test_nodes_at_reads_many_snapshots_nodes_in_the_order_asked(
        where: tuple[str, str], tmp_path: Path) -> None:
    """A search's hits in a merged segment belong to many snapshots: ``nodes_at`` reads them
    in one go, in the order asked, past one statement's worth (PLACES_AT_ONCE) too."""
    folder = tmp_path / "notes"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    engine = engine_on(where, tmp_path)
    engine.sync(folder, OPTIONS)
    places = [(s.snapshot_id, o) for s in engine.store.latest_snapshots("docs")
              for o in range(s.nodes)]
    asked = list(reversed(places)) * 90  # 270 places, repeats included
    expected = [engine.store.nodes_by_ordinal(sid, [o])[0] for sid, o in asked]
    assert engine.store.nodes_at(asked) == expected and len(expected) == 270
    assert engine.store.nodes_at([]) == []


def test_files_of_the_same_name_in_two_places_are_both_found(
        where: tuple[str, str], tmp_path: Path) -> None:
    """A synced file's ids come from its path in the folder (notes/a/README.md:0000), not its
    name alone: README.md in two subfolders, and the same path in two folders synced into
    one collection, are all found (the name alone gave them one id: one hid the others)."""
    texts = {("notes", "a"): "The copper falcon nests in folder a.",
             ("notes", "b"): "The marble canyon echoes in folder b.",
             ("other", "a"): "The violet meadow blooms in the other folder."}
    for (top, sub), text in texts.items():
        (tmp_path / top / sub).mkdir(parents=True, exist_ok=True)
        (tmp_path / top / sub / "README.md").write_text(f"# Readme\n\n{text}\n", "utf-8")
    engine = engine_on(where, tmp_path)
    for top in ("notes", "other"):
        assert engine.sync(tmp_path / top, OPTIONS).to_json()["added"] == len(
            [k for k in texts if k[0] == top])
    for query, top, sub in (("copper falcon", "notes", "a"), ("marble canyon", "notes", "b"),
                            ("violet meadow", "other", "a")):
        hits = engine.search(query, Filters(collection="docs"), Principal.anonymous(), "bm25",
                             3).hits
        assert hits and hits[0].node.id.startswith(f"{top}/{sub}/README.md"), (query, hits)
        assert hits[0].node.source == f"sync:{top}/{sub}/README.md"
