"""A PDF page's characters as positioned, styled runs (pypdfium2's raw PDFium API).

Why PDFium's raw calls and not pdfminer.six: measured on the Debian manuals, pdfminer's layout
analysis costs tens of milliseconds per page, PDFium's character boxes a few (see
``bench/pdf_ingest.py``), and a 300-page PDF must ingest in well under 30 s. Two calls per
character (its loose box and its text object); size and style are looked up once per text
object, not per character.

A :class:`Run` is what one line of one column holds: characters on one baseline with no gap
wider than :data:`GUTTER_EM` font sizes between them, so two columns, or two table cells, never
share a run. Coordinates are PDF points, y growing upwards.
"""

from __future__ import annotations

import ctypes
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

GUTTER_EM = 1.0  # a gap this many font sizes wide ends a run (a column gutter, a table cell)
SPACE_EM = 0.15  # a gap this wide between two characters is a word space
_BOLD_WORDS = ("bold", "black", "heavy", "semibold", "demi")
_MONO_WORDS = ("mono", "courier", "typewriter", "cmtt", "consol", "code")
_FORCE_BOLD = 1 << 18
_FIXED_PITCH = 1
_HYPHENS = {"\x02": "-", "\u00ad": "-", "\u2010": "-", "\u2011": "-"}


@dataclass(frozen=True)
class Style:
    """Effective font size (points, the text matrix applied) and whether bold / monospaced."""

    size: float
    bold: bool
    mono: bool


@dataclass
class Char:
    """One character with its loose box and style."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    style: Style


@dataclass
class Run:
    """Characters of one line segment, in order, with their bounding box and dominant style."""

    x0: float
    y0: float
    x1: float
    y1: float
    chars: list[Char] = field(default_factory=list)
    text: str = ""

    @property
    def size(self) -> float:
        return _dominant(self.chars).size

    @property
    def style(self) -> Style:
        return _dominant(self.chars)

    @property
    def mid_y(self) -> float:
        return (self.y0 + self.y1) / 2


def _dominant(chars: list[Char]) -> Style:
    counts = Counter(c.style for c in chars if not c.text.isspace())
    return counts.most_common(1)[0][0] if counts else chars[0].style


def page_chars(textpage: Any) -> list[Char]:
    """Every visible character of a text page in content-stream order; a space PDFium generated
    between words is kept as a space with an empty box, line breaks it generated are dropped."""
    raw = textpage.raw
    count = pdfium_c.FPDFText_CountChars(raw)
    rect = pdfium_c.FS_RECTF()
    styles: dict[int | None, Style] = {}
    out: list[Char] = []
    for i in range(count):
        code = pdfium_c.FPDFText_GetUnicode(raw, i)
        text = _HYPHENS.get(chr(code), chr(code)) if code else ""
        if not text or text in "\r\n":
            continue
        obj = pdfium_c.FPDFText_GetTextObject(raw, i)
        key = ctypes.cast(obj, ctypes.c_void_p).value
        if key is None or text.isspace():
            if out:
                out.append(Char(" ", 0, 0, 0, 0, out[-1].style))
            continue
        style = styles.get(key)
        if style is None:
            style = styles[key] = _style(obj)
        pdfium_c.FPDFText_GetLooseCharBox(raw, i, rect)
        out.append(Char(text, rect.left, rect.bottom, rect.right, rect.top, style))
    return out


def _style(obj: Any) -> Style:
    size = ctypes.c_float(0)
    pdfium_c.FPDFTextObj_GetFontSize(obj, size)
    matrix = pdfium_c.FS_MATRIX()
    scale = 1.0
    if pdfium_c.FPDFPageObj_GetMatrix(obj, matrix):
        det = abs(matrix.a * matrix.d - matrix.b * matrix.c)
        scale = det**0.5 if det > 0 else 1.0
    font = pdfium_c.FPDFTextObj_GetFont(obj)
    name, weight, flags = "", 0, 0
    if font:
        buf = ctypes.create_string_buffer(256)
        n = pdfium_c.FPDFFont_GetBaseFontName(font, buf, 256)
        name = buf.value.decode("latin-1", "replace").lower() if n else ""
        weight = pdfium_c.FPDFFont_GetWeight(font)
        flags = pdfium_c.FPDFFont_GetFlags(font)
    bold = any(w in name for w in _BOLD_WORDS) or weight >= 600 or bool(flags & _FORCE_BOLD)
    mono = any(w in name for w in _MONO_WORDS) or bool(flags & _FIXED_PITCH)
    return Style(round(size.value * scale, 1), bold, mono)


def runs_of(chars: list[Char]) -> list[Run]:
    """Group characters (content-stream order) into runs: a character joins the current run when
    it sits on the same line just after it; a word space is added where the gap says so."""
    runs: list[Run] = []
    cur: Run | None = None
    space = False
    for ch in chars:
        if ch.text == " ":
            space = True
            continue
        if cur is not None and _continues(cur, ch):
            gap = ch.x0 - cur.x1
            if (space or gap > SPACE_EM * ch.style.size) and not cur.text.endswith(" "):
                cur.text += " "
            cur.text += ch.text
            cur.chars.append(ch)
            cur.x1, cur.y0, cur.y1 = max(cur.x1, ch.x1), min(cur.y0, ch.y0), max(cur.y1, ch.y1)
        else:
            cur = Run(ch.x0, ch.y0, ch.x1, ch.y1, [ch], ch.text)
            runs.append(cur)
        space = False
    for run in runs:
        run.text = run.text.strip()
    return [r for r in runs if r.text]


def _continues(run: Run, ch: Char) -> bool:
    last = run.chars[-1]
    height = min(last.y1 - last.y0, ch.y1 - ch.y0) or 1.0
    overlap = min(last.y1, ch.y1) - max(last.y0, ch.y0)
    if overlap < 0.5 * height:
        return False
    gap = ch.x0 - run.x1
    size = max(last.style.size, ch.style.size, 1.0)
    return -0.5 * size <= gap <= GUTTER_EM * size
