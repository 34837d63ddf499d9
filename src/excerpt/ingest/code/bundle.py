"""Release bundles of a code repository (seed 004): C# chunks, SQL objects and their graph.

A bundle is a zip file or a folder holding (possibly under one top folder)::

    repo_meta.json                          Repo, Branch, SnapshotId (= HeadSha)
    regular_code_bundle/chunks.json         C# chunks: Id (C0005), File, Class, Member, Type,
                                            Text, acl_tags_any, classification_labels_all, ...
    regular_code_bundle/dependencies.json   {Id: [ids it depends on]}
    sql_bundle/graph/nodes.csv              key, kind, name, schema, file, ...
    sql_bundle/graph/edges.csv              from, to, relation, to_kind, file, ...
    sql_bundle/docs/sql_bodies.jsonl        key, kind, schema, name, file, body, security fields

The repository (``Repo``) is the source and ``SnapshotId`` the snapshot id, so two releases are
two snapshots of one source. A C# dependency becomes a ``Calls`` edge (the caller depends on the
callee), which the seed's default graph allowlist admits; SQL relations keep their names.
The whole bundle is checked before anything is returned: a missing part, malformed JSON or CSV,
a duplicate id or a record without its required fields fails the import (all or nothing).
Records' security fields (``acl_tags_any``, ``classification_labels_all``) are read by
:func:`~excerpt.ingest._common.record_security`: the import's ACL tags only for records without
their own, its labels added; a malformed or misspelled security field refuses the bundle.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from excerpt.errors import CorpusError, InputError
from excerpt.ingest._archive import SafeZip
from excerpt.ingest._common import files_of, record_security
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.files import require_paths
from excerpt.types import Document, Edge, Node

META = "repo_meta.json"
CHUNKS = "regular_code_bundle/chunks.json"
DEPENDENCIES = "regular_code_bundle/dependencies.json"
SQL_NODES = "sql_bundle/graph/nodes.csv"
SQL_EDGES = "sql_bundle/graph/edges.csv"
SQL_BODIES = "sql_bundle/docs/sql_bodies.jsonl"
CSHARP_DEPENDENCY = "Calls"
SECURITY_KEYS = ("acl_tags_any", "classification_labels_all")


class _Bundle:
    """Read files of a bundle by their path below the folder that holds ``repo_meta.json``."""

    def __init__(self, path: Path, options: LoadOptions, data: bytes | None = None) -> None:
        """``data``: a zip bundle's bytes, when the import holds them (not read again)."""
        self.path = path
        self._zip = (SafeZip(path, options.archive_limits, "a code bundle", data)
                     if path.is_file() else None)
        self._all = self._names()
        self.prefix = self._find_root()

    def _names(self) -> set[str]:
        if self._zip is not None:
            return set(self._zip.names)
        return {p.relative_to(self.path).as_posix() for p in self.path.rglob("*") if p.is_file()}

    def _find_root(self) -> str:
        metas = sorted((n for n in self._all if n.rsplit("/", 1)[-1] == META),
                       key=lambda n: (n.count("/"), n))
        if not metas:
            raise CorpusError(f"{self.path}: not a code bundle (no {META} inside)")
        return metas[0][: -len(META)]

    def has(self, name: str) -> bool:
        return self.prefix + name in self._all

    def text(self, name: str) -> str:
        full = self.prefix + name
        if full not in self._all:
            raise CorpusError(f"{self.path}: the bundle has no {name}")
        try:
            data = (self._zip.read(full) if self._zip is not None
                    else (self.path / full).read_bytes())
        except OSError as exc:
            raise CorpusError(f"{self.path}: {name}: cannot read ({exc.strerror})") from None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{self.path}: {name} is not UTF-8 (byte {exc.start})") from None

    def json(self, name: str) -> Any:
        return parse_json(self.text(name), f"{self.path}: {name}")

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()


def load_code_bundle(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
    """Load one release bundle (a zip or a folder) as one snapshot of its repository."""
    options = options or LoadOptions()
    given = require_paths(paths, options.roots)
    if len(given) != 1:
        raise InputError("a code bundle is one snapshot: ingest one bundle per run")
    # a zip's bytes as the import's hash read them; a folder bundle reads its own files
    data = files_of(given, options).files(given[0])[0].held() if given[0].is_file() else None
    bundle = _Bundle(given[0], options, data)
    try:
        return _load(bundle, options)
    finally:
        bundle.close()


def _load(bundle: _Bundle, options: LoadOptions) -> LoadedCorpus:
    meta = bundle.json(META)
    repo = _field(meta, "Repo", f"{bundle.path}: {META}")
    snapshot = meta.get("SnapshotId") or meta.get("HeadSha")
    if not snapshot:
        raise CorpusError(f"{bundle.path}: {META} has neither SnapshotId nor HeadSha")
    corpus = LoadedCorpus(source=str(repo), snapshot_hint=str(snapshot))
    csharp = _csharp_nodes(bundle, options)
    sql = _sql_nodes(bundle, options)
    corpus.nodes = csharp + sql
    _check_unique(corpus.nodes, bundle.path)
    corpus.documents = _documents(corpus.nodes, str(repo), meta)
    corpus.edges = _csharp_edges(bundle) + _sql_edges(bundle)
    return corpus


def _field(record: Any, name: str, where: str) -> Any:
    if not isinstance(record, dict) or record.get(name) in (None, ""):
        raise CorpusError(f"{where}: missing field {name!r}")
    return record[name]


def _security(record: dict[str, Any], where: str,
              options: LoadOptions) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(acl_tags, classification_labels): the record's own, with the import's applied by the
    rule of :func:`record_security` (the import's tags only for records with none)."""
    return record_security(record, where, SECURITY_KEYS, options)


def _csharp_nodes(bundle: _Bundle, options: LoadOptions) -> list[Node]:
    chunks = bundle.json(CHUNKS) if bundle.has(CHUNKS) else []
    if not isinstance(chunks, list):
        raise CorpusError(f"{bundle.path}: {CHUNKS} must hold a JSON list of chunks")
    nodes = []
    for i, chunk in enumerate(chunks):
        where = f"{bundle.path}: {CHUNKS} chunk {i + 1}"
        node_id, path = _field(chunk, "Id", where), _field(chunk, "File", where)
        text = _field(chunk, "Text", where)
        cls, member = chunk.get("Class", ""), chunk.get("Member", "")
        acl, classes = _security(chunk, f"{where} (Id {node_id})", options)
        nodes.append(Node(
            id=str(node_id), document_id=str(path), text=str(text),
            title=".".join(p for p in (cls, member) if p), source=str(path),
            acl_tags=acl, classification_labels=classes,
            metadata={"code_language": "csharp", "file": path, "class": cls, "member": member,
                      "type": chunk.get("Type", ""), "project": chunk.get("ProjectName", ""),
                      "chunk_part": chunk.get("ChunkPart", 1),
                      "chunk_total": chunk.get("ChunkTotal", 1),
                      "owner_id": chunk.get("owner_id", "")},
        ))
    return nodes


def _sql_nodes(bundle: _Bundle, options: LoadOptions) -> list[Node]:
    if not bundle.has(SQL_BODIES):
        return []
    nodes = []
    for lineno, line in enumerate(bundle.text(SQL_BODIES).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{bundle.path}: {SQL_BODIES} line {lineno}"
        record = parse_json(line, f"{bundle.path}: {SQL_BODIES}", lineno)
        key, body = _field(record, "key", where), _field(record, "body", where)
        path = record.get("file") or key
        acl, classes = _security(record, f"{where} (key {key})", options)
        nodes.append(Node(
            id=str(key), document_id=str(path), text=str(body), title=record.get("name", key),
            source=str(path), acl_tags=acl, classification_labels=classes,
            metadata={"code_language": "sql", "file": path, "kind": record.get("kind", ""),
                      "schema": record.get("schema", ""), "name": record.get("name", ""),
                      "owner_id": record.get("owner_id", "")},
        ))
    known = {n.id for n in nodes}
    for row in _csv(bundle, SQL_NODES):
        if row.get("key") and row["key"] not in known:
            raise CorpusError(f"{bundle.path}: {SQL_NODES} lists {row['key']} "
                              f"but {SQL_BODIES} has no body for it")
    return nodes


def _check_unique(nodes: list[Node], path: Path) -> None:
    seen: set[str] = set()
    for node in nodes:
        if node.id in seen:
            raise CorpusError(f"{path}: duplicate node id {node.id!r}")
        seen.add(node.id)


def _documents(nodes: list[Node], repo: str, meta: dict[str, Any]) -> list[Document]:
    files = sorted({(n.document_id, n.metadata["code_language"]) for n in nodes})
    info = {"repo": repo, "branch": meta.get("Branch", ""), "head_sha": meta.get("HeadSha", "")}
    return [Document(id=path, title=path.rsplit("/", 1)[-1], source=path,
                     metadata={**info, "code_language": language}) for path, language in files]


def _csharp_edges(bundle: _Bundle) -> list[Edge]:
    if not bundle.has(DEPENDENCIES):
        return []
    deps = bundle.json(DEPENDENCIES)
    if not isinstance(deps, dict) or not all(isinstance(v, list) for v in deps.values()):
        raise CorpusError(f"{bundle.path}: {DEPENDENCIES} must map ids to lists of ids")
    return [Edge(src, CSHARP_DEPENDENCY, str(dst), {"code_language": "csharp"})
            for src in sorted(deps) for dst in deps[src]]


def _sql_edges(bundle: _Bundle) -> list[Edge]:
    edges = []
    for lineno, row in enumerate(_csv(bundle, SQL_EDGES), start=2):
        where = f"{bundle.path}: {SQL_EDGES} line {lineno}"
        src, dst, rel = (_field(row, k, where) for k in ("from", "to", "relation"))
        edges.append(Edge(src, rel, dst, {"code_language": "sql",
                                          "to_kind": row.get("to_kind", ""),
                                          "file": row.get("file", "")}))
    return edges


def _csv(bundle: _Bundle, name: str) -> list[dict[str, str]]:
    if not bundle.has(name):
        return []
    try:
        return list(csv.DictReader(io.StringIO(bundle.text(name))))
    except csv.Error as exc:
        raise CorpusError(f"{bundle.path}: {name}: {exc}") from None


def looks_like_code_bundle(path: Path, folders: Sequence[str] | None = None) -> bool:
    """A folder with ``repo_meta.json`` at its top or one folder down, or any ``.zip`` file
    (excerpt reads no other zip; the bundle loader says what is wrong with one that is not).
    ``folders``: the names of the folders at its top, when the import's walk listed them."""
    if path.is_dir():
        if folders is None:
            folders = [d.name for d in path.iterdir() if d.is_dir()]
        return (path / META).is_file() or any((path / d / META).is_file() for d in folders)
    return path.suffix.lower() == ".zip"


def parse_json(text: str, where: str, line: int | None = None) -> Any:
    """``text`` (line ``line`` of a file, or a whole file) as JSON, or a :class:`CorpusError`
    naming ``where`` and the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{where} line {line or exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # a 5000-digit number; [[[[… nested too deep
        at = f" line {line}" if line else ""
        raise CorpusError(f"{where}{at}: unreadable JSON "
                          f"({str(exc)[:80] or 'nested too deeply'})") from None
