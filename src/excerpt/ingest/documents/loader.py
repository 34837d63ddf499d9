"""Folders of the documents people have (PDF, Word, EPUB, HTML, Markdown, plain text): one
reader per file, chosen by content, then by name; one chunker for all of them.

How a file's format is chosen:

1. magic bytes first, whatever the name: a PDF (``%PDF-``), an EPUB or a Word file (zip
   archives holding their marker files) is read as what it is, even misnamed;
2. then the name: ``.pdf``, ``.docx``, ``.epub``, ``.html``/``.htm``/``.xhtml``,
   ``.md``/``.markdown``, ``.txt``/``.text``/``.rst`` (each format's line in
   documents/registry.py says its names and bytes). For text files the name decides over
   markup sniffing, because sniffing text is a guess (a ``README.md`` may open with ``<div>``);
3. a file whose name says nothing is sniffed for HTML, then Markdown;
4. anything else is an issue naming the file ("unsupported file type"), never a silent skip
   (hidden files and folders, such as ``.git``, are not content and are not walked).

A gzip-compressed file (``policy.pdf.gz``, ``README.txt.gz``: how Debian ships its manuals)
is expanded to a temporary file, within the import's archive limits (its size and its ratio,
as a zip member's), and read as the file it holds; its nodes name the ``.gz`` file as their
source and keep its name in their document id.

A file named ``.pdf`` that is no PDF goes to the PDF reader, which refuses it with the
reason. A reader module that is not part of this installation is "no reader for this format".
Every file read or skipped is counted per format in :attr:`LoadedCorpus.formats`
(``{"pdf": {"read": 3, "skipped": 1, "nodes": 240}}``); each skipped file is also an
:class:`IngestIssue` with its reason.  Document ids are as in plain text loading (a file's path
relative to the folder given; a file named directly: its name).
"""

from __future__ import annotations

import gzip
import importlib
import io
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from excerpt.errors import CorpusError, ExcerptError
from excerpt.ingest._archive import ArchiveLimits
from excerpt.ingest._common import check_options, files_of, source_name
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.documents import registry
from excerpt.ingest.documents.blocks import StructuredDoc
from excerpt.ingest.documents.registry import (
    TEXT,
    document_formats,
    folder_suffixes,
    format_of_suffix,
    spec_of,
)
from excerpt.ingest.documents.structure import nodes_of
from excerpt.ingest.documents.text import file_nodes
from excerpt.ingest.files import File
from excerpt.types import Document, IngestIssue, Node

__all__ = [
    "DOCUMENT_FORMATS",
    "DOCUMENT_SUFFIXES",
    "choose_format",
    "documents_loader",
    "load_documents",
]

DOCUMENT_FORMATS = document_formats()
# the suffixes a folder's detection sends here (text and Markdown alone stay ``text``)
DOCUMENT_SUFFIXES = folder_suffixes()
OTHER = "other"  # the report's key for files no reader takes
_MAX_LISTED_ISSUES = 5

Reader = Callable[[Path, str], StructuredDoc]


def load_documents(
    paths: Sequence[Path], options: LoadOptions | None = None, only: str | None = None
) -> LoadedCorpus:
    """Read files and folders (walked recursively, hidden entries skipped) into one corpus;
    ``only`` (a format of :data:`DOCUMENT_FORMATS`) reads that format alone: a file named
    directly is read as it, a file in a folder that is something else is an issue."""
    options = options or LoadOptions()
    check_options(options)
    found = files_of(paths, options)
    given = found.given
    corpus = LoadedCorpus(source=source_name(given))
    run = _Run(options, only, corpus)
    files = [f for path in sorted(given, key=lambda p: str(p.resolve()))
             for f in found.files(path)]
    for done, file in enumerate(files, start=1):
        run.file(file)
        if options.progress is not None:
            options.progress("load", done, len(files))
    corpus.formats = dict(sorted(corpus.formats.items()))
    if not corpus.documents:
        listed = "; ".join(f"{i.path}: {i.reason}" for i in corpus.errors[:_MAX_LISTED_ISSUES])
        more = len(corpus.errors) - _MAX_LISTED_ISSUES
        raise CorpusError(
            "no readable documents in " + ", ".join(str(p) for p in given)
            + (f" ({listed}{f'; and {more} more' if more > 0 else ''})" if listed else "")
        )
    return corpus


def documents_loader(
    only: str | None,
) -> Callable[[Sequence[Path], LoadOptions | None], LoadedCorpus]:
    """The loader of one format (``--format pdf``), or of all of them (``None``)."""

    def load(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
        return load_documents(paths, options, only)

    return load


def document_suffix(path: Path) -> str:
    """The suffix that names a file's format, a trailing ``.gz`` left aside."""
    if path.suffix.lower() == ".gz":
        return Path(path.stem).suffix.lower()
    return path.suffix.lower()


def choose_format(path: Path, file: File | None = None) -> str | None:
    """The format to read ``path`` as (see the module docstring), or None; ``file``: the
    import's :class:`File` of it, whose bytes the sniffs read (the file is opened once)."""
    file = file or File(path, path.name)
    magic = _magic_format(file)
    if magic is not None:
        return magic
    by_name = format_of_suffix(path.suffix.lower())
    if by_name is not None:
        return by_name
    for spec in registry.READERS:
        if spec.sniffed:
            module = _loaded(spec.format)
            if not isinstance(module, str) and _sniff(module, spec.takes_bytes, file):
                return spec.format
    return None


def reader_module(fmt: str) -> ModuleType | None:
    """The reader module of a format, or None when this installation has none."""
    spec = spec_of(fmt)
    name = spec.module_name if spec is not None else f"excerpt.ingest.documents.{fmt}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None
        raise


def _loaded(fmt: str) -> ModuleType | str:
    """The reader module of a format, or why there is none (absent, or failing to import: a
    reader whose own dependency is missing costs its files, not the whole load)."""
    try:
        module = reader_module(fmt)
    except ImportError as exc:
        return f"the {fmt} reader cannot be loaded: {exc}"
    return module or f"no reader for {fmt} files in this installation of excerpt"


def _sniff(module: ModuleType, takes_bytes: bool, file: File) -> bool:
    try:
        if takes_bytes:
            return bool(module.looks_like(file.path, head=file.head()))
        return bool(module.looks_like(file.path))
    except OSError:
        return False


def _magic_format(file: File) -> str | None:
    """The format the file's first bytes (``ReaderSpec.head``: a PDF's header may follow a
    little junk) or, for a zip, its members (``ReaderSpec.zip_member``) say, or None."""
    try:
        head = file.head(1024)
    except OSError:
        return None
    for spec in registry.READERS:
        if spec.head is not None and spec.head in head:
            return spec.format
    if not head.startswith(b"PK\x03\x04"):
        return None
    data = file.held()  # a zip's members are listed at its end
    try:
        with zipfile.ZipFile(file.path if data is None else io.BytesIO(data)) as z:
            names = set(z.namelist())
            for spec in registry.READERS:
                member, content = spec.zip_member or ("", None)
                if member in names and (content is None or _member_head(z, member) == content):
                    return spec.format
    except (zipfile.BadZipFile, OSError, KeyError):
        return None
    return None


def _member_head(archive: zipfile.ZipFile, name: str) -> bytes:
    """A member's first bytes, stripped: never more than 64 of them expanded (a bomb named
    ``mimetype`` costs nothing to detect)."""
    with archive.open(name) as member:
        return member.read(64).strip()


class _Run:
    """One load: the files seen, the ids given, and the per-format counts."""

    def __init__(self, options: LoadOptions, only: str | None, corpus: LoadedCorpus) -> None:
        self.options, self.only, self.corpus = options, only, corpus
        self.owners: dict[str, Path] = {}
        self.seen: set[Path] = set()

    def file(self, file: File) -> None:
        """Reads one file of the load (a file given is ``named``: no folder chose it)."""
        path, named = file.path, file.root is None
        resolved = path.resolve()
        if resolved in self.seen:  # named twice, or inside a named folder
            return
        self.seen.add(resolved)
        if path.suffix.lower() == ".gz" and path.is_file():
            self._gunzipped(file, named)
        else:
            self._dispatch(file, named, path)
        file.release()  # its bytes are read: the set may keep the next files'

    def _gunzipped(self, file: File, named: bool) -> None:
        path = file.path
        with tempfile.TemporaryDirectory(prefix="excerpt-gz-") as folder:
            inner = Path(folder) / (Path(path.stem).name or "content")
            reason = _gunzip(file, inner, self.options.archive_limits)
            if reason is not None:
                self._skip(path, OTHER, reason)
                return
            self._dispatch(File(inner, file.name), named, path)

    def _dispatch(self, file: File, named: bool, origin: Path) -> None:
        """Reads ``file`` as its format; ``origin`` is the file as the user has it (the
        ``.gz`` of an expanded file), named in issues and as the nodes' source."""
        path, doc_id = file.path, file.name
        found = choose_format(path, file) if path.is_file() else None
        fmt = self.only if (named and self.only) else found
        if fmt is None:
            why = "not a regular file" if not path.is_file() else _unsupported(path)
            self._skip(origin, OTHER, why)
        elif self.only and fmt != self.only:
            self._skip(origin, fmt, f"a {fmt} file; --format {self.only} reads only {self.only}")
        elif "\n" in doc_id or "\r" in doc_id:
            self._skip(origin, fmt, "file name holds a line break")
        else:
            self._read(file, fmt, origin)

    def _read(self, file: File, fmt: str, origin: Path) -> None:
        path, doc_id = file.path, file.name
        if doc_id in self.owners:
            raise CorpusError(
                f"two files would get the same document id {doc_id!r}: {self.owners[doc_id]} "
                f"and {origin}; load them as separate sources"
            )
        read = _read_as(fmt, file, self.options)
        if isinstance(read, str):
            self._skip(origin, fmt, read.replace(str(path), str(origin)))
            return
        document, nodes = read
        if not nodes:
            self._skip(origin, fmt, "no text in it")
            return
        if origin != path:  # an expanded .gz: its nodes come from the file the user has
            source = str(origin.resolve())
            document = replace(document, source=source)
            nodes = [replace(n, source=source) for n in nodes]
        self.owners[doc_id] = origin
        self.corpus.documents.append(document)
        self.corpus.nodes.extend(nodes)
        counts = self._counts(fmt)
        counts["read"] += 1
        counts["nodes"] += len(nodes)

    def _skip(self, path: Path, fmt: str, reason: str) -> None:
        self.corpus.errors.append(IngestIssue(path=str(path), reason=reason))
        self._counts(fmt)["skipped"] += 1

    def _counts(self, fmt: str) -> dict[str, int]:
        return self.corpus.formats.setdefault(fmt, {"read": 0, "skipped": 0, "nodes": 0})


def _gunzip(file: File, target: Path, limits: ArchiveLimits) -> str | None:
    """Expands ``file`` into ``target`` within ``limits``; why not, or None."""
    path, data = file.path, file.held()
    cap = min(limits.max_member_bytes,
              max(limits.ratio_floor_bytes, int(path.stat().st_size * limits.max_ratio)))
    written = 0
    try:
        with (gzip.open(path, "rb") if data is None else gzip.GzipFile(fileobj=io.BytesIO(data))
              ) as packed, target.open("wb") as out:
            while chunk := packed.read(1 << 20):
                written += len(chunk)
                if written > cap:
                    return (f"gzip file expands past {cap} bytes (the import's archive "
                            "limits: size and ratio)")
                out.write(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        return f"not a readable gzip file: {exc}"
    return None


def _unsupported(path: Path) -> str:
    suffix = path.suffix.lower()
    kind = f"{suffix} files" if suffix else "files without a known suffix or content"
    return f"unsupported file type: no reader for {kind}"


def _read_as(fmt: str, file: File, options: LoadOptions) -> tuple[Document, list[Node]] | str:
    """The document and nodes of ``file`` read as ``fmt``, or why not (from the bytes the
    import holds when its reader takes them: ReaderSpec.takes_bytes)."""
    path, doc_id = file.path, file.name
    if fmt == TEXT:
        return file_nodes(path, doc_id, options, file.held() if path.is_file() else None)
    module = _loaded(fmt)
    if isinstance(module, str):
        return module
    try:
        doc: StructuredDoc = module.read(path, doc_id, **_reader_arguments(fmt, file, options))
    except ExcerptError as exc:
        return _without_path(str(exc), path)
    except Exception as exc:  # a reader's failure on one file must not end the whole run
        return f"the {fmt} reader failed: {type(exc).__name__}: {exc}"
    if "format" not in doc.metadata:
        doc.metadata["format"] = fmt
    return nodes_of(doc, str(path.resolve()), options)


def _reader_arguments(fmt: str, file: File, options: LoadOptions) -> dict[str, Any]:
    """What a reader takes besides the path: archive limits for a zipped format, and the
    bytes the import holds for a reader that takes them."""
    spec = spec_of(fmt)
    arguments: dict[str, Any] = {}
    if spec is not None and spec.zipped:
        arguments["limits"] = options.archive_limits
    if spec is not None and spec.takes_bytes and file.path.is_file():
        data = file.held()
        if data is not None:
            arguments["data"] = data
    return arguments


def _without_path(message: str, path: Path) -> str:
    """A reader's message without the file name it opens with (the issue names the file)."""
    for prefix in (f"{path}: ", f"{path.name}: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message
