"""Project Gutenberg plain-text books: boilerplate stripped, divided into books and chapters.

For each file:

* The *body* is the text after the ``*** START OF THE/THIS PROJECT GUTENBERG EBOOK … ***`` line
  (or, in old files, after the ``*END*THE SMALL PRINT…`` line) and before the
  ``*** END OF …`` line (or an earlier ``End of the Project Gutenberg EBook …`` line).  The
  header gives the title (``Title:``), ``author``, ``translator`` and the ebook number
  (``[eBook #174]``, else ``pg174`` in the file name, else the file stem).
* The bytes are decoded as UTF-8; files that are not valid UTF-8 (older Gutenberg files are
  often Windows-1252 whatever their header says, e.g. #6130) are decoded as cp1252, else
  Latin-1.  The encoding used is in the document's metadata.  Line endings become ``\\n``.
* Divisions are heading lines ``BOOK <n>``, ``PART <n>`` (read as a book) and ``CHAPTER <n>``
  (``n`` a Roman numeral, digits or English words such as ``THE FIRST``), optionally followed
  by a title; in a text with none of these, lines holding only a numeral (``IV.``, ``12``)
  between blank lines are chapters when they run 1, 2, 3 ….  Table-of-contents
  entries are not divisions: a heading line next to another heading of the same kind, or one
  followed by (almost) no text before the next heading of the same or a higher level, is
  ignored.  Text before the first division is ``front``; after the last division, a
  stand-alone ``CONCLUDING NOTE``, ``FOOTNOTES``, ``NOTES``, ``APPENDIX``, ``INDEX`` … heading
  starts ``back`` matter; a book without divisions is one ``body`` division.
* Each division is chunked on its own (a chunk never spans two divisions).  Node ids:
  ``pg174:ch01:0003``, ``pg6130:b01:0000``, ``pgN:b02:ch03:0000`` (both), ``pgN:front:0000``,
  ``pgN:back:0000``, ``pgN:body:0000``.  Node metadata: ``book`` and/or ``chapter`` (ints),
  ``author``, ``division`` (the id segment), ``chunk`` and ``part`` (``body``, or the apparatus
  it belongs to: ``contents``, ``front``, ``argument``, ``back``, ``notes``, ``index``; see
  :mod:`excerpt.ingest.books.parts`).

Node ``start``/``end`` are offsets into the document's body text (decoded, newline-normalised,
boilerplate stripped), not into a division; ``node.text == body[start:end]``.
A file without a START marker is a book saved without the Gutenberg frame (a translation kept
as plain text): its whole text is the body (up to an END line if one is left), the title, author
and translator come from its first lines, the id from ``pgN`` in the file name or the file stem,
and the document's metadata says ``frame: none``.  It is divided and marked like a framed book.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.errors import CorpusError
from excerpt.ingest._common import (
    check_options,
    files_of,
    normalize_newlines,
    source_name,
    strip_bom,
)
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.books.parts import part_of, part_spans
from excerpt.ingest.chunking import chunk_spans
from excerpt.ingest.files import File, head_of
from excerpt.ingest.nodes import chunk_node
from excerpt.types import Document

__all__ = [
    "GutenbergBook",
    "find_divisions",
    "load_gutenberg",
    "looks_like_book",
    "looks_like_gutenberg",
    "parse_gutenberg",
    "parse_heading",
    "roman_to_int",
]

_MARKER = r"PROJECT\s+GUTENBERG(?:'S|’S)?\s+E-?(?:BOOK|TEXT)"
_START = re.compile(rf"^[ \t]*\*{{3}}[ \t]*START\s+OF\s+(?:THE|THIS)\s+{_MARKER}\b.*$", re.I | re.M)
_SMALL_PRINT_END = re.compile(r"^.*\*END\*\s*THE SMALL PRINT.*$", re.I | re.M)
_END = re.compile(rf"^[ \t]*\*{{3}}[ \t]*END\s+OF\s+(?:THE|THIS)\s+{_MARKER}\b.*$", re.I | re.M)
_END_LINE = re.compile(
    r"^[ \t]*End of (?:the |this )?Project Gutenberg(?:'s|’s)?\b.*$", re.I | re.M
)
_EBOOK_NO = re.compile(r"\[\s*E-?(?:Book|Text)\s*#\s*(\d+)\s*\]", re.I)
_FILE_NO = re.compile(r"^pg(\d+)", re.I)
_HEADER_OF = re.compile(
    r"Project Gutenberg(?:'s|’s)? E-?(?:Book|Text) of (.+?)(?:, by (.+))?$", re.I
)

_HEADING = re.compile(r"^[ \t]*(BOOK|Book|CHAPTER|Chapter|PART|Part)[ \t]+(\S.*?)[ \t]*$")
# A chapter numbered by a lone numeral ("IV.", "12"), used only in a text with no named heading
_BARE = re.compile(r"^[ \t]*([IVXLC]{1,7}|\d{1,3})\.?[ \t]*$")
_WORD = re.compile(r"[^\s.:;,—–()\[\]-]+")
_ROMAN = re.compile(r"^M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})$")
_BACK = re.compile(
    r"^(?:CONCLUDING NOTES?|FOOTNOTES?|END ?NOTES|NOTES|APPENDIX(?: [A-Z0-9]+)?|INDEX|GLOSSARY"
    r"|AFTERWORD|POSTSCRIPT|TRANSCRIBER[’']?S NOTES?)\.?$",
    re.I,
)
_MAX_HEADING_CHARS = 80
_TITLE_LINES = 40  # a plain book's title, author and translator are read from its first lines
_MAX_TITLE_CHARS = 120
_BY = re.compile(r"^by[ \t]+(\S.{0,80})$", re.I)
_TRANSLATED_BY = re.compile(r"^(?:translated|rendered into English)[ \t]+by[ \t]+(\S.{0,80})$",
                            re.I)
_MIN_BODY_CHARS = 150  # a "division" with less text than this before the next one is a TOC line
_LEVEL = {"book": 2, "chapter": 1}

_UNITS = ("ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN",
          "ELEVEN", "TWELVE", "THIRTEEN", "FOURTEEN", "FIFTEEN", "SIXTEEN", "SEVENTEEN",
          "EIGHTEEN", "NINETEEN")  # fmt: skip
_UNIT_ORDINALS = ("FIRST", "SECOND", "THIRD", "FOURTH", "FIFTH", "SIXTH", "SEVENTH", "EIGHTH",
                  "NINTH", "TENTH", "ELEVENTH", "TWELFTH", "THIRTEENTH", "FOURTEENTH",
                  "FIFTEENTH", "SIXTEENTH", "SEVENTEENTH", "EIGHTEENTH",
                  "NINETEENTH")  # fmt: skip
_TENS = ("TWENTY", "THIRTY", "FORTY", "FIFTY", "SIXTY", "SEVENTY", "EIGHTY", "NINETY")
_TEN_ORDINALS = ("TWENTIETH", "THIRTIETH", "FORTIETH", "FIFTIETH", "SIXTIETH", "SEVENTIETH",
                 "EIGHTIETH", "NINETIETH")  # fmt: skip
_SMALL = {w: i + 1 for words in (_UNITS, _UNIT_ORDINALS) for i, w in enumerate(words)}
_DECADES = {w: 20 + 10 * i for words in (_TENS, _TEN_ORDINALS) for i, w in enumerate(words)}


@dataclass(frozen=True)
class GutenbergBook:
    """One parsed file: header fields and the body that offsets refer to."""

    ebook: str  # "pg174" (or the file stem when the book carries no number)
    title: str
    author: str | None
    translator: str | None
    release_date: str | None
    encoding: str
    body: str
    framed: bool = True  # False: a plain-text book, no Gutenberg header or START line


@dataclass(frozen=True)
class _Division:
    key: str  # the node-id segment: "front", "b01", "ch03", "b02:ch03", "back", "body"
    start: int
    end: int
    book: int | None = None
    chapter: int | None = None


def load_gutenberg(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
    """Load Project Gutenberg books (files, or folders of ``.txt`` files) into one corpus."""
    options = options or LoadOptions()
    check_options(options)
    every = files_of(paths, options)
    files: list[File] = []
    for path in every.given:
        if path.is_dir():
            found = [f for f in every.files(path) if f.suffix == ".txt"]
            if not found:
                raise CorpusError(f"no .txt files in {path}")
            files.extend(found)
        else:
            files.extend(every.files(path))
    corpus = LoadedCorpus(source=source_name(every.given))
    owners: dict[str, Path] = {}
    for file in sorted({f.path.resolve(): f for f in files}.values(),
                       key=lambda f: str(f.path.resolve())):
        f = file.path
        book = parse_gutenberg(f, file.held())
        file.release()
        if book.ebook in owners:
            raise CorpusError(
                f"{owners[book.ebook]} and {f} are both ebook {book.ebook}; load one of them"
            )
        owners[book.ebook] = f
        _emit(book, str(f.resolve()), f.name, options, corpus)
    return corpus


def looks_like_gutenberg(path: Path, sniff_bytes: int = 65536, *,
                         head: bytes | None = None) -> bool:
    """True when the first 50 lines mention Project Gutenberg and the first ``sniff_bytes``
    hold a START marker (old "small print" headers put it far below line 50); ``head``: the
    file's first bytes, when already read."""
    head = head_of(path, sniff_bytes, head)
    if head is None:
        return False
    text = normalize_newlines(head.decode("utf-8", errors="replace"))
    first_lines = "\n".join(text.split("\n", 50)[:50])
    if "project gutenberg" not in first_lines.lower():
        return False
    return bool(_START.search(text) or _SMALL_PRINT_END.search(text))


def looks_like_book(path: Path, max_bytes: int = 16 << 20, *, data: bytes | None = None
                    ) -> bool:
    """True when the text is divided into at least two books, parts or chapters (a book saved
    without the Gutenberg frame); files past ``max_bytes`` are not read; ``data``: the file's
    bytes, when already read."""
    try:
        if (path.stat().st_size if data is None else len(data)) > max_bytes:
            return False
        data = strip_bom(path.read_bytes() if data is None else data)
    except OSError:
        return False
    if b"\x00" in data[:8192]:
        return False
    divisions = find_divisions(normalize_newlines(_decode(data)[0]))
    return sum(d.key not in ("front", "back", "body") for d in divisions) >= 2


def parse_gutenberg(path: Path, data: bytes | None = None) -> GutenbergBook:
    """Decode ``path`` (``data``: its bytes, when already read), split header/body/licence,
    read the header fields."""
    data = strip_bom(path.read_bytes() if data is None else data)
    if b"\x00" in data[:8192]:
        raise CorpusError(f"{path} is a binary file, not a Project Gutenberg text")
    text, encoding = _decode(data)
    text = normalize_newlines(text)
    start = _START.search(text) or _SMALL_PRINT_END.search(text)
    if start is None:
        return _plain_book(path, text, encoding)
    body_start = start.end() + 1 if start.end() < len(text) else start.end()
    ends = [
        m.start()
        for m in (_END.search(text, body_start), _END_LINE.search(text, body_start))
        if m is not None
    ]
    body = text[body_start : min(ends) if ends else len(text)]
    if not body.strip():
        raise CorpusError(f"{path} has no text between its Gutenberg START and END markers")
    header = text[: start.start()]
    title = _field(header, "Title")
    author = _field(header, "Author")
    of = next((m for m in map(_HEADER_OF.search, header.split("\n")[:5]) if m), None)
    if of and not title:
        title = of.group(1).strip()
    if of and not author and of.group(2):
        author = of.group(2).strip()
    number = _EBOOK_NO.search(header) or _FILE_NO.match(path.name)
    return GutenbergBook(
        ebook=f"pg{int(number.group(1))}" if number else path.stem,
        title=title or path.stem,
        author=author,
        translator=_field(header, "Translator"),
        release_date=_field(header, "Release Date"),
        encoding=encoding,
        body=body,
    )


def _plain_book(path: Path, text: str, encoding: str) -> GutenbergBook:
    """A book saved without the Gutenberg frame (no header, no START line): the whole text is
    the body, up to an END line if one was left; title, author and translator from its first
    lines ("The Iliad" / "by Homer" / "Translated by Alexander Pope")."""
    end = _END.search(text) or _END_LINE.search(text)
    body = text[: end.start()] if end else text
    if not body.strip():
        raise CorpusError(f"{path} holds no text")
    head = [line.strip() for line in body.split("\n")[:_TITLE_LINES] if line.strip()]
    title = next((line for line in head if len(line) <= _MAX_TITLE_CHARS), None)
    number = _FILE_NO.match(path.name)
    return GutenbergBook(
        ebook=f"pg{int(number.group(1))}" if number else path.stem,
        title=title or path.stem,
        author=_by_line(head, _BY),
        translator=_by_line(head, _TRANSLATED_BY),
        release_date=None,
        encoding=encoding,
        body=body,
        framed=False,
    )


def _by_line(lines: list[str], pattern: re.Pattern[str]) -> str | None:
    m = next((m for m in map(pattern.match, lines) if m), None)
    return m.group(1).strip(" ,.") if m else None


def _decode(data: bytes) -> tuple[str, str]:
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1"), "latin-1"


def _field(header: str, name: str) -> str | None:
    """A ``Name: value`` header field, with its indented continuation lines."""
    m = re.search(rf"^{re.escape(name)}:[ \t]*(.*)$", header, re.I | re.M)
    if m is None:
        return None
    parts = [m.group(1).strip()]
    for line in header[m.end() + 1 :].split("\n"):
        if not line.strip() or not line[0].isspace():
            break
        parts.append(line.strip())
    value = " ".join(p for p in parts if p)
    if name.lower() == "release date":
        value = _EBOOK_NO.sub("", value).strip()
    return value or None


def _emit(
    book: GutenbergBook, source: str, file_name: str, options: LoadOptions, corpus: LoadedCorpus
) -> None:
    divisions = find_divisions(book.body)
    doc_meta: dict[str, Any] = {
        "ebook": book.ebook,
        "encoding": book.encoding,
        "file": file_name,
        "divisions": sum(d.key not in ("front", "back", "body") for d in divisions),
    }
    if not book.framed:
        doc_meta["frame"] = "none"
    for key, value in (
        ("author", book.author),
        ("translator", book.translator),
        ("release_date", book.release_date),
    ):
        if value:
            doc_meta[key] = value
    corpus.documents.append(Document(book.ebook, book.title, source, doc_meta))
    # A repeated division key continues its numbering, so ids stay unique.
    counters: dict[str, int] = {}
    parts = part_spans(book.body, [(d.key, d.start, d.end) for d in divisions])
    for div in divisions:
        piece = book.body[div.start : div.end]
        for span in chunk_spans(piece, options.chunk_chars, options.overlap_chars):
            i = counters.get(div.key, 0)
            counters[div.key] = i + 1
            core = div.start + span.core_start, div.start + span.end
            meta: dict[str, Any] = {"division": div.key, "chunk": i,
                                    "part": part_of(parts, *core)}
            if span.core_start > span.start:  # the text repeated from the chunk before
                meta["overlap"] = span.core_start - span.start
            if div.book is not None:
                meta["book"] = div.book
            if div.chapter is not None:
                meta["chapter"] = div.chapter
            if book.author:
                meta["author"] = book.author
            corpus.nodes.append(chunk_node(
                book.ebook, i, piece[span.start : span.end],
                (div.start + span.start, div.start + span.end), title=book.title, source=source,
                options=options, metadata=meta, prefix=f"{book.ebook}:{div.key}",
            ))


# --- divisions -----------------------------------------------------------------------------------


def roman_to_int(numeral: str) -> int | None:
    """The value of a valid Roman numeral (upper or lower case), else None."""
    if not numeral or not (numeral.isupper() or numeral.islower()):
        return None
    s = numeral.upper()
    if not _ROMAN.match(s):
        return None
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, ch in enumerate(s):
        v = values[ch]
        total += -v if i + 1 < len(s) and values[s[i + 1]] > v else v
    return total


def _number(words: list[str]) -> int | None:
    """``["XXIV"]``, ``["12"]``, ``["THE", "FIRST"]``, ``["TWENTY", "ONE"]`` → int."""
    upper = [w.upper() for w in words]
    if upper and upper[0] == "THE":
        upper, words = upper[1:], words[1:]
    if len(upper) == 1:
        w = upper[0]
        if w.isdigit():
            return int(w) if 0 < int(w) < 10000 else None
        return _SMALL.get(w) or _DECADES.get(w) or roman_to_int(words[0])
    if len(upper) == 2 and upper[0] in _TENS and upper[1] in _SMALL and _SMALL[upper[1]] < 10:
        return _DECADES[upper[0]] + _SMALL[upper[1]]
    return None


def parse_heading(line: str) -> tuple[str, int] | None:
    """``("book"|"chapter", n)`` when ``line`` is a division heading such as ``CHAPTER I.``,
    ``BOOK XXIV.``, ``Chapter 3: Title`` or ``CHAPTER THE FIRST``, else None."""
    if len(line) > _MAX_HEADING_CHARS:
        return None
    m = _HEADING.match(line)
    if m is None:
        return None
    # PART is the top division, as BOOK is ("Part One" / "Book the First"); "in part 2" is
    # read as book 2 by ask (the ``part`` key names the apparatus, see ingest/book_parts.py)
    kind, rest = m.group(1).lower().replace("part", "book"), m.group(2)
    words = list(_WORD.finditer(rest))
    if not words or words[0].start() != 0:
        return None
    for n in (3, 2, 1):
        if n > len(words):
            continue
        value = _number([w.group() for w in words[:n]])
        if value is None:
            continue
        after = rest[words[n - 1].end() :].strip()
        if (
            not after
            or after[0] in ".:;—–-"
            or (after.upper() == after and any(c.isalpha() for c in after))
        ):
            return kind, value
    return None


def find_divisions(body: str) -> list[_Division]:
    """Front matter, books/chapters and back matter of ``body``, covering it without gaps."""
    lines = body.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    parsed = {i: h for i, line in enumerate(lines) if (h := parse_heading(line)) is not None}
    bare = not parsed
    if bare:
        parsed = _bare_headings(lines)

    def neighbour_same_kind(i: int) -> bool:
        return any(parsed.get(j, ("", 0))[0] == parsed[i][0] for j in (i - 1, i + 1))

    candidates = [i for i in sorted(parsed) if not neighbour_same_kind(i)]
    # Non-blank characters per line, heading lines not counted: the "body" a heading leads.
    weight = [0 if i in parsed else len("".join(line.split())) for i, line in enumerate(lines)]
    prefix = [0]
    for w in weight:
        prefix.append(prefix[-1] + w)
    kept: list[int] = []
    for i in reversed(candidates):  # backwards: the next kept heading is already known
        level = _LEVEL[parsed[i][0]]
        nxt = next((j for j in reversed(kept) if _LEVEL[parsed[j][0]] >= level), len(lines))
        if prefix[nxt] - prefix[i + 1] >= _MIN_BODY_CHARS:
            kept.append(i)
    kept.reverse()
    numbers = [parsed[i][1] for i in kept]
    if not kept or (bare and (len(kept) < 2 or numbers != list(range(1, len(kept) + 1)))):
        # lone numerals count only as a run 1, 2, 3 … (not page, verse or footnote numbers)
        return [_Division("body", 0, len(body))]

    starts: list[tuple[int, str, int | None, int | None]] = []
    book: int | None = None
    for i in kept:
        kind, n = parsed[i]
        if kind == "book":
            book = n
            starts.append((i, f"b{n:02d}", n, None))
        else:
            prefix_key = f"b{book:02d}:" if book is not None else ""
            starts.append((i, f"{prefix_key}ch{n:02d}", book, n))
    back = _back_matter_line(lines, kept[-1] + 1)
    if back is not None:
        starts.append((back, "back", None, None))
    out = [_Division("front", 0, offsets[kept[0]])] if offsets[kept[0]] > 0 else []
    for k, (i, key, b, ch) in enumerate(starts):
        end = offsets[starts[k + 1][0]] if k + 1 < len(starts) else len(body)
        out.append(_Division(key, offsets[i], end, b, ch))
    return out


def _bare_headings(lines: list[str]) -> dict[int, tuple[str, int]]:
    """Lines holding only a numeral ("IV.", "12") with a blank line on each side: chapters."""
    out: dict[int, tuple[str, int]] = {}
    for i, line in enumerate(lines):
        m = _BARE.match(line)
        if m is None or (i > 0 and lines[i - 1].strip()):
            continue
        if i + 1 < len(lines) and lines[i + 1].strip():
            continue
        value = int(m.group(1)) if m.group(1).isdigit() else roman_to_int(m.group(1))
        if value:
            out[i] = ("chapter", value)
    return out


def _back_matter_line(lines: list[str], first: int) -> int | None:
    for i in range(first, len(lines)):
        if not _BACK.match(lines[i].strip()):
            continue
        before_blank = i == 0 or not lines[i - 1].strip()
        after_blank = i + 1 >= len(lines) or not lines[i + 1].strip()
        if before_blank and after_blank:
            return i
    return None
