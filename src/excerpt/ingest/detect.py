"""Which loader reads a set of paths, and one entry point that dispatches by format name."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from excerpt.errors import InputError
from excerpt.ingest._common import files_of
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.beir import CORPUS_FILE, load_beir
from excerpt.ingest.books.gutenberg import load_gutenberg, looks_like_book, looks_like_gutenberg
from excerpt.ingest.code.bundle import load_code_bundle, looks_like_code_bundle
from excerpt.ingest.code.source import load_code_source
from excerpt.ingest.documents.loader import DOCUMENT_SUFFIXES, document_suffix, documents_loader
from excerpt.ingest.documents.registry import READERS, TEXT
from excerpt.ingest.documents.text import load_text
from excerpt.ingest.files import File, FileSet, resolve_files
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


def detect_format(paths: Sequence[Path], files: FileSet | None = None) -> str:
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
    with documents: the documents loader reads text and Markdown files too.  ``files``: the
    paths' files as the import found them (ingest/files.py); None, they are walked here.
    """
    files = files if files is not None else resolve_files(paths)
    found = {str(p): _detect_one(p, files) for p in files.given}
    kinds = sorted(set(found.values()))
    if set(kinds) == {"documents", "text"}:
        return "documents"
    if len(kinds) > 1:
        listing = ", ".join(f"{p}: {k}" for p, k in sorted(found.items()))
        raise InputError(
            f"the paths hold different formats ({listing}); load them separately or name a format"
        )
    return kinds[0]


def _detect_one(path: Path, files: FileSet) -> str:
    if looks_like_code_bundle(path, files.top_folders(path)):
        return "code-bundle"
    if path.is_dir():
        inside = files.files(path)
        if (path / CORPUS_FILE).is_file():
            return "beir"
        if _mostly_code(inside):
            return "code"
        if _only_hwpx(inside):
            return "hwpx"
        if _has_documents(inside):
            return "documents"
        return "gutenberg" if _only_gutenberg(inside) else "text"
    return _detect_file(path, files.files(path)[0])


def _detect_file(path: Path, file: File) -> str:
    """The format of one file given: by its name, then by what its text looks like."""
    if path.name == CORPUS_FILE:
        return "beir"
    if path.suffix.lower() in CODE_SUFFIXES:
        return "code"
    if path.suffix.lower() == ".hwpx":
        return "hwpx"
    if document_suffix(path) in DOCUMENT_SUFFIXES or path.suffix.lower() == ".gz":
        return "documents"  # a .gz is expanded and read as what it holds
    if path.suffix.lower() != ".txt":
        return "text"
    if _gutenberg(file):
        return "gutenberg"
    if _regulations(file):
        return "regulations"
    if _book(file):
        return "gutenberg"  # the loader that keeps books and chapters
    return "text"


def _gutenberg(file: File) -> bool:
    return _sniffed(looks_like_gutenberg, file)


def _regulations(file: File) -> bool:
    return _sniffed(looks_like_regulations, file)


def _sniffed(sniffer: Callable[..., bool], file: File) -> bool:
    """What ``sniffer`` says of the file's head as the import holds it (an unreadable file
    is no such file)."""
    try:
        return sniffer(file.path, head=file.head())
    except OSError:
        return False


def _book(file: File) -> bool:
    """An unframed book (:func:`looks_like_book`), from the bytes the import holds; a file
    too large to keep is read by the sniffer itself."""
    return looks_like_book(file.path, data=file.held())


CODE_SUFFIXES = (".cs", ".sql")
TEXT_SUFFIXES = (".md", ".markdown", ".txt")


def _mostly_code(files: list[File]) -> bool:
    """A folder of source code: it holds .cs/.sql files and more of them than text files."""
    code = sum(f.suffix in CODE_SUFFIXES for f in files)
    text = sum(f.suffix in TEXT_SUFFIXES for f in files)
    return code > 0 and code > text


def _only_hwpx(files: list[File]) -> bool:
    """A folder of HWPX books: it holds .hwpx files and no text files."""
    suffixes = {f.suffix for f in files}
    return ".hwpx" in suffixes and not suffixes & set(TEXT_SUFFIXES)


def _has_documents(files: list[File]) -> bool:
    """A folder of documents: it holds a PDF, Word, EPUB or HTML file (or one gzipped)."""
    return any(document_suffix(f.path) in DOCUMENT_SUFFIXES for f in files)


def _only_gutenberg(files: list[File]) -> bool:
    """A folder of Project Gutenberg books (framed or not): every file in it is one."""
    return bool(files) and all(f.suffix == ".txt" and (_gutenberg(f) or _book(f))
                               for f in files)


def load(
    paths: Sequence[Path], fmt: str = "auto", options: LoadOptions | None = None
) -> LoadedCorpus:
    """Load ``paths`` with the loader named ``fmt`` (``"auto"``: :func:`detect_format`)."""
    options = options or LoadOptions()
    # one walk, the roots checked in it before a format sniffer opens a file outside them;
    # detection and the loader read the files it found
    files = files_of(paths, options)
    options = replace(options, roots=None, files=files)
    if fmt == "auto":
        fmt = detect_format(paths, files)
    if _reads_itself(fmt, files):
        files.release()  # bytes the hash kept that this loader will not ask for
    loader = LOADERS.get(fmt)
    if loader is None:
        raise InputError(f"unknown format {fmt!r}; known formats: {', '.join(FORMATS)}")
    return loader(paths, options)


def _reads_itself(fmt: str, files: FileSet) -> bool:
    """A loader that opens its own files (a BEIR corpus, line by line; a folder bundle's
    members): the bytes the hash kept are let go before it runs."""
    return fmt == "beir" or (fmt == "code-bundle" and any(p.is_dir() for p in files.given))
