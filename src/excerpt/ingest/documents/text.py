"""Plain text and markdown files (a file, several, or folders walked recursively).

One file is one :class:`Document` (id: its path relative to the folder it was found in, POSIX
style; a file named directly: its file name) and its chunks are nodes ``f"{doc_id}:{i:04d}"``.
A node's ``start``/``end`` are offsets into the file's cleaned text: UTF-8 decoded, byte order
mark dropped, line endings normalised to ``\\n``; ``node.text == cleaned[start:end]``.
Node metadata: ``path`` (the document id) and ``chunk`` (its index); in markdown files
(``.md``, ``.markdown``) every heading starts a section that is chunked on its own, and its
nodes carry the heading text as ``section`` (text before the first heading has none).  The
title is a markdown file's front-matter ``title:``, else its first ``#`` heading, else its
first heading, else the first line with a letter or digit (at most 120 characters), else the
file name.

Bad files do not stop the run: binary files, invalid UTF-8 (with the byte offset), unreadable,
empty or whitespace-only files become :class:`IngestIssue` entries in ``errors``.  A path that
does not exist raises :class:`InputError`; a folder (or a whole input) with no readable text
file raises :class:`CorpusError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.errors import CorpusError
from excerpt.ingest._common import (
    BINARY_SNIFF_BYTES,
    check_options,
    labels,
    normalize_newlines,
    relative_id,
    require_paths,
    source_name,
    walk_files,
)
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.chunking import chunk_spans
from excerpt.types import Document, IngestIssue, Node

__all__ = ["MARKDOWN_SUFFIXES", "TEXT_SUFFIXES", "load_text", "read_text_file"]

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst", ".text")
MARKDOWN_SUFFIXES = (".md", ".markdown")
TITLE_MAX_CHARS = 120
_MAX_LISTED_ISSUES = 5


def load_text(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
    """Load text/markdown files and folders into one corpus (see the module docstring)."""
    options = options or LoadOptions()
    check_options(options)
    given = require_paths(paths, options.roots)
    corpus = LoadedCorpus(source=source_name(given))
    owners: dict[str, Path] = {}
    seen: set[Path] = set()
    # Sorted by resolved path, so the argument order changes nothing (the source is sorted too).
    for path in sorted(given, key=lambda p: str(p.resolve())):
        if path.is_dir():
            before_docs, before_issues = len(corpus.documents), len(corpus.errors)
            files = [f for f in walk_files(path) if f.suffix.lower() in TEXT_SUFFIXES]
            for f in files:
                _load_file(f, relative_id(f, path), options, corpus, owners, seen)
            if len(corpus.documents) == before_docs:
                raise CorpusError(
                    f"no readable text files in {path}"
                    + _why(corpus.errors[before_issues:], len(files))
                )
        else:
            _load_file(path, path.name, options, corpus, owners, seen)
    if not corpus.documents:
        raise CorpusError(
            "no readable text files in " + ", ".join(str(p) for p in given) + _why(corpus.errors)
        )
    return corpus


def _why(issues: Sequence[IngestIssue], candidates: int | None = None) -> str:
    if not issues:
        suffixes = ", ".join(TEXT_SUFFIXES)
        return f" (no files with the suffixes {suffixes})" if candidates == 0 else ""
    listed = "; ".join(f"{i.path}: {i.reason}" for i in issues[:_MAX_LISTED_ISSUES])
    more = len(issues) - _MAX_LISTED_ISSUES
    return f" ({listed}{f'; and {more} more' if more > 0 else ''})"


def read_text_file(path: Path) -> tuple[str | None, str | None]:
    """``(cleaned_text, None)`` for a readable UTF-8 text file, else ``(None, reason)``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"cannot read file: {exc.strerror or exc}"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, "UTF-16 text (byte order mark); convert the file to UTF-8"
    nul = data.find(b"\x00", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        return None, f"binary file (NUL byte at offset {nul})"
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + bom
        return None, (
            f"not valid UTF-8: byte 0x{data[offset]:02x} at offset {offset} "
            "(binary, or text in another encoding)"
        )
    if not text:
        return None, "empty file"
    if not text.strip():
        return None, "file holds only whitespace"
    return normalize_newlines(text), None


def _load_file(
    path: Path,
    doc_id: str,
    options: LoadOptions,
    corpus: LoadedCorpus,
    owners: dict[str, Path],
    seen: set[Path],
) -> None:
    resolved = path.resolve()
    if resolved in seen:  # the same file reached twice (named twice, or inside a named folder)
        return
    seen.add(resolved)
    if "\n" in doc_id or "\r" in doc_id:
        corpus.errors.append(IngestIssue(path=str(path), reason="file name holds a line break"))
        return
    if doc_id in owners:
        raise CorpusError(
            f"two files would get the same document id {doc_id!r}: {owners[doc_id]} and {path}; "
            "load them as separate sources"
        )
    text, reason = read_text_file(path) if path.is_file() else (None, "not a regular file")
    if text is None:
        corpus.errors.append(IngestIssue(path=str(path), reason=reason or "unreadable"))
        return
    owners[doc_id] = path
    markdown = path.suffix.lower() in MARKDOWN_SUFFIXES
    headings = markdown_headings(text) if markdown else []
    title = _title(text, headings, markdown) or path.name
    source = str(resolved)
    corpus.documents.append(
        Document(
            id=doc_id,
            title=title,
            source=source,
            metadata={
                "path": doc_id,
                "format": "markdown" if markdown else "text",
                "chars": len(text),
            },
        )
    )
    acl = labels(options.acl_tags)
    classes = labels(options.classification_labels)
    i = 0
    for seg_start, seg_end, section in _sections(text, headings):
        piece = text[seg_start:seg_end]
        for span in chunk_spans(piece, options.chunk_chars, options.overlap_chars):
            meta: dict[str, Any] = {"path": doc_id, "chunk": i}
            if span.core_start > span.start:  # the text repeated from the chunk before
                meta["overlap"] = span.core_start - span.start
            if section is not None:
                meta["section"] = section
            corpus.nodes.append(
                Node(
                    id=f"{doc_id}:{i:04d}",
                    document_id=doc_id,
                    text=piece[span.start : span.end],
                    title=title,
                    source=source,
                    start=seg_start + span.start,
                    end=seg_start + span.end,
                    acl_tags=acl,
                    classification_labels=classes,
                    metadata=meta,
                )
            )
            i += 1


def _sections(text: str, headings: list[Heading]) -> list[tuple[int, int, str | None]]:
    """``(start, end, heading)`` spans: each markdown heading starts a section that is chunked
    on its own (so a chunk's ``section`` is exact); text before the first heading has none."""
    cuts = [(h.pos, h.title) for h in headings if h.pos > 0]
    first: str | None = headings[0].title if headings and headings[0].pos == 0 else None
    starts: list[tuple[int, str | None]] = [(0, first), *cuts]
    return [
        (pos, starts[k + 1][0] if k + 1 < len(starts) else len(text), title)
        for k, (pos, title) in enumerate(starts)
    ]


# --- titles and markdown structure -------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    pos: int  # offset of the heading line's first character
    level: int
    title: str


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_HAS_WORD = re.compile(r"\w")


def _front_matter_end(lines: list[str]) -> int:
    """Number of lines of a leading YAML front matter block (``---`` … ``---``), else 0."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


def markdown_headings(text: str) -> list[Heading]:
    """ATX (``# Title``) and setext (``Title`` over ``===``/``---``) headings outside code
    fences and front matter, in document order."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    out: list[Heading] = []
    fence: str | None = None
    for i in range(_front_matter_end(lines), len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        atx = _ATX.match(line)
        if atx:
            title = _clean((atx.group(2) or "").strip())
            if title:
                out.append(Heading(offsets[i], len(atx.group(1)), title))
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        under = _SETEXT.match(nxt)
        if (
            under
            and line.strip()
            and not line.startswith((" " * 4, "\t"))
            and not _SETEXT.match(line)
        ):
            level = 1 if under.group(1)[0] == "=" else 2
            out.append(Heading(offsets[i], level, _clean(line.strip())))
    return out


def _clean(title: str) -> str:
    """Whitespace collapsed; cut at a word boundary to at most TITLE_MAX_CHARS (with '…')."""
    title = " ".join(title.split())
    if len(title) <= TITLE_MAX_CHARS:
        return title
    cut = title[: TITLE_MAX_CHARS - 1]
    space = cut.rfind(" ")
    if space > TITLE_MAX_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _title(text: str, headings: list[Heading], markdown: bool) -> str:
    lines = text.split("\n")
    skip = 0
    if markdown:
        skip = _front_matter_end(lines)
        if skip:
            m = _FRONT_TITLE.search("\n".join(lines[:skip]))
            if m:
                return _clean(m.group(1).strip("\"'"))
        for wanted in (1, None):
            for h in headings:
                if wanted is None or h.level == wanted:
                    return h.title
    for line in lines[skip:]:
        if _HAS_WORD.search(line):
            return _clean(line.lstrip("#").strip() if markdown else line.strip())
    return ""
