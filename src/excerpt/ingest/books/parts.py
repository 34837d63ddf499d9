"""Which part of a book a passage belongs to: the text itself, or its apparatus.

A book's nodes carry ``part`` metadata so that ``ask`` can leave the apparatus out (it fills
quotes with tables of contents, prefaces and notes) while ``search`` still finds it:

* ``body``: the work itself (books, chapters, and a body with no divisions);
* ``contents``: tables of contents and lists of illustrations (a ``Contents``,
  ``Illustrations``, ``List of …`` heading before the first division);
* ``front``: the rest of the text before the first division: the title page, prefaces,
  introductions, dedications (``Pope's Preface``, ``Introduction``; the author's own preface
  too, as in *Dorian Gray*: the text before the first chapter is apparatus by position);
* ``argument``: the summary that opens a book or chapter under an ``ARGUMENT`` heading (Pope's
  *Iliad*), up to the first verse paragraph (or, in prose, its first paragraph);
* ``back``: a concluding note, afterword, postscript or appendix after the last division;
* ``notes``: footnotes, endnotes and notes collected under a heading of their own;
* ``index``: an index or glossary.

The Project Gutenberg header and licence (``header``, ``licence``) are cut off before chunking,
so no node carries them; the names exist so a setting can list them.

Parts are spans of the body text; a chunk takes the part holding most of its own characters
(its core, without the overlap it repeats from the chunk before), ties going to ``body``, so
a chunk that is half argument and half verse stays in the text ``ask`` reads.

:func:`without_parts` and :func:`excluded_parts` are what ``Engine.ask`` uses to leave the
apparatus out of its search (setting ``ask_exclude_parts``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from excerpt.types import Hit

__all__ = ["APPARATUS", "PARTS", "PartSpan", "excluded_parts", "part_of",
           "part_spans", "without_parts"]

PARTS = ("body", "header", "licence", "contents", "front", "argument", "back", "notes", "index")
APPARATUS = frozenset(PARTS) - {"body"}

_CONTENTS = re.compile(
    r"^(?:TABLE\s+OF\s+)?CONTENTS|^(?:LIST\s+OF\s+)?(?:ILLUSTRATIONS|PLATES|MAPS|FIGURES)$"
    r"|^LIST\s+OF\b", re.I)
_NOTES = re.compile(r"^(?:FOOT\s?NOTES?|END\s?NOTES?|NOTES|TRANSCRIBER[’']?S\s+NOTES?)$", re.I)
_INDEX = re.compile(r"^(?:INDEX|GLOSSARY)(?:\s+OF\b.*)?$", re.I)
_BACK = re.compile(r"^(?:CONCLUDING\s+NOTES?|AFTERWORD|POSTSCRIPT|APPENDIX(?:\s+[A-Z0-9]+)?)$",
                   re.I)
_ARGUMENT = re.compile(r"^(?:THE\s+)?ARGUMENTS?\b[.\d]*$", re.I)
_MAX_HEADING = 60
_VERSE_LINE = 64  # Pope's couplets run 40-60 characters a line; prose is wrapped near 70-72
_ARGUMENT_HEAD_LINES = 6  # an ARGUMENT heading this close to the division's start
_ARGUMENT_MAX_PARAGRAPHS = 8


class PartSpan(NamedTuple):
    start: int
    end: int
    part: str


def part_spans(body: str, divisions: Sequence[tuple[str, int, int]]) -> list[PartSpan]:
    """The apparatus spans of ``body`` given its divisions ``(key, start, end)`` (keys as
    gutenberg.find_divisions makes them: ``front``, ``back``, ``body`` or a book/chapter)."""
    spans: list[PartSpan] = []
    for key, start, end in divisions:
        if key == "front":
            spans += _sections(body, start, end, "front", {"contents": _CONTENTS})
        elif key == "back":
            spans += _sections(body, start, end, "back",
                               {"notes": _NOTES, "index": _INDEX, "back": _BACK})
        else:
            spans += _argument(body, start, end)
            spans += [s for s in _sections(body, start, end, "body",
                                           {"notes": _NOTES, "index": _INDEX})
                      if s.part != "body"]
    return spans


def part_of(spans: Sequence[PartSpan], start: int, end: int) -> str:
    """The part holding most of ``body[start:end]`` (``body`` where no span does)."""
    share: dict[str, int] = {}
    for s in spans:
        overlap = min(end, s.end) - max(start, s.start)
        if overlap > 0:
            share[s.part] = share.get(s.part, 0) + overlap
    share["body"] = (end - start) - sum(share.values())
    best = max(share.values())
    return "body" if share["body"] == best else max(share, key=lambda p: share[p])


def _lines(body: str, start: int, end: int) -> list[tuple[int, str]]:
    """``(offset, line)`` for each line of ``body[start:end]``."""
    out, pos = [], start
    for line in body[start:end].split("\n"):
        out.append((pos, line))
        pos += len(line) + 1
    return out


def _standalone(lines: list[tuple[int, str]], i: int) -> bool:
    """A short line with a blank line (or the edge) on both sides: a heading."""
    text = lines[i][1].strip()
    return (0 < len(text) <= _MAX_HEADING
            and (i == 0 or not lines[i - 1][1].strip())
            and (i + 1 == len(lines) or not lines[i + 1][1].strip()))


def _sections(body: str, start: int, end: int, first: str,
              kinds: dict[str, re.Pattern[str]]) -> list[PartSpan]:
    """The division cut at its stand-alone headings: a heading matching one of ``kinds``
    starts a span of that part; in the front matter, any other heading that leads prose
    (Introduction, Preface: not an entry of a contents list) starts a ``front`` span; other
    headings change nothing (a one-line footnote does not end the notes)."""
    lines = _lines(body, start, end)
    cuts: list[tuple[int, str]] = [(start, first)]
    for i, (pos, line) in enumerate(lines):
        if not _standalone(lines, i):
            continue
        text = line.strip()
        kind = next((k for k, pattern in kinds.items() if pattern.match(text)), None)
        if kind is None and first == "front" and _leads_prose(lines, i):
            kind = first
        if kind is not None and kind != cuts[-1][1]:
            cuts.append((pos, kind))
    return [PartSpan(pos, cuts[k + 1][0] if k + 1 < len(cuts) else end, kind)
            for k, (pos, kind) in enumerate(cuts)
            if (cuts[k + 1][0] if k + 1 < len(cuts) else end) > pos]


def _leads_prose(lines: list[tuple[int, str]], i: int) -> bool:
    following = _paragraphs(lines, i + 1)[:1]
    return bool(following) and (len(following[0]) >= 2 or len(following[0][0][1]) > 100)


def _argument(body: str, start: int, end: int) -> list[PartSpan]:
    """The ARGUMENT that opens a book: from the division's start to the first verse
    paragraph; in prose, to the end of the first paragraph after the heading and its title."""
    lines = _lines(body, start, end)
    heads = [i for i, (_, line) in enumerate(lines[:_ARGUMENT_HEAD_LINES * 3])
             if _ARGUMENT.match(line.strip())]
    nonblank = [i for i, (_, line) in enumerate(lines) if line.strip()]
    if not heads or heads[0] not in nonblank[:_ARGUMENT_HEAD_LINES]:
        return []
    paragraphs = _paragraphs(lines, heads[0] + 1)[:_ARGUMENT_MAX_PARAGRAPHS]
    verse = next((p for p in paragraphs if _is_verse(p)), None)
    if verse is not None:
        return [PartSpan(start, verse[0][0], "argument")]
    prose = [p for p in paragraphs if not _is_title(p)]
    if not prose:
        return []
    last = prose[0][-1]
    return [PartSpan(start, last[0] + len(last[1]), "argument")]


def _paragraphs(lines: list[tuple[int, str]], first: int) -> list[list[tuple[int, str]]]:
    out: list[list[tuple[int, str]]] = [[]]
    for pos, line in lines[first:]:
        if line.strip():
            out[-1].append((pos, line))
        elif out[-1]:
            out.append([])
    return [p for p in out if p]


def _is_verse(paragraph: list[tuple[int, str]]) -> bool:
    return len(paragraph) >= 2 and max(len(line.rstrip()) for _, line in paragraph) <= _VERSE_LINE


def _is_title(paragraph: list[tuple[int, str]]) -> bool:
    """An upper-case title line such as ``THE CONTENTION OF ACHILLES AND AGAMEMNON.``"""
    text = " ".join(line.strip() for _, line in paragraph)
    return text.upper() == text


# --- what ask reads ----------------------------------------------------------------------------

_Hit = TypeVar("_Hit", bound=Hit)
_MAX_OVERFETCH = 32  # at most k * 32 hits are looked through for k that are not apparatus


def excluded_parts(setting: Sequence[str], where: Mapping[str, Any]) -> frozenset[str]:
    """The parts ``ask`` leaves out: the setting's, none when the caller's own filter names a
    part (asking inside the notes must find the notes)."""
    return frozenset() if "part" in where else frozenset(setting)


def without_parts(search: Callable[[int], Sequence[_Hit]], k: int,
                  excluded: frozenset[str]) -> list[_Hit]:
    """The ``k`` best hits of ``search(n)`` (the ``n`` best) whose node is not in an excluded
    part: it asks for k, then 4k, 16k … while excluded hits crowd the list, so apparatus
    neither fills the answer nor leaves it empty-handed (a corpus without apparatus costs one
    search of k, as before)."""
    if not excluded:
        return list(search(k))
    fetch = k
    while True:
        hits = search(fetch)
        kept = [h for h in hits if not _excluded(h.node.metadata.get("part"), excluded)]
        if len(kept) >= k or len(hits) < fetch or fetch >= _MAX_OVERFETCH * k:
            return kept[:k]
        fetch *= 4


def _excluded(part: Any, excluded: frozenset[str]) -> bool:
    return isinstance(part, str) and part in excluded
