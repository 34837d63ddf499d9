"""The service's one error shape ``{"error", "kind"}`` for excerpt's error tree: the status by
class, and a 500 (a store failure, whose message may name server paths) answered without its
message, which goes to the server's log only. Used by the routes and the streamed ask alike.
A process out of open files (or memory for a map) answers 503 ``unavailable``, never 500: its
other requests, and this one retried later, may succeed."""

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
    """The status and body ``exc`` is answered with."""
    code = status(exc)
    if code == 500:
        log.error("excerpt: a request failed: %s", exc)
        return 500, INTERNAL
    if isinstance(exc, UnavailableError):  # the operator's to mend: say so in the log too
        log.error("excerpt: a request failed for want of resources: %s", exc)
    return code, {"error": str(exc), "kind": exc.kind}


def unexpected(exc: Exception) -> tuple[int, dict[str, str]]:
    """The status and body of an exception outside excerpt's tree: 503 when the operating
    system ran out of descriptors or memory (anywhere: a socket, a database connection), 403
    when the file system refused a read (its message, naming a server path, to the log only),
    else a 500 without its message."""
    for cause in _chain(exc):
        if isinstance(cause, OSError) and (unavailable := exhausted(cause, ADVICE)):
            log.error("excerpt: a request failed for want of resources: %s", cause)
            return 503, {"error": str(unavailable), "kind": unavailable.kind}
    if isinstance(exc, PermissionError):
        log.error("excerpt: a request was refused by the file system: %s", exc)
        return 403, REFUSED
    return 500, INTERNAL


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it (an OSError may come wrapped), at most ten deep."""
    found: list[BaseException] = []
    at: BaseException | None = exc
    while at is not None and len(found) < 10:
        found.append(at)
        at = at.__cause__ or at.__context__
    return found
