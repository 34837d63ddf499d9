"""Which loader reads a set of paths, and one entry point that dispatches by format name."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from excerpt.errors import InputError
from excerpt.ingest._common import require_paths, walk_files
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.beir import CORPUS_FILE, load_beir
from excerpt.ingest.books.gutenberg import load_gutenberg, looks_like_book, looks_like_gutenberg
from excerpt.ingest.code.bundle import load_code_bundle, looks_like_code_bundle
from excerpt.ingest.code.source import load_code_source
from excerpt.ingest.documents.loader import DOCUMENT_SUFFIXES, document_suffix, documents_loader
from excerpt.ingest.documents.registry import READERS, TEXT
from excerpt.ingest.documents.text import load_text
from excerpt.ingest.formats import FORMATS
from excerpt.ingest.regulations.loader import load_hwpx, load_regulations, looks_like_regulations

__all__ = ["FORMATS", "LOADERS", "detect_format", "load"]

Loader = Callable[[Sequence[Path], LoadOptions | None], LoadedCorpus]

LOADERS: dict[str, Loader] = {
    "beir": load_beir,
    "code": load_code_source,
    "code-bundle": load_code_bundle,
    "gutenberg": load_gutenberg,
    "hwpx": load_hwpx,
    "regulations": load_regulations,
    "text": load_text,
    "documents": documents_loader(None),  # every document format, chosen per file
    # one per document format (documents/registry.py) but plain text, which "text" reads
    **{spec.format: documents_loader(spec.format) for spec in READERS if spec.format != TEXT},
}
# FORMATS (the names, in excerpt.ingest.formats so that they cost no import) is exactly
# ("auto", *LOADERS): tests/unit/ingest/test_ingest_detect.py checks it.


def detect_format(paths: Sequence[Path]) -> str:
    """``"code-bundle"`` (a zip or folder with ``repo_meta.json``), ``"beir"`` (a folder with
    ``corpus.jsonl``, or that file), ``"code"`` (``.cs``/``.sql`` files, or a folder mostly of
    them), ``"hwpx"`` (an ``.hwpx`` file: a regulation book saved by the Hangul word processor),
    or a folder holding ``.hwpx`` files and no text files), ``"gutenberg"`` (a ``.txt`` file with
    a Project Gutenberg header and START marker, or a book without that frame: a ``.txt`` divided
    into at least two books, parts or chapters; or a folder of only such files),
    ``"regulations"`` (a ``.txt`` regulation book with its table of contents),
    ``"documents"`` (a ``.pdf``/``.docx``/``.epub``/``.html``/``.htm`` file, or a folder holding
    any, when none of the above), else ``"text"``.

    Paths of different formats raise :class:`InputError` (load them separately), except text
    with documents: the documents loader reads text and Markdown files too.
    """
    given = require_paths(paths)
    found = {str(p): _detect_one(p) for p in given}
    kinds = sorted(set(found.values()))
    if set(kinds) == {"documents", "text"}:
        return "documents"
    if len(kinds) > 1:
        listing = ", ".join(f"{p}: {k}" for p, k in sorted(found.items()))
        raise InputError(
            f"the paths hold different formats ({listing}); load them separately or name a format"
        )
    return kinds[0]


def _detect_one(path: Path) -> str:
    if looks_like_code_bundle(path):
        return "code-bundle"
    if path.is_dir():
        if (path / CORPUS_FILE).is_file():
            return "beir"
        if _mostly_code(path):
            return "code"
        if _only_hwpx(path):
            return "hwpx"
        if _has_documents(path):
            return "documents"
        return "gutenberg" if _only_gutenberg(path) else "text"
    if path.name == CORPUS_FILE:
        return "beir"
    if path.suffix.lower() in CODE_SUFFIXES:
        return "code"
    if path.suffix.lower() == ".hwpx":
        return "hwpx"
    if document_suffix(path) in DOCUMENT_SUFFIXES or path.suffix.lower() == ".gz":
        return "documents"  # a .gz is expanded and read as what it holds
    if path.suffix.lower() == ".txt" and looks_like_gutenberg(path):
        return "gutenberg"
    if path.suffix.lower() == ".txt" and looks_like_regulations(path):
        return "regulations"
    if path.suffix.lower() == ".txt" and looks_like_book(path):
        return "gutenberg"  # the loader that keeps books and chapters
    return "text"


CODE_SUFFIXES = (".cs", ".sql")
TEXT_SUFFIXES = (".md", ".markdown", ".txt")


def _mostly_code(folder: Path) -> bool:
    """A folder of source code: it holds .cs/.sql files and more of them than text files."""
    code = text = 0
    for path in walk_files(folder):
        suffix = path.suffix.lower()
        code += suffix in CODE_SUFFIXES
        text += suffix in TEXT_SUFFIXES
    return code > 0 and code > text


def _only_hwpx(folder: Path) -> bool:
    """A folder of HWPX books: it holds .hwpx files and no text files."""
    suffixes = {path.suffix.lower() for path in walk_files(folder)}
    return ".hwpx" in suffixes and not suffixes & set(TEXT_SUFFIXES)


def _has_documents(folder: Path) -> bool:
    """A folder of documents: it holds a PDF, Word, EPUB or HTML file (or one gzipped)."""
    return any(document_suffix(path) in DOCUMENT_SUFFIXES for path in walk_files(folder))


def _only_gutenberg(folder: Path) -> bool:
    """A folder of Project Gutenberg books (framed or not): every file in it is one."""
    files = list(walk_files(folder))
    return bool(files) and all(
        f.suffix.lower() == ".txt" and (looks_like_gutenberg(f) or looks_like_book(f))
        for f in files
    )


def load(
    paths: Sequence[Path], fmt: str = "auto", options: LoadOptions | None = None
) -> LoadedCorpus:
    """Load ``paths`` with the loader named ``fmt`` (``"auto"``: :func:`detect_format`)."""
    if options is not None and options.roots is not None:
        # refused before a format sniffer opens a file outside the roots; checked once here,
        # so the loader need not walk the tree again
        require_paths(paths, options.roots)
        options = replace(options, roots=None)
    if fmt == "auto":
        fmt = detect_format(paths)
    loader = LOADERS.get(fmt)
    if loader is None:
        raise InputError(f"unknown format {fmt!r}; known formats: {', '.join(FORMATS)}")
    return loader(paths, options)
