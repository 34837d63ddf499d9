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
issues are 1-based.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

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

NAME_SUFFIXES = ("규정", "세칙", "내규", "정관", "학칙", "규칙", "기준", "지침", "요령", "강령")
_DOTS = str.maketrans(dict.fromkeys("·․⋅•‧・･⸱·", "ㆍ"))
_ABOLISHED_MARK = "【폐지】"
_MAX_NAME = 80

_TOC_ENTRY = re.compile(r"([^\t]+?)[ \t]*\t[ \t]*(\d+-\d+-\d+)")
_PART_HEADING = re.compile(r"^[ \t]*제[ \t]*\d+[ \t]*편[ \t]*$")
_ARTICLE = re.compile(
    r"^[ \t]*제[ \t]*(?P<no>\d+)[ \t]*조"
    r"(?:[ \t]*의[ \t]*(?P<sub>\d+)|(?P<odd>[ \t]*\d+)(?=[ \t]*[(（]))?"
    r"(?:[ \t]*(?:내지|~|∼)[ \t]*제[ \t]*(?P<last>\d+)[ \t]*조(?:의[ \t]*\d+)?)?"
    r"(?P<rest>.*)$"
)
_CHAPTER = re.compile(
    r"^[ \t]*제[ \t]*(?P<no>\d+)[ \t]*(?P<level>[장절관])(?:의[ \t]*(?P<sub>\d+))?"
    r"(?:[ \t]+(?P<title>\S.*?))?[ \t]*$"
)
_ADDENDUM = re.compile(r"^[ \t]*[<\[(]?[ \t]*부[ \t]*칙[ \t]*[>\])]?[ \t]*(?:[<(\[].*)?$")
_APPENDIX = re.compile(
    r"^[ \t]*[\[<(【〔［〈][ \t]*"
    r"(?P<label>(?:별[ \t]*표|별[ \t]*지|별[ \t]*첨|서[ \t]*식|붙[ \t]*임)"
    r"(?:[^\]>)】〕］〉(\n]|\([^)\n]{0,20}\)){0,40}?)[ \t]*[\]>)】〕］〉]"
)
_NOTE = re.compile(r"^[ \t]*[<［\[]([^>\]］]+)[>\]］][ \t]*$")
_TEXT_START = re.compile(r"[^\s제의에및,ㆍ·과와는은를을부까]")
_TRAILING_NOTE = re.compile(r"[ \t]*(?:<[^>]*>|\((?:삭제|신설|개정)[^)]*\))[ \t]*$")
_DELETED = re.compile(r"^[<(\[]?[ \t]*삭[ \t]*제[^>)\]]*[>)\]]?[.]?$")
_ENACTED = re.compile(
    r"이[ \t]*(변경|개정)?[ \t]*\S{0,6}?(?:규정|세칙|정관|학칙|규칙|내규|기준)은[ \t]*"
    r"(\d{4}[ \t]*년[ \t]*\d{1,2}[ \t]*월[ \t]*\d{1,2}[ \t]*일)"
)
_HISTORY_ROW = re.compile(
    r"^[ \t]*(\d{4}\.[ \t]*\d{1,2}\.[ \t]*\d{1,2}\.).*?(제[ \t]*정|개[ \t]*정|″|〃)[ \t]*$"
)


def name_key(text: str) -> str:
    """A name as compared: no whitespace, no ``【폐지】`` mark, one middle dot (ㆍ)."""
    return re.sub(r"\s+", "", text.replace(_ABOLISHED_MARK, "")).translate(_DOTS)


def toc_entries(line: str) -> list[tuple[str, str]] | None:
    """``[(name, code), …]`` when the whole line is contents entries (``name<TAB>code``)."""
    stripped = line.strip()
    if "\t" not in stripped:
        return None
    found = [(m.group(1).strip(), m.group(2)) for m in _TOC_ENTRY.finditer(stripped)]
    if not found or _TOC_ENTRY.sub("", stripped).strip():
        return None
    return found


@dataclass(frozen=True)
class ArticleHead:
    """A parsed article heading line."""

    no: int
    sub: int
    last: int  # the last number of a range heading (제13조 내지 제17조), else ``no``
    caption: str  # without the parentheses; "" when there is none
    irregular: bool  # written 제15조 1 / 제10조2 and read as 제N조의M


def parse_article_heading(line: str) -> ArticleHead | None:
    """The heading of an article (``제15조 (임용) …``, ``제16조 <삭제 …>``), else None.

    A line that merely starts with an article reference (``제14조의 규정에 의거``, ``제5조제1항``,
    a bare ``제26조`` table cell) is not a heading.  Text without a caption (``제17조 이 규정은``)
    counts only when the line is not indented.
    """
    m = _ARTICLE.match(line)
    if m is None:
        return None
    rest = m.group("rest")
    body = rest.lstrip(" \t\u00a0")
    if not body:
        return None
    if body[0] in "(（":
        caption = _caption(body)
        if caption is None:
            return None
    elif body[0] in "<[［" or _uncaptioned(line, rest, body):
        caption = ""
    else:
        return None
    if caption.replace(" ", "").startswith("삭제"):
        caption = ""
    no = int(m.group("no"))
    sub = int(m.group("sub") or (m.group("odd") or "0").strip() or 0)
    last = int(m.group("last") or no)
    return ArticleHead(no, sub, max(last, no), caption.strip(), m.group("odd") is not None)


def _uncaptioned(line: str, rest: str, body: str) -> bool:
    """``제17조 이 규정에 …``: an article without a caption (only on unindented lines)."""
    spaced = rest[:1] in (" ", "\t", "\u00a0")
    return spaced and not line[:1].isspace() and _TEXT_START.match(body) is not None


def _caption(text: str) -> str | None:
    """The text inside the balanced parentheses ``text`` starts with, or None."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "(（":
            depth += 1
        elif ch in ")）":
            depth -= 1
            if depth == 0:
                return text[1:i]
        if i > _MAX_NAME:
            break
    return None


def parse_chapter_heading(line: str) -> tuple[str, str] | None:
    """``(level, label)`` for ``제2장  신규임용`` → ``("장", "제2장 신규임용")``, else None.

    The label drops amendment notes (``<신설 …>``) and the letter spacing of short titles
    (``총  칙`` → ``총칙``).
    """
    m = _CHAPTER.match(line)
    if m is None or len(line.strip()) > _MAX_NAME + 20:
        return None
    title = _TRAILING_NOTE.sub("", m.group("title") or "").strip()
    if title.endswith("다.") or re.match(r"제[ \t]*\d+[ \t]*[장절관조항호]", title):
        return None
    words = title.split()
    spaced_out = bool(words) and all(len(w) == 1 for w in words)
    title = ("" if spaced_out else " ").join(words)
    number = f"제{m.group('no')}{m.group('level')}"
    if m.group("sub"):
        number += f"의{m.group('sub')}"
    return m.group("level"), f"{number} {title}".strip()


def appendix_label(line: str) -> str | None:
    """``별표 1``, ``별지 제1호 서식``, ``별첨 1-1``, ``붙임`` for an appendix heading, or None."""
    m = _APPENDIX.match(line)
    if m is None:
        return None
    label = re.sub(r"\s+", " ", m.group("label")).strip()
    label = re.sub(r"^(별|서|붙) (표|지|첨|식|임)", r"\1\2", label)
    return re.sub(r"^(별표|별첨|서식)(?=\d)", r"\1 ", label)


def history_entries(lines: list[str]) -> Iterator[str]:
    """Amendment entries in 부칙 lines: ``1996년 7월 1일 제정`` (the first ``이 규정은 …부터
    시행한다``), ``2001년 3월 1일 개정`` (``이 변경 규정은 …``), or a history table row
    ``1966. 10. 22. 제정`` as written (``″`` repeats the previous kind)."""
    seen_first = False
    previous = "제정"
    for line in lines:
        row = _HISTORY_ROW.match(line)
        if row:
            kind = row.group(2).replace(" ", "").replace("\t", "")
            kind = previous if kind in ("″", "〃") else kind
            previous = kind
            seen_first = True
            yield f"{_spaced(row.group(1))} {kind}"
            continue
        m = _ENACTED.search(line)
        if m is None:
            continue
        date = _spaced(m.group(2))
        amended = bool(m.group(1)) or seen_first
        seen_first = True
        yield f"{date} {'개정' if amended else '제정'}"


def _spaced(text: str) -> str:
    return re.sub(r"[ \t]+", " ", text)


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
    body = next((i for i in range(dept + 1, len(lines)) if _PART_HEADING.match(lines[i])),
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
        pending = [_Entry({name_key(n)}, c, _ABOLISHED_MARK in n) for c, n in book.contents.items()]
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
                                      _ABOLISHED_MARK in name + main))
            continue
        if _PART_HEADING.match(line):
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
    if not key or len(key) > _MAX_NAME:
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
    if parse_article_heading(line) or parse_chapter_heading(line) or _ADDENDUM.match(line):
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
        history = [h.strip("<>[]［］ ") for h in history if _NOTE.match(h) or status != "in_force"]
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
        elif _ADDENDUM.match(line):
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
            self._start(i, Part("addendum", f"{prefix} {_article_label(head)}", i, i,
                                head.caption, head.no, head.sub, head.last, addendum=prefix))
            return
        if key <= self.last_key:
            return self._stray(i, head)
        self.mode = "body"
        self.last_key = (head.last, head.sub) if head.last > head.no else key
        if head.irregular:
            self.book.issues.append((i + 1, f"{self.name}: irregular article number "
                                     f"{self.book.lines[i].strip()[:20]!r} read as "
                                     f"{_article_label(head)}"))
        self._start(i, Part("article", _article_label(head), i, i, head.caption, head.no,
                            head.sub, head.last, self.chapter, self.section))

    def _stray(self, i: int, head: ArticleHead) -> None:
        if self.mode != "appendix" and self.open is not None:
            self.book.issues.append((i + 1, f"{self.name}: {_article_label(head)} out of order "
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
            if _NOTE.match(self.book.lines[i]):
                continue
            self.book.issues.append((i + 1, f"{self.name}: text outside any article, addendum "
                                     f"or appendix not kept: {self.book.lines[i].strip()[:40]!r}"))


def is_deleted(text: str) -> bool:
    """True when an article's text is only its heading and a deletion note (``<삭제 …>``)."""
    m = _ARTICLE.match(text.split("\n", 1)[0])
    if m is None:
        return False
    rest = (m.group("rest") + text[len(text.split("\n", 1)[0]) :]).strip()
    caption = _caption(rest) if rest[:1] in "(（" else None
    if caption is not None and not caption.replace(" ", "").startswith("삭제"):
        rest = rest[len(caption) + 2 :].strip()
    return bool(_DELETED.match(rest))


def _article_label(head: ArticleHead) -> str:
    return f"제{head.no}조" + (f"의{head.sub}" if head.sub else "")
