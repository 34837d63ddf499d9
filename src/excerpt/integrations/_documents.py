"""A hit as the frameworks' documents carry it: its text, and metadata holding excerpt's node
id, score, snapshot, a citation (where the passage is, as the web UI names it:
server/static/places.js) and the node's own metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

_APPARATUS = {"front": "front matter", "back": "back matter"}


@dataclass(frozen=True)
class Passage:
    """One hit of a search, from a local engine or a remote ``serve`` alike."""

    id: str
    text: str
    score: float
    metadata: dict[str, Any]
    """What a framework document carries (:func:`document_metadata`)."""

    @classmethod
    def of(cls, hit: Mapping[str, Any]) -> Passage:
        """From a hit's JSON (``excerpt search --json``, ``GET /v1/search``)."""
        return cls(str(hit["id"]), str(hit["text"]), float(hit["score"]),
                   document_metadata(hit))


def document_metadata(hit: Mapping[str, Any]) -> dict[str, Any]:
    """``id``, ``score``, ``title``, ``source``, ``snapshot_id``; ``citation``, the passage as
    the web UI cites it (``The Picture of Dorian Gray · chapter 2``), with its ``place`` alone
    (book and chapter, regulation and article, file and member, path, page and section) and
    its ``kind`` (book, regulation, code or document); and the node's own ``metadata``."""
    node = dict(hit.get("metadata") or {})
    title, source = str(hit.get("title") or ""), str(hit.get("source") or "")
    kind, label = place(node, title, source)
    return {
        "id": str(hit["id"]),
        "score": float(hit["score"]),
        "title": title,
        "source": source,
        "snapshot_id": str(hit.get("snapshot_id") or ""),
        "citation": label,
        "place": _without_title(label, title),
        "kind": kind,
        "metadata": node,
    }


def _without_title(label: str, title: str) -> str:
    prefix = f"{title} · "
    return label[len(prefix):] if title and label.startswith(prefix) else label


def _join(*parts: Any) -> str:
    return " · ".join(str(p) for p in parts if p is not None and p != "")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def page(m: Mapping[str, Any]) -> str:
    """``p. 12``; ``p. 11–12`` for a passage spanning pages; the printed label when the PDF
    gives one; empty without a page (places.js ``page``)."""
    if m.get("page_label"):
        end = m.get("page_end_label")
        return f"p. {m['page_label']}" + (f"–{end}" if end and end != m["page_label"] else "")
    if not _number(m.get("page")):
        return ""
    end = m.get("page_end")
    return f"p. {m['page']}" + (f"–{end}" if _number(end) and end != m["page"] else "")


def place(m: Mapping[str, Any], title: str, source: str) -> tuple[str, str]:
    """(kind, label) of a node's metadata, as places.js ``place`` gives them to the web UI."""
    if m.get("code_language") or m.get("file"):
        member = (str(m["class"]) + (f".{m['member']}" if m.get("member") else "")
                  if m.get("class") else ".".join(str(p) for p in (m.get("schema"),
                                                                    m.get("name")) if p))
        return "code", _join(m.get("file") or source, member)
    if m.get("regulation"):
        article = " ".join(str(p) for p in (m.get("article"), m.get("caption")) if p)
        return "regulation", _join(m["regulation"], m.get("chapter"), article)
    if m.get("path"):
        chapter = (" ".join(str(p) for p in (f"chapter {m['chapter']}", m.get("chapter_title"))
                            if p) if _number(m.get("chapter")) else "")
        return "document", _join(m["path"], chapter, page(m), m.get("section"))
    part = m.get("part")
    apparatus = _APPARATUS.get(str(part), str(part)) if part and part != "body" else ""
    if _number(m.get("book")) or _number(m.get("chapter")):
        book = f"book {m['book']}" if _number(m.get("book")) else ""
        chapter = f"chapter {m['chapter']}" if _number(m.get("chapter")) else ""
        return "book", _join(title or _base(source), book, chapter, apparatus)
    if apparatus and title:
        return "book", _join(title, apparatus)
    return "document", _join(title, _base(source))


def _base(path: str) -> str:
    return PurePath(path.replace("\\", "/")).name if path else ""
