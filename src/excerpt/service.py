"""What every front door does with an ask, once: the CLI (``excerpt ask``), the REST route
(``POST /v1/ask``) and MCP's ``ask`` tool hand it a request and the caller's read, and give
back what it returns; none writes the conversation glue of its own.

An ask inside a conversation resolves a follow-up from the conversation's recent turns, asks
the resolved question and records the turn (compose/conversation.py); the answer's JSON then
carries the conversation's fields.  A conversation is stored under a key the front door
chooses (a service key's conversations are its own: ``Rights.conversation``) and shown under
the name the caller gave.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from excerpt.compose.ask import AskOptions, AskResult
from excerpt.compose.conversation import ask_in_conversation, conversation_json
from excerpt.types import Filters, Principal, SearchMode

if TYPE_CHECKING:
    from excerpt.compose.synthesis import KeptSentence
    from excerpt.engine import Engine
    from excerpt.memory.store import MemoryStore


@dataclass(frozen=True)
class Conversation:
    """A conversation as the caller names it and as the memory store keeps it."""

    name: str
    key: str


@dataclass(frozen=True)
class AskRequest:
    """One ask: the question, how to rank and answer, and the conversation it belongs to."""

    question: str
    options: AskOptions
    mode: SearchMode = "hybrid"
    rerank: str | None = None
    record: bool = False
    conversation: Conversation | None = None


def ask(engine: Engine, request: AskRequest, filters: Filters, principal: Principal,
        memory: MemoryStore | None = None,
        on_sentence: Callable[[KeptSentence], None] | None = None
        ) -> tuple[AskResult, dict[str, Any]]:
    """The answer to ``request`` from what ``principal`` may read of ``filters``, and the
    conversation's fields for its JSON (none without a conversation; ``memory`` keeps it)."""

    def run(text: str, said: str = "") -> AskResult:
        return engine.ask(text, filters, principal, request.mode,
                          replace(request.options, said=said), request.rerank,
                          record=request.record, on_sentence=on_sentence)

    if request.conversation is None:
        return run(request.question), {}
    if memory is None:
        raise ValueError("an ask in a conversation needs the memory store that keeps it")
    result, resolution, turn = ask_in_conversation(memory, request.conversation.key,
                                                   request.question, run)
    return result, conversation_json(request.conversation.name, resolution, turn)


def ask_json(engine: Engine, request: AskRequest, filters: Filters, principal: Principal,
             memory: MemoryStore | None = None, explain: bool = False) -> dict[str, Any]:
    """:func:`ask`'s answer as the JSON every front door returns (``explain``: with its
    provenance events)."""
    result, extra = ask(engine, request, filters, principal, memory)
    return {**result.to_json(explain), **extra}
