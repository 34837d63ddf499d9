"""The JSON bodies of the service's routes, and the one rule for every string a request
carries: no NUL character (no use in text, ids or names; PostgreSQL refuses it in text, and
the file system in paths), refused as a 400 naming the field; an unknown field is refused
naming the field to use and the accepted ones, and a count outside its bounds
(:mod:`excerpt.limits`) in the sentence the CLI and MCP refuse it with."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator
from pydantic_core import PydanticCustomError

from excerpt.compose.readers import ReaderName
from excerpt.context.fetch import Prioritization
from excerpt.embedder_names import EMBEDDERS
from excerpt.errors import InputError
from excerpt.graph.expand import Direction
from excerpt.ingest import FORMATS
from excerpt.limits import LIMITS, refusal
from excerpt.limits import MAX_K as MAX_K  # the routes' and chat's too
from excerpt.memory.intents import INTENTS
from excerpt.rerank.base import offered_reranker
from excerpt.scope import Scope
from excerpt.types import SearchMode

MAX_QUERY = 2000
_BOUNDS = {"greater_than_equal", "less_than_equal", "greater_than", "less_than"}


def counted(name: str) -> Any:
    """An optional counted field (None: the server's settings) within its bounds in
    :data:`excerpt.limits.LIMITS`."""
    low, high = LIMITS[name]
    return Field(None, ge=low, le=high)


def nul_field(value: Any, where: str = "") -> str | None:
    """The place of the first string holding a NUL character in ``value`` (keys too), or
    None; walked without recursion, whatever the nesting."""
    stack = [(where, value)]
    while stack:
        place, item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return place or "value"
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str) and "\x00" in key:
                    return f"{place}.{key!r}".lstrip(".")
                stack.append((f"{place}.{key}".lstrip("."), inner))
        elif isinstance(item, list | tuple):
            stack.extend((f"{place}[{i}]", inner) for i, inner in enumerate(item))
    return None


def no_nul(request: Request) -> None:
    """A dependency of every route: no NUL in a query parameter or a path segment."""
    for name, value in [*request.query_params.multi_items(), *request.path_params.items()]:
        if "\x00" in name or "\x00" in str(value):
            raise InputError(f"{name!r}: a NUL character is not allowed")


class NoNul(BaseModel):
    """A JSON body with no NUL character anywhere (a store or a log would cut it there)."""

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        place = nul_field(data)
        if place is not None:
            raise ValueError(f"{place}: a NUL character is not allowed")
        return data


class KnownFields(BaseModel):
    """A body with no unknown field (a misspelled option would be ignored silently), refused
    naming the field meant and every field: a route's body, chat's ``excerpt`` options."""

    model_config = ConfigDict(extra="forbid")
    renamed: ClassVar[Mapping[str, str]] = {}
    """Names other interfaces or engines use for a field, and the field they mean here."""

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        unknown = [key for key in data if key not in cls.model_fields] if isinstance(
            data, dict) else []
        if unknown:  # before pydantic's bare "Extra inputs are not permitted"
            name = str(unknown[0])
            raise PydanticCustomError("unknown_field", "{field} is not a field: {advice}",
                                      {"field": name, "advice": cls.advice(name)})
        return data

    @classmethod
    def advice(cls, name: str) -> str:
        """:func:`advice` over the body's fields."""
        return advice(name, list(cls.model_fields), cls.renamed)


def advice(name: str, fields: Sequence[str], renamed: Mapping[str, str] | None = None,
           noun: str = "fields") -> str:
    """``use doc_limit (the fields: …)``: the field meant by an unknown ``name`` (another name
    for it in ``renamed``, or the closest spelling) if one is, then every one of ``fields``;
    the JSON bodies' and the MCP tools' unknown fields and arguments alike."""
    meant = (renamed or {}).get(name) or next(
        iter(difflib.get_close_matches(name, fields, n=1, cutoff=0.6)), None)
    listing = f"the {noun}: {', '.join(fields)}"
    return f"use {meant} ({listing})" if meant else listing


class Body(NoNul, KnownFields):
    """A route's JSON body: no unknown field, true or false only for the switches (StrictBool:
    no 0, "yes" or "off"), no NUL."""


def refusal_of(request: Request, errors: Sequence[Any]) -> str:
    """The first validation error of a request as one line: an unknown field with the field
    meant and the accepted ones, a count out of bounds in :func:`excerpt.limits.refusal`'s
    sentence, anything else as the field and pydantic's message."""
    first: Mapping[str, Any] = errors[0] if errors else {}
    place = [str(part) for part in first.get("loc", ()) if part != "body"]
    context = first.get("ctx") or {}
    if first.get("type") == "unknown_field":
        return (f"{context['field']} is not a field of {request.method} {request.url.path}: "
                f"{context['advice']}")
    if first.get("type") in _BOUNDS and place and place[-1] in LIMITS:
        return refusal(place[-1], first.get("input"))
    return f"{'.'.join(place)}: {first.get('msg', 'invalid request')}"


def param_of(errors: Sequence[Any]) -> str | None:
    """The field the first validation error is about (``k``, ``where``, ``doc_limit``), for
    the error's ``param``; None when it is about the body as a whole."""
    first: Mapping[str, Any] = errors[0] if errors else {}
    if first.get("type") == "unknown_field":
        return str((first.get("ctx") or {}).get("field")) or None
    place = [str(part) for part in first.get("loc", ()) if part not in ("body", "query")]
    return place[0] if place else None


def choice(names: Sequence[str]) -> str:
    """A pattern that documents and enforces one of ``names``."""
    return "^(" + "|".join(re.escape(n) for n in names) + ")$"


class ScopedBody(Body):
    """A body that reads a collection: the fields of :class:`excerpt.scope.Scope` (the CLI's
    options, the MCP tools' arguments), read through :meth:`scope` and nowhere else."""

    collection: str = "default"
    snapshot: str | None = None
    snapshot_set: str | None = None
    acl_tag: list[str] | None = None
    clearance: list[str] | None = None
    all_access: StrictBool = False

    def scope(self) -> Scope:
        where = getattr(self, "where", ())
        return Scope(self.collection, self.snapshot, self.snapshot_set, tuple(where),
                     self.acl_tag, self.clearance, self.all_access)


class AskBody(ScopedBody):
    """POST /v1/ask: the CLI's option names."""

    renamed: ClassVar[Mapping[str, str]] = {
        "k": "doc_limit", "top_k": "doc_limit", "limit": "doc_limit", "query": "question",
        "q": "question"}

    question: str = Field(..., min_length=1, max_length=MAX_QUERY)
    where: list[str] = Field(default_factory=list, max_length=MAX_K)
    mode: SearchMode = "hybrid"
    # None: the server's settings (ask_doc_limit, ask_max_quotes, reranker), as the CLI does
    doc_limit: int | None = counted("doc_limit")
    fetch_limit: int | None = counted("fetch_limit")
    max_quotes: int | None = counted("max_quotes")
    rerank: str | None = Field(None, min_length=1)
    mmr: StrictBool = False
    explain: StrictBool = False
    conversation: str | None = Field(None, min_length=1, max_length=200)
    reader: ReaderName | None = None  # None: the server's setting; a name, never a model path

    @field_validator("rerank")
    @classmethod
    def _offered(cls, value: str | None) -> str | None:
        try:
            return offered_reranker(value)
        except InputError as exc:  # pydantic reports a ValueError as the field's error
            raise ValueError(str(exc)) from None


class GraphBody(ScopedBody):
    """POST /v1/graph: seeds and limits, as `excerpt graph` takes them."""

    seeds: list[str] = Field(..., min_length=1, max_length=MAX_K)
    max_depth: int | None = counted("max_depth")  # None: the server's settings
    max_nodes: int | None = counted("max_nodes")
    allow: list[str] | None = Field(None, max_length=100)
    seed_only: StrictBool = False
    direction: Direction = "out"


class ContextBody(ScopedBody):
    """POST /v1/context: seed and graph ids and budgets, as `excerpt context` takes them;
    ``query`` searches (``mode``, ``k``), expands the hits (``max_depth``, ``max_nodes``,
    ``allow``, ``direction``) and packs them."""

    renamed: ClassVar[Mapping[str, str]] = {"top_k": "k", "limit": "k"}
    seeds: list[str] = Field(default_factory=list, max_length=MAX_K)
    graph: list[str] = Field(default_factory=list, max_length=10_000)
    query: str | None = Field(None, min_length=1, max_length=MAX_QUERY)
    mode: SearchMode = "hybrid"
    k: int | None = counted("k")
    max_depth: int | None = counted("max_depth")
    max_nodes: int | None = counted("max_nodes")
    allow: list[str] | None = Field(None, max_length=100)
    direction: Direction = "out"
    budget_tokens: int | None = counted("budget_tokens")
    max_chars: int | None = counted("max_chars")
    prioritization: Prioritization | None = None


class MemoryBody(Body):
    """POST /v1/memory/{conversation}/query: the memory daemon's single-entry form."""

    intent: str = Field(..., pattern=choice(INTENTS))
    data: dict[str, Any] = Field(default_factory=dict)


class IngestPathBody(Body):
    """POST /v1/ingest/path (admin keys): a server-side path inside a configured root."""

    path: str
    collection: str = "default"
    format: str = Field("auto", pattern=choice(FORMATS))
    acl_tag: list[str] = Field(default_factory=list)
    classification: list[str] = Field(default_factory=list)
    embedder: str = Field("auto", pattern=choice(EMBEDDERS))
