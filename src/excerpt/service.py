"""What every front door does with a search, an ask and a conversation, once: the CLI
(``excerpt search``, ``excerpt ask``), the REST routes (``GET /v1/search``, ``POST /v1/ask`` and
its stream), MCP's ``search`` and ``ask`` tools and the OpenAI-compatible chat hand it a request
and the caller's read (filters and principal, from :class:`excerpt.scope.Scope`), and give back
what it returns; none writes the glue of its own. Their errors are excerpt's error tree, which
each door answers through :mod:`excerpt.edge.errors` (the CLI: exit codes).

A request is checked when it is made, the same way whichever door made it: a count outside
its bounds (:mod:`excerpt.limits`), an unknown mode, an empty query are
:class:`excerpt.errors.InputError` before any work; a served request (HTTP, MCP, chat) names a
reranker the server offers, never a model path (:meth:`SearchRequest.served`).

An ask inside a conversation resolves a follow-up from the conversation's earlier turns, then
asks the resolved question. A stored conversation (``excerpt ask --conversation``, ``/v1/ask``
and its stream, MCP) reads its turns from the memory store and records the new one
(compose/conversation.py); the answer's JSON then carries the conversation's fields. It is
stored under a key the front door chooses (a service key's conversations are its own:
``Rights.conversation``) and shown under the name the caller gave. A sent conversation (chat:
an OpenAI client sends every message each time) is resolved from the turns sent and stored
nowhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from excerpt.errors import InputError
from excerpt.limits import within
from excerpt.types import SEARCH_MODES, Filters, Principal, SearchMode, check_where

if TYPE_CHECKING:  # a search imports no composer, memory or reranker (a CLI cold start)
    from excerpt.compose.ask import AskOptions, AskResult
    from excerpt.compose.example_questions import Example
    from excerpt.compose.followup import Resolution
    from excerpt.compose.synthesis import KeptSentence
    from excerpt.engine import Engine
    from excerpt.memory.store import MemoryStore
    from excerpt.retrieve.searcher import SearchResult
    from excerpt.scope import Rights

Stage = Callable[[Any], None]
"""Receives each provenance event of an ask as it happens (a stream's stage events)."""


def _mode(mode: str) -> None:
    """An unknown mode, refused in :meth:`Engine.search`'s sentence."""
    if mode not in SEARCH_MODES:
        raise InputError(f"unknown mode {mode!r}; choose one of {SEARCH_MODES}")


@dataclass(frozen=True)
class SearchRequest:
    """One search as every door asks it: the query, the mode, how many hits (``k`` None:
    adaptive, else the setting ``default_k``) and a reranker (None: none). Refused
    (:class:`InputError`) when made with an empty query, an unknown mode or ``k`` outside
    :data:`excerpt.limits.LIMITS`, so that no door can pass what another refuses."""

    query: str
    mode: SearchMode = "hybrid"
    k: int | None = None
    rerank: str | None = None

    def __post_init__(self) -> None:
        if not self.query.strip():
            raise InputError("the query is empty")
        _mode(self.mode)
        within("k", self.k)

    @classmethod
    def served(cls, query: str, mode: SearchMode = "hybrid", k: int | None = None,
               rerank: str | None = None) -> SearchRequest:
        """A request from a served door (HTTP, MCP): its reranker is a name the server
        offers, never a path (:func:`excerpt.rerank.base.offered_reranker`); a local caller
        (the CLI) may name ``cross-encoder:PATH``."""
        from excerpt.rerank.base import offered_reranker

        return cls(query, mode, k, offered_reranker(rerank))


def search(engine: Engine, request: SearchRequest, filters: Filters,
           principal: Principal) -> SearchResult:
    """The hits of ``request`` in what ``principal`` may read of ``filters``."""
    return engine.search(request.query, filters, principal, request.mode, request.k,
                         reranker=request.rerank)


def search_json(engine: Engine, request: SearchRequest, filters: Filters,
                principal: Principal) -> dict[str, Any]:
    """:func:`search`'s hits as the JSON every door returns."""
    return search(engine, request, filters, principal).to_json()


@dataclass(frozen=True)
class Conversation:
    """A conversation as the caller names it and as the memory store keeps it (``key``), or,
    with ``turns``, as the caller sends it whole: (speaker, text), oldest first, nothing
    stored (an OpenAI chat's messages before the question)."""

    name: str
    key: str = ""
    turns: tuple[tuple[str, str], ...] | None = None

    @classmethod
    def of(cls, name: str | None, rights: Rights) -> Conversation | None:
        """The stored conversation ``name`` of a caller with ``rights`` (None: no
        conversation): a served key's are its own, a refused name an InputError."""
        return None if name is None else cls(name, rights.conversation(name))

    @classmethod
    def sent(cls, turns: Sequence[tuple[str, str]]) -> Conversation:
        """The conversation a caller sends with its question (chat)."""
        return cls("", turns=tuple(turns))


@dataclass(frozen=True)
class AskRequest:
    """One ask: the question, how to rank and answer, and the conversation it belongs to."""

    question: str
    options: AskOptions
    mode: SearchMode = "hybrid"
    rerank: str | None = None
    record: bool = False
    conversation: Conversation | None = None

    def __post_init__(self) -> None:
        _mode(self.mode)

    @classmethod
    def served(cls, engine: Engine, question: str, mode: SearchMode = "hybrid",
               doc_limit: int | None = None, fetch_limit: int | None = None,
               max_quotes: int | None = None, mmr: bool = False, reader: str | None = None,
               rerank: str | None = None, record: bool = False,
               conversation: Conversation | None = None) -> AskRequest:
        """An ask from a served door (HTTP, MCP, chat): counts within their bounds, the
        options the caller gives and the server's settings for the rest, a reranker the
        server offers (never a path) and a reader by name (never a model file)."""
        from excerpt.rerank.base import offered_reranker

        for name, value in (("doc_limit", doc_limit), ("fetch_limit", fetch_limit),
                            ("max_quotes", max_quotes)):
            within(name, value)
        rerank = offered_reranker(rerank)
        options = engine.ask_options(doc_limit, fetch_limit, max_quotes, mmr, reader)
        return cls(question, options, mode, rerank, record, conversation)


@dataclass(frozen=True)
class Answer:
    """An ask's result, and how its question was read in its conversation (``resolution``;
    ``turn`` and ``name`` for a stored conversation)."""

    result: AskResult
    resolution: Resolution | None = None
    turn: int | None = None
    name: str = ""

    def conversation_json(self) -> dict[str, Any]:
        """The conversation's fields of the answer's JSON (none outside a stored one)."""
        if self.resolution is None or self.turn is None:
            return {}
        from excerpt.compose.conversation import conversation_json

        return conversation_json(self.name, self.resolution, self.turn)

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        """The JSON every front door returns (``explain``: with its provenance events)."""
        return {**self.result.to_json(explain), **self.conversation_json()}


def ask(engine: Engine, request: AskRequest, filters: Filters, principal: Principal,
        memory: MemoryStore | None = None, on_sentence: Callable[[KeptSentence], None] | None
        = None, on_stage: Stage | None = None) -> Answer:
    """The answer to ``request`` from what ``principal`` may read of ``filters``; ``memory``
    keeps a stored conversation; ``on_stage`` and ``on_sentence`` see the ask as it runs."""
    from excerpt.compose.conversation import ask_in_conversation
    from excerpt.compose.followup import resolve

    def run(text: str, said: str = "") -> AskResult:
        return engine.ask(text, filters, principal, request.mode,
                          replace(request.options, said=said), request.rerank,
                          explain=on_stage, record=request.record, on_sentence=on_sentence)

    talk = request.conversation
    if talk is None:
        return Answer(run(request.question))
    if talk.turns is not None:
        resolution = resolve(request.question, list(talk.turns))
        return Answer(run(resolution.resolved, resolution.said), resolution)
    if memory is None:
        raise ValueError("an ask in a conversation needs the memory store that keeps it")
    result, resolution, turn = ask_in_conversation(memory, talk.key, request.question, run)
    return Answer(result, resolution, turn, talk.name)


def ask_json(engine: Engine, request: AskRequest, filters: Filters, principal: Principal,
             memory: MemoryStore | None = None, explain: bool = False) -> dict[str, Any]:
    """:func:`ask`'s answer as the JSON every front door returns (``explain``: with its
    provenance events)."""
    return ask(engine, request, filters, principal, memory).to_json(explain)


def check(engine: Engine, filters: Filters, principal: Principal) -> None:
    """Refuses now what a read would refuse (a bad ``where``; a collection, snapshot or set
    that does not exist or that ``principal`` sees nothing of): a streamed answer must be
    refused with a status before its stream starts, not with an error event."""
    check_where(filters.metadata)
    engine.resolve(filters, principal)


@dataclass(frozen=True)
class OverviewRequest:
    """A collection's overview (:mod:`excerpt.catalogue_overview`): its name and how many
    example questions (at most :data:`MAX_EXAMPLES`)."""

    collection: str
    examples: int = 3

    def __post_init__(self) -> None:
        if not self.collection.strip():
            raise InputError("the collection is empty")
        if not 0 <= self.examples <= MAX_EXAMPLES:
            raise InputError(f"examples must be between 0 and {MAX_EXAMPLES}, "
                             f"got {self.examples}")


MAX_EXAMPLES = 10
"""Example questions an overview makes at most."""


def overview(engine: Engine, request: OverviewRequest, principal: Principal) -> dict[str, Any]:
    """What ``principal`` may see of ``request``'s collection: sources, snapshots, counts,
    the last import, metadata for filters, example questions; a collection it sees nothing
    of is not found, as an unknown one is."""
    from excerpt.catalogue_overview import overview as build

    filters = Filters(request.collection)

    def answers(example: Example) -> bool:  # the caller's own search: its rights, its view
        ranking = engine.search(example.question, filters, principal, "bm25", k=1,
                                fetch=False).ranking
        return bool(ranking) and ranking[0][0] == example.heading.node_id

    return build(engine.catalogue, request.collection, principal, request.examples, answers)
