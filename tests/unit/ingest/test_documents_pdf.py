"""The PDF reader on PDFs written here with reportlab (tests/pdfs.py) and on Debian's manuals."""

from __future__ import annotations

import gzip
import re
from collections import Counter
from pathlib import Path

import pytest
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.pdfgen.canvas import Canvas
from tests.pdfs import (
    HEADER,
    REVERSED_LINES,
    TABLE_ROWS,
    write_image_only,
    write_manual,
    write_offset_columns,
    write_reversed_glyphs,
    write_truncated,
)

from excerpt.errors import InputError
from excerpt.ingest.documents.blocks import Block, StructuredDoc
from excerpt.ingest.documents.pdf import looks_like, read


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory) -> StructuredDoc:
    return read(write_manual(tmp_path_factory.mktemp("pdf") / "manual.pdf"), "manual.pdf")


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> StructuredDoc:
    path = tmp_path_factory.mktemp("pdf") / "plain.pdf"
    return read(write_manual(path, outline=False), "plain.pdf")


def _find(doc: StructuredDoc, start: str, kind: str | None = None) -> Block:
    found = [b for b in doc.blocks if b.text.startswith(start) and kind in (None, b.kind)]
    assert len(found) == 1, (start, [b.text for b in doc.blocks])
    return found[0]


def test_every_block_has_its_page_and_label(manual: StructuredDoc) -> None:
    where = {
        "1 Introduction": (1, "i"), "This manual gives": (1, "i"), "2 Two columns": (2, "1"),
        "Beta four": (2, "1"), "Part | Size": (3, "2"), "Ordering notes": (3, "2"),
        "4.1 Support": (4, "3"), "Support is given": (4, "3"),
    }
    for start, (page, label) in where.items():
        block = _find(manual, start)
        assert (block.page, block.page_label) == (page, label), start
    pages = [b.page or 0 for b in manual.blocks]
    assert pages == sorted(pages) and set(pages) == {1, 2, 3, 4}
    assert manual.metadata["format"] == "pdf" and manual.metadata["pages"] == 4


def test_two_columns_are_read_column_by_column(manual: StructuredDoc) -> None:
    texts = [b.text for b in manual.blocks if b.page == 2]
    assert texts == [
        "2 Two columns",
        "Alpha one starts the left column and alpha two carries on below it while alpha three"
        " ends the first paragraph.",
        "Alpha four opens the second paragraph and alpha five closes the left column.",
        "Beta one starts the right column and beta two carries on below it while beta three"
        " ends its first paragraph.",
        "Beta four opens the second paragraph and beta five closes the right column.",
    ]


def test_columns_under_a_title_and_above_full_width_text(tmp_path: Path) -> None:
    doc = read(write_offset_columns(tmp_path / "cols.pdf"), "cols.pdf")
    texts = [b.text for b in doc.blocks]
    assert [t.split()[0] for t in texts] == [
        "Offset", "Alpha", "Alpha", "Beta", "Beta", "A", "Left", "Right"]
    assert texts[-2:] == ["Left after the break sits under the full-width text.",
                          "Right after the break sits beside it."]  # not one line


def test_glyphs_drawn_out_of_order_read_as_words(tmp_path: Path) -> None:
    doc = read(write_reversed_glyphs(tmp_path / "rev.pdf"), "rev.pdf")
    assert [b.text for b in doc.blocks] == [" ".join(REVERSED_LINES)]


def test_outline_entries_are_the_headings(manual: StructuredDoc) -> None:
    headings = [(b.level, b.text) for b in manual.blocks if b.kind == "heading"]
    outline = [h for h in headings if h[1] != "Widgets in Practice"]
    assert outline == [(1, "1 Introduction"), (1, "2 Two columns"), (1, "3 Parts table"),
                       (1, "4 Closing"), (2, "4.1 Support")]
    assert manual.title == "Widgets in Practice"  # no metadata title: the first heading


def test_without_an_outline_font_sizes_and_bold_make_the_headings(plain: StructuredDoc) -> None:
    headings = [(b.level, b.text) for b in plain.blocks if b.kind == "heading"]
    assert headings == [
        (1, "Widgets in Practice"), (2, "1 Introduction"), (2, "2 Two columns"),
        (2, "3 Parts table"), (4, "Ordering notes"), (2, "4 Closing"), (3, "4.1 Support"),
    ]


def test_running_header_footer_and_page_numbers_are_gone(manual: StructuredDoc) -> None:
    for block in manual.blocks:
        assert HEADER not in block.text and "Release 2.0" not in block.text
        assert not re.search(r"Page \d of 4", block.text), block.text


def test_headings_at_the_same_place_on_every_page_are_no_running_header(tmp_path: Path) -> None:
    c = Canvas(str(tmp_path / "parts.pdf"))
    for n in range(1, 5):
        c.setFont("Helvetica", 9)
        c.drawString(72, 800, "Running header")
        c.setFont("Helvetica-Bold", 16)
        c.drawString(72, 760, f"Part {n}")  # in the top margin, same text but its number
        c.setFont("Helvetica", 10)
        c.drawString(72, 700, f"Body text of part {n}.")
        c.showPage()
    c.save()
    doc = read(tmp_path / "parts.pdf", "parts.pdf")
    assert [(b.kind, b.text) for b in doc.blocks if b.page == 3] == [
        ("heading", "Part 3"), ("paragraph", "Body text of part 3.")]


def test_margins_are_measured_in_the_crop_box(tmp_path: Path) -> None:
    c = Canvas(str(tmp_path / "crop.pdf"), pagesize=(612, 1000))
    for n in range(1, 5):
        c.setCropBox((0, 200, 612, 1000))  # the visible page is y 200..1000
        c.setFont("Helvetica", 9)
        c.drawString(72, 980, "Running header text")
        c.drawString(300, 210, str(n))  # the page number, at the visible bottom
        c.setFont("Helvetica", 10)
        c.drawString(72, 900, f"Body line one of page {n}.")
        c.drawString(72, 400, f"Body line low on page {n}.")
        c.showPage()
    c.save()
    doc = read(tmp_path / "crop.pdf", "crop.pdf")
    assert [b.text for b in doc.blocks if b.page == 2] == [
        "Body line one of page 2.", "Body line low on page 2."]


def test_line_end_hyphens_are_repaired_but_real_hyphens_stay(manual: StructuredDoc) -> None:
    text = _find(manual, "This manual gives").text
    assert "practical information about widgets" in text
    assert "A well-known fact" in text
    assert "infor" + "-" not in text and "wellknown" not in text


def test_ruled_table_rows_keep_their_cells(manual: StructuredDoc) -> None:
    rows = [b.text for b in manual.blocks if b.kind == "table_row"]
    assert rows == [" | ".join(row) for row in TABLE_ROWS]
    order = [b.text for b in manual.blocks if b.page == 3]
    assert order.index("The parts are listed below with their sizes.") < order.index(
        "Part | Size | Price") < order.index("Ordering notes")


def test_metadata_title_wins(tmp_path: Path) -> None:
    c = Canvas(str(tmp_path / "t.pdf"))
    c.setTitle("The Real Title")
    c.setFont("Helvetica-Bold", 20)
    c.drawString(72, 700, "Big words")
    c.setFont("Helvetica", 10)
    c.drawString(72, 650, "Body text of the only page.")
    c.save()
    assert read(tmp_path / "t.pdf", "t.pdf").title == "The Real Title"


def test_encrypted_pdf_is_a_clear_error(tmp_path: Path) -> None:
    path = write_manual(tmp_path / "locked.pdf", password="secret")
    with pytest.raises(InputError, match=r"locked\.pdf: .*encrypted.*password"):
        read(path, "locked.pdf")


def test_pdf_locked_only_by_an_owner_password_is_read(tmp_path: Path) -> None:
    owner_only = StandardEncryption("", ownerPassword="owner", canCopy=0)
    doc = read(write_manual(tmp_path / "owner.pdf", password=owner_only), "owner.pdf")
    assert _find(doc, "4.1 Support", "heading").page == 4


def test_pdf_without_text_layer_says_no_ocr(tmp_path: Path) -> None:
    path = write_image_only(tmp_path / "scan.pdf")
    with pytest.raises(InputError, match=r"scan\.pdf: .*has no text layer.*excerpt does no OCR"):
        read(path, "scan.pdf")


def test_pages_without_text_are_listed(tmp_path: Path) -> None:
    c = Canvas(str(tmp_path / "mixed.pdf"))
    c.drawString(72, 700, "The only page with text.")
    c.showPage()
    c.rect(72, 72, 300, 500, fill=1)  # a scanned page looks like this to a text extractor
    c.showPage()
    c.save()
    doc = read(tmp_path / "mixed.pdf", "mixed.pdf")
    assert [(b.page, b.text) for b in doc.blocks] == [(1, "The only page with text.")]
    assert doc.metadata["pages_without_text"] == [2] and doc.metadata["pages"] == 2


def test_truncated_and_corrupt_pdfs_are_clear_errors(tmp_path: Path) -> None:
    whole = write_manual(tmp_path / "whole.pdf")
    cut = write_truncated(tmp_path / "cut.pdf", whole)
    with pytest.raises(InputError, match=r"cut\.pdf: .*truncated"):
        read(cut, "cut.pdf")
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.4\nnot really a pdf\n%%EOF\n")
    with pytest.raises(InputError, match=r"junk\.pdf: .*damaged"):
        read(junk, "junk.pdf")
    text = tmp_path / "text.pdf"
    text.write_text("plain text with a .pdf name")
    with pytest.raises(InputError, match=r"text\.pdf: not a PDF"):
        read(text, "text.pdf")


def test_looks_like_checks_the_magic(tmp_path: Path) -> None:
    assert looks_like(write_manual(tmp_path / "m.pdf"))
    (tmp_path / "n.pdf").write_text("hello")
    assert not looks_like(tmp_path / "n.pdf")
    assert not looks_like(tmp_path / "missing.pdf")


# Real manuals: Debian's maint-guide (DBLaTeX, 63 pages, outline, page labels i..vi, 1..57).
MAINT_GUIDE = Path("/usr/share/doc/maint-guide/maint-guide.en.pdf")


@pytest.fixture(scope="module")
def maint_guide() -> StructuredDoc:
    if not MAINT_GUIDE.exists():
        pytest.skip(f"{MAINT_GUIDE} not found: install the Debian package maint-guide")
    return read(MAINT_GUIDE, "maint-guide.en.pdf")


def test_debian_manual_pages_headings_and_no_furniture(maint_guide: StructuredDoc) -> None:
    doc = maint_guide
    assert doc.title == "Debian New Maintainers' Guide"
    assert doc.metadata["pages"] == 63
    chapter = _find(doc, "Chapter 1 Getting started The Right Way", "heading")
    assert (chapter.kind, chapter.level, chapter.page, chapter.page_label) == (
        "heading", 1, 7, "1")
    section = _find(doc, "1.1 Social dynamics of Debian", "heading")
    assert (section.kind, section.level, section.page) == ("heading", 2, 7)
    assert _find(doc, "Here are some observations of Debian").page == 7
    # page 8 (printed 2) starts with the list that continues from page 7: its first line sits
    # where several pages have a section number, which is no running header
    assert [b.text for b in doc.blocks if b.page == 8][:2] == [
        "You should be motivated to do things by yourself.",
        "Friendly cooperation is the driving force."]
    depths = [(b.level, b.text[:22]) for b in doc.blocks if b.page in (7, 8)
              and b.kind == "list_item"][:5]
    assert depths == [(0, "We all are volunteers."), (1, "You cannot impose on o"),
                      (1, "You should be motivate"), (0, "Friendly cooperation i"),
                      (1, "Your contribution shou")]  # the list goes on past page 7's notes
    numbered = _find(doc, "1.2 Programs needed for development", "heading")  # top of page 9
    assert (numbered.level, numbered.page) == (2, 9)
    assert _find(doc, "4.1 control", "heading").page == 23  # number and title in two fonts
    running = Counter(b.text for b in doc.blocks)
    assert not any(re.fullmatch(r"\d+ / 57", b.text) for b in doc.blocks)
    assert running["Debian New Maintainers’ Guide"] <= 2  # title page only, not 57 headers
    assert all(b.page is not None and 1 <= b.page <= 63 for b in doc.blocks)
    assert doc.metadata["contents_pages"] == [4, 5, 6]  # the table of contents is left out
    assert not [b for b in doc.blocks if b.page in (4, 5, 6)]
    assert len([b for b in doc.blocks if b.text.startswith("1.1 Social dynamics")]) == 1
    outline = [b for b in doc.blocks if b.kind == "heading" and b.level <= 3]
    assert len(outline) == 90  # the outline's 90 entries (3 levels), each found on its page


# Debian Policy (Sphinx via LaTeX, 193 pages, shipped gzipped): ligatures PDFium splits into
# letters with one box, chapter labels set above the title ("CHAPTER" / "ONE"), running
# header "Debian Policy Manual, Release …" and section-named footers with the page number.
POLICY_GZ = Path("/usr/share/doc/debian-policy/policy.pdf.gz")


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> StructuredDoc:
    if not POLICY_GZ.exists():
        pytest.skip(f"{POLICY_GZ} not found: install the Debian package debian-policy")
    path = tmp_path_factory.mktemp("policy") / "policy.pdf"
    path.write_bytes(gzip.decompress(POLICY_GZ.read_bytes()))
    return read(path, "policy.pdf")


@pytest.mark.slow  # 193 pages: 4-9 s
def test_debian_policy_ligatures_labels_and_furniture(policy: StructuredDoc) -> None:
    doc = policy
    offers = _find(doc, "The adjectives encouraged and discouraged denote places")
    assert "where Policy offers advice to maintainers" in offers.text  # "ff" ligature whole
    assert offers.page == 13
    chapter = _find(doc, "CHAPTER ONE ABOUT THIS MANUAL", "heading")
    assert (chapter.level, chapter.page, chapter.page_label) == (1, 13, "3")
    assert not [b for b in doc.blocks if b.text in ("CHAPTER", "ONE")]
    assert _find(doc, "2.4 Sections", "heading").page == 20
    assert not [b for b in doc.blocks if "Debian Policy Manual, Release" in b.text]
    footer = re.compile(r"[\dA-Z]+(\.\d+)*\. .{1,60} \d+")  # "2.5. Priorities 11"
    footers = [b.text for b in doc.blocks if footer.fullmatch(b.text)]
    assert footers == []


# Debian Developer's Reference (Sphinx via LaTeX, 114 pages): headings on two lines with a
# hyphen at the break, and ruled tables.
DEVREF = Path("/usr/share/developers-reference/developers-reference.pdf")


@pytest.mark.slow  # 114 pages: 2-5 s
def test_debian_developers_reference_headings_and_tables() -> None:
    if not DEVREF.exists():
        pytest.skip(f"{DEVREF} not found: install the Debian package developers-reference")
    doc = read(DEVREF, "developers-reference.pdf")
    moving = _find(doc, "5.9 Moving, removing", "heading")
    assert moving.text == ("5.9 Moving, removing, renaming, orphaning, adopting, and "
                           "reintroducing packages")  # two lines, "reintro-" / "ducing"
    assert (moving.level, moving.page, moving.page_label) == (2, 50, "42")
    backports = _find(doc, "5.15.5 How long", "heading")
    assert backports.text.endswith("uploaded to stable-backports?")  # a real hyphen kept
    rows = [b.text for b in doc.blocks if b.kind == "table_row" and b.page == 65]
    assert rows[:3] == [" | alpha | arm", "testing | 1 | -", "unstable | 1 | 2"]
