"""Where a retriever's hits come from: a local :class:`excerpt.Engine` read as an explicit
principal, or a running ``excerpt serve`` read with an API key (``GET /v1/search``, standard
library HTTP). Either way the search is the one every door runs (:mod:`excerpt.service`), with
the same checks and the same refusals, as :mod:`excerpt.errors` raises them."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from excerpt.errors import (
    BusyError,
    CorpusError,
    DependencyError,
    ExcerptError,
    Forbidden,
    InputError,
    NotFoundError,
    ServiceError,
    UnavailableError,
)
from excerpt.integrations._documents import Passage
from excerpt.types import Filters, Principal, SearchMode, check_where

if TYPE_CHECKING:
    from excerpt.engine import Engine

_BY_KIND: dict[str, type[ExcerptError]] = {
    cls.kind: cls for cls in (InputError, CorpusError, NotFoundError, Forbidden, BusyError,
                              DependencyError, UnavailableError)}


@dataclass(frozen=True)
class Read:
    """What a retriever reads: the collection, snapshot or snapshot set, metadata filters
    (``where``), the mode, how many hits (None: the adaptive top-k) and a reranker's name."""

    collection: str = "default"
    mode: SearchMode = "hybrid"
    k: int | None = None
    snapshot: str | None = None
    snapshot_set: str | None = None
    where: Mapping[str, Any] = field(default_factory=dict)
    rerank: str | None = None


class Source(Protocol):
    def search(self, query: str, read: Read) -> list[Passage]: ...


@dataclass(frozen=True)
class LocalSource:
    """An engine in this process, read as ``principal`` (None: anonymous)."""

    engine: Engine
    principal: Principal | None = None

    def search(self, query: str, read: Read) -> list[Passage]:
        from excerpt import service

        check_where(read.where)
        filters = Filters(read.collection, read.snapshot, read.snapshot_set, dict(read.where))
        request = service.SearchRequest(query, read.mode, read.k, read.rerank)
        found = service.search(self.engine, request, filters,
                               self.principal or Principal.anonymous())
        return [Passage.of(hit.to_json()) for hit in found.hits]


@dataclass(frozen=True)
class RemoteSource:
    """``excerpt serve`` at ``url``, called with ``api_key`` (its rights are the key's)."""

    url: str
    api_key: str = field(repr=False)  # a secret: in no repr, log line or trace
    timeout: float = 60.0

    def search(self, query: str, read: Read) -> list[Passage]:
        body = self._get("/v1/search", search_params(query, read))
        return [Passage.of(hit) for hit in body["hits"]]

    def _get(self, path: str, params: list[tuple[str, str]]) -> dict[str, Any]:
        address = f"{self.url.rstrip('/')}{path}?{urllib.parse.urlencode(params)}"
        sent = urllib.request.Request(address, headers={
            "Authorization": f"Bearer {self.api_key}", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(sent, timeout=self.timeout) as response:
                answer: dict[str, Any] = json.loads(response.read())
                return answer
        except urllib.error.HTTPError as exc:
            raise refusal(exc.code, exc.read(), self.url) from None
        except (urllib.error.URLError, OSError) as exc:
            raise ServiceError(f"excerpt serve at {self.url} cannot be reached: {exc}") from None


def search_params(query: str, read: Read) -> list[tuple[str, str]]:
    """``GET /v1/search``'s query string; a ``where`` value travels as JSON (the server reads
    ``KEY=VALUE`` with VALUE as JSON when it parses), so ``"1"`` stays a string."""
    check_where(read.where)
    params = [("q", query), ("collection", read.collection), ("mode", read.mode)]
    optional = {"k": read.k, "snapshot": read.snapshot, "snapshot_set": read.snapshot_set,
                "rerank": read.rerank}
    params += [(name, str(value)) for name, value in optional.items() if value is not None]
    params += [("where", f"{key}={json.dumps(value, ensure_ascii=False)}")
               for key, value in read.where.items()]
    return params


def refusal(status: int, raw: bytes, url: str) -> ExcerptError:
    """The server's error (``{"error", "kind"}``) as excerpt's error tree has it: a refused
    key (401) is :class:`Forbidden`, an unknown kind a :class:`ServiceError`."""
    try:
        body = json.loads(raw)
        message, kind = str(body["error"]), str(body["kind"])
    except (ValueError, KeyError, TypeError):
        return ServiceError(f"excerpt serve at {url} answered HTTP {status}", status)
    if status == 401:
        return Forbidden(f"excerpt serve at {url}: {message}")
    if kind == "input":
        return InputError(message, param=body.get("param"))
    cls = _BY_KIND.get(kind)
    return cls(message) if cls is not None else ServiceError(message, status)


def open_source(engine: Engine | None, principal: Principal | None, url: str | None,
                api_key: str | None, timeout: float = 60.0) -> Source:
    """A local source (``engine``, read as ``principal``: default anonymous) or a remote one
    (``url`` and ``api_key``: the key's rights); refused (:class:`InputError`) when both or
    neither are given, or when a remote one is given a principal (a key's rights are the
    server's to decide)."""
    if (engine is None) == (url is None):
        raise InputError("a retriever reads either a local engine (engine=Engine(...)) or an "
                         "excerpt serve (url=... and api_key=...): give one of the two")
    if url is not None:
        if not api_key:
            raise InputError("a remote retriever needs api_key (made by `excerpt keys add`)")
        if principal is not None:
            raise InputError("a remote retriever reads with its API key's rights; principal "
                             "is for a local engine")
        return RemoteSource(url, api_key, timeout)
    if principal is not None and not isinstance(principal, Principal):
        raise InputError(f"principal must be an excerpt.Principal, not {type(principal)!r}")
    assert engine is not None
    return LocalSource(engine, principal)


def overridden(read: Read, options: Mapping[str, Any]) -> Read:
    """``read`` with one call's options (``k``, ``mode``, ``where``, ...) in place of its own;
    an unknown name is an :class:`InputError`."""
    from dataclasses import fields, replace

    unknown = sorted(set(options) - {f.name for f in fields(Read)})
    if unknown:
        raise InputError(f"unknown search option(s) {unknown}; known: "
                         f"{sorted(f.name for f in fields(Read))}")
    return replace(read, **options) if options else read
