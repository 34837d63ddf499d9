"""The lines of a Korean regulation book: what one line says (a contents entry, an article or
chapter heading, an appendix label, a history row, a deletion note), with the patterns that
recognise them. The book's structure, built from these lines, is in text.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

NAME_SUFFIXES = ("규정", "세칙", "내규", "정관", "학칙", "규칙", "기준", "지침", "요령", "강령")
_DOTS = str.maketrans(dict.fromkeys("·․⋅•‧・･⸱·", "ㆍ"))
ABOLISHED_MARK = "【폐지】"
MAX_NAME = 80

_TOC_ENTRY = re.compile(r"([^\t]+?)[ \t]*\t[ \t]*(\d+-\d+-\d+)")
PART_HEADING = re.compile(r"^[ \t]*제[ \t]*\d+[ \t]*편[ \t]*$")
ARTICLE = re.compile(
    r"^[ \t]*제[ \t]*(?P<no>\d+)[ \t]*조"
    r"(?:[ \t]*의[ \t]*(?P<sub>\d+)|(?P<odd>[ \t]*\d+)(?=[ \t]*[(（]))?"
    r"(?:[ \t]*(?:내지|~|∼)[ \t]*제[ \t]*(?P<last>\d+)[ \t]*조(?:의[ \t]*\d+)?)?"
    r"(?P<rest>.*)$"
)
_CHAPTER = re.compile(
    r"^[ \t]*제[ \t]*(?P<no>\d+)[ \t]*(?P<level>[장절관])(?:의[ \t]*(?P<sub>\d+))?"
    r"(?:[ \t]+(?P<title>\S.*?))?[ \t]*$"
)
ADDENDUM = re.compile(r"^[ \t]*[<\[(]?[ \t]*부[ \t]*칙[ \t]*[>\])]?[ \t]*(?:[<(\[].*)?$")
_APPENDIX = re.compile(
    r"^[ \t]*[\[<(【〔［〈][ \t]*"
    r"(?P<label>(?:별[ \t]*표|별[ \t]*지|별[ \t]*첨|서[ \t]*식|붙[ \t]*임)"
    r"(?:[^\]>)】〕］〉(\n]|\([^)\n]{0,20}\)){0,40}?)[ \t]*[\]>)】〕］〉]"
)
NOTE = re.compile(r"^[ \t]*[<［\[]([^>\]］]+)[>\]］][ \t]*$")
TEXT_START = re.compile(r"[^\s제의에및,ㆍ·과와는은를을부까]")
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
    return re.sub(r"\s+", "", text.replace(ABOLISHED_MARK, "")).translate(_DOTS)


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
    m = ARTICLE.match(line)
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
    return spaced and not line[:1].isspace() and TEXT_START.match(body) is not None


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
        if i > MAX_NAME:
            break
    return None


def parse_chapter_heading(line: str) -> tuple[str, str] | None:
    """``(level, label)`` for ``제2장  신규임용`` → ``("장", "제2장 신규임용")``, else None.

    The label drops amendment notes (``<신설 …>``) and the letter spacing of short titles
    (``총  칙`` → ``총칙``).
    """
    m = _CHAPTER.match(line)
    if m is None or len(line.strip()) > MAX_NAME + 20:
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


def is_deleted(text: str) -> bool:
    """True when an article's text is only its heading and a deletion note (``<삭제 …>``)."""
    m = ARTICLE.match(text.split("\n", 1)[0])
    if m is None:
        return False
    rest = (m.group("rest") + text[len(text.split("\n", 1)[0]) :]).strip()
    caption = _caption(rest) if rest[:1] in "(（" else None
    if caption is not None and not caption.replace(" ", "").startswith("삭제"):
        rest = rest[len(caption) + 2 :].strip()
    return bool(_DELETED.match(rest))


def article_label(head: ArticleHead) -> str:
    return f"제{head.no}조" + (f"의{head.sub}" if head.sub else "")
