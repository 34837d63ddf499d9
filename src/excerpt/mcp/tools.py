"""What each MCP tool does, as plain synchronous functions over the engine: the caller's
:class:`Rights`, the tool's arguments, the CLI's JSON back. No MCP type appears here; the
server (:mod:`excerpt.mcp.server`) describes these as tools and runs them off the event loop.

Rights are the one thing a tool cannot choose: every read goes through
:meth:`Rights.principal`, which narrows the caller's rights to what the call names and never
widens them (the rule of ``excerpt serve``'s routes), so a tool sees exactly what
``/v1/search`` shows the same key or principal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt import service
from excerpt.edge.uploads import MAX_UPLOAD, Uploads, inside_roots, staged, upload_name
from excerpt.engine import Engine
from excerpt.errors import Forbidden, InputError, NotFoundError
from excerpt.limits import within
from excerpt.memory.intents import handle
from excerpt.memory.store import MemoryStore
from excerpt.scope import Rights, Scope
from excerpt.types import SearchMode

MAX_IDS = 100
"""Ids one ``get_nodes`` call reads at most (the service's ``MAX_K``)."""
WHOLE = 10_000_000
"""A token budget no node reaches: ``get_nodes`` returns whole texts, never cut."""


@dataclass(frozen=True)
class Ingest:
    """Where the ingest tool may write and read: ``uploads`` holds a document sent as text
    while it is imported; server-side paths only inside ``roots`` (None: anywhere the process
    may read, as `excerpt ingest` on the same machine: ``excerpt mcp --ingester``)."""

    uploads: Uploads
    roots: tuple[Path, ...] | None = ()


class Tools:
    """The operations behind the tools, over one engine and one memory store (the single
    writer of conversations in this process); ``ingest`` None: the corpus is read-only."""

    def __init__(self, engine: Engine, memory: MemoryStore | None = None,
                 ingest: Ingest | None = None) -> None:
        self.engine = engine
        self._memory = memory
        self.ingesting = ingest

    @property
    def memory(self) -> MemoryStore:
        if self._memory is None:  # opened on first use: most sessions never touch memory
            self._memory = MemoryStore(self.engine.memory_backend())
        return self._memory

    def search(self, rights: Rights, scope: Scope, query: str, mode: SearchMode = "hybrid",
               k: int | None = None, rerank: str | None = None) -> dict[str, Any]:
        request = service.SearchRequest.served(query, mode, k, rerank)
        return service.search_json(self.engine, request, scope.filters(),
                                   scope.principal(rights))

    def ask(self, rights: Rights, scope: Scope, question: str, mode: SearchMode = "hybrid",
            doc_limit: int | None = None, fetch_limit: int | None = None,
            max_quotes: int | None = None, rerank: str | None = None, mmr: bool = False,
            conversation: str | None = None, reader: str | None = None) -> dict[str, Any]:
        """``excerpt ask``: options from the settings where not given; ``reader`` a name."""
        request = service.AskRequest.served(
            self.engine, question, mode, doc_limit, fetch_limit, max_quotes, mmr, reader,
            rerank, conversation=service.Conversation.of(conversation, rights))
        return service.ask_json(self.engine, request, scope.filters(),
                                scope.principal(rights), self.memory)

    def graph(self, rights: Rights, scope: Scope, seeds: Sequence[str],
              max_depth: int | None = None, max_nodes: int | None = None,
              allow: Sequence[str] = (), direction: str = "out") -> dict[str, Any]:
        _bounded(max_depth=max_depth, max_nodes=max_nodes)
        limits = self.engine.graph_limits(max_depth, max_nodes, allow, direction=direction)
        return self.engine.graph(list(seeds), scope.filters(), scope.principal(rights),
                                 limits).to_json()

    def context(self, rights: Rights, scope: Scope, seeds: Sequence[str] = (),
                graph: Sequence[str] = (), query: str | None = None,
                mode: SearchMode = "hybrid", k: int | None = None,
                budget_tokens: int | None = None, max_chars: int | None = None,
                prioritization: str | None = None, max_depth: int | None = None,
                max_nodes: int | None = None, allow: Sequence[str] = (),
                direction: str = "out") -> dict[str, Any]:
        _bounded(k=k, budget_tokens=budget_tokens, max_chars=max_chars, max_depth=max_depth,
                 max_nodes=max_nodes)
        limits = self.engine.graph_limits(max_depth, max_nodes, allow, direction=direction)
        return self.engine.context(list(seeds), list(graph), scope.filters(),
                                   scope.principal(rights), budget_tokens, max_chars,
                                   prioritization, query, mode, k, limits).to_json()

    def get_nodes(self, rights: Rights, scope: Scope, ids: Sequence[str]) -> dict[str, Any]:
        """Whole texts of ``ids`` as the caller may see them; unknown and hidden ids alike
        are "not found" (a hidden node's existence is not told)."""
        if not ids:
            raise InputError("give at least one node id")
        if len(ids) > MAX_IDS:
            raise InputError(f"at most {MAX_IDS} ids at once")
        packed = self.engine.context(list(ids), (), scope.filters(), scope.principal(rights),
                                     WHOLE, None, "seed_first").to_json()
        found = {n["id"] for n in packed["node_texts"]}
        return {"nodes": [{k: n[k] for k in ("id", "text", "tokens")}
                          for n in packed["node_texts"]],
                "not_found": [i for i in dict.fromkeys(ids) if i not in found]}

    def node_text(self, rights: Rights, collection: str, node_id: str) -> str:
        """The text of the resource ``excerpt://COLLECTION/NODE_ID`` (the caller's rights)."""
        nodes = self.get_nodes(rights, Scope(collection), [node_id])["nodes"]
        if not nodes:
            raise NotFoundError(f"no node {node_id!r} in collection {collection!r}")
        return str(nodes[0]["text"])

    def list_collections(self, rights: Rights, acl_tag: Sequence[str] | None = None,
                         clearance: Sequence[str] | None = None,
                         all_access: bool = False) -> dict[str, Any]:
        """Collections of which the caller may see a node, with what it may see of them:
        `excerpt collections` (documents and nodes of the current view, as a search reads)."""
        return self.engine.catalogue.collections(
            rights.principal(acl_tag, clearance, all_access))

    def list_snapshots(self, rights: Rights, collection: str | None = None,
                       acl_tag: Sequence[str] | None = None,
                       clearance: Sequence[str] | None = None,
                       all_access: bool = False) -> dict[str, Any]:
        return self.engine.snapshots(collection, rights.principal(acl_tag, clearance,
                                                                  all_access))

    def collection_overview(self, rights: Rights, collection: str, examples: int = 3,
                            acl_tag: Sequence[str] | None = None,
                            clearance: Sequence[str] | None = None,
                            all_access: bool = False) -> dict[str, Any]:
        """``GET /v1/collections/{collection}/overview``: what the caller may see of it."""
        return service.overview(self.engine, service.OverviewRequest(collection, examples),
                                rights.principal(acl_tag, clearance, all_access))

    def ingest(self, rights: Rights, collection: str = "default", text: str | None = None,
               filename: str | None = None, path: str | None = None, fmt: str = "auto",
               acl_tag: Sequence[str] = (), classification: Sequence[str] = ()
               ) -> dict[str, Any]:
        """``POST /v1/ingest`` (a document's ``text`` under ``filename``, which names its
        source ``upload:FILENAME`` and its format) or ``POST /v1/ingest/path`` (``path``)."""
        if self.ingesting is None:
            raise Forbidden(rights.ingest_refusal)
        rights.check_ingest(paths=path is not None)
        if (path is None) == (text is None):
            raise InputError("give either text (with filename) or path")
        labels = (list(acl_tag), list(classification))
        if path is not None:
            return self._ingest_path(Path(path), collection, fmt, *labels)
        if filename is None:
            raise InputError("text needs a filename (its suffix picks the format: notes.md)")
        data = text.encode("utf-8") if text is not None else b""
        if len(data) > MAX_UPLOAD:
            raise InputError(f"the text is over {MAX_UPLOAD} bytes")
        name = upload_name(filename)
        with staged(self.ingesting.uploads, name) as folder:
            (folder / name).write_bytes(data)
            return self.engine.ingest(folder / name, collection, fmt, *labels,
                                      source=f"upload:{name}").to_json()

    def _ingest_path(self, path: Path, collection: str, fmt: str, acl_tag: list[str],
                     classification: list[str]) -> dict[str, Any]:
        assert self.ingesting is not None
        roots = self.ingesting.roots
        if roots is not None:
            inside_roots(path, roots)
        return self.engine.ingest(path, collection, fmt, acl_tag, classification,
                                  ingest_roots=list(roots) if roots is not None else None
                                  ).to_json()

    def memory_add(self, rights: Rights, conversation: str, speaker: str, turn: int,
                   text: str) -> dict[str, Any]:
        return self._memory_call(rights, conversation, "add",
                                 {"speaker": speaker, "turn": turn, "text": text})

    def memory_read(self, rights: Rights, conversation: str, speaker: str | None = None,
                    last: int | None = None) -> dict[str, Any]:
        if last is not None:
            return self._memory_call(rights, conversation, "last",
                                     {"n": last, "speaker": speaker})
        return self._memory_call(rights, conversation, "read", {"speaker": speaker})

    def memory_search(self, rights: Rights, conversation: str, query: str, k: int = 10,
                      speaker: str | None = None) -> dict[str, Any]:
        return self._memory_call(rights, conversation, "search",
                                 {"query": query, "k": k, "speaker": speaker})

    def _memory_call(self, rights: Rights, conversation: str, intent: str,
                     data: dict[str, Any]) -> dict[str, Any]:
        payload = handle(self.memory, rights.conversation(conversation), intent, data)
        return {"conversation": conversation, **payload}

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._memory = None


def _bounded(**counts: int | None) -> None:
    """Refuses a count outside its bounds (:mod:`excerpt.limits`) in the sentence the CLI and
    HTTP use: the tools' schemas state the bounds, this enforces them."""
    for name, value in counts.items():
        within(name, value)
