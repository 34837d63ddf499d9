"""What conversation memory stores: utterances and each conversation's limits.

An utterance's ``utterance_index`` is 0-based and sequential per conversation; an index is
never reused, not after an eviction nor after a delete, so it names one utterance for good.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from excerpt.errors import InputError

SPEAKERS = ("user", "assistant", "system")


def check_speaker(speaker: str) -> str:
    """``speaker`` itself when it is one of :data:`SPEAKERS`; InputError otherwise."""
    if speaker not in SPEAKERS:
        raise InputError(f"speaker must be one of {', '.join(SPEAKERS)}, not {speaker!r}")
    return speaker


def utc_now() -> str:
    """The current UTC time in ISO 8601 with microseconds (``2026-11-23T14:20:53.123456+00:00``)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class Utterance:
    utterance_index: int
    speaker: str
    turn_number: int
    timestamp: str
    text: str
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ConversationConfig:
    """A conversation's limits: at most ``buffer_size`` utterances and ``max_tokens`` tokens in
    the buffer (the oldest are evicted into the summary past either), and a summary kept within
    ``summary_token_limit`` tokens unless a read asks for another limit."""

    buffer_size: int = 20
    max_tokens: int = 8000
    summary_token_limit: int = 500

    def __post_init__(self) -> None:
        for name in ("buffer_size", "max_tokens", "summary_token_limit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, not {value!r}")

    def with_changes(self, **changes: Any) -> ConversationConfig:
        unknown = sorted(set(changes) - {"buffer_size", "max_tokens", "summary_token_limit"})
        if unknown:
            raise InputError(f"unknown memory setting {unknown[0]!r}")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class ConversationState:
    """Everything about a conversation except its utterances: ``next_index`` is the index the
    next utterance gets, ``evicted`` how many utterances went into ``summary`` so far,
    ``deleted`` how many were deleted."""

    config: ConversationConfig = field(default_factory=ConversationConfig)
    next_index: int = 0
    evicted: int = 0
    summary: str = ""
    deleted: int = 0


@dataclass(frozen=True)
class ScoredUtterance:
    """A search result: the utterance and its ``relevance_score`` (higher is better)."""

    utterance: Utterance
    relevance_score: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.utterance.to_dict(), "relevance_score": self.relevance_score}
