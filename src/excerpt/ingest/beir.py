"""BEIR corpora: ``corpus.jsonl``, one record per line, each record one document and one node.

A record ``{"_id": "4983", "title": "…", "text": "…", "metadata": {…}}`` becomes a
:class:`Document` and a :class:`Node` with the same id (the record is the unit qrels judge, so
it is never chunked and nothing is cut).  ``node.text`` is the record's ``text`` and
``node.title`` its ``title``; ``start``/``end`` are -1 (the record is its own document).
Metadata: the record's ``metadata`` object, plus any other top-level field excerpt does not
interpret (so nothing is dropped).  Optional ``acl_tags`` / ``classification_labels`` lists
are the record's security fields; the load options apply to them as
:func:`~excerpt.ingest._common.record_security` says (the import's ACL tags only for records
without their own, its labels added).  Another top-level key that looks like a security field
(``acl_tags_any``, ``labels``, ``tags``) refuses the corpus: put such data under ``metadata``.

The corpus is all or nothing: a line that is not a JSON object, a missing or empty ``_id``, a
duplicate ``_id``, a ``text``/``title`` that is not a string, bad security fields, invalid
UTF-8 or an empty file raise :class:`CorpusError` naming the file and line.  Blank lines are
skipped.  The file is read as a stream, one line at a time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from excerpt.errors import CorpusError, InputError
from excerpt.ingest._common import check_options, record_security, source_name
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.files import require_paths
from excerpt.types import Document, Node

__all__ = ["CORPUS_FILE", "beir_corpus_file", "load_beir"]

CORPUS_FILE = "corpus.jsonl"
_KNOWN = frozenset({"_id", "title", "text", "metadata", "acl_tags", "classification_labels"})
_SECURITY = ("acl_tags", "classification_labels")


def beir_corpus_file(path: Path) -> Path:
    """The ``corpus.jsonl`` of a BEIR folder, or the file itself."""
    if path.is_dir():
        corpus = path / CORPUS_FILE
        if not corpus.is_file():
            raise InputError(f"{path} is not a BEIR folder: it has no {CORPUS_FILE}")
        return corpus
    return path


def load_beir(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
    """Load one or more BEIR corpora (folders holding ``corpus.jsonl``, or the files)."""
    options = options or LoadOptions()
    check_options(options)
    given = require_paths(paths, options.roots)
    files = sorted({beir_corpus_file(p).resolve() for p in given}, key=str)
    corpus = LoadedCorpus(source=source_name(given), index_titles=True)
    owners: dict[str, str] = {}
    for f in files:
        _read(f, options, corpus, owners)
    return corpus


def _read(path: Path, options: LoadOptions, corpus: LoadedCorpus, owners: dict[str, str]) -> None:
    source = str(path)
    count = 0
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read the corpus ({exc.strerror})") from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            where = f"{path}, line {lineno}"
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise CorpusError(
                    f"{where}: not valid UTF-8 at byte {exc.start} of the line"
                ) from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CorpusError(
                    f"{where}: malformed JSON ({exc.msg}, column {exc.colno})"
                ) from None
            except (ValueError, RecursionError) as exc:  # 5000-digit numbers, [[[[… too deep
                raise CorpusError(f"{where}: unreadable JSON "
                                  f"({str(exc)[:80] or 'nested too deeply'})") from None
            if not isinstance(record, dict):
                raise CorpusError(f"{where}: expected a JSON object, got {type(record).__name__}")
            doc_id = _record_id(record, where)
            if doc_id in owners:
                raise CorpusError(f"{where}: duplicate _id {doc_id!r} (first at {owners[doc_id]})")
            owners[doc_id] = where
            text = record.get("text")
            if not isinstance(text, str):
                raise CorpusError(f"{where}: 'text' must be a string, got {_kind(text)}")
            title = record.get("title")
            if title is None:
                title = ""
            if not isinstance(title, str):
                raise CorpusError(f"{where}: 'title' must be a string, got {_kind(title)}")
            meta = _metadata(record)
            acl, classes = record_security(record, f"{where} (_id {doc_id})", _SECURITY,
                                           options)
            corpus.documents.append(Document(doc_id, title, source, meta))
            corpus.nodes.append(
                Node(
                    id=doc_id,
                    document_id=doc_id,
                    text=text,
                    title=title,
                    source=source,
                    acl_tags=acl,
                    classification_labels=classes,
                    metadata=dict(meta),
                )
            )
            count += 1
    if count == 0:
        raise CorpusError(f"{path} holds no records (empty BEIR corpus)")


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def _record_id(record: dict[str, Any], where: str) -> str:
    raw = record.get("_id")
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        raise CorpusError(f"{where}: missing or invalid '_id' (got {_kind(raw)})")
    doc_id = str(raw)
    if not doc_id.strip():
        raise CorpusError(f"{where}: empty '_id'")
    if "\n" in doc_id or "\r" in doc_id:
        raise CorpusError(f"{where}: '_id' {doc_id!r} holds a line break")
    return doc_id


def _metadata(record: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    raw = record.get("metadata")
    if isinstance(raw, dict):
        meta.update(raw)
    elif raw is not None and raw != "":
        meta["metadata"] = raw  # not an object: kept as is rather than lost
    for key, value in record.items():
        if key not in _KNOWN and key not in meta:
            meta[key] = value
    return meta

