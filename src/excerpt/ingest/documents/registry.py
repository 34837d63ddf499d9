"""The document formats excerpt reads, one line each: what names a file as one, what in its
first bytes makes it one whatever its name, and the module that reads it.  Detection
(documents/loader.py), the loaders by name (``--format pdf``: ingest/detect.py) and the list
of formats (ingest/formats.py) all derive from :data:`READERS`, so a new format is its reader
module plus one line here.

A reader module (``module``: under ``excerpt.ingest.documents``, or a full dotted name) has
``read(path, doc_id) -> StructuredDoc`` (``read(path, doc_id, limits=...)`` for a zipped
format, which must stay within the import's archive limits), and ``looks_like(path)`` when the
format is ``sniffed``.  A reader whose line says ``takes_bytes`` also takes the file's bytes
when the import holds them (``read(..., data=...)``, ``looks_like(path, head=...)``: the
file's first :data:`excerpt.ingest.files.HEAD_BYTES`), so the file is opened once for the hash,
the sniff and the read (ingest/files.py); a reader without it opens the file itself.
Nothing here imports a reader: a search never pays for the PDF one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReaderSpec:
    """One document format."""

    format: str
    suffixes: tuple[str, ...]
    module: str
    head: bytes | None = None
    """Found in the file's first KiB: the file is this format, whatever its name (``%PDF-``)."""
    zip_member: tuple[str, bytes | None] | None = None
    """A zip archive holding this member (with this content, stripped, when given) is this
    format, whatever its name."""
    sniffed: bool = False
    """A file whose name says nothing is asked ``looks_like`` (in the order of READERS)."""
    zipped: bool = False
    """A zip archive: read within the import's archive limits."""
    names_a_folder: bool = False
    """A folder holding a file of this format is read as documents (ingest/detect.py)."""
    takes_bytes: bool = False
    """``read`` takes ``data=`` and ``looks_like`` ``head=`` (the bytes the import holds)."""

    @property
    def module_name(self) -> str:
        return self.module if "." in self.module else f"excerpt.ingest.documents.{self.module}"


READERS: list[ReaderSpec] = [
    ReaderSpec("pdf", (".pdf",), "pdf", head=b"%PDF-", names_a_folder=True, takes_bytes=True),
    ReaderSpec("docx", (".docx",), "docx", zip_member=("word/document.xml", None), zipped=True,
               names_a_folder=True, takes_bytes=True),
    ReaderSpec("epub", (".epub",), "epub", zip_member=("mimetype", b"application/epub+zip"),
               zipped=True, names_a_folder=True, takes_bytes=True),
    ReaderSpec("html", (".html", ".htm", ".xhtml"), "html", sniffed=True, names_a_folder=True,
               takes_bytes=True),
    ReaderSpec("markdown", (".md", ".markdown"), "markdown", sniffed=True, takes_bytes=True),
    ReaderSpec("text", (".txt", ".text", ".rst"), "text"),  # plain text: text.file_nodes
]
"""Every document format, in the order detection asks them."""

TEXT = "text"


def document_formats() -> tuple[str, ...]:
    return tuple(spec.format for spec in READERS)


def spec_of(fmt: str) -> ReaderSpec | None:
    return next((spec for spec in READERS if spec.format == fmt), None)


def format_of_suffix(suffix: str) -> str | None:
    """The format a file name's suffix (lower case, with its dot) says, or None."""
    return next((spec.format for spec in READERS if suffix in spec.suffixes), None)


def folder_suffixes() -> tuple[str, ...]:
    """The suffixes that make a folder one of documents (ingest/detect.py)."""
    return tuple(s for spec in READERS if spec.names_a_folder for s in spec.suffixes)
