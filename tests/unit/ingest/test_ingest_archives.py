"""Zip archives (code bundles, HWPX books) are read within limits: bombs, zip-slip names, other
compressions and damaged archives are refused with a CorpusError naming the file and member,
never a raw zipfile, zlib or XML exception."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.bombs import BUNDLE_CHUNKS as CHUNKS
from tests.bombs import BUNDLE_META as META
from tests.bombs import Member, write_bzip2_bundle, write_zip

from excerpt.engine import Engine
from excerpt.errors import CorpusError
from excerpt.ingest._archive import MIB, ArchiveLimits
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.code.bundle import load_code_bundle
from excerpt.ingest.regulations.loader import load_hwpx
from excerpt.settings import Settings

SECTION = "Contents/section0.xml"
GOOD_SECTION = (b'<hs:sec xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section" '
                b'xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph"><hp:p><hp:run>'
                b"<hp:t>x</hp:t></hp:run></hp:p></hs:sec>")


def _bundle(tmp: Path, *members: Member) -> Callable[[LoadOptions], object]:
    path = write_zip(tmp / "bundle.zip", [META, *members])
    return lambda options: load_code_bundle([path], options)


def _hwpx(tmp: Path, *members: Member) -> Callable[[LoadOptions], object]:
    path = write_zip(tmp / "book.hwpx", list(members))
    return lambda options: load_hwpx([path], options)


@pytest.mark.parametrize(("make", "member"), [
    (_bundle, CHUNKS), (_hwpx, SECTION)], ids=["bundle", "hwpx"])
@pytest.mark.parametrize(("zeros", "limits", "message"), [
    # the bomb: a 1.6 MB file, a 1.5 GB member
    (1536, ArchiveLimits(), r"expands to over 512 MB \(setting archive_max_member_mb\)"),
    # under the member cap, but no real text compresses 1000:1
    (24, ArchiveLimits(), r"compressed \d+:1, over 200:1"),
    (6, ArchiveLimits(max_member_bytes=4 * MIB), "expands to over 4 MB"),
])
def test_bombs_are_refused_before_they_expand(
        tmp_path: Path, make: Callable[..., Callable[[LoadOptions], object]], member: str,
        zeros: int, limits: ArchiveLimits, message: str) -> None:
    load = make(tmp_path, Member(member, zeros_mib=zeros))
    with pytest.raises(CorpusError, match=message) as info:
        load(LoadOptions(archive_limits=limits))
    assert str(tmp_path) in str(info.value) and member in str(info.value)


def test_a_header_that_understates_the_size_is_caught(tmp_path: Path) -> None:
    """The header claims 1 KB; zipfile stops there and the CRC fails: refused, not expanded."""
    load = _hwpx(tmp_path, Member(SECTION, zeros_mib=64, declared_size=1024))
    with pytest.raises(CorpusError, match=r"section0\.xml: damaged member \(Bad CRC-32"):
        load(LoadOptions())


def test_the_whole_archive_is_capped_too(tmp_path: Path) -> None:
    header = Member("Contents/header.xml", b"<a>" + b" " * (3 * MIB) + b"</a>")
    load = _hwpx(tmp_path, header, Member(SECTION, GOOD_SECTION + b" " * (3 * MIB)))
    with pytest.raises(CorpusError, match=r"section0\.xml: refused: the archive expands to over"):
        load(LoadOptions(archive_limits=ArchiveLimits(max_total_bytes=5 * MIB)))


@pytest.mark.parametrize("name", ["../evil.json", "R/../../evil.json", "/etc/evil.json",
                                  "C:/evil.json", "..\\evil.json"])
def test_zip_slip_names_are_refused(tmp_path: Path, name: str) -> None:
    load = _bundle(tmp_path, Member(name, b"{}"))
    with pytest.raises(CorpusError, match="leaves the archive"):
        load(LoadOptions())


def test_other_compressions_are_refused(tmp_path: Path) -> None:
    """zipfile decompresses bzip2 and LZMA without an output bound."""
    path = write_bzip2_bundle(tmp_path / "bundle.zip")
    with pytest.raises(CorpusError, match=r"chunks\.json: refused: compression method 12"):
        load_code_bundle([path])


def _truncated(tmp: Path) -> Path:
    good = write_zip(tmp / "full.zip", [META, Member(CHUNKS, b"[]")])
    path = tmp / "cut.zip"
    path.write_bytes(good.read_bytes()[:60])
    return path


def _corrupted(tmp: Path, name: str, file: str = "bad.zip") -> Path:
    """A zip whose member's deflate stream is garbage."""
    path = write_zip(tmp / file, [META, Member(name, b"x" * 4000)])
    data = bytearray(path.read_bytes())
    start = data.index(name.encode()) + len(name)
    data[start : start + 20] = b"\xff" * 20
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(("make", "message"), [
    (lambda t: t.joinpath("x.zip").write_bytes(b"not a zip") and t / "x.zip",
     "not a code bundle: not a readable zip archive"),
    (_truncated, "not a code bundle: not a readable zip archive"),
    (lambda t: _corrupted(t, CHUNKS), r"chunks\.json: damaged member"),
    (lambda t: write_zip(t / "other.zip", [Member("a.txt", b"hi")]), "not a code bundle"),
])
def test_malformed_bundles_name_the_file(tmp_path: Path, make: Callable[[Path], Path],
                                         message: str) -> None:
    path = make(tmp_path)
    with pytest.raises(CorpusError, match=message) as info:
        load_code_bundle([path])
    assert str(path) in str(info.value)


@pytest.mark.parametrize(("members", "message"), [
    ([], "no Contents/section"),
    ([Member("Contents/content.hpf", b"<opf:package")], r"content\.hpf: malformed XML"),
    ([Member(SECTION, b"<hs:sec><hp:p>")], r"section0\.xml: malformed XML"),
    ([Member(SECTION, GOOD_SECTION), Member("Contents/header.xml", b"<hh:head>")],
     r"header\.xml: malformed XML"),
    ([Member(SECTION, b"\xff\xfe<\x00")], r"section0\.xml: malformed XML"),
])
def test_malformed_hwpx_names_the_file_and_member(tmp_path: Path, members: list[Member],
                                                  message: str) -> None:
    path = write_zip(tmp_path / "book.hwpx", [Member("mimetype", b"x"), *members])
    with pytest.raises(CorpusError, match=message) as info:
        load_hwpx([path])
    assert str(path) in str(info.value)


def test_a_damaged_hwpx_member_is_a_corpus_error(tmp_path: Path) -> None:
    path = _corrupted(tmp_path, SECTION, "bad.hwpx")
    with pytest.raises(CorpusError, match=r"section0\.xml: damaged member"):
        load_hwpx([path])


def test_settings_set_the_limits(tmp_path: Path, shared_data: Callable[..., Path]) -> None:
    """The real book's largest member is 40 MB at 17:1: it imports under the defaults (see
    test_ingest_hwpx) and is refused under a 16 MB cap, with the setting named."""
    book = shared_data("regulations", "dongeui_regulations_9-343_20250909.hwpx")
    engine = Engine(tmp_path / "home", settings=Settings().with_(archive_max_member_mb=16))
    with pytest.raises(CorpusError, match=r"section0\.xml: refused: expands to over 16 MB"):
        engine.ingest(book, embedder="none")
    assert engine.store.snapshots() == []
