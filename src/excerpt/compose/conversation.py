"""Conversational ask: a question asked inside a conversation of the memory store.

The recent turns (``RECENT`` utterances) and, before them, the user lines of the running summary
are the context :func:`excerpt.compose.followup.resolve` reads to turn a follow-up ("And what
does he say about youth?") into a question that stands alone; the resolved question goes to
:meth:`Engine.ask`; then the question (speaker user) and the answer (assistant) are added to the
conversation as the next turn. The output reports the question as asked and as resolved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from excerpt.compose.ask import AskResult
from excerpt.compose.followup import Resolution, resolve
from excerpt.memory.store import MemoryStore

RECENT = 6


def context_turns(store: MemoryStore, conversation: str) -> list[tuple[str, str]]:
    """(speaker, text), oldest first: the summary's user lines, then the recent utterances."""
    summary, _ = store.summary(conversation)
    older = [("user", line.removeprefix("user: ")) for line in summary.splitlines()
             if line.startswith("user: ")]
    return older + [(u.speaker, u.text) for u in store.last(conversation, RECENT)]


def ask_in_conversation(store: MemoryStore, conversation: str, question: str,
                        ask: Callable[[str, str], AskResult]
                        ) -> tuple[AskResult, Resolution, int]:
    """Resolve, ask, record; returns the result, the resolution and the turn number used.
    ``ask(question, said)`` asks the resolved question; ``said`` is the answer just given
    when the question asks something else (``AskOptions.said``: the answer moves on)."""
    resolution = resolve(question, context_turns(store, conversation))
    result = ask(resolution.resolved, resolution.said)
    turn = 1 + max((u.turn_number for u in store.last(conversation, RECENT)), default=0)
    store.add(conversation, "user", turn, question)
    store.add(conversation, "assistant", turn, result.composed.answer)
    return result, resolution, turn


def conversation_json(conversation: str, resolution: Resolution, turn: int) -> dict[str, Any]:
    return {"conversation": conversation, "turn": turn, "asked": resolution.question,
            "resolved_question": resolution.resolved, "resolution": resolution.reason or None}
