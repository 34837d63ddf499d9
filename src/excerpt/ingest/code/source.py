"""Raw source folders: C# (``.cs``) and T-SQL (``.sql``) files -> declarations and their graph.

Folders are walked recursively (hidden files and folders skipped); other files are ignored.
Each file is one :class:`Document` (id: its path relative to the folder given, POSIX style; a
file named directly: its file name; title: the file name; metadata ``code_language`` and
``file``).  A document's and its nodes' ``source`` is that same relative path, never a path of
the machine that ingested (the corpus ``source``, which names the import, stays the folder).
Its declarations are the nodes: C# types, their members and top-level statements
(:mod:`excerpt.ingest.code.csharp`, ids
``CS:<Namespace>.<Class>[.<Member>]``) and T-SQL tables, views, procedures, functions,
triggers, indexes and synonyms (:mod:`excerpt.ingest.code.tsql`, ids ``SQL:<schema>.<name>``).
A node's text is the declaration as written; ``start``/``end`` are its offsets in the file's
text (UTF-8, byte order mark dropped, line endings normalised to ``\\n``, as the text loader
reads files), so ``node.text == text[start:end]``, except a C# type's node, which holds its
outline (signature, fields, member signatures; ``start``/``end`` its span).  No code node has
more than ``LoadOptions.max_node_tokens`` tokens: a longer one is cut into parts ``<id>~2`` …,
each linked from the first by ``Contains`` (C# at statements; SQL after blank lines, else at
lines).  Node metadata: ``code_language``, ``file``
(the document id) and the language's own fields (C#: ``namespace``, ``class``, ``member``,
``type``; SQL: ``schema``, ``name``, ``type``).  Every node carries the load options' ACL tags
and classification labels.

C# names resolve within projects (:mod:`excerpt.ingest.code.csharp_projects`): the ``.csproj`` and
``project.json`` files inside a folder given say which project each ``.cs`` file belongs to,
which projects it sees, and which namespaces all its files import (``global using``, implicit
usings, ``<Using>`` items).

Edges (typed, directed; see :mod:`excerpt.ingest.code.csharp_graph`,
:mod:`excerpt.ingest.code.csharp_di`
and :mod:`excerpt.ingest.code.tsql`): ``Contains``, ``References``, ``Calls``, ``Implements``,
``ImplementedBy``, ``Registers``, ``Executes`` (C# and SQL), ``ReadsFrom``, ``WritesTo``,
``FK``, ``On``, ``SynonymFor``.  SQL names are matched without regard to case, as SQL Server
does; an edge to an object the folder does not define is kept (it is still true).  No self
edges, no duplicates; documents, nodes, edges and issues come sorted, so a load is
reproducible.  The source is the resolved folder given (several paths: their common folder).

Bad files do not stop the load: unreadable, binary, non-UTF-8 or empty files, C# files with
syntax errors from which no declaration can be recovered, and SQL batches sqlglot cannot parse
(the file's other batches are kept) become :class:`IngestIssue` entries in ``errors``.  A path
that does not exist raises :class:`InputError`; nothing readable at all, :class:`CorpusError`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from excerpt.errors import CorpusError
from excerpt.ingest._common import check_options, files_of, labels, read_text_file
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.code.csharp import CsFile, CsSyntaxError, parse_csharp
from excerpt.ingest.code.csharp_di import di_edges
from excerpt.ingest.code.csharp_graph import csharp_edges
from excerpt.ingest.code.csharp_index import CsIndex, in_project
from excerpt.ingest.code.csharp_projects import ProjectSet, global_usings, read_projects
from excerpt.ingest.code.text import CodeObject, part_edges, split_slice, unique_ids
from excerpt.ingest.code.tsql import read_sql
from excerpt.ingest.code.tsql_merge import one_per_object
from excerpt.ingest.files import File, FileSet
from excerpt.types import Document, Edge, IngestIssue, Node

__all__ = ["CODE_SUFFIXES", "load_code_source"]

CODE_SUFFIXES = {".cs": "csharp", ".sql": "sql"}
_PROJECT_FILE_SUFFIX = ".csproj"
_PROJECT_JSON = "project.json"
_MAX_LISTED_ISSUES = 5

Triple = tuple[str, str, str]


@dataclass(frozen=True)
class _File:
    path: Path
    doc_id: str
    language: str
    text: str
    root: Path | None = None  # the folder given it was found in (None: the file was given)


def load_code_source(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
    """Load C# and T-SQL files and folders into one corpus (see the module docstring)."""
    options = options or LoadOptions()
    check_options(options)
    every = files_of(paths, options)
    given = every.given
    corpus = LoadedCorpus(source=_source_name(given))
    files = _read_files(every, corpus.errors)
    objects: list[tuple[_File, CodeObject]] = []
    edges = _load_sql([f for f in files if f.language == "sql"], corpus, objects)
    procedures = {o.id.lower() for _, o in objects if o.kind == "Procedure"}
    edges |= _load_csharp([f for f in files if f.language == "csharp"], corpus, objects,
                          procedures, _read_projects(every), options.max_node_tokens)
    edges |= _cap_sql(objects, options.max_node_tokens)
    _finish(corpus, objects, edges, options)
    if not corpus.documents:
        raise CorpusError("no readable C# or T-SQL file in " + ", ".join(map(str, given))
                          + _why(corpus.errors))
    return corpus


def _source_name(given: Sequence[Path]) -> str:
    """The resolved folder given, or the folder holding every path given (as the other loaders,
    a full path: two folders that share a name are two sources)."""
    folders = [p.resolve() if p.is_dir() else p.resolve().parent for p in given]
    return os.path.commonpath([str(f) for f in folders])


def _read_files(every: FileSet, issues: list[IngestIssue]) -> list[_File]:
    """The readable code files of the paths given, by document id; unreadable ones
    reported."""
    found: dict[str, _File] = {}
    seen: set[Path] = set()
    for root in sorted(every.given, key=lambda p: str(p.resolve())):
        candidates = [f for f in every.files(root)
                      if not root.is_dir() or f.suffix in CODE_SUFFIXES]
        for file in candidates:
            if file.path.resolve() in seen:
                continue
            seen.add(file.path.resolve())
            _read_one(file, found, issues)
            file.release()
    return [found[k] for k in sorted(found)]


def _read_projects(every: FileSet) -> dict[Path, ProjectSet]:
    """The C# projects inside each folder given (unreadable project files are skipped)."""
    out: dict[Path, ProjectSet] = {}
    for root in every.given:
        if not root.is_dir():
            continue
        texts: dict[str, str] = {}
        for file in every.files(root):
            if file.suffix == _PROJECT_FILE_SUFFIX or file.path.name.lower() == _PROJECT_JSON:
                text, _ = read_text_file(file.path, file.held())
                file.release()
                if text is not None:
                    texts[file.name] = text
        out[root] = read_projects(texts)
    return out


def _read_one(file: File, found: dict[str, _File], issues: list[IngestIssue]) -> None:
    path, doc_id, root = file.path, file.name, file.root
    language = CODE_SUFFIXES.get(path.suffix.lower())
    if language is None:
        issues.append(IngestIssue(str(path), "not a C# (.cs) or T-SQL (.sql) file"))
        return
    if doc_id in found:
        raise CorpusError(f"two files would get the same document id {doc_id!r}: "
                          f"{found[doc_id].path} and {path}; load them as separate sources")
    text, reason = (read_text_file(path, file.held()) if path.is_file()
                    else (None, "not a regular file"))
    if text is None:
        issues.append(IngestIssue(str(path), reason or "unreadable"))
        return
    found[doc_id] = _File(path, doc_id, language, text, root)


def _load_sql(files: list[_File], corpus: LoadedCorpus,
              objects: list[tuple[_File, CodeObject]]) -> set[Triple]:
    """SQL documents and objects (one per object id, :mod:`excerpt.ingest.code.tsql_merge`);
    returns their edges."""
    found: list[tuple[_File, CodeObject, set[tuple[str, str]], bool]] = []
    edges: set[Triple] = set()
    for f in files:
        sql = read_sql(f.text)
        corpus.errors.extend(IngestIssue(str(f.path), why, line) for line, why in sql.issues)
        if sql.objects or not sql.issues:
            corpus.documents.append(_document(f))
        found.extend((f, obj, out, k in sql.guarded) for k, (obj, out) in enumerate(sql.objects))
        edges |= sql.loose_edges
    for f, obj, out in one_per_object(found):
        objects.append((f, obj))
        edges |= {(obj.id, rel, to) for rel, to in out}
    return edges


def _load_csharp(files: list[_File], corpus: LoadedCorpus,
                 objects: list[tuple[_File, CodeObject]], procedures: set[str],
                 projects: dict[Path, ProjectSet], max_tokens: int) -> set[Triple]:
    """C# documents and declarations (overloads numbered ``#2``…); returns their edges."""
    parsed: list[tuple[_File, CsFile]] = []
    for f in files:
        try:
            cs = parse_csharp(f.text)
        except CsSyntaxError as exc:
            corpus.errors.append(IngestIssue(str(f.path), str(exc), exc.line))
            continue
        corpus.documents.append(_document(f))
        parsed.append((f, cs))
    decls = [(f, d) for f, cs in parsed for d in cs.decls]
    for (_, d), oid in zip(decls, unique_ids([f"CS:{d.key}" for _, d in decls]), strict=True):
        d.id = oid
    found = [(f, o) for f, cs in parsed for o in cs.objects(max_tokens)]
    objects.extend(found)
    read = _in_projects(parsed, projects)
    return (csharp_edges(read, procedures) | di_edges(read, CsIndex(read, procedures))
            | part_edges([o for _, o in found]))


def _in_projects(parsed: list[tuple[_File, CsFile]],
                 projects: dict[Path, ProjectSet]) -> list[CsFile]:
    """Each parsed file with its project, the projects it sees and the namespaces its project
    imports (global usings of its files, implicit and ``<Using>`` usings).  Files outside every
    project see everything and share their global usings, as they always did."""
    where: list[tuple[str | None, frozenset[str] | None]] = []
    imports: dict[str | None, set[str]] = {}
    for f, cs in parsed:
        found = projects.get(f.root) if f.root is not None else None
        project = found.project_of(f.doc_id) if found is not None else None
        if found is None or project is None:
            where.append((None, None))
        else:
            prefix = f"{f.root}::"
            key = prefix + project.folder
            where.append((key, frozenset(prefix + p for p in found.sees(project.folder))))
            imports.setdefault(key, set()).update(project.usings)
        imports.setdefault(where[-1][0], set()).update(global_usings(f.text, cs.usings))
    return [in_project(cs, key, sees, imports.get(key, set()))
            for (_, cs), (key, sees) in zip(parsed, where, strict=True)]


def _cap_sql(objects: list[tuple[_File, CodeObject]], max_tokens: int) -> set[Triple]:
    """SQL objects over the token cap replaced by their parts; returns the parts' edges."""
    objects[:] = [(f, p) for f, o in objects
                  for p in (split_slice(o, f.text, max_tokens) if f.language == "sql" else [o])]
    return part_edges([o for f, o in objects if f.language == "sql"])


def _document(f: _File) -> Document:
    return Document(id=f.doc_id, title=f.path.name, source=f.doc_id,
                    metadata={"code_language": f.language, "file": f.doc_id})


def _finish(corpus: LoadedCorpus, objects: list[tuple[_File, CodeObject]], edges: set[Triple],
            options: LoadOptions) -> None:
    """Nodes with their security fields, edges with SQL names in one spelling; all sorted."""
    acl = labels(options.acl_tags)
    classes = labels(options.classification_labels)
    corpus.nodes = sorted(
        (Node(id=o.id, document_id=f.doc_id, title=o.title,
              text=f.text[o.start : o.end] if o.text is None else o.text,
              source=f.doc_id, start=o.start, end=o.end, acl_tags=acl,
              classification_labels=classes,
              metadata={"code_language": f.language, "file": f.doc_id, **o.metadata})
         for f, o in objects),
        key=lambda n: n.id,
    )
    spelled = _sql_spelling(edges, {n.id for n in corpus.nodes})
    triples = {(spelled.get(a, a), rel, spelled.get(b, b)) for a, rel, b in edges}
    corpus.edges = [Edge(a, rel, b) for a, rel, b in sorted(triples) if a != b]
    corpus.unresolved = _unresolved(corpus)
    corpus.documents.sort(key=lambda d: d.id)
    corpus.errors.sort(key=lambda i: (i.path, i.line or 0, i.reason))


def _unresolved(corpus: LoadedCorpus) -> dict[str, list[str]]:
    """Edge targets the import does not define, by relation (a table of another database, a
    procedure not in the folder), and the objects with SQL built at run time."""
    defined = {n.id for n in corpus.nodes}
    found: dict[str, set[str]] = {}
    for e in corpus.edges:
        if e.to_id not in defined:
            found.setdefault(e.relation, set()).add(e.to_id)
    dynamic = {n.id for n in corpus.nodes if n.metadata.get("unresolved_dynamic_sql")}
    if dynamic:
        found["dynamic SQL"] = dynamic
    return {kind: sorted(names) for kind, names in sorted(found.items())}


def _sql_spelling(edges: set[Triple], node_ids: set[str]) -> dict[str, str]:
    """One spelling per SQL name (names are case-insensitive): the defining node's, else the
    first in sorted order."""
    best: dict[str, str] = {}
    for oid in sorted({x for a, _, b in edges for x in (a, b)} | node_ids):
        if oid.startswith("SQL:"):
            best.setdefault(oid.lower(), oid)
    for oid in node_ids:
        if oid.startswith("SQL:"):
            best[oid.lower()] = oid
    return {oid: best[oid.lower()] for a, _, b in edges for oid in (a, b) if oid.startswith("SQL:")}


def _why(issues: Sequence[IngestIssue]) -> str:
    if not issues:
        return " (no .cs or .sql files)"
    listed = "; ".join(f"{i.path}: {i.reason}" for i in issues[:_MAX_LISTED_ISSUES])
    more = len(issues) - _MAX_LISTED_ISSUES
    return f" ({listed}{f'; and {more} more' if more > 0 else ''})"
