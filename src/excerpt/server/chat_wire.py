"""The OpenAI chat wire shapes excerpt speaks (:mod:`excerpt.server.chat` has the routes).

What a chat front end sends (``model``, ``messages``, ``stream``; OpenAI's other parameters,
such as ``temperature`` or ``max_tokens``, are accepted and change nothing in an extractive
answer), and what it gets back: a ``chat.completion``, or ``chat.completion.chunk`` objects as
server-sent ``data:`` lines ending with ``data: [DONE]``, and errors as OpenAI answers them,
``{"error": {"message", "type", "param", "code"}}``. excerpt's own part is one more field,
``excerpt``, on the message (and on the delta of the final streamed chunk, where the clients of
other engines lose their citations): the citations, quotes and ``cautious`` of ``POST /v1/ask``,
and the question as asked and as resolved from the conversation.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from excerpt.compose.ask import AskResult
from excerpt.compose.followup import Resolution
from excerpt.compose.readers import ReaderName
from excerpt.edge.bodies import MAX_K, MAX_QUERY, KnownFields, NoNul
from excerpt.scope import Scope
from excerpt.service import Answer
from excerpt.types import SearchMode

PREFIX = "excerpt:"
MAX_MESSAGES = 200
MAX_MESSAGE = 20_000
"""Characters of one message's text: a long earlier answer or system prompt, not a book."""


class ChatError(Exception):
    """An error answered in OpenAI's shape, with its HTTP status."""

    def __init__(self, status: int, message: str, kind: str, code: str | None = None,
                 param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.code, self.param = status, kind, code, param

    def to_json(self) -> dict[str, Any]:
        return {"error": {"message": str(self), "type": self.kind, "param": self.param,
                          "code": self.code}}


def unknown_model(model: str) -> ChatError:
    """One answer for a model that does not exist and one the key may not read, as OpenAI's."""
    return ChatError(404, f"The model '{model}' does not exist or you do not have access to it.",
                     "invalid_request_error", "model_not_found", "model")


def collection_of(model: str) -> str | None:
    """``excerpt:books`` -> ``books``; None for a name that is not an excerpt model."""
    name = model.removeprefix(PREFIX)
    return name if model.startswith(PREFIX) and name else None


class _Open(BaseModel):
    """OpenAI's objects grow fields; an unknown one is accepted (and ignored)."""

    model_config = ConfigDict(extra="allow")


class Message(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


class Options(KnownFields):
    """The ``excerpt`` field of a request (``extra_body`` of the openai client): the scope
    of ``POST /v1/ask`` (its names, and the key's rights narrowed, never widened); a
    misspelled option is an error naming the fields, not ignored."""

    mode: SearchMode = "hybrid"
    reader: ReaderName | None = None  # who writes the answer (the server's setting if None)
    snapshot: str | None = None
    snapshot_set: str | None = None
    where: list[str] = Field(default_factory=list, max_length=MAX_K)
    acl_tag: list[str] | None = None
    clearance: list[str] | None = None
    all_access: StrictBool = False

    def scope(self, collection: str) -> Scope:
        """The scope of the ask: the model's collection and these fields."""
        return Scope(collection, self.snapshot, self.snapshot_set, tuple(self.where),
                     self.acl_tag, self.clearance, self.all_access)


class ChatBody(_Open, NoNul):
    """POST /v1/chat/completions (no NUL anywhere, as every body of the service)."""

    model: str = Field(..., min_length=1, max_length=300)
    messages: list[Message] = Field(..., min_length=1, max_length=MAX_MESSAGES)
    stream: StrictBool | None = False
    n: int | None = Field(None, ge=1, le=1)  # one answer: there is one extractive answer
    stream_options: dict[str, Any] | None = None  # include_usage: a last chunk with usage
    excerpt: Options = Field(default_factory=Options)


def parse(raw: bytes) -> ChatBody:
    """The request body, or a 400 naming the first field that does not validate."""
    try:
        return ChatBody.model_validate_json(raw or b"null")
    except ValidationError as exc:
        first = exc.errors()[0]
        place = [str(p) for p in first.get("loc", ())]
        if first.get("type") == "unknown_field":  # the field itself, as pydantic's own error
            place.append(str(first.get("ctx", {}).get("field")))
        param = ".".join(place) or None
        message = f"{param}: {first['msg']}" if param else first["msg"]
        raise ChatError(400, message, "invalid_request_error", "invalid_body", param) from None


def text_of(message: Message, index: int) -> str:
    """A message's text: the string, or its text parts joined (an image part is refused)."""
    content = message.content
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    else:
        parts = []
        for part in content:
            if part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise ChatError(400, "only text content is understood", "invalid_request_error",
                                "unsupported_content", f"messages.{index}.content")
            parts.append(part["text"])
        text = "\n".join(parts)
    if len(text) > MAX_MESSAGE:
        raise ChatError(400, f"a message is over {MAX_MESSAGE} characters",
                        "invalid_request_error", "message_too_long", f"messages.{index}")
    return text


def conversation(messages: Sequence[Message]) -> tuple[str, list[tuple[str, str]]]:
    """The question (the last message, a user's) and the turns before it as (speaker, text),
    oldest first, the form :func:`excerpt.compose.followup.resolve` reads."""
    last = len(messages) - 1
    if messages[last].role != "user":
        raise ChatError(400, "the last message must be the user's question",
                        "invalid_request_error", "invalid_messages", f"messages.{last}.role")
    question = text_of(messages[last], last).strip()
    if not question:
        raise ChatError(400, "the question is empty", "invalid_request_error",
                        "invalid_messages", f"messages.{last}.content")
    if len(question) > MAX_QUERY:
        raise ChatError(400, f"the question is over {MAX_QUERY} characters",
                        "invalid_request_error", "invalid_messages", f"messages.{last}.content")
    turns: list[tuple[str, str]] = [(m.role, text_of(m, i)) for i, m in enumerate(messages[:last])
             if m.role in ("user", "assistant")]
    return question, turns


def structured(answer: Answer) -> dict[str, Any]:
    """The ``excerpt`` field of the answer: what a program needs of ``POST /v1/ask``, and
    the question as asked and as resolved from the messages."""
    shown, resolution = answer.result.to_json(), _resolution(answer)
    return {"citations": shown["citations"], "quotes": shown["quotes"],
            "cautious": shown["cautious"], "asked": resolution.question,
            "resolved_question": resolution.resolved,
            "resolution": resolution.reason or None, "reader": shown["reader"]}


def _resolution(answer: Answer) -> Resolution:
    """How the chat's question was read: the service resolves every sent conversation."""
    assert answer.resolution is not None, "a chat's ask is in a sent conversation"
    return answer.resolution


def content(result: AskResult) -> str:
    """The message text: the answer with its [n] markers, then one line per citation, so that
    a chat front end that shows only the text still shows what [n] is."""
    lines = [f"[{c.n}] {c.title} ({c.node_id})" for c in result.composed.citations]
    answer = result.composed.answer
    return f"{answer}\n\nSources:\n" + "\n".join(lines) if lines else answer


class Reply:
    """One completion's identity: its id, time and model, shared by every chunk of a stream."""

    def __init__(self, model: str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model = model

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model,
                "system_fingerprint": None}

    def completion(self, text: str, extra: dict[str, Any],
                   usage: dict[str, int]) -> dict[str, Any]:
        message = {"role": "assistant", "content": text, "refusal": None, "excerpt": extra}
        return {**self._head("chat.completion"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop",
                             "logprobs": None}], "usage": usage}

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> str:
        """One server-sent ``data:`` line of a ``chat.completion.chunk``."""
        body = {**self._head("chat.completion.chunk"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                             "logprobs": None}]}
        return data(body)

    def usage_chunk(self, counted: dict[str, int]) -> str:
        """The chunk OpenAI sends last when asked (``stream_options.include_usage``)."""
        return data({**self._head("chat.completion.chunk"), "choices": [], "usage": counted})


def data(payload: dict[str, Any] | str) -> str:
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {text}\n\n"


def pieces(text: str, size: int = 12) -> list[str]:
    """The answer in streamed deltas of ``size`` words (whitespace kept: they join back)."""
    words = text.split(" ")
    return [" ".join(words[i:i + size]) + (" " if i + size < len(words) else "")
            for i in range(0, len(words), size)]


def usage(answer: Answer) -> dict[str, int]:
    """Tokens of what was read (the question, and the earlier question that resolved it) and
    of the answer, by excerpt's one counter."""
    from excerpt.tokens import count_tokens

    resolution = _resolution(answer)
    read = sum(count_tokens(t) for t in (resolution.question, resolution.previous or ""))
    wrote = count_tokens(answer.result.composed.answer)
    return {"prompt_tokens": read, "completion_tokens": wrote, "total_tokens": read + wrote}
