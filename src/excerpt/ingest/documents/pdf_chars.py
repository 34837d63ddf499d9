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
from typing import Any, NamedTuple

import pypdfium2.raw as pdfium_c

GUTTER_EM = 1.0  # a gap this many font sizes wide ends a run (a column gutter, a table cell)
SPACE_EM = 0.15  # a gap this wide between two characters is a word space
_BOLD_WORDS = ("bold", "black", "heavy", "semibold", "demi")
_MONO_WORDS = ("mono", "courier", "typewriter", "cmtt", "consol", "code")
_FORCE_BOLD = 1 << 18
_FIXED_PITCH = 1
_HYPHENS = {"\x02": "-", "\ufffe": "-", "\u00ad": "-", "\u2010": "-", "\u2011": "-"}


class Style(NamedTuple):
    """Effective font size (points, the text matrix applied) and whether bold / monospaced."""

    size: float
    bold: bool
    mono: bool


_NO_STYLE = Style(0.0, False, False)


@dataclass(slots=True)
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
    """One line segment: its text, bounding box and dominant style (set by :func:`runs_of` once
    the run is complete, which then lets its characters go)."""

    x0: float
    y0: float
    x1: float
    y1: float
    chars: list[Char] = field(default_factory=list)
    text: str = ""
    style: Style = _NO_STYLE

    @property
    def size(self) -> float:
        return self.style.size

    @property
    def mid_y(self) -> float:
        return (self.y0 + self.y1) / 2


def _dominant(chars: list[Char]) -> Style:
    counts = Counter(c.style for c in chars if c.text != " ")
    return counts.most_common(1)[0][0] if counts else chars[0].style


def _fast(name: str, restype: Any, *argtypes: Any) -> Any:
    """A PDFium function called with plain addresses: pypdfium2's own wrappers convert their
    typed pointer arguments on every call, which costs ~8 µs against ~0.5 µs here, and these
    run once per character."""
    address = ctypes.cast(getattr(pdfium_c, name), ctypes.c_void_p).value
    assert address is not None, name
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)


_VP, _INT = ctypes.c_void_p, ctypes.c_int
_text_object = _fast("FPDFText_GetTextObject", _VP, _VP, _INT)
_loose_box = _fast("FPDFText_GetLooseCharBox", _INT, _VP, _INT, _VP)
_get_text = _fast("FPDFText_GetText", _INT, _VP, _INT, _INT, _VP)


def page_chars(textpage: Any) -> list[Char]:
    """Every visible character of a text page in content-stream order; a space PDFium generated
    between words is kept as a space with an empty box, line breaks it generated are dropped."""
    raw = textpage.raw
    page = ctypes.cast(raw, _VP).value
    count = pdfium_c.FPDFText_CountChars(raw)
    if count <= 0 or page is None:
        return []
    text = _all_text(raw, page, count)
    box = (ctypes.c_float * 4)()  # FS_RECTF: left, top, right, bottom
    box_at = ctypes.addressof(box)
    styles: dict[int, Style] = {}
    out: list[Char] = []
    for i in range(count):
        ch = text[i]
        if ch in "\r\n\x00":
            continue
        ch = _HYPHENS.get(ch, ch)
        obj = _text_object(page, i)
        if obj is None or ch.isspace():
            if out:
                out.append(Char(" ", 0, 0, 0, 0, out[-1].style))
            continue
        style = styles.get(obj)
        if style is None:
            style = styles[obj] = _style(ctypes.cast(obj, pdfium_c.FPDF_PAGEOBJECT))
        _loose_box(page, i, box_at)
        left, top, right, bottom = box[:]
        out.append(Char(ch, left, bottom, right, top, style))
    return out


def _all_text(raw: Any, page: int, count: int) -> str | list[str]:
    """The page's characters, one per character index (UTF-16 in one call; character by
    character when a character outside the BMP would shift the indices)."""
    buf = (ctypes.c_uint16 * (count + 1))()
    _get_text(page, 0, count, ctypes.addressof(buf))
    units = bytes(buf)[: 2 * count]
    text = units.decode("utf-16-le", errors="replace")
    if len(text) == count:
        return text
    return [chr(pdfium_c.FPDFText_GetUnicode(raw, i) or 0) for i in range(count)]


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
    it sits on the same line just after the previous one (their boxes overlap by half a line
    vertically, the gap is under :data:`GUTTER_EM`); a word space is added where PDFium put one
    or the gap is wider than :data:`SPACE_EM`. Written flat: it runs once per character."""
    runs: list[Run] = []
    pieces: list[list[str]] = []
    cur: Run | None = None
    last: Char | None = None
    right = 0.0
    space = False
    for ch in chars:
        if ch.text == " ":
            space = True
            continue
        if last is not None and cur is not None and _continues(last, ch, right):
            if space or ch.x0 - right > SPACE_EM * ch.style.size:
                pieces[-1].append(" ")
            pieces[-1].append(ch.text)
            cur.chars.append(ch)
            if ch.x1 > right:
                right = ch.x1
            if ch.y0 < cur.y0:
                cur.y0 = ch.y0
            if ch.y1 > cur.y1:
                cur.y1 = ch.y1
        else:
            if cur is not None:
                cur.x1 = right
            cur = Run(ch.x0, ch.y0, ch.x1, ch.y1, [ch])
            right = ch.x1
            runs.append(cur)
            pieces.append([ch.text])
        last = ch
        space = False
    if cur is not None:
        cur.x1 = right
    for run, text in zip(runs, pieces, strict=True):
        run.text = "".join(text).strip()
        run.style = _dominant(run.chars)
        run.chars = []  # a 300-page book's characters would otherwise all stay in memory
    return [r for r in runs if r.text]


def _continues(last: Char, ch: Char, right: float) -> bool:
    low = last.y0 if last.y0 > ch.y0 else ch.y0
    high = last.y1 if last.y1 < ch.y1 else ch.y1
    height = min(last.y1 - last.y0, ch.y1 - ch.y0) or 1.0
    if high - low < 0.5 * height:
        return False
    size = last.style.size if last.style.size > ch.style.size else ch.style.size
    size = size if size > 1.0 else 1.0
    # A ligature PDFium splits into its letters gives each the ligature's box: the second
    # letter starts where the first did, behind the run's right edge, and still follows it.
    return ch.x0 >= last.x0 - 0.5 and ch.x0 - right <= GUTTER_EM * size
