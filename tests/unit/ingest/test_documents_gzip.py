"""Gzip-compressed documents (``policy.pdf.gz``: how Debian ships its manuals): expanded within
the import's archive limits and read as the file they hold, their nodes naming the ``.gz``."""

from __future__ import annotations

import gzip
from pathlib import Path

from tests.pdfs import write_manual

from excerpt.ingest._archive import ArchiveLimits
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.detect import detect_format, load

GUIDE = "# Guide\n\n## Install\n\nRun the installer and answer its three questions.\n"


def _gzipped(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data))
    return path


def test_a_gzipped_pdf_and_markdown_are_read_as_what_they_hold(tmp_path: Path) -> None:
    folder = tmp_path / "doc"
    pdf = write_manual(tmp_path / "manual.pdf")
    _gzipped(folder / "manual.pdf.gz", pdf.read_bytes())
    _gzipped(folder / "guide.md.gz", GUIDE.encode())
    assert detect_format([folder]) == "documents"
    assert detect_format([folder / "manual.pdf.gz"]) == "documents"
    corpus = load([folder])
    assert {d.id for d in corpus.documents} == {"manual.pdf.gz", "guide.md.gz"}
    assert corpus.formats["pdf"]["read"] == 1 and corpus.formats["markdown"]["read"] == 1
    plain = load([pdf])
    by_gz = [n for n in corpus.nodes if n.document_id == "manual.pdf.gz"]
    assert [n.text for n in by_gz] == [n.text for n in plain.nodes]
    assert [n.metadata["page"] for n in by_gz] == [n.metadata["page"] for n in plain.nodes]
    assert {n.source for n in by_gz} == {str((folder / "manual.pdf.gz").resolve())}
    guide = next(n for n in corpus.nodes if n.document_id == "guide.md.gz")
    assert guide.metadata["section"] == "Guide > Install" and "three questions" in guide.text


def test_a_gzip_bomb_and_a_broken_gzip_are_issues_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "doc"
    _gzipped(folder / "bomb.txt.gz", b"\0" * (3 << 20))  # 3 MB of zeros in a few KB
    (folder / "broken.pdf.gz").write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    _gzipped(folder / "fine.md.gz", GUIDE.encode())
    limits = ArchiveLimits(max_member_bytes=2 << 20, ratio_floor_bytes=1 << 20)
    corpus = load([folder], "documents", LoadOptions(archive_limits=limits))
    reasons = {Path(i.path).name: i.reason for i in corpus.errors}
    assert "expands past" in reasons["bomb.txt.gz"]
    assert "not a readable gzip file" in reasons["broken.pdf.gz"]
    assert [d.id for d in corpus.documents] == ["fine.md.gz"]
    assert not list(tmp_path.glob("excerpt-gz-*"))
