"""HWPX: text extraction (document order, tables, line breaks, running headers, notes,
numbering) and regulation books read from HWPX as their text export is read.

The hand-built packages below copy the layout of the Dong-eui regulation book's 9-343 edition
(``Contents/section0.xml``): each regulation's page header (``hp:header`` in a ``hp:ctrl``)
repeats ``name  code～`` and a rule line inside the paragraph after the title; tables sit in
a paragraph of their own; 항 are split by ``hp:lineBreak``; bullets come from paragraph styles.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from excerpt.errors import CorpusError
from excerpt.ingest.detect import detect_format, load
from excerpt.ingest.regulations.hwpx import hwpx_paragraphs
from excerpt.ingest.regulations.loader import load_hwpx, load_regulations

NS = ('xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph" '
      'xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section"')
HH = 'xmlns:hh="http://www.hancom.co.kr/hwpml/2011/head"'
HPF = ('<opf:package xmlns:opf="http://www.idpf.org/2007/opf/"><opf:manifest>'
       '<opf:item id="s1" href="Contents/section1.xml"/><opf:item id="s0" '
       'href="Contents/section0.xml"/></opf:manifest><opf:spine><opf:itemref idref="s0"/>'
       '<opf:itemref idref="s1"/></opf:spine></opf:package>')
LATER = ("regulations", "dongeui_regulations_9-343_20250909.hwpx")


def para(*runs: str, style: str = "0") -> str:
    body = "".join(f"<hp:run><hp:t>{escape(r)}</hp:t></hp:run>" for r in runs)
    return f'<hp:p paraPrIDRef="{style}">{body}</hp:p>'


def table(*rows: list[str]) -> str:
    """A table of one-paragraph cells, as the run that holds it."""
    cells = "".join("<hp:tr>" + "".join(f"<hp:tc><hp:subList>{para(c)}</hp:subList></hp:tc>"
                                         for c in row) + "</hp:tr>" for row in rows)
    return f"<hp:run><hp:tbl>{cells}</hp:tbl></hp:run>"


def running_header(*lines: str) -> str:
    """The page header control the book puts in the paragraph after a regulation's title."""
    inner = "".join(para(line) for line in lines)
    return (f'<hp:p paraPrIDRef="0"><hp:run><hp:ctrl><hp:header><hp:subList>{inner}'
            "</hp:subList></hp:header></hp:ctrl></hp:run><hp:run><hp:t/></hp:run></hp:p>")


def section(body: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><hs:sec {NS}>{body}</hs:sec>'


def make(tmp: Path, files: dict[str, str], name: str = "doc.hwpx") -> Path:
    path = tmp / name
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in files.items():
            zf.writestr(member, text)
    return path


def one_section(tmp: Path, body: str, header: str | None = None) -> Path:
    files = {"Contents/section0.xml": section(body)}
    if header is not None:
        files["Contents/header.xml"] = header
    return make(tmp, files)


# --- text extraction ----------------------------------------------------------------------------


def test_paragraphs_in_spine_order_with_tables(tmp_path: Path) -> None:
    anchored = "<hp:p>" + table(["셀 하나"]) + "</hp:p>"
    tabbed = "<hp:p><hp:run><hp:t>제1조<hp:tab/>(목적)<hp:lineBreak/>둘째 줄</hp:t></hp:run></hp:p>"
    path = make(tmp_path, {
        "Contents/content.hpf": HPF,
        "Contents/section0.xml": section(para("교원인사규정") + tabbed + anchored),
        "Contents/section1.xml": section(para("부칙", " 이 규정은 시행한다.")),
    })
    # An empty paragraph holding a table: a blank line, the cells, its (empty) end.
    assert list(hwpx_paragraphs(path)) == ["교원인사규정", "제1조\t(목적)\n둘째 줄", "", "셀 하나",
                                           "", "부칙 이 규정은 시행한다."]


def test_text_around_a_table_keeps_document_order(tmp_path: Path) -> None:
    body = ("<hp:p><hp:run><hp:t>[별표 1] 수여학위명</hp:t></hp:run>"
            + table(["과정", "학위"], ["석사", "문학석사"])
            + "<hp:run><hp:t>(비고) 끝</hp:t></hp:run></hp:p>" + para("다음 문단"))
    assert list(hwpx_paragraphs(one_section(tmp_path, body))) == [
        "[별표 1] 수여학위명", "과정", "학위", "석사", "문학석사", "(비고) 끝", "다음 문단"]


def test_a_table_inside_a_table_cell(tmp_path: Path) -> None:
    inner = "<hp:p><hp:run><hp:t>바깥 셀</hp:t></hp:run>" + table(["안쪽"]) + "</hp:p>"
    body = ("<hp:p><hp:run><hp:tbl><hp:tr><hp:tc><hp:subList>" + inner
            + "</hp:subList></hp:tc></hp:tr></hp:tbl></hp:run></hp:p>")
    assert list(hwpx_paragraphs(one_section(tmp_path, body))) == ["", "바깥 셀", "안쪽", "", ""]


def test_running_headers_and_footers_are_left_out(tmp_path: Path) -> None:
    footer = ('<hp:p><hp:run><hp:ctrl><hp:footer><hp:subList>' + para("- 1 -")
              + "</hp:subList></hp:footer></hp:ctrl><hp:t>본문</hp:t></hp:run></hp:p>")
    body = (para("교원인사규정") + running_header("교원인사규정  3—1—5～", "\U000f080f" * 5)
            + para("제1장  총  칙") + footer)
    assert list(hwpx_paragraphs(one_section(tmp_path, body))) == [
        "교원인사규정", "", "제1장  총  칙", "본문"]


def test_notes_are_inline_and_special_spaces_are_spaces(tmp_path: Path) -> None:
    note = ('<hp:ctrl><hp:footNote><hp:subList><hp:p><hp:run><hp:t> 「의료법」 제7조 관련'
            "</hp:t></hp:run></hp:p></hp:subList></hp:footNote></hp:ctrl>")
    body = (f"<hp:p><hp:run><hp:t>법정 교과목</hp:t>{note}</hp:run></hp:p>"
            "<hp:p><hp:run><hp:t>②<hp:nbSpace/>협의회는<hp:fwSpace/>의결한다."
            '<hp:markpenBegin color="#FFFFFF"/>강조<hp:markpenEnd/></hp:t></hp:run></hp:p>')
    assert list(hwpx_paragraphs(one_section(tmp_path, body))) == [
        "법정 교과목 「의료법」 제7조 관련", "② 협의회는 의결한다.강조"]


HEADER = f"""<?xml version="1.0" encoding="UTF-8"?><hh:head {HH}><hh:refList>
<hh:numberings>
 <hh:numbering id="2" start="1">
  <hh:paraHead start="1" level="1" numFormat="DIGIT">^1.</hh:paraHead>
  <hh:paraHead start="1" level="2" numFormat="HANGUL_SYLLABLE">^2.</hh:paraHead>
  <hh:paraHead start="1" level="3" numFormat="CIRCLED_DIGIT">^3</hh:paraHead>
 </hh:numbering>
 <hh:numbering id="15" start="0"><hh:paraHead start="1" level="1" numFormat="DIGIT">*</hh:paraHead>
 </hh:numbering>
</hh:numberings>
<hh:bullets><hh:bullet id="1" char="-"/><hh:bullet id="3" char="&#61607;"/></hh:bullets>
<hh:paraProperties>
 <hh:paraPr id="0"><hh:heading type="NONE" idRef="0" level="0"/></hh:paraPr>
 <hh:paraPr id="10"><hh:heading type="NUMBER" idRef="2" level="0"/></hh:paraPr>
 <hh:paraPr id="11"><hh:heading type="NUMBER" idRef="2" level="1"/></hh:paraPr>
 <hh:paraPr id="12"><hh:heading type="NUMBER" idRef="2" level="2"/></hh:paraPr>
 <hh:paraPr id="13"><hh:heading type="NUMBER" idRef="15" level="0"/></hh:paraPr>
 <hh:paraPr id="20"><hh:heading type="BULLET" idRef="1" level="0"/></hh:paraPr>
 <hh:paraPr id="21"><hh:heading type="BULLET" idRef="3" level="0"/></hh:paraPr>
 <hh:paraPr id="30"><hh:heading type="OUTLINE" idRef="0" level="0"/></hh:paraPr>
</hh:paraProperties></hh:refList></hh:head>"""


def test_numbering_and_bullets_from_paragraph_styles(tmp_path: Path) -> None:
    body = "".join([
        para("목적", style="10"), para("정년", style="11"), para("비정년", style="11"),
        para("세부", style="12"), para("범위", style="10"), para("하위", style="11"),
        para("상세 기술", style="13"), para("교수자 태도", style="21"),
        para("교수역량인증", style="20"), para("개요", style="30"), para("본문"),
    ])
    assert list(hwpx_paragraphs(one_section(tmp_path, body, HEADER))) == [
        "1. 목적", "가. 정년", "나. 비정년", "① 세부", "2. 범위", "가. 하위", "* 상세 기술",
        "■ 교수자 태도", "- 교수역량인증", "개요", "본문"]


def test_sections_by_number_without_a_package_file(tmp_path: Path) -> None:
    path = make(tmp_path, {f"Contents/section{i}.xml": section(para(f"s{i}"))
                           for i in (10, 2, 1)})
    assert list(hwpx_paragraphs(path)) == ["s1", "s2", "s10"]


@pytest.mark.parametrize(("files", "message"), [
    ({"mimetype": "x"}, "no Contents/section"),
    ({"Contents/section0.xml": "<hs:sec><hp:p>"}, r"section0\.xml: malformed XML"),
    ({"Contents/section0.xml": section(para("x")), "Contents/header.xml": "<hh:head>"},
     r"header\.xml: malformed XML"),
])
def test_bad_files(tmp_path: Path, files: dict[str, str], message: str) -> None:
    with pytest.raises(CorpusError, match=message):
        list(hwpx_paragraphs(make(tmp_path, files)))
    (tmp_path / "plain.hwpx").write_text("not a zip")
    with pytest.raises(CorpusError, match="not a readable zip"):
        list(hwpx_paragraphs(tmp_path / "plain.hwpx"))


# --- regulation books in HWPX -------------------------------------------------------------------

# The snippet book of test_ingest_regulations as its text export has it, line by line.
BOOK_LINES = [
    "규   정   집", "", "차   례", "", "제1편  일반", "",
    "\t\t교원인사규정\t1-0-1", "\t\t강사료지급규정\t1-0-2", "찾아보기", "<소관부서별>", "",
    "교무처", "\t교무팀", "\t\t교원인사규정\t1-0-1", "\t\t강사료지급규정\t1-0-2", "",
    "제1편", "", "교원인사규정\t1-0-1", "강사료지급규정\t1-0-2", "",
]


def regulation_paragraphs() -> str:
    """교원인사규정 and 강사료지급규정 laid out as the 9-343 HWPX lays them out."""
    articles = ("<hp:p><hp:run><hp:t>제2조 (직위)</hp:t></hp:run><hp:run><hp:t> ① 교원은 "
                "교수로 한다.<hp:lineBreak/>② 제1조에 따른다.</hp:t></hp:run></hp:p>")
    fee_table = "<hp:p>" + table(["구분", "금액"], ["시간당", "50,000원"]) + "</hp:p>"
    return "".join([
        para("교원인사규정"), running_header("교원인사규정  1—0—1～", "\U000f080f" * 3),
        para("제1장  총  칙"), para("제1조 (목적)", " 이 규정은 교원의 인사를 정한다."), articles,
        para("제3조 (보수) 보수는 「강사료지급규정」 제2조에 따른다."),
        para(""), para("부  칙"), para("1. 이 규정은 2000년 8월 1일부터 시행한다."),
        para("강사료지급규정"), running_header("강사료지급규정  1—0—2～"),
        para("제1조 (목적) 이 규정은 강사료를 정한다."),
        para("제2조 (지급) 강사료는 별표 1과 같다. <개정 2025. 9. 1.>"), para(""),
        para("부  칙"), para("1. 이 규정은 2010년 3월 1일부터 시행한다."),
        para("[별표 1] 강사료"), fee_table,
    ])


def test_a_regulation_book_in_hwpx_reads_like_its_text_export(tmp_path: Path) -> None:
    book = one_section(tmp_path, "".join(para(line) for line in BOOK_LINES)
                       + regulation_paragraphs())
    exported = "\n".join(hwpx_paragraphs(book))
    assert "—" not in exported  # no running header
    (tmp_path / "book.txt").write_text(exported, encoding="utf-8")
    from_hwpx, from_text = load_hwpx([book]), load_regulations([tmp_path / "book.txt"])
    assert [n.id for n in from_hwpx.nodes] == [
        "강사료지급규정 별표 1", "강사료지급규정 부칙", "강사료지급규정 제1조",
        "강사료지급규정 제2조", "교원인사규정 부칙", "교원인사규정 제1조", "교원인사규정 제2조",
        "교원인사규정 제3조"]
    for a, b in zip(from_hwpx.nodes, from_text.nodes, strict=True):
        assert (a.id, a.title, a.text, a.metadata) == (b.id, b.title, b.text, b.metadata)
    assert [e.to_id for e in from_hwpx.edges] == [e.to_id for e in from_text.edges]
    assert from_hwpx.errors == []
    second = {n.id: n for n in from_hwpx.nodes}["교원인사규정 제2조"]
    assert second.text == "제2조 (직위) ① 교원은 교수로 한다.\n② 제1조에 따른다."
    assert second.title == "교원인사규정 제2조 (직위)"
    assert {k: second.metadata[k] for k in ("regulation", "article", "rule_code", "chapter",
                                            "caption", "kind")} == {
        "regulation": "교원인사규정", "article": "제2조", "rule_code": "1-0-1",
        "chapter": "제1장 총칙", "caption": "(직위)", "kind": "article"}
    docs = {d.id: d.metadata for d in from_hwpx.documents}
    assert docs["교원인사규정"]["department_path"] == ["교무처", "교무팀"]
    assert docs["교원인사규정"]["history"] == ["2000년 8월 1일 제정"]
    assert "50,000원" in {n.id: n for n in from_hwpx.nodes}["강사료지급규정 별표 1"].text


def test_parse_issues_are_reported_with_their_line(tmp_path: Path) -> None:
    body = (para("시험규정") + running_header("시험규정  1—0—1～") + para("제1조 (목적) 목적.")
            + para("제3조 (셋) 셋.") + para("제2조 (둘) 둘.") + para("제3조 2 (넷) 넷."))
    corpus = load_hwpx([one_section(tmp_path, body)])
    assert [n.id for n in corpus.nodes] == ["시험규정 제1조", "시험규정 제3조", "시험규정 제3조의2"]
    # Lines of the extracted text: the title, the header's paragraph (blank), then one each.
    assert [(e.line, "out of order" in e.reason, "irregular" in e.reason)
            for e in corpus.errors] == [(5, True, False), (6, False, True)]
    assert all(e.path.endswith("doc.hwpx") for e in corpus.errors)


def test_an_hwpx_that_is_not_a_regulation_book(tmp_path: Path) -> None:
    path = one_section(tmp_path, para("회의록") + para("오늘의 안건은 없다."))
    with pytest.raises(CorpusError, match="only regulation books are read from HWPX"):
        load_hwpx([path])


def test_hwpx_is_detected_and_loaded(tmp_path: Path) -> None:
    book = one_section(tmp_path, "".join(para(line) for line in BOOK_LINES)
                       + regulation_paragraphs())
    assert detect_format([book]) == "hwpx"
    assert detect_format([tmp_path]) == "hwpx"  # a folder of HWPX books
    assert len(load([book], "hwpx").documents) == 2
    assert len(load([tmp_path]).documents) == 2
    (tmp_path / "notes.md").write_text("# notes\n", encoding="utf-8")
    assert detect_format([tmp_path]) == "text"
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"no \.hwpx files"):
        load_hwpx([tmp_path / "empty"])


# --- the later edition of the real book ---------------------------------------------------------


def test_the_later_edition_of_the_book(shared_data: Callable[..., Path]) -> None:
    paragraphs = list(hwpx_paragraphs(shared_data(*LATER)))
    assert len(paragraphs) > 70_000
    assert "교원인사규정\t3-1-5" in paragraphs  # the table of contents line
    assert sum(p.startswith("제1조") for p in paragraphs) > 300  # every regulation has one
    assert not any("—" in p and p.endswith("～") for p in paragraphs)  # no running header
    title = paragraphs.index("교원인사규정")  # its page header no longer stands in between
    assert paragraphs[title + 1] == "제1장  총  칙"
    assert paragraphs[title + 2].startswith("제1조 (목적) 이 규정은 동의대학교")
    assert "■ 대학인재상이해 및 교육철학" in paragraphs  # a bullet drawn from its style
