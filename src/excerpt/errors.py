"""The error tree, mapped once to exit codes (and later to HTTP statuses).

    ExcerptError                 exit 1   anything refused or failed, with a one-line reason
    ├── InputError               exit 1   bad input: a path, a file, a record, a field
    │   └── CorpusError          exit 1   a corpus malformed as a whole; the import leaves nothing
    ├── NotFoundError            exit 1   a collection, snapshot or set that does not exist
    ├── Forbidden                exit 1   the caller's rights do not allow it (a key's role, all
    │                                     access, a path outside the ingest roots): HTTP 403
    ├── StoreError               exit 1   the store cannot be opened or is inconsistent
    ├── DependencyError          exit 1   an optional component is missing (says how to install)
    ├── ServiceError             exit 1   a remote service (the optional LLM endpoint) failed or
    │                                     answered badly; ``status`` is its HTTP status if any
    ├── UnavailableError         exit 1   the process is out of a resource for now (open files):
    │                                     HTTP 503; other requests and a later retry may succeed
    └── BusyError                exit 1   another process holds the work asked for (a sync of the
                                          same collection): HTTP 409, says who holds it

Usage errors (a wrong option) are click's and exit 2.
"""

from __future__ import annotations

import errno


class ExcerptError(Exception):
    """Base of every error excerpt raises on purpose."""

    kind = "error"
    exit_code = 1


class InputError(ExcerptError):
    """Bad input; ``param`` names the request's field at fault when one is (the HTTP error's
    ``param``: a page shows the error next to that field)."""

    kind = "input"

    def __init__(self, *args: object, param: str | None = None) -> None:
        super().__init__(*args)
        self.param = param


class CorpusError(InputError):
    kind = "corpus"


class NotFoundError(ExcerptError):
    kind = "not_found"


class Forbidden(ExcerptError):
    """Refused by the caller's rights, not by the input: asked again with a key that has the
    rights, the same request would do."""

    kind = "forbidden"


class StoreError(ExcerptError):
    kind = "store"


class DependencyError(ExcerptError):
    kind = "dependency"


class ServiceError(ExcerptError):
    kind = "service"

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class UnavailableError(ExcerptError):
    kind = "unavailable"


class BusyError(ExcerptError):
    kind = "busy"


EXHAUSTED = {errno.EMFILE: "too many open files in this process",
             errno.ENFILE: "too many open files in the system",
             errno.ENOMEM: "out of memory (or of memory maps)"}
"""The operating system's errors that mean "out of a resource now", not "this input is bad"."""


def exhausted(exc: OSError, advice: str) -> UnavailableError | None:
    """``exc`` as an :class:`UnavailableError` whose one line says which resource ran out and
    ``advice`` (what an operator can do), or None when ``exc`` is another error. The message
    names no path: it may be answered to a remote caller."""
    reason = EXHAUSTED.get(exc.errno or 0)
    return UnavailableError(f"{reason}: {advice}") if reason else None
