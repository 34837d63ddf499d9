"""An import's file set (ingest/files.py): one walk gives every path's files with the names
they go by; a file's bytes are read once and kept within a budget, so the hash, the sniffers
and the reader share them; past the budget the hash streams the file and keeps its head."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from excerpt.ingest import files
from excerpt.ingest.files import FileSet, resolve_files


def tree(root: Path) -> Path:
    for name, text in {"b.txt": "bee", "a/c.md": "# sea", "a/.hidden": "x", ".git/HEAD": "y",
                       "solo.txt": "alone"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_one_walk_names_each_file_as_its_document_id(tmp_path: Path) -> None:
    folder = tree(tmp_path / "t")
    found = resolve_files([folder, folder / "solo.txt"])
    assert [(f.name, f.root) for f in found.files(folder)] == [
        ("a/c.md", folder), ("b.txt", folder), ("solo.txt", folder)]
    assert [(f.name, f.root) for f in found.files(folder / "solo.txt")] == [("solo.txt", None)]
    assert sorted(found.top_folders(folder)) == [".git", "a"]  # hidden ones too: a bundle's


def test_bytes_are_read_once_and_let_go_after_their_reader(tmp_path: Path) -> None:
    folder = tree(tmp_path / "t")
    file = resolve_files([folder]).files(folder)[1]
    assert file.digest() == hashlib.sha256(b"bee").hexdigest()
    left = file.budget.left
    assert file.held() == b"bee" and file.head(2) == b"be"
    (folder / "b.txt").unlink()  # nothing reads the file again
    assert file.held() == b"bee"
    file.release()
    assert file.held() is None and file.budget.left == left + 3


def test_a_file_past_the_budget_is_streamed_and_keeps_its_head(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "KEEP_FILE_BYTES", 4)
    monkeypatch.setattr(files, "HEAD_BYTES", 3)
    big = tmp_path / "big.txt"
    big.write_bytes(b"0123456789")
    file = resolve_files([big]).files(big)[0]
    assert file.digest() == hashlib.sha256(b"0123456789").hexdigest()
    assert file.held() is None  # too large to keep: its reader opens it
    big.write_bytes(b"changed!!!")
    assert file.head(3) == b"012"  # the head the hash read, not a second open


def test_sync_hands_a_file_on_with_its_bytes(tmp_path: Path) -> None:
    folder = tree(tmp_path / "t")
    file = resolve_files([folder]).files(folder)[0]
    file.held()
    alone = FileSet.of(file, [tmp_path])
    only = alone.files(file.path)[0]
    assert (only.name, only.root, only.held()) == ("c.md", None, b"# sea")
    assert alone.within([tmp_path]) and not alone.within([folder / "a" / "x"])
