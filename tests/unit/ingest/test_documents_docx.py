"""Word documents written here with python-docx (footnotes and merged cells with a little XML)
and read back by excerpt.ingest.documents.docx: structure, order, rows, footnotes, errors."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.text.paragraph import Paragraph

from excerpt.errors import CorpusError
from excerpt.ingest._archive import ArchiveLimits
from excerpt.ingest.documents import docx as reader
from excerpt.ingest.documents.blocks import Block

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
FOOTNOTES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:footnotes xmlns:w="{W}">
<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/>
</w:r></w:p></w:footnote>
<w:footnote w:id="7"><w:p><w:r><w:t xml:space="preserve">Issued by the ministry </w:t></w:r>
<w:r><w:t>in 2019.</w:t></w:r></w:p></w:footnote>
<w:footnote w:id="3"><w:p><w:r><w:t>Measured at 20 degrees.</w:t></w:r></w:p></w:footnote>
</w:footnotes>"""


def _refer(paragraph: Paragraph, note_id: int) -> None:
    run = OxmlElement("w:r")
    ref = OxmlElement("w:footnoteReference")
    ref.set(qn("w:id"), str(note_id))
    run.append(ref)
    paragraph._p.append(run)


def _add_footnotes(document: docx.document.Document) -> None:
    part = Part(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, FOOTNOTES.encode(),
                document.part.package)
    document.part.relate_to(part, RT.FOOTNOTES)


def _merge_down(cell_xml: object) -> None:
    """Mark a cell as continuing the vertical merge of the cell above it."""
    tc_pr = cell_xml.get_or_add_tcPr()  # type: ignore[attr-defined]
    tc_pr.append(OxmlElement("w:vMerge"))


def write_manual(path: Path) -> Path:
    doc = docx.Document()
    doc.core_properties.title = "Pump Manual"
    doc.core_properties.author = "Ada Engineer"
    doc.add_paragraph("Read this first.")
    doc.add_heading("Installation", level=1)
    intro = doc.add_paragraph("Mount the pump on a level base.")
    _refer(intro, 7)
    doc.add_paragraph("Check the seals.")
    doc.add_heading("Wiring", level=2)
    doc.add_paragraph("Connect the earth first", style="List Bullet")
    doc.add_paragraph("then the live wire", style="List Bullet 2")
    doc.add_paragraph("Switch off the mains", style="List Number")
    doc.add_paragraph("Open the cover", style="List Number")
    table = doc.add_table(rows=3, cols=3)
    for r, row in enumerate([("Model", "Flow", "Power"), ("P-10", "10 l/min", "0.5 kW"),
                             ("", "12 l/min", "0.7 kW")]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    table.cell(0, 1).merge(table.cell(0, 2))  # one cell over two columns
    table.cell(0, 1).text = "Rating"
    table.cell(2, 0)._tc.clear_content()
    table.cell(2, 0)._tc.append(OxmlElement("w:p"))
    _merge_down(table.cell(2, 0)._tc)
    table.rows[1].cells[0]._tc.get_or_add_tcPr().append(_restart())
    note_par = table.cell(1, 2).paragraphs[0]
    _refer(note_par, 3)
    doc.add_heading("Care", level=1)
    doc.add_paragraph("Clean the filter monthly.")
    _add_footnotes(doc)
    doc.save(str(path))
    return path


def _restart() -> object:
    merge = OxmlElement("w:vMerge")
    merge.set(qn("w:val"), "restart")
    return merge


def test_headings_paragraphs_lists_in_order(tmp_path: Path) -> None:
    doc = reader.read(write_manual(tmp_path / "pump.docx"), "pump.docx")
    assert doc.title == "Pump Manual"
    assert doc.metadata == {"format": "docx", "author": "Ada Engineer"}
    kinds = [(b.kind, b.level, b.text) for b in doc.blocks]
    assert kinds[:4] == [
        ("paragraph", 0, "Read this first."),
        ("heading", 1, "Installation"),
        ("paragraph", 0, "Mount the pump on a level base.[1]"),
        ("footnote", 0, "[1] Issued by the ministry in 2019."),
    ]
    assert ("heading", 2, "Wiring") in kinds
    items = [(b.level, b.text) for b in doc.blocks if b.kind == "list_item"]
    assert items == [(0, "Connect the earth first"), (1, "then the live wire"),
                     (0, "1. Switch off the mains"), (0, "2. Open the cover")]
    assert kinds[-2:] == [("heading", 1, "Care"), ("paragraph", 0, "Clean the filter monthly.")]


def test_table_rows_merged_cells_once_and_footnote_after_row(tmp_path: Path) -> None:
    """A cell spanning two columns is one w:tc: its text once (python-docx's row.cells would
    give it twice); the continuation of a vertical merge adds nothing."""
    doc = reader.read(write_manual(tmp_path / "pump.docx"), "pump.docx")
    texts = [b.text for b in doc.blocks]
    rows = [b.text for b in doc.blocks if b.kind == "table_row"]
    assert rows == ["Model | Rating", "P-10 | 10 l/min | 0.5 kW[2]", "12 l/min | 0.7 kW"]
    after = texts.index("P-10 | 10 l/min | 0.5 kW[2]") + 1
    assert texts[after] == "[2] Measured at 20 degrees."


def test_numbered_headings_get_their_numbers(tmp_path: Path) -> None:
    """Heading numbers drawn by Word from numbering.xml are put in the text (for 'section 2.1')."""
    doc = docx.Document()
    numbering = doc.part.numbering_part.element
    abstract = OxmlElement("w:abstractNum")
    abstract.set(qn("w:abstractNumId"), "90")
    for ilvl, text in ((0, "%1"), (1, "%1.%2")):
        lvl = OxmlElement("w:lvl")
        lvl.set(qn("w:ilvl"), str(ilvl))
        for tag, value in (("w:start", "1"), ("w:numFmt", "decimal"), ("w:lvlText", text)):
            child = OxmlElement(tag)
            child.set(qn("w:val"), value)
            lvl.append(child)
        abstract.append(lvl)
    numbering.insert(0, abstract)
    num = OxmlElement("w:num")
    num.set(qn("w:numId"), "90")
    ref = OxmlElement("w:abstractNumId")
    ref.set(qn("w:val"), "90")
    num.append(ref)
    numbering.append(num)
    for level, text in ((1, "Scope"), (1, "Requirements"), (2, "Materials"), (2, "Tests"),
                        (1, "Records")):
        heading = doc.add_heading(text, level=level)
        num_pr = heading._p.get_or_add_pPr().get_or_add_numPr()
        num_pr.get_or_add_ilvl().val = level - 1
        num_pr.get_or_add_numId().val = 90
    doc.save(str(tmp_path / "spec.docx"))
    read = reader.read(tmp_path / "spec.docx", "spec.docx")
    assert [(b.level, b.text) for b in read.blocks] == [
        (1, "1 Scope"), (1, "2 Requirements"), (2, "2.1 Materials"), (2, "2.2 Tests"),
        (1, "3 Records")]
    assert read.title == "1 Scope"  # no title in the core properties: the first heading


def test_outline_level_makes_a_heading(tmp_path: Path) -> None:
    doc = docx.Document()
    para = doc.add_paragraph("Annex A")
    outline = OxmlElement("w:outlineLvl")
    outline.set(qn("w:val"), "1")
    para._p.get_or_add_pPr().append(outline)
    doc.add_paragraph("Body.")
    doc.save(str(tmp_path / "a.docx"))
    blocks = reader.read(tmp_path / "a.docx", "a.docx").blocks
    assert blocks == [Block("heading", "Annex A", level=2), Block("paragraph", "Body.")]


def test_not_a_docx_is_a_clear_error(tmp_path: Path) -> None:
    text = tmp_path / "notes.docx"
    text.write_text("just text")
    with pytest.raises(CorpusError, match=r"notes\.docx.*not a Word document"):
        reader.read(text, "notes.docx")
    other = tmp_path / "sheet.docx"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(CorpusError, match=r"sheet\.docx: not a Word document"):
        reader.read(other, "sheet.docx")
    assert not reader.looks_like(text) and not reader.looks_like(other)


def test_corrupt_docx_is_a_clear_error(tmp_path: Path) -> None:
    good = write_manual(tmp_path / "good.docx")
    assert reader.looks_like(good)
    data = good.read_bytes()
    broken = tmp_path / "broken.docx"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match=r"broken\.docx"):
        reader.read(broken, "broken.docx")
    with zipfile.ZipFile(good) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    half = tmp_path / "half.docx"
    with zipfile.ZipFile(half, "w") as archive:
        for name, data in members.items():
            cut = name == "word/document.xml"
            archive.writestr(name, data[: len(data) // 2] if cut else data)
    with pytest.raises(CorpusError, match=r"half\.docx: not a readable Word document"):
        reader.read(half, "half.docx")


def test_zip_bomb_refused_before_python_docx(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"<a/>")
        archive.writestr("word/media/zeros.bin", b"\0" * (4 << 20))
    limits = ArchiveLimits(max_member_bytes=1 << 20)
    with pytest.raises(CorpusError, match=r"bomb\.docx: word/media/zeros\.bin: refused"):
        reader.read(bomb, "bomb.docx", limits=limits)


def test_empty_document_is_an_error(tmp_path: Path) -> None:
    doc = docx.Document()
    doc.add_paragraph("   ")
    doc.save(str(tmp_path / "empty.docx"))
    with pytest.raises(CorpusError, match=r"empty\.docx: no text"):
        reader.read(tmp_path / "empty.docx", "empty.docx")


ENDNOTES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:endnotes xmlns:w="{W}">
<w:endnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:endnote>
<w:endnote w:id="1"><w:p><w:r><w:t>See the annex.</w:t></w:r></w:p></w:endnote>
</w:endnotes>"""


def _run(text: str, tag: str = "w:t") -> object:
    run = OxmlElement("w:r")
    t = OxmlElement(tag)
    t.text = text
    run.append(t)
    return run


def test_links_kept_revisions_fields_and_toc_left_out(tmp_path: Path) -> None:
    """A hyperlink's text is text; deleted revisions, field codes and the TOC's own
    paragraphs (page numbers of headings) are not; endnotes come after their paragraph."""
    doc = docx.Document()
    doc.add_paragraph("Report", style="Title")
    toc = doc.styles.add_style("TOC 1", WD_STYLE_TYPE.PARAGRAPH)
    doc.add_paragraph("Scope ........ 3", style=toc)
    para = doc.add_paragraph("See ")
    link = OxmlElement("w:hyperlink")
    link.append(_run("the vendor site"))
    para._p.append(link)
    deleted = OxmlElement("w:del")
    deleted.append(_run("OLD WORDING", "w:delText"))
    para._p.append(deleted)
    para._p.append(_run(" PAGE \\* MERGEFORMAT", "w:instrText"))
    para._p.append(_run(" for details."))
    end = OxmlElement("w:r")
    ref = OxmlElement("w:endnoteReference")
    ref.set(qn("w:id"), "1")
    end.append(ref)
    para._p.append(end)
    part = Part(PackURI("/word/endnotes.xml"), CT.WML_ENDNOTES, ENDNOTES.encode(),
                doc.part.package)
    doc.part.relate_to(part, RT.ENDNOTES)
    doc.save(str(tmp_path / "r.docx"))
    read = reader.read(tmp_path / "r.docx", "r.docx")
    assert read.blocks == [Block("heading", "Report", level=1),
                           Block("paragraph", "See the vendor site for details.[i]"),
                           Block("footnote", "[i] See the annex.")]
    assert read.title == "Report"


PANDOC_SOURCE = """---
title: Field Guide
author: Kim Writer
---

# Setup

Install the tool[^1] and run it.

1. First step
2. Second step
    a. sub step
3. Third step

- bullet
    - nested bullet

| Name | Size |
|------|------|
| a    | 1    |

[^1]: Version 2 or later.
"""


def test_document_written_by_pandoc(tmp_path: Path) -> None:
    """A second writer (pandoc: its own numbering, footnotes and styles), not python-docx."""
    pandoc = shutil.which("pandoc")
    if pandoc is None:
        pytest.skip("pandoc not installed (apt-get install pandoc): the test of a .docx written "
                    "by another program than python-docx")
    (tmp_path / "guide.md").write_text(PANDOC_SOURCE)
    subprocess.run([pandoc, "guide.md", "-o", "guide.docx"], cwd=tmp_path, check=True,
                   timeout=60)
    doc = reader.read(tmp_path / "guide.docx", "guide.docx")
    assert doc.title == "Field Guide" and doc.metadata["author"] == "Kim Writer"
    assert [(b.kind, b.level, b.text) for b in doc.blocks if b.text != "Kim Writer"] == [
        ("heading", 1, "Field Guide"), ("heading", 1, "Setup"),
        ("paragraph", 0, "Install the tool[1] and run it."),
        ("footnote", 0, "[1] Version 2 or later."),
        ("list_item", 0, "1. First step"), ("list_item", 0, "2. Second step"),
        ("list_item", 1, "a. sub step"), ("list_item", 0, "3. Third step"),
        ("list_item", 0, "bullet"), ("list_item", 1, "nested bullet"),
        ("table_row", 0, "Name | Size"), ("table_row", 0, "a | 1")]


def test_custom_style_based_on_a_heading_is_that_heading(tmp_path: Path) -> None:
    doc = docx.Document()
    custom = doc.styles.add_style("Chapter Head", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = doc.styles["Heading 2"]
    doc.add_paragraph("Pumps", style=custom)
    doc.add_paragraph("Text.")
    doc.save(str(tmp_path / "c.docx"))
    assert reader.read(tmp_path / "c.docx", "c.docx").blocks == [
        Block("heading", "Pumps", level=2), Block("paragraph", "Text.")]
