"""The one place every front door maps a failure: excerpt's error tree, and what else an
exception may be (a process out of open files, a file system's refusal).

The service's one error shape ``{"error", "kind"}`` (with ``param``, the field at fault, when an
input error names one): the status by class, and a 500 (a store
failure, whose message may name server paths) answered without its message, which goes to the
server's log only. The REST routes, the streamed ask, chat (in OpenAI's shape, the same status
and message) and MCP over HTTP answer through :func:`reply`; the CLI and MCP on stdio, whose
caller owns the machine, say the error's own first line (:func:`reason`) and take it from
:func:`in_tree`. A process out of open files (or memory for a map) is ``unavailable`` (503),
never an internal error: its other requests, and this one retried later, may succeed."""

from __future__ import annotations

import logging

from excerpt.errors import (
    BusyError,
    DependencyError,
    ExcerptError,
    Forbidden,
    InputError,
    NotFoundError,
    ServiceError,
    UnavailableError,
    exhausted,
)

_STATUS: tuple[tuple[type[ExcerptError], int], ...] = (
    (InputError, 400), (Forbidden, 403), (NotFoundError, 404), (DependencyError, 503),
    (ServiceError, 502), (UnavailableError, 503), (BusyError, 409))
ADVICE = "try again later; the server's operator may raise its open files limit (ulimit -n)"
INTERNAL = {"error": "internal error", "kind": "internal"}
REFUSED = {"error": "the server may not read that", "kind": "forbidden"}
log = logging.getLogger("excerpt.server.app")


def status(exc: ExcerptError) -> int:
    """By class, so that a subclass (CorpusError is an InputError) gets its parent's status."""
    return next((code for cls, code in _STATUS if isinstance(exc, cls)), 500)


def answer(exc: ExcerptError) -> tuple[int, dict[str, str]]:
    """The status and body ``exc`` is answered with (an input error's ``param``, the field at
    fault, when it names one)."""
    code = status(exc)
    if code == 500:
        log.error("excerpt: a request failed: %s", exc)
        return 500, INTERNAL
    if isinstance(exc, UnavailableError):  # the operator's to mend: say so in the log too
        log.error("excerpt: a request failed for want of resources: %s", exc)
    body = {"error": str(exc), "kind": exc.kind}
    if isinstance(exc, InputError) and exc.param:
        body["param"] = exc.param
    return code, body


def reply(exc: Exception) -> tuple[int, dict[str, str]]:
    """The status and body of any exception a request raised, for a door that catches it
    itself (a stream's worker, chat, MCP over HTTP): :func:`answer` for excerpt's tree, else
    :func:`unexpected`, whose 500 no framework logs there, so it is logged here with its
    traceback."""
    if isinstance(exc, ExcerptError):
        return answer(exc)
    code, body = unexpected(exc)
    if code == 500:
        log.error("excerpt: a request failed", exc_info=exc)
    return code, body


def reason(exc: ExcerptError) -> str:
    """The error's one line, as the CLI prints it and an MCP tool error says it."""
    text = str(exc)
    return text.splitlines()[0] if text else exc.kind


def in_tree(exc: BaseException, advice: str = ADVICE) -> ExcerptError | None:
    """``exc`` as excerpt's error tree has it: itself when it is in the tree, an
    :class:`UnavailableError` naming the resource and ``advice`` when the process ran out of
    one (anywhere in its chain), else None: a failure the tree does not know."""
    if isinstance(exc, ExcerptError):
        return exc
    ran_out = _ran_out(exc, advice)
    return None if ran_out is None else ran_out[1]


def unexpected(exc: Exception) -> tuple[int, dict[str, str]]:
    """The status and body of an exception outside excerpt's tree: 503 when the operating
    system ran out of descriptors or memory (anywhere: a socket, a database connection), 403
    when the file system refused a read (its message, naming a server path, to the log only),
    else a 500 without its message."""
    ran_out = _ran_out(exc, ADVICE)
    if ran_out is not None:
        cause, unavailable = ran_out
        log.error("excerpt: a request failed for want of resources: %s", cause)
        return 503, {"error": str(unavailable), "kind": unavailable.kind}
    if isinstance(exc, PermissionError):
        log.error("excerpt: a request was refused by the file system: %s", exc)
        return 403, REFUSED
    return 500, INTERNAL


def _ran_out(exc: BaseException, advice: str) -> tuple[OSError, UnavailableError] | None:
    """The operating system's error in ``exc``'s chain that says the process ran out of a
    resource, and it as an :class:`UnavailableError`; None when none does."""
    for cause in _chain(exc):
        if isinstance(cause, OSError) and (unavailable := exhausted(cause, advice)):
            return cause, unavailable
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it (an OSError may come wrapped), at most ten deep."""
    found: list[BaseException] = []
    at: BaseException | None = exc
    while at is not None and len(found) < 10:
        found.append(at)
        at = at.__cause__ or at.__context__
    return found
