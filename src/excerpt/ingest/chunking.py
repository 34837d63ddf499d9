"""Paragraph-aware chunking: character spans into a text, never copies of it.

A chunk is a span ``(start, end)`` of the input.  The plan:

1. Paragraphs are the runs of text between blank lines (a line holding only whitespace).
2. A paragraph longer than the target is cut at sentence ends; a sentence longer than the
   target at line breaks; a line longer than the target at whitespace; a "word" longer than the
   target (a URL, a hash) at exactly ``target_chars``.  The pieces are the packing atoms.
3. Atoms are packed greedily, in order, into chunks of at most ``target_chars``.  A chunk is
   closed early at a paragraph boundary when the next paragraph would not fit whole and the
   chunk is already at least half full, so paragraphs are split only when they must be.
4. Every chunk after the first is extended backwards by about ``overlap_chars`` into its
   predecessor; the overlap starts at a sentence start if one lies in that window, else at a
   line start, else at a word start (never inside a word, never on whitespace).

Guarantees (property-tested): every non-whitespace character lies in at least one chunk; spans
are within bounds, non-empty, start and end on non-whitespace, strictly increasing in both
start and end; a chunk's *core* (``core_start .. end``) never exceeds ``target_chars`` unless a
single atom forces it (it cannot: atoms are cut to the target); the same input gives the same
output.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import NamedTuple

__all__ = ["ChunkSpan", "chunk_spans", "chunk_text"]

# A blank line: newline, optional non-newline whitespace, newline (``\r\n`` endings included).
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")
# A sentence end: terminal punctuation, optional closing quotes/brackets, then whitespace.
_SENTENCE_BREAK = re.compile(r"[.!?…。！？][\"'”’)\]»」』]*(\s+)")
_LINE_BREAK = re.compile(r"\s*\n\s*")
_WHITESPACE = re.compile(r"\s+")

_SENTENCE, _LINE, _WORD, _HARD = range(4)


class ChunkSpan(NamedTuple):
    """One chunk: ``text[start:end]``; ``core_start`` is where it starts without its overlap."""

    start: int
    end: int
    core_start: int


def chunk_text(
    text: str, target_chars: int = 800, overlap_chars: int = 100
) -> list[tuple[int, int]]:
    """Cut ``text`` into overlapping, paragraph-aware ``(start, end)`` spans.

    Whitespace-only text gives ``[]``.  Raises ``ValueError`` for ``target_chars < 1`` or
    ``overlap_chars < 0``.
    """
    return [(c.start, c.end) for c in chunk_spans(text, target_chars, overlap_chars)]


def chunk_spans(text: str, target_chars: int = 800, overlap_chars: int = 100) -> list[ChunkSpan]:
    """Like :func:`chunk_text`, also telling where each chunk starts without its overlap."""
    if target_chars < 1:
        raise ValueError(f"target_chars must be at least 1, got {target_chars}")
    if overlap_chars < 0:
        raise ValueError(f"overlap_chars must not be negative, got {overlap_chars}")
    paragraphs = _paragraphs(text)
    if not paragraphs:
        return []
    cores = _pack(text, paragraphs, target_chars)
    if overlap_chars == 0:
        return [ChunkSpan(s, e, s) for s, e in cores]
    sentence_starts = _sentence_starts(text, paragraphs)
    out: list[ChunkSpan] = []
    for k, (core_start, end) in enumerate(cores):
        start = core_start
        if k:
            floor = max(core_start - overlap_chars, out[-1].start + 1)
            start = _overlap_start(text, sentence_starts, floor, core_start, overlap_chars)
        out.append(ChunkSpan(start, end, core_start))
    return out


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span without leading/trailing whitespace, or None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _split_by(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Trimmed, non-empty segments of ``text[start:end]`` between matches of ``pattern``.

    The separator is the pattern's group 1 when it has one (so punctuation stays with its
    sentence), else the whole match.
    """
    segments: list[tuple[int, int]] = []
    pos = start
    for m in pattern.finditer(text, start, end):
        cut_start, cut_end = (m.start(1), m.end(1)) if pattern.groups else (m.start(), m.end())
        span = _trim(text, pos, cut_start)
        if span:
            segments.append(span)
        pos = cut_end
    span = _trim(text, pos, end)
    if span:
        segments.append(span)
    return segments


def _paragraphs(text: str) -> list[tuple[int, int]]:
    return _split_by(_PARAGRAPH_BREAK, text, 0, len(text))


_LEVEL_PATTERNS = {_SENTENCE: _SENTENCE_BREAK, _LINE: _LINE_BREAK, _WORD: _WHITESPACE}


def _atoms(text: str, start: int, end: int, level: int, target: int) -> list[tuple[int, int]]:
    """Pieces of at most ``target`` chars covering the span, cut at the coarsest boundary."""
    if end - start <= target:
        return [(start, end)]
    if level == _HARD:
        return [(i, min(i + target, end)) for i in range(start, end, target)]
    segments = _split_by(_LEVEL_PATTERNS[level], text, start, end)
    if len(segments) <= 1:
        return _atoms(text, start, end, level + 1, target)
    out: list[tuple[int, int]] = []
    for s, e in segments:
        out.extend(_atoms(text, s, e, level + 1, target))
    return out


def _pack(text: str, paragraphs: list[tuple[int, int]], target: int) -> list[tuple[int, int]]:
    """Greedy packing of atoms into chunk cores of at most ``target`` chars."""
    cores: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for p_start, p_end in paragraphs:
        for i, (a_start, a_end) in enumerate(_atoms(text, p_start, p_end, _SENTENCE, target)):
            if current is None:
                current = (a_start, a_end)
                continue
            c_start, c_end = current
            fits = a_end - c_start <= target
            if fits and i == 0 and p_end - c_start > target and 2 * (c_end - c_start) >= target:
                fits = False  # the paragraph must be split anyway: start it in a fresh chunk
            if fits:
                current = (c_start, a_end)
            else:
                cores.append(current)
                current = (a_start, a_end)
    if current is not None:
        cores.append(current)
    return cores


def _sentence_starts(text: str, paragraphs: list[tuple[int, int]]) -> list[int]:
    starts = {s for s, _ in paragraphs}
    starts.update(m.end() for m in _SENTENCE_BREAK.finditer(text) if m.end() < len(text))
    return sorted(starts)


def _overlap_start(
    text: str, sentence_starts: list[int], floor: int, core_start: int, overlap: int
) -> int:
    """Where a chunk whose core starts at ``core_start`` begins, looking back no further than
    ``floor``: the earliest sentence start, else line start, else word start in the window,
    preferring a finer boundary when the coarser one would give less than half the overlap."""
    if floor >= core_start:
        return core_start
    wanted = core_start - max(overlap // 2, 1)
    i = bisect_left(sentence_starts, floor)
    if i < len(sentence_starts) and sentence_starts[i] <= wanted:
        return sentence_starts[i]
    line_start = word_start = -1
    for pos in range(floor, core_start):
        if text[pos].isspace() or (pos > 0 and not text[pos - 1].isspace()):
            continue
        if line_start < 0 and (pos == 0 or _after_newline(text, pos)):
            line_start = pos
        if word_start < 0:
            word_start = pos
    if 0 <= line_start <= wanted:
        return line_start
    if word_start >= 0:
        return word_start
    return core_start


def _after_newline(text: str, pos: int) -> bool:
    """True when only whitespace containing a newline separates ``pos`` from the text before."""
    j = pos - 1
    while j >= 0 and text[j].isspace():
        if text[j] == "\n":
            return True
        j -= 1
    return False
