"""HWPX text extraction: reading order, tables, tabs and line breaks, bad files."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.errors import CorpusError
from excerpt.ingest.hwpx import hwpx_paragraphs

NS = ('xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph" '
      'xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section"')
HPF = ('<opf:package xmlns:opf="http://www.idpf.org/2007/opf/"><opf:manifest>'
       '<opf:item id="s1" href="Contents/section1.xml"/><opf:item id="s0" '
       'href="Contents/section0.xml"/></opf:manifest><opf:spine><opf:itemref idref="s0"/>'
       '<opf:itemref idref="s1"/></opf:spine></opf:package>')


def para(*runs: str) -> str:
    return "<hp:p>" + "".join(f"<hp:run><hp:t>{r}</hp:t></hp:run>" for r in runs) + "</hp:p>"


def section(body: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><hs:sec {NS}>{body}</hs:sec>'


def make(tmp: Path, files: dict[str, str]) -> Path:
    path = tmp / "doc.hwpx"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def test_paragraphs_in_spine_order_with_tables(tmp_path: Path) -> None:
    table = ("<hp:p><hp:run><hp:tbl><hp:tr><hp:tc><hp:subList>" + para("셀 하나")
             + "</hp:subList></hp:tc></hp:tr></hp:tbl></hp:run></hp:p>")
    tabbed = "<hp:p><hp:run><hp:t>제1조<hp:tab/>(목적)<hp:lineBreak/>둘째 줄</hp:t></hp:run></hp:p>"
    path = make(tmp_path, {
        "Contents/content.hpf": HPF,
        "Contents/section0.xml": section(para("교원인사규정") + tabbed + table),
        "Contents/section1.xml": section(para("부칙", " 이 규정은 시행한다.")),
    })
    assert list(hwpx_paragraphs(path)) == ["교원인사규정", "제1조\t(목적)\n둘째 줄", "셀 하나", "",
                                           "부칙 이 규정은 시행한다."]


def test_sections_by_number_without_a_package_file(tmp_path: Path) -> None:
    path = make(tmp_path, {f"Contents/section{i}.xml": section(para(f"s{i}"))
                           for i in (10, 2, 1)})
    assert list(hwpx_paragraphs(path)) == ["s1", "s2", "s10"]


@pytest.mark.parametrize(("files", "message"), [
    ({"mimetype": "x"}, "no Contents/section"),
    ({"Contents/section0.xml": "<hs:sec><hp:p>"}, "malformed XML"),
])
def test_bad_files(tmp_path: Path, files: dict[str, str], message: str) -> None:
    with pytest.raises(CorpusError, match=message):
        list(hwpx_paragraphs(make(tmp_path, files)))
    (tmp_path / "plain.hwpx").write_text("not a zip")
    with pytest.raises(CorpusError, match="not a zip"):
        list(hwpx_paragraphs(tmp_path / "plain.hwpx"))


def test_the_later_edition_of_the_book(shared_data: Callable[..., Path]) -> None:
    path = shared_data("regulations", "dongeui_regulations_9-343_20250909.hwpx")
    paragraphs = list(hwpx_paragraphs(path))
    assert len(paragraphs) > 50_000
    assert "교원인사규정\t3-1-5" in paragraphs  # the table of contents line
    assert sum(p.startswith("제1조") for p in paragraphs) > 300  # every regulation has one
