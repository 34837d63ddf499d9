"""An import finds its files once and reads each of them once (issue 31, "the file set of an
import resolved once").

On main at bea8197 this folder was walked five times by an ingest (six within ingest roots:
the content hash, the roots check, three of detection's questions and the loader) and its
files opened two to five times each (the hash, the format's magic bytes, a book or regulation
sniff, a reader's own checks, the reader); a sync opened them two to five times. Here a real
ingest, and a real sync, of a generated folder (Markdown, HTML, plain text, a PDF, C# and SQL
files, a nested folder, hidden entries) run under spies that wrap the real functions a walk or
a read goes through (``os.walk``, ``os.scandir``, ``os.listdir``;
``io.open``/``builtins.open``, which ``Path.open``, ``read_bytes`` and ``read_text`` call, and
``os.open``; and PDFium's document, which opens a path it is given in C, out of Python's
sight). Each folder is listed once and each file opened at most once; hidden entries not at
all. The snapshots are those the code made before the change (node ids, titles, texts and
metadata, and the files each import reported), also when the file set may keep no bytes and
every reader reads its file itself.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pypdfium2
import pytest
from tests.pdfs import write_manual

from excerpt.engine import Engine
from excerpt.ingest import files as file_set
from excerpt.sync import SyncOptions
from excerpt.types import IngestIssue

FILES = {
    "README.md": "# Widgets\n\nHow the widgets of Acme are made, tested and shipped.\n\n"
                 "## Testing\n\nEvery widget is spun for an hour before it ships.\n",
    "notes.txt": "Notes from the plant.\n\nThe night shift counts the bolts twice.\n",
    "guide/faq.txt": "Why do widgets hum?\n\nBecause the bearings are new.\n",
    "guide/changes.md": "# Changes\n\n- 2.0: the widget got a second bearing.\n",
    "guide/setup.html": "<!doctype html><html><head><title>Setup</title></head><body>"
                        "<h1>Setting up</h1><p>Bolt the widget to a bench before its first "
                        "run.</p><h2>Power</h2><p>Use a grounded socket.</p></body></html>",
    "src/Widget.cs": "namespace Acme\n{\n    public class Widget\n    {\n"
                     "        public int Size() { return 6; }\n    }\n}\n",
    "src/widgets.sql": "CREATE TABLE dbo.Widgets (Id int NOT NULL, Size int NULL);\n",
    ".hidden.txt": "not content: never read",
    ".git/config": "[core]\n\tbare = false\n",
}
PDF = "guide/manual.pdf"
CONTENT = sorted([*(name for name in FILES if not name.startswith(".")), PDF])
FOLDERS = ["", "guide", "src"]

# What the code made of this folder before the file set (main at bea8197), embedder "none".
INGEST_IDS = [
    "README.md:0000", "README.md:0001", "guide/changes.md:0000", "guide/faq.txt:0000",
    *(f"guide/manual.pdf:{i:04d}" for i in range(5)),
    "guide/setup.html:0000", "guide/setup.html:0001", "notes.txt:0000"]
INGEST_DIGEST = "bedad31ea736d979dc8ae7f1e39c3501cb28eb464ed93d83ca10118ab4c9a48d"
INGEST_ISSUES = [("src/Widget.cs", "unsupported file type: no reader for .cs files"),
                 ("src/widgets.sql", "unsupported file type: no reader for .sql files")]
SYNC_IDS = ["CS:Acme.Widget", "CS:Acme.Widget.Size", "SQL:dbo.Widgets",
            *(f"widgets/{i}" for i in INGEST_IDS)]
SYNC_DIGEST = "eadba6a1f23b9d81b82cedc88de85befd0611b9211cf3a11f4bed8f69edd74a6"

def write_folder(root: Path) -> Path:
    folder = root / "widgets"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    write_manual(folder / PDF)
    return folder


class Spy:
    """How often each folder under ``folder`` is listed and each file in it opened, counted
    by wrappers around the real functions (they still do the work)."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bases = (folder, folder.resolve())
        self.walks: list[str] = []
        self.listed: Counter[str] = Counter()
        self.opened: Counter[str] = Counter()
        real_walk, real_open, real_os_open = os.walk, io.open, os.open
        real_pdf = pypdfium2.PdfDocument

        def walk(top: Any, *args: Any, **kwargs: Any) -> Any:
            self.note(self.walks, top)
            return real_walk(top, *args, **kwargs)

        def opening(file: Any, *args: Any, **kwargs: Any) -> Any:
            self.note(self.opened, file)
            return real_open(file, *args, **kwargs)

        def os_opening(path: Any, *args: Any, **kwargs: Any) -> Any:
            self.note(self.opened, path)
            return real_os_open(path, *args, **kwargs)

        def pdf(source: Any, *args: Any, **kwargs: Any) -> Any:
            self.note(self.opened, source)  # PDFium opens a path in C: it counts as an open
            return real_pdf(source, *args, **kwargs)

        monkeypatch.setattr(os, "walk", walk)
        for name in ("scandir", "listdir"):
            monkeypatch.setattr(os, name, self.lister(getattr(os, name)))
        monkeypatch.setattr(io, "open", opening)
        monkeypatch.setattr(builtins, "open", opening)
        monkeypatch.setattr(os, "open", os_opening)
        monkeypatch.setattr(pypdfium2, "PdfDocument", pdf)

    def lister(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def listing(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            self.note(self.listed, path)
            return real(path, *args, **kwargs)

        return listing

    def note(self, counts: Counter[str] | list[str], path: Any) -> None:
        name = self.inside(path)
        if name is None:
            return
        if isinstance(counts, list):
            counts.append(name)
        else:
            counts[name] += 1

    def inside(self, path: Any) -> str | None:
        """``path`` relative to the folder (``""``: the folder), or None: elsewhere."""
        if not isinstance(path, (str, os.PathLike)):
            return None  # a descriptor, or a file's bytes handed to PDFium
        where = Path(os.fspath(path))
        where = where if where.is_absolute() else Path.cwd() / where
        for base in self.bases:
            if where == base or where.is_relative_to(base):
                name = where.relative_to(base).as_posix()
                return "" if name == "." else name
        return None


def nodes(engine: Engine, snapshot_ids: list[str]) -> list[tuple[str, str, str, str]]:
    """Every node of the snapshots: id, title, text and metadata (as JSON), by id."""
    out = []
    for snapshot_id in snapshot_ids:
        count = engine.store.snapshot(snapshot_id).nodes
        for node in engine.store.nodes_by_ordinal(snapshot_id, range(count)):
            out.append((node.id, node.title, node.text,
                        json.dumps(node.metadata, sort_keys=True, default=str)))
    return sorted(out)


def digest(found: list[tuple[str, str, str, str]]) -> str:
    return hashlib.sha256(json.dumps(found).encode()).hexdigest()


def issues(errors: list[IngestIssue], folder: Path) -> list[tuple[str, str]]:
    return sorted((Path(e.path).relative_to(folder).as_posix(), e.reason) for e in errors)


def check_once(spy: Spy, folders: list[str]) -> None:
    assert spy.walks == [""], "the folder is walked once"
    assert dict(spy.listed) == dict.fromkeys(folders, 1), "each folder listed once"
    assert set(spy.opened) <= set(CONTENT), "no hidden file is read"
    assert all(n == 1 for n in spy.opened.values()), f"a file opened twice: {spy.opened}"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_folder(tmp_path)


@pytest.mark.parametrize("confined", [False, True], ids=["anywhere", "in-roots"])
def test_an_ingest_walks_its_folder_once_and_opens_each_file_once(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, confined: bool) -> None:
    """Within ingest roots (a server's), the roots check rides the same walk: it looks into
    hidden folders too (a link out of the roots is refused wherever it hides), reading none
    of their files."""
    engine = Engine(tmp_path / "home")
    spy = Spy(folder, monkeypatch)
    result = engine.ingest([folder], collection="widgets", embedder="none",
                           ingest_roots=[tmp_path] if confined else None)
    monkeypatch.undo()
    check_once(spy, [*FOLDERS, ".git"] if confined else FOLDERS)
    assert sorted(spy.opened) == CONTENT  # each once: the hash's read serves the readers
    assert result.status == "completed" and result.snapshot_id is not None
    found = nodes(engine, [result.snapshot_id])
    assert [n[0] for n in found] == INGEST_IDS
    assert digest(found) == INGEST_DIGEST
    assert issues(result.errors, folder) == INGEST_ISSUES


def test_a_sync_walks_its_folder_once_and_opens_each_file_once(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine(tmp_path / "home")
    spy = Spy(folder, monkeypatch)
    result = engine.sync(folder, SyncOptions(collection="widgets", embedder="none"))
    monkeypatch.undo()
    check_once(spy, FOLDERS)
    assert sorted(spy.opened) == CONTENT
    assert sorted(result.added) == CONTENT and not result.failed
    found = nodes(engine, sorted(result.snapshots.values()))
    assert [n[0] for n in found] == SYNC_IDS
    assert digest(found) == SYNC_DIGEST

    spy = Spy(folder, monkeypatch)
    again = engine.sync(folder, SyncOptions(collection="widgets", embedder="none"))
    monkeypatch.undo()
    check_once(spy, FOLDERS)  # an unchanged file costs one read, for its hash
    assert again.unchanged == len(CONTENT) and not again.added


def test_files_too_large_to_keep_are_read_by_their_readers_to_the_same_snapshot(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no memory to keep bytes in, the hash streams each file and each reader opens it
    again (the second open that remains for files past the budget): the same snapshot."""
    monkeypatch.setattr(file_set, "KEEP_TOTAL_BYTES", 0)
    engine = Engine(tmp_path / "home")
    spy = Spy(folder, monkeypatch)
    result = engine.ingest([folder], collection="widgets", embedder="none")
    monkeypatch.undo()
    assert spy.walks == [""] and dict(spy.listed) == dict.fromkeys(FOLDERS, 1)
    assert spy.opened[PDF] >= 2  # hashed, then parsed by PDFium from its path
    assert result.snapshot_id is not None
    found = nodes(engine, [result.snapshot_id])
    assert [n[0] for n in found] == INGEST_IDS
    assert digest(found) == INGEST_DIGEST
    assert issues(result.errors, folder) == INGEST_ISSUES
