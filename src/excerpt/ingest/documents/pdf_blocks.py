"""A PDF's paragraphs (page by page, in reading order) as :class:`Block`\\ s: which are headings
and at what level, which are list items, code, footnotes and table rows, and how their lines
join (hyphenation at line ends repaired).

Headings: when the PDF has an outline (bookmarks), its entries are the headings, at their
outline depth, matched to the paragraph on their page that carries their title (the outline is
what the author declared; font sizes only guess). Text set larger than the body text is still a
heading below the outline's depth. Without an outline, larger text is a heading (larger size,
higher level) and a short bold line at body size is the lowest level.

Hyphenation: "infor-" + "mation" becomes "information", but a hyphen that belongs to the word
stays ("well-" + "known" is "well-known"). The document decides: a joined form it uses
elsewhere wins, then a hyphenated form it uses elsewhere; two halves that are both words of the
document on their own keep their hyphen; otherwise the hyphen was the typesetter's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import pairwise

from excerpt.ingest.documents.blocks import Block, BlockKind
from excerpt.ingest.documents.pdf_layout import Para

HEADING_RATIO = 1.15  # text this much larger than the body is a heading
_BULLET = re.compile(r"^([•◦▪‣∙·\-–—*])\s+")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_SPLIT = re.compile(r"([^\W\d_]+)-\n([^\W\d_]+)")
_LABEL = re.compile(r"^(chapter|appendix|part|section|kapitel|chapitre)\s+\S+$", re.IGNORECASE)
_LINE_END_WORD = re.compile(r"([^\W\d_]+)-$")
_LINE_START_WORD = re.compile(r"[^\W\d_]+")
_LEADER = re.compile(r"(?: ?\.){4,} ?")  # dot leaders of a table of contents
_ENDS_IN_NUMBER = re.compile(r"(?<![.,\d])(\d{1,4})$")
_LETTERS = re.compile(r"[^\W\d_]{2}")
_COMPOUND_FIRST = {"self", "well", "cross", "half", "best", "worst"}


@dataclass
class PagePars:
    """One page's paragraphs in reading order."""

    number: int
    label: str | None
    height: float
    paras: list[Para]


@dataclass(frozen=True)
class OutlineEntry:
    level: int  # 0 outermost
    title: str
    page: int  # 1-based
    y: float | None


def contents_pages(pages: list[PagePars]) -> list[int]:
    """Pages that are a table of contents: eight lines or more, most of them text ending in a
    page number, the numbers rising. Their text is navigation (as the HTML and EPUB readers
    drop it): it would answer every question about a title with a line of the contents."""
    found = []
    for page in pages:
        lines = [line for p in page.paras if p.table is None for line in p.lines]
        numbers = [int(m.group(1)) for line in lines
                   if _LETTERS.search(line) and (m := _ENDS_IN_NUMBER.search(line))]
        if len(lines) < 8 or len(numbers) < 0.6 * len(lines):
            continue
        rising = sum(b >= a for a, b in pairwise(numbers))
        if rising >= 0.9 * (len(numbers) - 1) and max(numbers) <= len(pages) + 50:
            found.append(page.number)
    return found


def body_size(pages: list[PagePars]) -> float:
    """The font size most of the text is set in."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for para in page.paras:
            if para.table is None:
                sizes[round(para.style.size * 2) / 2] += sum(len(line) for line in para.lines)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def _is_heading(para: Para, body: float) -> bool:
    text = " ".join(para.lines)
    if para.table is not None or para.style.mono or len(para.lines) > 3 or len(text) > 200:
        return False
    if not re.search(r"[^\W\d_]", text):
        return False
    if para.style.size >= body * HEADING_RATIO:
        return True
    return (para.style.bold and para.style.size >= body * 0.95 and len(para.lines) <= 2
            and len(text) <= 120 and not text.rstrip().endswith((".", ":", ",", ";")))


Join = Callable[[list[str]], str]  # a paragraph's lines to its text


def heading_levels(pages: list[PagePars], body: float, outline: list[OutlineEntry],
                   join: Join) -> dict[int, tuple[int, str]]:
    """Heading level and text by ``id()`` of the paragraph that is a heading. Below an outline,
    a heading text set three times or more ("Tip", "Note", a part's "Table of Contents") is a
    label, not a section."""
    levels: dict[int, tuple[int, str]] = {}
    deepest = 0
    if outline:
        deepest = _match_outline(pages, outline, levels, join)
    candidates = [p for pg in pages for p in pg.paras
                  if id(p) not in levels and _is_heading(p, body)]
    sizes = sorted({round(p.style.size * 2) / 2 for p in candidates
                    if p.style.size >= body * HEADING_RATIO}, reverse=True)[:5]
    texts = [join(p.lines) for p in candidates]
    seen = Counter(texts)
    for para, text in zip(candidates, texts, strict=True):
        size = round(para.style.size * 2) / 2
        if outline and (size < body * HEADING_RATIO or seen[text] >= 3):
            continue
        rank = sizes.index(size) if size in sizes else len(sizes)
        levels[id(para)] = (deepest + 1 + (0 if outline else rank), text)
    return levels


def _match_outline(pages: list[PagePars], outline: list[OutlineEntry],
                   levels: dict[int, tuple[int, str]], join: Join) -> int:
    """Mark the paragraph each outline entry names (on its page or the next), with the chapter
    label set above it ("Chapter 1", "CHAPTER" / "ONE") folded into its text; entries whose
    title is on neither page become headings of their own (see :func:`to_blocks`). Returns
    the deepest outline level (1-based)."""
    by_number = {p.number: p for p in pages}
    for entry in outline:
        want = _norm(entry.title)
        for number in (entry.page, entry.page + 1):
            page = by_number.get(number)
            if page is None or not want:
                continue
            place = _find_title(page, want, levels, join)
            if place is not None:
                found, count = place
                text = join([line for p in page.paras[found:found + count] for line in p.lines])
                for label in _labels_before(page, found, levels):
                    text = " ".join(label.lines) + " " + text
                    levels[id(label)] = (0, "")
                levels[id(page.paras[found])] = (entry.level + 1, text)
                for rest in page.paras[found + 1:found + count]:
                    levels[id(rest)] = (0, "")
                break
        else:
            levels[id(entry)] = (entry.level + 1, entry.title)
    return max(e.level for e in outline) + 1


def _labels_before(page: PagePars, found: int, levels: dict[int, tuple[int, str]]
                   ) -> list[Para]:
    """The one or two short paragraphs just above a heading that make a chapter label, the
    nearest first."""
    before = [p for p in page.paras[max(0, found - 2):found] if p.table is None]
    for take in (1, 2):
        paras = before[-take:]
        if len(paras) < take or any(id(p) in levels or len(" ".join(p.lines)) > 20
                                    for p in paras):
            return []
        if _LABEL.match(" ".join(" ".join(p.lines) for p in paras)):
            return paras[::-1]
    return []


def _find_title(page: PagePars, want: str, levels: dict[int, tuple[int, str]], join: Join
                ) -> tuple[int, int] | None:
    """Where the title ``want`` (normalised) is set on the page: the index of its paragraph and
    how many paragraphs it takes (two when its second line stands apart, as a right-aligned
    title's shorter last line does)."""
    usable = [p.table is None and id(p) not in levels and len(p.lines) <= 3 for p in page.paras]
    for i, para in enumerate(page.paras):
        if not usable[i]:
            continue
        have = _norm(join(para.lines))
        if _names(have, want):
            return i, 1
        pair = para.lines + page.paras[i + 1].lines if i + 1 < len(page.paras) else []
        if (pair and usable[i + 1] and want.startswith(_unnumbered(have))
                and _names(_norm(join(pair)), want)):
            return i, 2
    return None


def _unnumbered(text: str) -> str:
    """A normalised heading without its number ("5 9 moving" -> "moving"); a title's first
    line must begin the title for its second line to be looked for."""
    words = text.split()
    while words and (words[0].isdigit() or len(words[0]) == 1):
        words.pop(0)
    return " ".join(words) or "\0"


def _names(have: str, want: str) -> bool:
    return have == want or (have.endswith(" " + want) and len(have) <= len(want) + 25)


def vocabulary(pages: list[PagePars]) -> tuple[Counter[str], set[str]]:
    """Words the document uses (not counting the halves of words split at a line end) and the
    hyphenated words among them."""
    words: Counter[str] = Counter()
    for page in pages:
        for para in page.paras:
            if para.table is None and not para.style.mono:
                words.update(_WORD.findall(_SPLIT.sub(" ", "\n".join(para.lines)).lower()))
    return words, {w for w in words if "-" in w}


def join_lines(lines: list[str], words: Counter[str], hyphenated: set[str]) -> str:
    """One paragraph's text from its lines, line-end hyphenation repaired."""
    text = lines[0]
    for before, line in pairwise(lines):
        m = _LINE_END_WORD.search(before) if before.endswith("-") else None
        n = _LINE_START_WORD.match(line)
        if m and n:
            keep = _keeps_hyphen(m.group(1), n.group(0), words, hyphenated)
            text = text if keep else text[:-1]
        elif not text.endswith("-"):
            text += " "
        text += line
    return " ".join(text.split())


def _keeps_hyphen(left: str, right: str, words: Counter[str], hyphenated: set[str]) -> bool:
    if not right[0].islower():
        return True
    joined, dashed = (left + right).lower(), f"{left}-{right}".lower()
    if words[joined]:
        return False
    if dashed in hyphenated or left.lower() in _COMPOUND_FIRST:
        return True
    return words[left.lower()] > 0 and words[right.lower()] > 0 and len(left) > 1


def to_blocks(pages: list[PagePars], outline: list[OutlineEntry]) -> list[Block]:
    """Every page's paragraphs as blocks, in page order."""
    body = body_size(pages)
    words, hyphenated = vocabulary(pages)
    levels = heading_levels(pages, body, outline,
                            lambda lines: join_lines(lines, words, hyphenated))
    orphans = {e.page: [] for e in outline}  # type: dict[int, list[OutlineEntry]]
    for e in outline:
        if id(e) in levels:
            orphans[e.page].append(e)
    blocks: list[Block] = []
    indents: list[float] = []  # bullet positions of the list being read, left to right
    for page in pages:
        pending = sorted(orphans.get(page.number, []), key=lambda e: -(e.y or 1e9))
        for para in page.paras:
            while pending and (pending[0].y is None or pending[0].y >= para.y1 - 1):
                e = pending.pop(0)
                blocks.append(_block(page, "heading", e.title, e.level + 1))
                indents = []
            made = _para_blocks(page, para, levels, body, words, hyphenated)
            if len(made) == 1 and made[0].kind == "list_item":
                made = [replace(made[0], level=_depth(indents, para.x0))]
            elif made and made[0].kind != "footnote":  # a list goes on past the footnotes
                indents = []
            blocks.extend(made)
        blocks.extend(_block(page, "heading", e.title, e.level + 1) for e in pending)
    return blocks


def _depth(indents: list[float], x0: float) -> int:
    """A list item's depth: how many bullet positions of its list lie left of its own (a
    list's first item seen sets depth 0; positions within 3 points are one)."""
    for i, x in enumerate(indents):
        if abs(x - x0) <= 3:
            return i
    indents.append(x0)
    indents.sort()
    return indents.index(x0)


def _para_blocks(page: PagePars, para: Para, levels: dict[int, tuple[int, str]], body: float,
                 words: Counter[str], hyphenated: set[str]) -> list[Block]:
    if para.table is not None:
        return [_block(page, "table_row", " | ".join(row)) for row in para.table]
    if id(para) in levels:
        level, text = levels[id(para)]
        return [_block(page, "heading", " ".join(_LEADER.sub(" ", text).split()), level)
                ] if level else []
    if para.style.mono:
        return [_block(page, "code", "\n".join(para.lines))]
    text = _LEADER.sub(" ", join_lines(para.lines, words, hyphenated))
    bullet = _BULLET.match(text)
    if bullet:
        return [_block(page, "list_item", text[bullet.end():])]
    small = para.style.size <= body * 0.9
    if small and para.y1 < page.height * 0.3 and re.match(r"^[\d*†‡]", text):
        return [_block(page, "footnote", text)]
    return [_block(page, "paragraph", text)]


def _block(page: PagePars, kind: BlockKind, text: str, level: int = 0) -> Block:
    return Block(kind, text, level=level, page=page.number, page_label=page.label)
