"""The service's one error shape ``{"error", "kind"}`` for excerpt's error tree: the status by
class, and a 500 (a store failure, whose message may name server paths) answered without its
message, which goes to the server's log only. Used by the routes and the streamed ask alike."""

from __future__ import annotations

import logging

from excerpt.errors import DependencyError, ExcerptError, InputError, NotFoundError, ServiceError

_STATUS: tuple[tuple[type[ExcerptError], int], ...] = (
    (InputError, 400), (NotFoundError, 404), (DependencyError, 503), (ServiceError, 502))
INTERNAL = {"error": "internal error", "kind": "internal"}
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
    return code, {"error": str(exc), "kind": exc.kind}
