"""Sentence splitting shared by quote selection, the composer and the RAG metrics.

:func:`sentence_spans` gives each sentence as a ``(start, end)`` span of the text it was cut
from, so that a quote is always ``text[start:end]``: the source's own characters, line breaks
included. :func:`split_sentences` gives the same sentences with each run of white space made
one space (hard-wrapped lines read as one line), for display and for metrics.

Text is first cut into blocks: paragraphs (blank lines), markdown headings, list items (a line
starting with ``-``, ``*``, ``•``, ``1.``, ``1)``, a circled number ``①`` as Korean 항 do, or
``가.`` as Korean 목 do) and lines with no letters. Other line breaks are hard wraps inside a
sentence. A block with Hangul is cut by Kiwi (``split_into_sents``: it knows Korean endings
such as ``-다``, ``-요`` without a full stop, and keeps ``<개정 2021. 9. 1.>`` with its
sentence). Any other block is cut after ``.``, ``!``, ``?``, ``。``, ``…`` or ``...`` (and any
closing quotes or brackets right after it: ``.”``, ``?’)``) followed by white space, except

* when a lower-case letter, a digit, ``<`` or ``>`` follows (``he said`` after a quoted
  question; a date amending the sentence before it),
* after an abbreviation that does not end a sentence (``Mr.``, ``Mrs.``, ``Dr.``, ``St.``,
  ``e.g.``, ``i.e.``, ``cf.``, ``vs.`` …: :data:`ABBREVIATIONS`) or an initial (``J. R.
  Tolkien``: one capital letter before the full stop).

``etc.`` is not in the list: it ends a sentence when a capital follows ("…, etc. The next").
Pieces with no letters (numbers, rules) are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "mme", "mlle", "dr", "st", "prof", "rev", "hon", "sr", "jr", "capt",
    "col", "gen", "lt", "sgt", "mt", "ft", "messrs", "gov", "pres", "e.g", "i.e", "cf", "vs",
    "viz", "no", "nos", "vol", "pp", "fig", "ch", "art", "approx", "esq", "co", "inc", "ltd",
})
_CLOSE = "\"'”’)\\]»"  # closing quotes and brackets after a sentence's end: .” ?’ .)
_END = re.compile(rf"(?:\.\.\.|…|[.!?。])[.!?…]*[{_CLOSE}]*(?=\s)")
_NEXT = re.compile(r"\s+(\S)")
_WORD_BEFORE = re.compile(r"([\w.]+)$")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_BLOCK_START = re.compile(r"^\s*(?:#|[-*•·]\s|\d+[.)]\s|[\u2460-\u2473]|[가-힣][.)]\s)")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_CITATION_MARK = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")

Span = tuple[int, int]


def _lines(text: str, start: int, end: int) -> list[Span]:
    """The lines of ``text[start:end]`` as spans (without their line breaks)."""
    spans, pos = [], start
    for line in text[start:end].split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def _paragraphs(text: str) -> list[Span]:
    spans, pos = [], 0
    for match in _PARAGRAPH.finditer(text):
        spans.append((pos, match.start()))
        pos = match.end()
    spans.append((pos, len(text)))
    return spans


def _blocks(text: str) -> list[Span]:
    """Paragraphs cut further at headings, list items and bare lines (module docstring)."""
    blocks: list[Span] = []
    for p_start, p_end in _paragraphs(text):
        current: list[Span] = []
        for start, end in _lines(text, p_start, p_end):
            line = text[start:end]
            heading = bool(current) and text[current[0][0]:current[0][1]].lstrip().startswith("#")
            bare = not any(ch.isalpha() for ch in line)  # a number or rule stands alone
            if current and (heading or bare or _BLOCK_START.match(line)):
                blocks.append((current[0][0], current[-1][1]))
                current = []
            if bare:
                blocks.append((start, end))
            elif line.strip():
                current.append((start, end))
        if current:
            blocks.append((current[0][0], current[-1][1]))
    return blocks


def _abbreviation(text: str, dot: int) -> bool:
    """Whether the full stop at ``dot`` closes an abbreviation or an initial, not a sentence."""
    found = _WORD_BEFORE.search(text, max(0, dot - 12), dot)  # a window: no rescan from 0
    if not found:
        return False
    word = found.group(1).lstrip(".")
    if len(word) == 1 and word.isupper():  # an initial: J. R. Tolkien
        return True
    return word.lower() in ABBREVIATIONS


def _english_cuts(text: str, start: int, end: int) -> list[Span]:
    spans, begin = [], start
    for match in _END.finditer(text, start, end):
        following = _NEXT.match(text, match.end(), end)
        if following is None:
            continue
        nxt = following.group(1)
        if nxt.islower() or nxt.isdigit() or nxt in "<>":
            continue
        if match.group().rstrip(_CLOSE) == "." and _abbreviation(text, match.start()):
            continue
        spans.append((begin, match.end()))
        begin = following.start(1)
    spans.append((begin, end))
    return spans


def _korean_cuts_many(blocks: Sequence[tuple[str, int, int]]) -> list[list[Span]]:
    """Kiwi's sentences of every ``(text, start, end)`` block, in one multi-threaded call."""
    if not blocks:
        return []
    from excerpt.analyze.korean import kiwi  # loaded on first use (about a second)

    found = kiwi().split_into_sents([text[start:end] for text, start, end in blocks])
    return [[(start + s.start, start + s.end) for s in sents]
            for (_, start, _), sents in zip(blocks, found, strict=True)]


def _trim(text: str, span: Span) -> Span | None:
    start, end = span
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    piece = text[start:end]
    return (start, end) if piece and any(ch.isalpha() for ch in piece) else None


def sentence_spans(text: str) -> list[Span]:
    """The sentences of ``text`` in order as ``(start, end)`` spans, white space trimmed;
    pieces without letters are left out. ``text[start:end]`` is the sentence verbatim."""
    return sentence_spans_many([text])[0]


def sentence_spans_many(texts: Sequence[str]) -> list[list[Span]]:
    """:func:`sentence_spans` of every text; the Korean blocks of all of them go to Kiwi in
    one call (a call per block cost 0.3 s of a 0.7 s Korean ask)."""
    cuts: list[list[list[Span]]] = []  # per text, per block
    korean: list[tuple[int, int]] = []  # (text, block) of each Korean block, in order
    for t, text in enumerate(texts):
        cuts.append([])
        for start, end in _blocks(text):
            if _HANGUL.search(text, start, end) is not None:
                korean.append((t, len(cuts[t])))
                cuts[t].append([(start, end)])
            else:
                cuts[t].append(_english_cuts(text, start, end))
    blocks = [(texts[t], *cuts[t][b][0]) for t, b in korean]
    for (t, b), spans in zip(korean, _korean_cuts_many(blocks), strict=True):
        cuts[t][b] = spans
    return [[s for block in per_text for span in block if (s := _trim(text, span)) is not None]
            for text, per_text in zip(texts, cuts, strict=True)]


def one_line(text: str) -> str:
    """``text`` with each run of white space made one space (a hard-wrapped sentence)."""
    return " ".join(text.split())


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, each on one line; pieces without letters left out."""
    return [one_line(text[start:end]) for start, end in sentence_spans(text)]


def strip_citation_marks(text: str) -> str:
    """``"… 한다 [1][2]."`` -> ``"… 한다."``: markers are not part of what a sentence claims."""
    return _CITATION_MARK.sub("", text)
