"""Plain text and markdown files (a file, several, or folders walked recursively).

One file is one :class:`Document` (id: its path relative to the folder it was found in, POSIX
style; a file named directly: its file name) and its chunks are nodes ``f"{doc_id}:{i:04d}"``.
A node's ``start``/``end`` are offsets into the file's cleaned text: UTF-8 decoded, byte order
mark dropped, line endings normalised to ``\\n``; ``node.text == cleaned[start:end]``.
Node metadata: ``path`` (the document id) and ``chunk`` (its index).  The title is the first
line with a letter or digit (at most 120 characters), else the file name.

Markdown files (``.md``, ``.markdown``) are read by the one Markdown reader,
:mod:`excerpt.ingest.documents.markdown`, and cut by the structured chunker,
:mod:`excerpt.ingest.documents.structure`: their nodes follow headings, tables and code blocks
and carry the heading path (``section``, ``headings``), and their offsets are into the
document's structured text (its blocks joined by blank lines), not into the file.

Bad files do not stop the run: binary files, invalid UTF-8 (with the byte offset), unreadable,
empty or whitespace-only files become :class:`IngestIssue` entries in ``errors``.  A path that
does not exist raises :class:`InputError`; a folder (or a whole input) with no readable text
file raises :class:`CorpusError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from excerpt.errors import CorpusError
from excerpt.ingest._common import check_options, files_of, read_text_file, source_name
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.chunking import chunk_spans
from excerpt.ingest.documents.markdown import MARKDOWN_SUFFIXES, clean_title
from excerpt.ingest.documents.markdown import parse as parse_markdown
from excerpt.ingest.documents.structure import nodes_of
from excerpt.ingest.files import File
from excerpt.ingest.nodes import chunk_node
from excerpt.types import Document, IngestIssue, Node

__all__ = ["MARKDOWN_SUFFIXES", "TEXT_SUFFIXES", "file_nodes", "load_text", "read_text_file"]

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst", ".text")
_MAX_LISTED_ISSUES = 5


def load_text(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
    """Load text/markdown files and folders into one corpus (see the module docstring)."""
    options = options or LoadOptions()
    check_options(options)
    found = files_of(paths, options)
    given = found.given
    corpus = LoadedCorpus(source=source_name(given))
    owners: dict[str, Path] = {}
    seen: set[Path] = set()
    # Sorted by resolved path, so the argument order changes nothing (the source is sorted too).
    for path in sorted(given, key=lambda p: str(p.resolve())):
        if path.is_dir():
            before_docs, before_issues = len(corpus.documents), len(corpus.errors)
            files = [f for f in found.files(path) if f.suffix in TEXT_SUFFIXES]
            for f in files:
                _load_file(f, options, corpus, owners, seen)
            if len(corpus.documents) == before_docs:
                raise CorpusError(
                    f"no readable text files in {path}"
                    + _why(corpus.errors[before_issues:], len(files))
                )
        else:
            _load_file(found.files(path)[0], options, corpus, owners, seen)
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


def _load_file(
    file: File,
    options: LoadOptions,
    corpus: LoadedCorpus,
    owners: dict[str, Path],
    seen: set[Path],
) -> None:
    path, doc_id = file.path, file.name
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
    read = file_nodes(path, doc_id, options, file.held() if path.is_file() else None)
    file.release()
    if isinstance(read, str):
        corpus.errors.append(IngestIssue(path=str(path), reason=read))
        return
    owners[doc_id] = path
    document, nodes = read
    corpus.documents.append(document)
    corpus.nodes.extend(nodes)


def file_nodes(path: Path, doc_id: str, options: LoadOptions, data: bytes | None = None
               ) -> tuple[Document, list[Node]] | str:
    """One text or Markdown file's document and nodes, or why it cannot be read; ``data``:
    its bytes when the import holds them (ingest/files.py), so it is not read again."""
    text, reason = (read_text_file(path, data) if path.is_file()
                    else (None, "not a regular file"))
    if text is None:
        return reason or "unreadable"
    source = str(path.resolve())
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        doc = parse_markdown(text, doc_id, path.name)
        if not doc.blocks:
            return "no text in this Markdown file (front matter only?)"
        return nodes_of(doc, source, options)
    title = _title(text) or path.name
    document = Document(
        id=doc_id,
        title=title,
        source=source,
        metadata={"path": doc_id, "format": "text", "chars": len(text)},
    )
    nodes: list[Node] = []
    for i, span in enumerate(chunk_spans(text, options.chunk_chars, options.overlap_chars)):
        meta: dict[str, Any] = {"path": doc_id, "chunk": i}
        if span.core_start > span.start:  # the text repeated from the chunk before
            meta["overlap"] = span.core_start - span.start
        nodes.append(chunk_node(doc_id, i, text[span.start : span.end], (span.start, span.end),
                                title=title, source=source, options=options, metadata=meta))
    return document, nodes


_HAS_WORD = re.compile(r"\w")


def _title(text: str) -> str:
    """The first line with a letter or digit, cleaned, else ''."""
    for line in text.split("\n"):
        if _HAS_WORD.search(line):
            return clean_title(line.strip())
    return ""
