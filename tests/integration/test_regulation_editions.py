"""Two editions of the Dong-eui regulation book: the 9-340 text export (2025-07-02) and the
9-343 HWPX (2025-09-09), read alike and imported as two snapshots of one source.

What changed between them was read by hand in both files, e.g.:

* 교시및교육목표심의위원회규정 제4조 (임기): ``위원의 임기는 6개월로 하되, 1회에 한하여 연임할 수
  있다.`` became ``위원의 임기는 2년으로 하되, 연임할 수 있다. <개정 2025. 9. 1.>``;
* 동의대학교대학원학칙 제29조 ①: ``대학원위원회의 승인을 거쳐`` inserted (``<개정 2025. 9. 1.>``);
* 학․석사연계과정운영규정 제12조 ①: a 5th item ``대학원 입학허가를 받지 못한 자
  <신설 2025. 8. 1.>``;
* 교원인사규정 제36조의3 (파견) is new (``<조 신설 2025. 9. 1.>``) and cites
  교원연구년제규정 제6조;
* four regulations are new: 인공지능(AI)위원회규정 (4-0-76; part 4's own list says 4-0-78),
  뷰티혁신연구소규정 (5-2-107), 원자핵공학연구소규정 (5-2-108), 차세대정보시스템구축센터규정
  (3-1-136); LINC3.0사업단운영규정 and 구강위생과학연구소규정 were abolished (their articles
  gave way to a notice ``2025년 8월 15일자 폐지 …`` / ``2025년 9월 1일자 폐지 …``);
* 사무분장규정 got a new 제8조 (차세대정보시스템구축센터), so its 제8조..제76조 all shifted.

The loaders run once per module (a few seconds); the full import of both editions through the
engine (Korean analysis of ~6,000 nodes twice, over a minute) is marked slow.  The editions'
diff is also checked on a small book imported the same way.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.ingest.base import LoadedCorpus
from excerpt.ingest.books.editions import diff_snapshots
from excerpt.ingest.regulations.loader import load_hwpx, load_regulations
from excerpt.types import Node, Principal

ADMIN = Principal.admin()

EARLIER = ("regulations", "dongeui_regulations_9-340_20250702.txt")
LATER = ("regulations", "dongeui_regulations_9-343_20250909.hwpx")
STABLE = ["교원인사규정 제15조", "교원인사규정 제36조의2", "동의대학교학칙 제1조",
          "학교법인동의학원정관 제1조", "장학금지급규정 제1조", "장학위원회규정 제1조"]
NEW_REGULATIONS = {"인공지능(AI)위원회규정": "4-0-76", "뷰티혁신연구소규정": "5-2-107",
                   "원자핵공학연구소규정": "5-2-108", "차세대정보시스템구축센터규정": "3-1-136"}
AMENDED = ["교시및교육목표심의위원회규정 제4조", "동의대학교대학원학칙 제29조",
           "학․석사연계과정운영규정 제12조", "직제규정 제8조의2"]


@pytest.fixture(scope="module")
def paths(shared_data: Callable[..., Path]) -> tuple[Path, Path]:
    return shared_data(*EARLIER), shared_data(*LATER)


@pytest.fixture(scope="module")
def editions(paths: tuple[Path, Path]) -> tuple[LoadedCorpus, LoadedCorpus]:
    return load_regulations([paths[0]]), load_hwpx([paths[1]])


def by_id(corpus: LoadedCorpus) -> dict[str, Node]:
    return {n.id: n for n in corpus.nodes}


def comparable(node: Node) -> tuple[str, str, dict[str, object]]:
    """Text, title and metadata but the position (``line``, ``order`` in its regulation)."""
    meta = {k: v for k, v in node.metadata.items() if k not in ("line", "order")}
    return node.text, node.title, meta


# --- the two editions as loaded -----------------------------------------------------------------


def test_counts_are_close(editions: tuple[LoadedCorpus, LoadedCorpus]) -> None:
    earlier, later = editions
    articles = [sum(n.metadata["kind"] == "article" for n in c.nodes) for c in editions]
    assert (len(earlier.documents), articles[0], len(earlier.edges)) == (510, 5189, 1300)
    assert (len(later.documents), articles[1], len(later.edges)) == (514, 5201, 1298)
    assert {d.id for d in later.documents} - {d.id for d in earlier.documents} == set(
        NEW_REGULATIONS)
    assert {d.id for d in earlier.documents} <= {d.id for d in later.documents}
    assert len(later.errors) == 5  # the text edition's 4, and part 4's mistyped code


def test_stable_articles_are_identical(editions: tuple[LoadedCorpus, LoadedCorpus]) -> None:
    earlier, later = (by_id(c) for c in editions)
    for node_id in STABLE:
        assert comparable(earlier[node_id]) == comparable(later[node_id]), node_id
    article = later["교원인사규정 제15조"]
    assert article.title == "교원인사규정 제15조 (승진임용의 제한)"
    assert {k: article.metadata[k] for k in ("regulation", "article", "rule_code", "chapter",
                                             "caption", "kind")} == {
        "regulation": "교원인사규정", "article": "제15조", "rule_code": "3-1-5",
        "chapter": "제3장 승진임용", "caption": "(승진임용의 제한)", "kind": "article"}


def test_most_of_the_book_reads_the_same(editions: tuple[LoadedCorpus, LoadedCorpus]) -> None:
    earlier, later = (by_id(c) for c in editions)
    common = earlier.keys() & later.keys()
    same = sum(earlier[k].text == later[k].text for k in common)
    loose = sum("".join(earlier[k].text.split()) == "".join(later[k].text.split())
                for k in common)
    assert len(common) > 6000
    assert same / len(common) > 0.94  # whitespace aside, only amended nodes differ
    assert len(common) - loose < 150


def test_the_amendments_read_by_hand(editions: tuple[LoadedCorpus, LoadedCorpus]) -> None:
    earlier, later = (by_id(c) for c in editions)
    term = "교시및교육목표심의위원회규정 제4조"
    assert "6개월로 하되, 1회에 한하여 연임할 수 있다." in earlier[term].text
    assert "2년으로 하되, 연임할 수 있다. <개정 2025. 9. 1.>" in later[term].text
    assert "대학원위원회의 승인을 거쳐" in later["동의대학교대학원학칙 제29조"].text
    assert "대학원위원회의 승인을 거쳐" not in earlier["동의대학교대학원학칙 제29조"].text
    assert "5. 대학원 입학허가를 받지 못한 자 <신설 2025. 8. 1.>" in later[
        "학․석사연계과정운영규정 제12조"].text
    assert "교원인사규정 제36조의3" not in earlier
    assert later["교원인사규정 제36조의3"].title == "교원인사규정 제36조의3 (파견)"
    assert ("교원인사규정 제36조의3", "cites", "교원연구년제규정 제6조") in {
        (e.from_id, e.relation, e.to_id) for e in editions[1].edges}
    docs = {d.id: d.metadata for d in editions[1].documents}
    assert {name: docs[name]["rule_code"] for name in NEW_REGULATIONS} == NEW_REGULATIONS
    assert docs["LINC3.0사업단운영규정"]["status"] == "abolished"
    assert docs["구강위생과학연구소규정"]["status"] == "abolished"


# --- the diff of two snapshots, on a small book -------------------------------------------------

TEXT_BOOK = """차   례
\t\t시험규정\t1-0-1
\t\t폐지될규정\t1-0-2
찾아보기

제1편

시험규정\t1-0-1
폐지될규정\t1-0-2

시험규정
제1조 (목적) 이 규정은 시험에 관한 사항을 정한다.
제2조 (임기) 위원의 임기는 6개월로 한다.
제3조 (구성) ① 위원회는 5인으로 구성한다.② 위원장은 총장이 임명한다.

부  칙
1. 이 규정은 2000년 3월 1일부터 시행한다.
폐지될규정
제1조 (목적) 이 규정은 곧 폐지된다.
"""


def hwpx_book(path: Path) -> Path:
    """The later edition: 제2조 amended, 제2조의2 new, 제3조's 항 on lines of their own (a line
    break), 폐지될규정 abolished, a page header after each title, as an HWPX package."""
    lines = TEXT_BOOK.replace("6개월로 한다.", "2년으로 한다. <개정 2025. 9. 1.>")
    lines = lines.replace("제3조", "제2조의2 (간사) 간사를 둔다. <신설 2025. 9. 1.>\n제3조")
    lines = lines.replace("제1조 (목적) 이 규정은 곧 폐지된다.", "2025년 9월 1일자 폐지")
    header = ("<hp:p><hp:run><hp:ctrl><hp:header><hp:subList><hp:p><hp:run><hp:t>{} 1—0—1～"
              "</hp:t></hp:run></hp:p></hp:subList></hp:header></hp:ctrl></hp:run></hp:p>")
    body = []
    for line in lines.split("\n"):
        text = escape(line).replace("한다.② ", "한다.<hp:lineBreak/>② ")
        body.append(f"<hp:p><hp:run><hp:t>{text}</hp:t></hp:run></hp:p>")
        if line in ("시험규정", "폐지될규정"):  # a title
            body.append(header.format(line))
    section = ('<hs:sec xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph" '
               'xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section">' + "".join(body)
               + "</hs:sec>")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("Contents/section0.xml", section)
    return path


def test_the_diff_of_two_snapshots_of_one_source(tmp_path: Path) -> None:
    (tmp_path / "book.txt").write_text(TEXT_BOOK, encoding="utf-8")
    engine = Engine(tmp_path / "home")
    first = engine.ingest(tmp_path / "book.txt", "regs", embedder="none", source="book",
                          snapshot_name="2025-07")
    second = engine.ingest(hwpx_book(tmp_path / "book.hwpx"), "regs", embedder="none",
                           source="book", snapshot_name="2025-09")
    assert first.snapshot_id and second.snapshot_id
    listed = engine.snapshots("regs")["snapshots"]
    assert [(s["source"], s["name"]) for s in listed] == [("book", "2025-07"), ("book", "2025-09")]
    assert [s.snapshot_id for s in engine.store.latest_snapshots("regs")] == [second.snapshot_id]
    diff = diff_snapshots(engine.store, first.snapshot_id, second.snapshot_id, ADMIN)
    assert diff.added == ["시험규정 제2조의2", "폐지될규정"]
    assert diff.removed == ["폐지될규정 제1조"]
    assert diff.changed == ["시험규정 제2조"]
    assert diff.reformatted == ["시험규정 제3조"]  # the line break only
    assert diff.unchanged == 2  # 시험규정 제1조 and 부칙
    assert {d: (v.status, v.added, v.removed, v.changed) for d, v in diff.documents.items()} == {
        "시험규정": ("changed", ["시험규정 제2조의2"], [], ["시험규정 제2조"]),
        "폐지될규정": ("changed", ["폐지될규정"], ["폐지될규정 제1조"], []),
    }
    strict = diff_snapshots(engine.store, first.snapshot_id, second.snapshot_id, ADMIN,
                            ignore_whitespace=False)
    assert strict.changed == ["시험규정 제2조", "시험규정 제3조"] and strict.reformatted == []
    backwards = diff_snapshots(engine.store, second.snapshot_id, first.snapshot_id, ADMIN)
    assert backwards.added == diff.removed and backwards.removed == diff.added
    assert diff.to_json()["counts"] == {"added": 2, "removed": 1, "changed": 1,
                                        "reformatted": 1, "unchanged": 2, "documents": 2}
    other = engine.ingest(tmp_path / "book.txt", "elsewhere", embedder="none")
    with pytest.raises(InputError, match="not of one collection"):
        diff_snapshots(engine.store, first.snapshot_id, str(other.snapshot_id), ADMIN)


def test_the_diff_shows_only_what_the_caller_may_see(tmp_path: Path) -> None:
    (tmp_path / "book.txt").write_text(TEXT_BOOK, encoding="utf-8")
    engine = Engine(tmp_path / "home")
    first = engine.ingest(tmp_path / "book.txt", "regs", embedder="none", source="book")
    second = engine.ingest(hwpx_book(tmp_path / "book.hwpx"), "regs", embedder="none",
                           source="book", acl_tags=["board"])
    assert first.snapshot_id and second.snapshot_id
    board = diff_snapshots(engine.store, first.snapshot_id, second.snapshot_id,
                           Principal(frozenset({"board"})))
    outsider = diff_snapshots(engine.store, first.snapshot_id, second.snapshot_id,
                              Principal.anonymous())
    assert "시험규정 제2조의2" in board.added
    assert outsider.added == [] and outsider.changed == [] and outsider.reformatted == []
    assert set(outsider.removed) == set(engine.store.segment(first.snapshot_id).ids)
    assert all(d.status == "removed" or not d.added for d in outsider.documents.values())
    engine.close()
    args = ["--home", str(tmp_path / "home"), "diff", first.snapshot_id, second.snapshot_id]
    as_board = CliRunner().invoke(cli, [*args, "--acl-tag", "board", "--json"])
    as_outsider = CliRunner().invoke(cli, [*args, "--json"])
    assert as_board.exit_code == 0 and as_outsider.exit_code == 0
    assert json.loads(as_board.output)["added"] == board.added
    assert json.loads(as_outsider.output)["counts"]["added"] == 0
    missing = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "diff", "nope", "x"])
    assert missing.exit_code != 0 and "nope" in missing.output


# --- both editions through the engine -----------------------------------------------------------


@pytest.mark.slow
def test_both_editions_as_snapshots_of_one_source(
    paths: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    engine = Engine(tmp_path_factory.mktemp("editions") / "home")
    first = engine.ingest(paths[0], "reg", embedder="none", source="dongeui-regulations",
                          snapshot_name="9-340")
    second = engine.ingest(paths[1], "reg", fmt="hwpx", embedder="none",
                           source="dongeui-regulations", snapshot_name="9-343")
    assert (first.documents, first.nodes) == (510, 6063)
    assert (second.documents, second.nodes, second.edges) == (514, 6079, 1298)
    assert first.snapshot_id and second.snapshot_id
    assert [s.name for s in engine.store.latest_snapshots("reg")] == ["9-343"]
    diff = diff_snapshots(engine.store, first.snapshot_id, second.snapshot_id, ADMIN)
    for name in NEW_REGULATIONS:
        assert diff.documents[name].status == "added"
    assert set(AMENDED) <= set(diff.changed)
    assert "교원인사규정 제36조의3" in diff.added
    assert not set(STABLE) & set(diff.changed + diff.reformatted)
    linc = diff.documents["LINC3.0사업단운영규정"]
    assert linc.added == ["LINC3.0사업단운영규정"] and len(linc.removed) == 15
    assert len(diff.documents["사무분장규정"].changed) == 70  # 제8조 inserted: all shifted
    assert len(diff.added) == 45 and len(diff.removed) == 29 and len(diff.changed) == 119
