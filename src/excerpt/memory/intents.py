"""One entry point for every memory operation, shared by the CLI and the daemon.

``handle(store, conversation, intent, data)`` runs ``intent`` (add, read, last, search, summary,
delete, stats, config) with ``data`` (the CLI's option names: ``speaker``, ``turn``, ``text``,
``n``, ``query``, ``k``, ``token_limit``, ``index``, ``buffer_size``, ``max_tokens``,
``summary_token_limit``) and returns the JSON the contract gives (docs/cli.md, "memory"):
``{"utterances": [...]}`` for add/read/last/search, ``{"summary", "token_count"}``,
``{"deleted": bool, "utterance_index"}``, the stats mapping, ``{"config": {...}}``.
Bad input raises :class:`excerpt.errors.InputError` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from excerpt.errors import InputError
from excerpt.memory.store import MemoryStore

INTENTS = ("add", "read", "last", "search", "summary", "delete", "stats", "config")
CONFIG_FIELDS = ("buffer_size", "max_tokens", "summary_token_limit")


def _int(data: Mapping[str, Any], name: str, default: int | None = None) -> int:
    value = data.get(name, default)
    if value is None:
        raise InputError(f"missing {name!r}")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InputError(f"{name!r} must be an integer, not {value!r}")
    try:
        return int(value)
    except ValueError:
        raise InputError(f"{name!r} must be an integer, not {value!r}") from None


def _str(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise InputError(f"missing {name!r} (a string)")
    return value


def _speaker(data: Mapping[str, Any]) -> str | None:
    value = data.get("speaker")
    return str(value) if value else None


def _utterances(items: Any) -> dict[str, Any]:
    return {"utterances": [u.to_dict() for u in items]}


def _add(store: MemoryStore, conv: str, data: Mapping[str, Any]) -> dict[str, Any]:
    speaker = _speaker(data)
    if speaker is None:
        raise InputError("missing 'speaker' (user, assistant or system)")
    return _utterances([store.add(conv, speaker, _int(data, "turn"), _str(data, "text"))])


def _config(store: MemoryStore, conv: str, data: Mapping[str, Any]) -> dict[str, Any]:
    changes = {k: _int(data, k) for k in CONFIG_FIELDS if data.get(k) is not None}
    return {"config": asdict(store.config(conv, **changes))}


def _summary(store: MemoryStore, conv: str, data: Mapping[str, Any]) -> dict[str, Any]:
    limit = data.get("token_limit")
    text, tokens = store.summary(conv, _int(data, "token_limit") if limit is not None else None)
    return {"summary": text, "token_count": tokens}


def _delete(store: MemoryStore, conv: str, data: Mapping[str, Any]) -> dict[str, Any]:
    index = _int(data, "index")
    return {"deleted": store.delete(conv, index), "utterance_index": index}


_HANDLERS: dict[str, Callable[[MemoryStore, str, Mapping[str, Any]], dict[str, Any]]] = {
    "add": _add,
    "read": lambda s, c, d: _utterances(s.read(c, _speaker(d))),
    "last": lambda s, c, d: _utterances(s.last(c, _int(d, "n"), _speaker(d))),
    "search": lambda s, c, d: _utterances(
        s.search(c, _str(d, "query"), _int(d, "k", 10), _speaker(d))),
    "summary": _summary,
    "delete": _delete,
    "stats": lambda s, c, d: dict(s.stats(c)),
    "config": _config,
}


def handle(store: MemoryStore, conversation: str, intent: str,
           data: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run one memory operation; see the module docstring."""
    handler = _HANDLERS.get(intent)
    if handler is None:
        raise InputError(f"unknown intent {intent!r}; choose one of {', '.join(INTENTS)}")
    return handler(store, conversation, data or {})
