"""The structure of a Korean regulation book (규정집) in plain text, as lines and line ranges.

The book (e.g. Dong-eui University's, exported from HWP) is read as lines:

* **Front matter**: a cover, then the contents (a line ``차   례``) listing every regulation as
  ``name<TAB>code`` (``교원인사규정\t3-1-5``: 편-장-order; a ``【폐지】`` suffix marks an abolished
  one; several entries may share a line), then two indexes after lines ``찾아보기``: by name
  (``<가나다순>``) and by department (``<소관부서별>``: department lines, indented sub-units,
  entries).  The contents give the codes; the department index gives ``department``.  The front
  matter ends at the first part heading line ``제N편`` after the indexes.
* **Body**: each part (``제N편``) repeats its own contents as ``name<TAB>code`` lines, then
  holds its regulations in that order.  A regulation starts with a line holding only its name
  (matched to the next unconsumed contents entry, spaces and the middle-dot variants ``·ㆍ․⋅・⸱``
  ignored, either the part's spelling or the main contents' for the same code, since the
  part lists carry typos) whose next non-blank line starts the text: ``제1장``/``제1조``, a
  ``<…>`` note (``<규정 명칭 변경 2008. 3. 1.>``), or a notice.  Without contents (a snippet), a
  line that looks like a name (no space, ending in 규정/세칙/…) followed by ``제1조`` or
  ``제1장`` starts one.  A regulation ends where the next starts, at a contents line or at a
  ``제N편`` line; chapter headings just before a contents list are the next list's, not text.
* **Inside a regulation**: headings ``제N장``/``제N절``/``제N관``; articles
  ``제N조 (caption) …`` or ``제N조의M (caption)``, ``제N조 <삭제 …>``, ``제N조 내지 제M조 (삭제)``
  (one part), with their 항 (``①``), 호 (``1.``) and 목 (``가.``) lines and inline tables below;
  ``부  칙`` blocks (numbered items, or articles of their own); appendices ``[별표 N]``,
  ``<별표 N>``, ``(별표 N)``, ``[별지 제N호 서식]``, ``[별첨 N]``, ``[붙임]`` (tables and forms)
  after the addenda.  A regulation with no
  article or addendum is a notice: abolished (``2019년 8월 1일자 폐지 → …``), moved to another
  part (``… 직제개편으로 인한 이동(…)``) or renamed.

Article numbers must increase inside a regulation (and inside each 부칙): a heading that does
not (a table cell, a quoted form) stays text of the part it is in and is reported.  Irregular
numbers (``제15조 1 (…)``, ``제10조2 (…)``) are read as 제N조의M and reported.  Line numbers in
issues are 1-based.  What a single line is (a heading, a contents entry, a note) is decided in
lines.py; this module builds the book from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from excerpt.ingest.regulations.lines import (
    ABOLISHED_MARK,
    ADDENDUM,
    MAX_NAME,
    NAME_SUFFIXES,
    NOTE,
    PART_HEADING,
    ArticleHead,
    appendix_label,
    article_label,
    history_entries,
    is_deleted,
    name_key,
    parse_article_heading,
    parse_chapter_heading,
    toc_entries,
)

__all__ = [
    "NAME_SUFFIXES",
    "ArticleHead",
    "Book",
    "Part",
    "RawRegulation",
    "appendix_label",
    "history_entries",
    "is_deleted",
    "name_key",
    "parse_article_heading",
    "parse_book",
    "parse_chapter_heading",
    "toc_entries",
]


@dataclass(frozen=True)
class Part:
    """One node's worth of a regulation: lines ``first..last`` (0-based, inclusive)."""

    kind: str  # "article" | "addendum" | "appendix" | "form" | "notice"
    label: str  # "제15조의2", "부칙", "부칙 2 제1조", "별표 1", ...
    first: int
    last: int
    caption: str = ""
    no: int = 0
    sub: int = 0
    last_no: int = 0
    chapter: str = ""
    section: str = ""
    addendum: str = ""


@dataclass(frozen=True)
class RawRegulation:
    """One regulation as found: its title line, extent and parts."""

    name: str  # the title line as written (inner whitespace collapsed)
    code: str  # from the contents; "" when not listed
    first: int  # the title line
    end: int  # one past its last line
    parts: tuple[Part, ...]
    chapters: tuple[str, ...]
    history: tuple[str, ...]
    status: str  # "in_force" | "abolished" | "moved" | "renamed" | "notice"
    listed_abolished: bool  # the contents mark it 【폐지】


@dataclass
class Book:
    """A parsed book: its lines, regulations, contents and the issues met."""

    lines: list[str]
    regulations: list[RawRegulation] = field(default_factory=list)
    contents: dict[str, str] = field(default_factory=dict)  # code -> name (main contents)
    departments: dict[str, list[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)
    issues: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class _Entry:
    keys: set[str]
    code: str
    abolished: bool


def parse_book(text: str) -> Book:
    """Split a whole book into regulations and their parts (see the module docstring)."""
    book = Book(lines=text.split("\n"))
    body = _read_front_matter(book)
    for name, code, first, end, abolished in _find_regulations(book, body):
        book.regulations.append(_SlotParser(book, name, code, first, end, abolished).parse())
    listed = {r.code for r in book.regulations}
    for code, name in sorted(book.contents.items(), key=lambda kv: _code_order(kv[0])):
        if code not in listed:
            book.issues.append((0, f"contents list {name} ({code}) but the book has no such text"))
    return book


def _code_order(code: str) -> tuple[int, ...]:
    return tuple(int(x) for x in code.split("-"))


def _read_front_matter(book: Book) -> int:
    """Read the contents and department index; return the first body line."""
    lines = book.lines
    marks = [i for i, ln in enumerate(lines[:20000]) if name_key(ln) in ("차례", "찾아보기")]
    if not marks:
        return 0
    toc_start = next((i for i in marks if name_key(lines[i]) == "차례"), marks[0])
    index_start = next((i for i in marks if i > toc_start and name_key(lines[i]) == "찾아보기"),
                       toc_start)
    dept = next((i for i in range(index_start, len(lines)) if name_key(lines[i]) == "<소관부서별>"),
                index_start)
    body = next((i for i in range(dept + 1, len(lines)) if PART_HEADING.match(lines[i])),
                len(lines))
    for line in lines[toc_start : (index_start if index_start > toc_start else body)]:
        for name, code in toc_entries(line) or ():
            book.contents.setdefault(code, name)
    if dept > index_start:
        _read_departments(book, dept + 1, body)
    return body


def _read_departments(book: Book, start: int, end: int) -> None:
    """Department index: unindented lines are departments, indented ones their units."""
    top = ""
    unit = ""
    for line in book.lines[start:end]:
        if not line.strip():
            continue
        entries = toc_entries(line)
        if entries is None:
            if line[:1].isspace():
                unit = line.strip()
            else:
                top, unit = line.strip(), ""
            continue
        path = tuple(p for p in (top, unit) if p)
        for name, code in entries:
            book.departments.setdefault(name_key(name), []).append((code, path))


def _find_regulations(book: Book, start: int) -> Iterator[tuple[str, str, int, int, bool]]:
    """``(name, code, title line, end line, listed abolished)`` of each regulation in order."""
    lines = book.lines
    pending: list[_Entry] = []
    has_lists = any(toc_entries(ln) for ln in lines[start:])
    if not has_lists:
        pending = [_Entry({name_key(n)}, c, ABOLISHED_MARK in n) for c, n in book.contents.items()]
    found: list[tuple[str, str, int, bool]] = []
    stops: list[int] = []
    for i in range(start, len(lines)):
        line = lines[i]
        entries = toc_entries(line)
        if entries is not None:
            stops.append(i)
            for name, listed in entries:
                code = _contents_code(book, name, listed, i)
                main = book.contents.get(code, name)
                pending.append(_Entry({name_key(name), name_key(main)}, code,
                                      ABOLISHED_MARK in name + main))
            continue
        if PART_HEADING.match(line):
            stops.append(i)
            continue
        title = _title_at(book, i, pending)
        if title is not None:
            found.append((re.sub(r"\s+", " ", line.strip()), *title, ))
    yield from _with_ends(book, found, stops)
    for entry in pending:
        name = min(entry.keys)
        book.issues.append((0, f"contents list {name} ({entry.code}) but no text starts with it"))


def _contents_code(book: Book, name: str, code: str, i: int) -> str:
    """The code of a part's contents entry; when the main contents do not have it but list the
    same name under another code that no part uses (a typo in the part's list: the 9-343
    edition lists 인공지능(AI)위원회규정 as 4-0-78 in part 4, 4-0-76 in the contents, the
    department index and the page headers), the main contents' code, reported."""
    if code in book.contents or not book.contents:
        return code
    key = name_key(name)
    other = next((c for c, n in book.contents.items() if name_key(n) == key), None)
    if other is None:
        return code
    book.issues.append((i + 1, f"the part's contents list {name} as {code}, the book's contents "
                        f"as {other}; {other} used"))
    return other


def _title_at(book: Book, i: int, pending: list[_Entry]) -> tuple[str, int, bool] | None:
    """``(code, line, abolished)`` when line ``i`` is a regulation's title, consuming its entry."""
    line = book.lines[i]
    key = name_key(line)
    if not key or len(key) > MAX_NAME:
        return None
    match = next((k for k, e in enumerate(pending) if key in e.keys), None)
    nxt = _next_text(book.lines, i)
    if match is not None and nxt is not None and _starts_text(nxt):
        entry = pending.pop(match)
        return entry.code, i, entry.abolished
    looks_like_name = key.endswith(NAME_SUFFIXES) and " " not in line.strip()
    if match is None and looks_like_name and nxt is not None:
        head = parse_article_heading(nxt)
        chapter = parse_chapter_heading(nxt)
        if (head and head.no == 1 and not head.sub) or (chapter and chapter[1].startswith("제1장")):
            if book.contents:
                book.issues.append((i + 1, f"{line.strip()} is not in the contents; read anyway"))
            return "", i, False
    return None


def _next_text(lines: list[str], i: int) -> str | None:
    for j in range(i + 1, min(i + 8, len(lines))):
        if lines[j].strip():
            return lines[j]
    return None


def _starts_text(line: str) -> bool:
    """The first line of a regulation: a heading, an article, a note, or a notice."""
    if parse_article_heading(line) or parse_chapter_heading(line) or ADDENDUM.match(line):
        return True
    stripped = line.strip()
    return stripped[:1] in "<[［(" or any(w in stripped for w in ("폐지", "이동", "변경"))


def _with_ends(
    book: Book, found: list[tuple[str, str, int, bool]], stops: list[int]
) -> Iterator[tuple[str, str, int, int, bool]]:
    starts = [f[2] for f in found]
    boundaries = sorted(set(starts) | set(stops) | {len(book.lines)})
    for name, code, first, abolished in found:
        end = next(b for b in boundaries if b > first)
        if end in stops:
            end = _trim_list_heading(book.lines, first, end)
        yield name, code, first, end, abolished


def _trim_list_heading(lines: list[str], first: int, end: int) -> int:
    """Drop the blank lines and the chapter heading (``제2장  학사 행정``) that introduce the
    next contents list from the end of the regulation before it."""
    j = end
    while j - 1 > first and (not lines[j - 1].strip() or parse_chapter_heading(lines[j - 1])):
        j -= 1
    return j


class _SlotParser:
    """Cuts one regulation's lines into parts (a small state machine over its lines)."""

    def __init__(self, book: Book, name: str, code: str, first: int, end: int,
                 abolished: bool) -> None:
        self.book, self.name, self.code = book, name, code
        self.first, self.end, self.abolished = first, end, abolished
        self.parts: list[Part] = []
        self.open: Part | None = None
        self.mode = "pre"  # pre | body | addendum | appendix
        self.chapter = self.section = ""
        self.chapters: list[str] = []
        self.notes: list[int] = []
        self.last_key = (0, 0)
        self.addenda = 0
        self.addendum_key = (0, 0)
        self.seen_labels: dict[str, int] = {}

    def parse(self) -> RawRegulation:
        for i in range(self.first + 1, self.end):
            self._line(i)
        self._close(self.end - 1)
        history = [self.book.lines[i].strip() for i in self.notes]
        status = "in_force"
        if not self.parts:
            status = self._notice()
        else:
            self._report_stray_notes()
        history = [h.strip("<>[]［］ ") for h in history if NOTE.match(h) or status != "in_force"]
        for part in self.parts:
            if part.kind == "addendum":
                history += history_entries(self.book.lines[part.first : part.last + 1])
        return RawRegulation(self.name, self.code, self.first, self.end, tuple(self.parts),
                             tuple(self.chapters), tuple(history), status, self.abolished)

    def _line(self, i: int) -> None:
        line = self.book.lines[i]
        if not line.strip():
            return
        if self.mode in ("pre", "body") and (chapter := parse_chapter_heading(line)):
            self._chapter(i, *chapter)
        elif head := parse_article_heading(line):
            self._article(i, head)
        elif ADDENDUM.match(line):
            self._addendum(i)
        elif self.mode != "pre" and (label := appendix_label(line)):
            self._appendix(i, label)
        elif self.open is None:
            self.notes.append(i)

    def _chapter(self, i: int, level: str, label: str) -> None:
        self._close(i - 1)
        self.mode = "body"
        if level == "장":
            self.chapter, self.section = label, ""
            self.chapters.append(label)
        elif level == "절":
            self.section = label

    def _article(self, i: int, head: ArticleHead) -> None:
        key = (head.no, head.sub)
        if self.mode == "addendum":
            if key <= self.addendum_key:
                return self._stray(i, head)
            self.addendum_key = key
            prefix = self._addendum_label()
            self._start(i, Part("addendum", f"{prefix} {article_label(head)}", i, i,
                                head.caption, head.no, head.sub, head.last, addendum=prefix))
            return
        if key <= self.last_key:
            return self._stray(i, head)
        self.mode = "body"
        self.last_key = (head.last, head.sub) if head.last > head.no else key
        if head.irregular:
            self.book.issues.append((i + 1, f"{self.name}: irregular article number "
                                     f"{self.book.lines[i].strip()[:20]!r} read as "
                                     f"{article_label(head)}"))
        self._start(i, Part("article", article_label(head), i, i, head.caption, head.no,
                            head.sub, head.last, self.chapter, self.section))

    def _stray(self, i: int, head: ArticleHead) -> None:
        if self.mode != "appendix" and self.open is not None:
            self.book.issues.append((i + 1, f"{self.name}: {article_label(head)} out of order "
                                     f"after {self.open.label}; kept as text of it"))
        elif self.open is None:
            self.notes.append(i)

    def _addendum(self, i: int) -> None:
        self.mode = "addendum"
        self.addenda += 1
        self.addendum_key = (0, 0)
        label = self._addendum_label()
        self._start(i, Part("addendum", label, i, i, addendum=label))

    def _addendum_label(self) -> str:
        return "부칙" if self.addenda <= 1 else f"부칙 {self.addenda}"

    def _appendix(self, i: int, label: str) -> None:
        self.mode = "appendix"
        kind = "form" if label.startswith(("별지", "서식")) else "appendix"
        count = self.seen_labels.get(label, 0) + 1
        self.seen_labels[label] = count
        unique = label if count == 1 else f"{label} ({count})"
        self._start(i, Part(kind, unique, i, i))

    def _start(self, i: int, part: Part) -> None:
        self._close(i - 1)
        self.open = part

    def _close(self, last: int) -> None:
        if self.open is None:
            return
        while last > self.open.first and not self.book.lines[last].strip():
            last -= 1
        part = self.open
        self.open = None
        self.parts.append(Part(part.kind, part.label, part.first, last, part.caption, part.no,
                               part.sub, part.last_no, part.chapter, part.section, part.addendum))

    def _notice(self) -> str:
        if not self.notes:
            self.book.issues.append((self.first + 1, f"{self.name}: a title with no text"))
            return "notice"
        text = " ".join(self.book.lines[i] for i in self.notes)
        self.parts.append(Part("notice", "", self.notes[0], self.notes[-1]))
        if "폐지" in text:
            return "abolished"
        if "이동" in text:
            return "moved"
        return "renamed" if re.search(r"명칭[ \t]*변경", text) else "notice"

    def _report_stray_notes(self) -> None:
        for i in self.notes:
            if NOTE.match(self.book.lines[i]):
                continue
            self.book.issues.append((i + 1, f"{self.name}: text outside any article, addendum "
                                     f"or appendix not kept: {self.book.lines[i].strip()[:40]!r}"))
