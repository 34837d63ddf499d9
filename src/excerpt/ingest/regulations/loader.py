"""Regulation books (규정집) in plain text or HWPX: one document per regulation, one node per
article.

The book's layout (contents, indexes, parts, regulations, articles, 부칙, appendices) is read by
:mod:`excerpt.ingest.regulations.text`; this module turns it into documents, nodes and edges.
An HWPX book is first read into the text its word processor's text export gives
(:mod:`excerpt.ingest.regulations.hwpx`), so both editions of a book give the same form of ids
and metadata.

**Documents** — one per regulation found in the body, in force or not.  Id and title: the
regulation's name as its title line writes it (``교원인사규정``).  A name used by several
regulations (a regulation moved between parts leaves a placeholder under its old code;
``공동기기센터운영규정`` appears five times) keeps the bare name for the one in force (else the
first) and ``name (code)`` for the others, e.g. ``공동기기센터운영규정 (3-1-90)``; two in force
under one name are reported.  Metadata: ``rule_code`` (``3-1-5``, from the contents),
``department`` and ``department_path`` (the department index: ``교무팀``, ``["교무처", "교무팀"]``;
"" / [] when not listed), ``history`` (``<규정 명칭 변경 2008. 3. 1.>`` notes as written, then
one entry per 부칙 item that sets a date: ``2000년 8월 1일 제정`` for the first, ``… 개정`` for the
later ones — the book gives effective dates, not enactment dates — or rows of a history table
such as ``1966. 10. 22. 제정``; for a notice, its text), ``chapter_titles``, ``status``
(``in_force``, ``abolished``, ``moved``, ``renamed``), ``listed_abolished`` (the contents mark
it 【폐지】), ``file`` and ``line`` (1-based, of the title).

**Nodes** — ``kind`` in metadata:

* ``article``: ``교원인사규정 제15조``, ``교원인사규정 제15조의2``; a range heading
  ``제13조 내지 제17조 (삭제)`` is one node ``… 제13조`` with ``article_last`` 17.  Title: the
  caption in parentheses (``(승진임용의 제한)``), "" when there is none.  Metadata
  ``regulation``, ``article`` (``제15조의2``), ``article_no``, ``article_sub`` (0 when none),
  ``chapter`` (``제3장 승진임용`` or ""), ``section`` (the 절, or ""), ``caption``, ``deleted``
  (the article is only ``<삭제 …>``; kept as a node).
* ``addendum``: ``교원인사규정 부칙``; a regulation's second and later 부칙 blocks are
  ``… 부칙 2``, ``… 부칙 3`` (numbered in book order, so the ids of earlier blocks never change);
  articles inside a 부칙 would be ``… 부칙 제1조`` (``… 부칙 2 제1조``).
* ``appendix`` (별표, 별첨, 붙임) and ``form`` (별지 서식): ``교원인사규정 별표 1``,
  ``… 별지 제1호 서식``; a repeated label gets `` (2)``, `` (3)``.  They are kept, as tables hold
  rules (amounts, quotas), and marked so a search can leave them out.
* ``notice``: a regulation without articles (abolished, moved, renamed): one node whose id is
  the document id and whose text is the notice.

Every node: ``rule_code``, ``regulation``, ``department``, ``line`` (1-based), ``order``
(position in its regulation).  Text: the lines exactly as in the file, stripped at the ends
only.  ``start``/``end`` are offsets into the document's text, the regulation's lines from its
title line to its end joined by ``\\n``; ``text == doc_text[start:end]``.  The options' ACL tags
and classification labels go on every node.  Documents, nodes, edges and issues are sorted.

**Edges** (from the citing node; no self edges, no duplicates; metadata ``mention`` as written
and ``scope``: ``internal``, ``book`` or ``external``; found in refs.py):

* ``cites`` ``제N조``/``제N조의M``/``제N조제M항`` in the same regulation → that article (a
  range ``제13조 내지 제19조`` → each of 13..19), unless a name stands before it
  (``사립학교법 제14조``); ``이 규정 제5조`` and ``변경규정 제13조`` are internal.  A 제N조 that
  continues a list (``학칙 제29조, 제30조 및 제31조``) belongs to the list's regulation.
* ``cites`` ``「다른규정명」 제N조`` or ``다른규정명 제N조`` (a name of the book; spaces,
  middle-dot variants and a ``동의대학교`` prefix ignored) → ``다른규정명 제N조``; a bare
  ``「다른규정명」`` → that regulation's first node (its 제1조, or its notice).  The book's own
  abbreviations: ``학칙 제N조`` → ``동의대학교학칙`` (after ``대학원``: ``동의대학교대학원학칙``),
  ``정관 제N조`` → ``학교법인동의학원정관`` (not inside the 산학협력단's regulations, whose
  정관 is their own).
* ``cites`` to laws and names outside the book: ``「고등교육법」 제2조`` →
  ``고등교육법 제2조``, ``「고등교육법」`` → ``고등교육법``, ``사립학교법 제14조`` →
  ``사립학교법 제14조`` (targets that are not nodes; kept, they are true).  Bracketed names
  that are not statutes (``「학과장 사유서」``) are not references.
* ``related``: an unbracketed mention of another regulation of the book without an article
  (``교원및직원의보수규정에 의한 보수``) → its first node.  The book's ``관련 규정`` phrases
  name no regulation and give no edge.

**Issues** — per file: contents entries with no text, titles not in the contents, article
headings out of order or irregular, text outside any part.  A file without a single article
is not a regulation book: :class:`CorpusError`; so is an unreadable one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from excerpt.errors import CorpusError
from excerpt.ingest._common import check_options, files_of, labels, read_text_file, source_name
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.files import File, head_of
from excerpt.ingest.regulations.hwpx import hwpx_paragraphs
from excerpt.ingest.regulations.refs import ReferenceIndex, reference_edges
from excerpt.ingest.regulations.text import (
    Book,
    Part,
    RawRegulation,
    is_deleted,
    name_key,
    parse_book,
)
from excerpt.types import Document, IngestIssue, Node

__all__ = ["load_hwpx", "load_regulations", "looks_like_regulations"]

BOOK_SUFFIXES = (".txt",)  # a folder walk; an .hwpx file named directly is read too
HWPX_SUFFIXES = (".hwpx",)


def load_regulations(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
    """Load regulation books (``.txt`` or ``.hwpx`` files, or folders of ``.txt`` books) into
    one corpus; an HWPX file is read as :func:`load_hwpx` reads it."""
    return _load_books(paths, options, BOOK_SUFFIXES)


def load_hwpx(paths: Sequence[Path], options: LoadOptions | None = None) -> LoadedCorpus:
    """Load regulation books saved as HWPX (``.hwpx`` files, or folders of them).

    The file's paragraphs are read in document order by
    :mod:`excerpt.ingest.regulations.hwpx` (tables cell by cell, running headers and footers
    left out, numbering drawn), which gives the text the word processor's own text export
    gives; that text is parsed as a plain-text book is,
    so documents, node ids, titles, metadata and edges have the same form.  Issue lines and
    ``line`` metadata count lines of that text (one per paragraph, table cell or line break).
    """
    return _load_books(paths, options, HWPX_SUFFIXES)


def _load_books(
    paths: Sequence[Path], options: LoadOptions | None, suffixes: tuple[str, ...]
) -> LoadedCorpus:
    options = options or LoadOptions()
    check_options(options)
    every = files_of(paths, options)
    given = every.given
    files: list[File] = []
    for path in given:
        files.extend([f for f in every.files(path) if f.suffix in suffixes]
                     if path.is_dir() else every.files(path))
    if not files:
        raise CorpusError(f"no {' or '.join(suffixes)} files in "
                          + ", ".join(str(p) for p in given))
    corpus = LoadedCorpus(source=source_name(given), index_titles=True)
    owners: dict[str, Path] = {}
    index = ReferenceIndex()
    for file in sorted({f.path.resolve(): f for f in files}.values(),
                       key=lambda f: str(f.path.resolve())):
        f = file.path
        book = _read_book(f, options, file.held() if f.is_file() else None)
        file.release()
        docs, nodes = _emit(book, f, options, index)
        for doc in docs:
            if doc.id in owners:
                raise CorpusError(f"{owners[doc.id]} and {f} both hold regulation {doc.id!r}; "
                                  "load them as separate sources")
            owners[doc.id] = f
        corpus.documents.extend(docs)
        corpus.nodes.extend(nodes)
        corpus.errors.extend(IngestIssue(str(f), reason, line or None)
                             for line, reason in book.issues)
    corpus.edges = reference_edges(corpus.nodes, index)
    corpus.nodes.sort(key=lambda n: n.id)
    corpus.documents.sort(key=lambda d: d.id)
    corpus.errors.sort(key=lambda e: (e.path, e.line or 0, e.reason))
    return corpus


def looks_like_regulations(path: Path, sniff_bytes: int = 65536, *,
                           head: bytes | None = None) -> bool:
    """A ``.txt`` file whose start holds contents lines ``name<TAB>1-2-3`` of regulations;
    ``head``: the file's first bytes, when already read."""
    if path.suffix.lower() != ".txt" or not path.is_file():
        return False
    head = head_of(path, sniff_bytes, head)
    if head is None:
        return False
    start = head.decode("utf-8", errors="replace")
    hits = re.findall(r"(?:규정|세칙|학칙|정관|규칙)(?:【폐지】)?[ \t]*\t[ \t]*\d+-\d+-\d+", start)
    return len(hits) >= 3


def _read_book(path: Path, options: LoadOptions, data: bytes | None = None) -> Book:
    text: str | None
    reason: str | None = "not a regular file"
    if path.suffix.lower() == ".hwpx":
        text = "\n".join(hwpx_paragraphs(path, options.archive_limits, data))
    elif path.is_file():
        text, reason = read_text_file(path, data)
    else:
        text = None
    if text is None:
        raise CorpusError(f"{path}: {reason}")
    book = parse_book(text)
    if not any(p.kind == "article" for r in book.regulations for p in r.parts):
        instead = ("only regulation books are read from HWPX" if path.suffix.lower() == ".hwpx"
                   else "load it with the text format instead")
        raise CorpusError(
            f"{path} is not a regulation book: no regulation with articles (a title line "
            f"followed by lines '제1조 (…) …') was found; {instead}"
        )
    return book


# --- documents and nodes ------------------------------------------------------------------------


def _document_ids(book: Book) -> list[str]:
    """The id of each regulation: its name, or ``name (code)`` when another one owns the name."""
    groups: dict[str, list[int]] = {}
    for i, reg in enumerate(book.regulations):
        groups.setdefault(name_key(reg.name), []).append(i)
    ids = [reg.name for reg in book.regulations]
    for members in groups.values():
        if len(members) < 2:
            continue
        live = [i for i in members if book.regulations[i].status == "in_force"]
        owner = live[0] if live else members[0]
        for i in members:
            reg = book.regulations[i]
            if i != owner:
                ids[i] = f"{reg.name} ({reg.code or reg.first + 1})"
            if i in live[1:]:
                book.issues.append((reg.first + 1, f"{reg.name} ({reg.code}) has the name of "
                                    f"another regulation in force; its id is {ids[i]!r}"))
    return _unique(ids, [reg.first + 1 for reg in book.regulations], book.issues)


def _unique(ids: list[str], lines: list[int], issues: list[tuple[int, str]]) -> list[str]:
    """``ids`` with any repeat (two entries under one code) made unique by its line number."""
    seen: set[str] = set()
    out = []
    for doc_id, line in zip(ids, lines, strict=True):
        if doc_id in seen:
            issues.append((line, f"a second regulation {doc_id!r}; its id is "
                           f"{doc_id!r} + ' (line {line})'"))
            doc_id = f"{doc_id} (line {line})"
        seen.add(doc_id)
        out.append(doc_id)
    return out


def _emit(
    book: Book, path: Path, options: LoadOptions, index: ReferenceIndex
) -> tuple[list[Document], list[Node]]:
    offsets = [0]
    for line in book.lines:
        offsets.append(offsets[-1] + len(line) + 1)
    docs: list[Document] = []
    nodes: list[Node] = []
    for reg, doc_id in zip(book.regulations, _document_ids(book), strict=True):
        department = _department(book, reg)
        doc_nodes = _nodes(book, reg, doc_id, offsets, department, options, str(path.resolve()))
        docs.append(Document(doc_id, reg.name, str(path.resolve()), {
            "rule_code": reg.code, "department": department[-1] if department else "",
            "department_path": list(department), "history": list(reg.history),
            "chapter_titles": list(reg.chapters), "status": reg.status,
            "listed_abolished": reg.listed_abolished, "file": path.name, "line": reg.first + 1,
        }))
        nodes.extend(doc_nodes)
        _remember(index, reg.name, doc_id, doc_nodes)
    return docs, nodes


def _remember(index: ReferenceIndex, name: str, doc_id: str, nodes: list[Node]) -> None:
    """Index a regulation's name (the bare-named document owns it), first node and articles
    (each number of a range heading points at its node)."""
    key = name_key(name)
    if doc_id == name or key not in index.by_key:
        index.by_key[key] = doc_id
    if nodes:
        index.first_node[doc_id] = nodes[0].id
    for n in nodes:
        if n.metadata["kind"] != "article":
            continue
        no, sub = int(n.metadata["article_no"]), int(n.metadata["article_sub"])
        index.articles[(doc_id, no, sub)] = n.id
        for k in range(no + 1, int(n.metadata.get("article_last", no)) + 1):
            index.articles[(doc_id, k, 0)] = n.id


def _department(book: Book, reg: RawRegulation) -> tuple[str, ...]:
    """The regulation's department path in the index: by name (the entry with its code first),
    else by code alone (the index spells some names differently)."""
    listed = book.departments.get(name_key(reg.name), [])
    same_code = [path for code, path in listed if code == reg.code]
    by_code = [path for entries in book.departments.values() for code, path in entries
               if code == reg.code] if reg.code else []
    return (same_code or [path for _, path in listed] or by_code or [()])[0]


def _nodes(
    book: Book, reg: RawRegulation, doc_id: str, offsets: list[int],
    department: tuple[str, ...], options: LoadOptions, source: str,
) -> list[Node]:
    acl, classes = labels(options.acl_tags), labels(options.classification_labels)
    base = offsets[reg.first]
    out: list[Node] = []
    for order, part in enumerate(reg.parts):
        raw = "\n".join(book.lines[part.first : part.last + 1])
        text = raw.strip()
        if not text:
            continue
        start = offsets[part.first] - base + (len(raw) - len(raw.lstrip()))
        meta: dict[str, Any] = {
            "regulation": reg.name, "rule_code": reg.code,
            "kind": part.kind, "department": department[-1] if department else "",
            "line": part.first + 1, "order": order,
        }
        node_id, caption = _identify(part, doc_id, reg, text, meta)
        meta["caption"] = caption
        # The title names the regulation, so a search for 교원인사규정 제15조 finds the article
        # whose own text says only 제15조 (the corpus asks for titles to be indexed).
        title = f"{node_id} {caption}".strip() if caption not in node_id else node_id
        out.append(Node(node_id, doc_id, text, title, source, start, start + len(text),
                        acl, classes, meta))
    return out


def _identify(
    part: Part, doc_id: str, reg: RawRegulation, text: str, meta: dict[str, Any]
) -> tuple[str, str]:
    """The node id and title of ``part``; fills its kind-specific metadata."""
    if part.kind == "article":
        meta.update({"article": part.label, "article_no": part.no, "article_sub": part.sub,
                     "chapter": part.chapter, "section": part.section,
                     "caption": part.caption, "deleted": is_deleted(text)})
        if part.last_no > part.no:
            meta["article_last"] = part.last_no
        return f"{doc_id} {part.label}", f"({part.caption})" if part.caption else ""
    if part.kind == "addendum":
        meta["addendum"] = part.addendum
        if part.no:
            meta.update({"article_no": part.no, "article_sub": part.sub,
                         "caption": part.caption})
        return f"{doc_id} {part.label}", part.label
    if part.kind == "notice":
        meta["status"] = reg.status
        return doc_id, reg.name
    meta["label"] = part.label
    return f"{doc_id} {part.label}", part.label
