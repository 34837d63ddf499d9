"""A minimal client for an OpenAI-compatible chat completions endpoint (optional).

Extractive composition needs no model. A user who wants synthesis points excerpt at any server
that speaks ``POST {base}/chat/completions`` (OpenAI, vLLM, llama.cpp's server, Ollama,
LM Studio, LiteLLM, ...) through the environment:

    EXCERPT_LLM_URL          the endpoint; enables the LLM when set and not empty
    EXCERPT_LLM_MODEL        the model name sent in every request (required with the URL)
    EXCERPT_LLM_KEY          the API key, sent as ``Authorization: Bearer KEY`` (optional:
                             local servers need none). Never logged, never in an error message.
    EXCERPT_LLM_TIMEOUT      seconds per request (default 60)
    EXCERPT_LLM_MAX_TOKENS   the completion's token limit (default 512)

``EXCERPT_LLM_URL`` may be given in any of the usual spellings; they all normalise to a base:

    http://127.0.0.1:8000                       -> http://127.0.0.1:8000/v1
    http://127.0.0.1:8000/v1/                   -> http://127.0.0.1:8000/v1
    http://127.0.0.1:8000/v1/chat/completions   -> http://127.0.0.1:8000/v1
    https://proxy.example/openai/chat/completions -> https://proxy.example/openai  (kept as given)

That is: trailing slashes and a trailing ``/chat/completions`` are removed; ``/v1`` is added
only when the URL had neither ``/chat/completions`` nor a path ending in a version (``/v1``,
``/v2``, ...); a query string (``?api-version=...``) is kept and sent. A gateway with an
unusual prefix is reached by giving its full ``.../chat/completions`` address.

Errors are ``ServiceError`` (excerpt.errors) and name the endpoint, never the key:
connection refused or unreachable, timeout, an HTTP status other than 2xx (with the server's own
message, from ``{"error": {"message": ...}}``, ``{"error": "..."}``, ``{"detail": ...}`` or the
start of the body), a body that is not JSON, and JSON without ``choices[0].message.content``.
A 429 or 5xx answer is retried once, after the server's ``Retry-After`` (capped at
``MAX_RETRY_AFTER_S``) or ``retry_backoff_s`` (0.5 s); nothing else is retried, and a timeout is
not (a second wait as long as the first is worse than falling back to the extractive answer).
Proxies from the environment are honoured except for loopback endpoints.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from excerpt.errors import InputError, ServiceError

__all__ = ["LLMClient", "LLMConfig", "normalize_base_url"]

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_TOKENS = 512
MAX_RETRY_AFTER_S = 5.0
_VERSION_SEGMENT = re.compile(r"/v\d+$")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_MESSAGE_LIMIT = 300


def normalize_base_url(url: str) -> str:
    """The base URL under which ``/chat/completions`` lives (see the module docstring)."""
    raw = url.strip()
    parts = urllib.parse.urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError("EXCERPT_LLM_URL must be an http:// or https:// URL, "
                         f"not {_redact_url(raw)!r}")
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")].rstrip("/")
    elif not _VERSION_SEGMENT.search(path):
        path += "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _redact_url(url: str) -> str:
    """``url`` without user:password@ and without its query (credentials may hide there)."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "…" if parts.query else "",
                                    ""))


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to call the model. ``api_key`` is left out of ``repr``."""

    url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", normalize_base_url(self.url))
        if not self.model.strip():
            raise InputError("the LLM model name is empty (set EXCERPT_LLM_MODEL)")
        if self.timeout_s <= 0:
            raise InputError(f"the LLM timeout must be positive, not {self.timeout_s}")
        if self.max_tokens < 1:
            raise InputError(f"the LLM max_tokens must be at least 1, not {self.max_tokens}")

    @property
    def endpoint(self) -> str:
        """``{base}/chat/completions``, with the base URL's query string (if any) kept."""
        parts = urllib.parse.urlsplit(self.url)
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc,
                                        parts.path + "/chat/completions", parts.query, ""))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMConfig | None:
        """The configuration from ``EXCERPT_LLM_*``, or None when ``EXCERPT_LLM_URL`` is unset
        or empty (synthesis off). A URL without a model is refused, not ignored."""
        env = os.environ if environ is None else environ
        url = env.get("EXCERPT_LLM_URL", "").strip()
        if not url:
            return None
        model = env.get("EXCERPT_LLM_MODEL", "").strip()
        if not model:
            raise InputError("EXCERPT_LLM_URL is set but EXCERPT_LLM_MODEL is not; "
                             "set the model name the endpoint serves")
        return cls(url=url, model=model, api_key=env.get("EXCERPT_LLM_KEY", "").strip() or None,
                   timeout_s=_number(env, "EXCERPT_LLM_TIMEOUT", DEFAULT_TIMEOUT_S),
                   max_tokens=int(_number(env, "EXCERPT_LLM_MAX_TOKENS", DEFAULT_MAX_TOKENS)))


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise InputError(f"{name} must be a number, not {raw!r}") from None


class LLMClient:
    """``chat(messages)`` against the configured endpoint; cheap to construct, no I/O until
    the first call."""

    reader_name = "openai"  # the reader it is (compose.readers)

    def __init__(self, config: LLMConfig, retry_backoff_s: float = 0.5) -> None:
        self.config = config
        self.retry_backoff_s = retry_backoff_s
        self.last_usage: dict[str, int] = {}
        """The last answer's ``usage`` (prompt_tokens, completion_tokens), when it gave one."""
        host = urllib.parse.urlsplit(config.url).hostname or ""
        handlers = [urllib.request.ProxyHandler({})] if host in _LOOPBACK else []
        self._opener = urllib.request.build_opener(*handlers)

    @property
    def model(self) -> str:
        return self.config.model

    def chat(self, messages: list[dict[str, str]]) -> str:
        """The content of the first choice's message for ``messages`` (role/content dicts)."""
        response = self._answered(self._body(messages, stream=False), "application/json")
        with response:
            return self._content(self._read_all(response))

    def stream(self, messages: list[dict[str, str]]) -> Iterator[str]:
        """The reply's content as the server writes it (``"stream": true``: server-sent events
        of ``choices[0].delta.content``, the usage in the last); a server that answers with
        one JSON body instead is read whole."""
        response = self._answered(self._body(messages, stream=True), "text/event-stream")
        with response:
            if "text/event-stream" not in response.headers.get("Content-Type", ""):
                yield self._content(self._read_all(response))
                return
            self.last_usage = {}
            for data in self._events(response):
                if data == "[DONE]":
                    return
                piece = self._delta(data)
                if piece:
                    yield piece

    def _body(self, messages: list[dict[str, str]], stream: bool) -> bytes:
        body: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                "temperature": self.config.temperature,
                                "max_tokens": self.config.max_tokens, "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _answered(self, body: bytes, accept: str) -> Any:
        """The open 2xx response to ``body``; a 429 or 5xx is retried once (module docstring),
        any other status raises with the server's own message."""
        sent = self._send(body, accept)
        if isinstance(sent, tuple) and (sent[0] == 429 or 500 <= sent[0] < 600):
            time.sleep(sent[2] if sent[2] is not None else self.retry_backoff_s)
            sent = self._send(body, accept)
        if isinstance(sent, tuple):
            raise self._error(f"answered HTTP {sent[0]}: {_server_message(sent[1])}", sent[0])
        return sent

    def _send(self, body: bytes, accept: str) -> Any:
        """The open response of one POST, or (status, body, Retry-After seconds) when the server
        answered with an error status; transport failures raise."""
        headers = {"Content-Type": "application/json", "Accept": accept, "User-Agent": "excerpt"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        request = urllib.request.Request(self.config.endpoint, data=body, headers=headers,
                                         method="POST")
        try:
            return self._opener.open(request, timeout=self.config.timeout_s)
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, _read(exc), _retry_after(exc.headers.get("Retry-After"))
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timeout() from None
            raise self._error(f"cannot be reached: {_reason(exc.reason)}") from None
        except TimeoutError:
            raise self._timeout() from None
        except (OSError, http.client.HTTPException) as exc:  # reset or cut short mid-response
            raise self._error(f"failed mid-request: {_reason(exc)}") from None

    def _read_all(self, response: Any) -> bytes:
        try:
            data: bytes = response.read()
        except TimeoutError:
            raise self._timeout() from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._error(f"failed mid-request: {_reason(exc)}") from None
        return data

    def _events(self, response: Any) -> Iterator[str]:
        """The ``data:`` payloads of a server-sent event stream, as they arrive."""
        try:
            for raw in response:
                line = raw.decode("utf-8", errors="replace").strip()
                if line.startswith("data:"):
                    yield line[len("data:"):].strip()
        except TimeoutError:
            raise self._timeout() from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._error(f"failed mid-stream: {_reason(exc)}") from None

    def _delta(self, data: str) -> str:
        """One streamed chunk's content (its usage kept in ``last_usage``)."""
        try:
            chunk: Any = json.loads(data)
        except json.JSONDecodeError:
            raise self._error(f"streamed malformed JSON: {_snippet(data.encode())!r}") from None
        if not isinstance(chunk, dict):
            raise self._error(f"streamed malformed JSON: {_snippet(data.encode())!r}")
        if isinstance(chunk.get("usage"), dict):
            self.last_usage = {k: v for k, v in chunk["usage"].items() if isinstance(v, int)}
        choices = chunk.get("choices") or [{}]
        delta = choices[0].get("delta") if isinstance(choices[0], dict) else None
        content = delta.get("content") if isinstance(delta, dict) else None
        return content if isinstance(content, str) else ""

    def _content(self, payload: bytes) -> str:
        try:
            data: Any = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise self._error(f"answered with malformed JSON: {_snippet(payload)!r}") from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices:
            raise self._error("answered without choices")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise self._error("answered without choices[0].message.content")
        usage = data.get("usage")
        self.last_usage = {k: v for k, v in usage.items() if isinstance(v, int)} \
            if isinstance(usage, dict) else {}
        return content

    def _timeout(self) -> ServiceError:
        return self._error(f"did not answer within {self.config.timeout_s:g} s "
                           "(EXCERPT_LLM_TIMEOUT)")

    def _error(self, what: str, status: int | None = None) -> ServiceError:
        message = f"LLM endpoint {_redact_url(self.config.endpoint)} {what}"
        if self.config.api_key:
            message = message.replace(self.config.api_key, "***")
        return ServiceError(message, status=status)


def _read(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read()
    except OSError:
        return b""


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds (the delta form; an HTTP date is ignored), capped."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return None if seconds is None or seconds < 0 else min(seconds, MAX_RETRY_AFTER_S)


def _reason(reason: object) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__


def _snippet(payload: bytes) -> str:
    text = payload.decode("utf-8", errors="replace").strip()
    return text[:_MESSAGE_LIMIT] + ("…" if len(text) > _MESSAGE_LIMIT else "")


def _server_message(payload: bytes) -> str:
    """The server's own explanation, from the usual JSON error shapes or the body's start."""
    try:
        data: Any = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _snippet(payload) or "(empty body)"
    if isinstance(data, dict):
        for key in ("error", "detail", "message"):
            value = data.get(key)
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                value = value["message"]
            if isinstance(value, str) and value.strip():
                return _snippet(value.encode("utf-8"))
    return _snippet(payload)
