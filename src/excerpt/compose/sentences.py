"""Sentence splitting shared by quote selection and the RAG metrics.

Text is first cut into blocks: paragraphs (blank lines), markdown headings, list items (a line
starting with ``-``, ``*``, ``•``, ``1.``, ``1)``, a circled number ``①`` as Korean 항 do, or
``가.`` as Korean 목 do) and lines with no letters. Other line breaks are hard wraps inside a
sentence and become spaces. Each block is then cut after ``.``, ``!``, ``?`` or ``。`` (and any
closing quotes or brackets right after it: ``.”``) followed by white space, unless a digit,
``<``, ``>`` or a lower-case letter follows: a date such as ``<개정 2021. 9. 1.>`` stays with
the sentence it amends (the cut comes after it), and so does "he said" after a quoted
question. Pieces with no letters (numbers, rules) are dropped.
"""

from __future__ import annotations

import re

_CLOSE = "\"'”’)\\]»"  # closing quotes and brackets after a sentence's end: .” ?’ .)
_SENTENCE_END = re.compile(
    rf"(?:(?<=[.!?。])|(?<=[.!?。][{_CLOSE}])|(?<=[.!?。][{_CLOSE}][{_CLOSE}])|(?<=\.>))"
    r"\s+(?![\d<>a-z])")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_BLOCK_START = re.compile(r"^\s*(?:#|[-*•·]\s|\d+[.)]\s|[\u2460-\u2473]|[가-힣][.)]\s)")
_CITATION_MARK = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


def _blocks(text: str) -> list[str]:
    blocks: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        current: list[str] = []
        for line in paragraph.splitlines():
            heading = bool(current) and current[0].lstrip().startswith("#")
            bare = not any(ch.isalpha() for ch in line)  # a number or rule stands alone
            if current and (heading or bare or _BLOCK_START.match(line)):
                blocks.append(" ".join(current))
                current = []
            if bare:
                blocks.append(line)
            elif line.strip():
                current.append(line.strip())
        if current:
            blocks.append(" ".join(current))
    return blocks


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, stripped; pieces without letters are left out."""
    parts = (s.strip() for block in _blocks(text) for s in _SENTENCE_END.split(block))
    return [s for s in parts if s and any(ch.isalpha() for ch in s)]


def strip_citation_marks(text: str) -> str:
    """``"… 한다 [1][2]."`` -> ``"… 한다."``: markers are not part of what a sentence claims."""
    return _CITATION_MARK.sub("", text)
