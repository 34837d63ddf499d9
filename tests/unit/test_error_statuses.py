"""excerpt's error tree answered by the service: each refusal's status and kind, and what the
operating system refused answered without the server path it names."""

from __future__ import annotations

import errno

import pytest

from excerpt.edge.errors import answer, unexpected
from excerpt.errors import (
    BusyError,
    CorpusError,
    ExcerptError,
    Forbidden,
    InputError,
    NotFoundError,
    StoreError,
)
from excerpt.scope import Rights
from excerpt.types import Principal


@pytest.mark.parametrize(("error", "code"), [
    (InputError("bad k"), 400), (CorpusError("no rows"), 400), (Forbidden("admin only"), 403),
    (NotFoundError("no such collection"), 404), (BusyError("held by pid 7"), 409)])
def test_each_refusal_has_its_status_and_says_why(error: ExcerptError, code: int) -> None:
    assert answer(error) == (code, {"error": str(error), "kind": error.kind})


def test_a_store_failure_is_a_500_that_names_nothing() -> None:
    assert answer(StoreError("/srv/excerpt/excerpt.db is locked")) == (
        500, {"error": "internal error", "kind": "internal"})


def test_rights_refuse_with_forbidden_answered_403() -> None:
    reader = Rights(Principal(frozenset({"hr"})), may_see_all=False)
    with pytest.raises(Forbidden) as refused:
        reader.check_ingest(paths=False)
    code, body = answer(refused.value)
    assert code == 403 and body["kind"] == "forbidden" and "ingester" in body["error"]


def test_the_file_system_refusing_a_read_is_403_without_the_path() -> None:
    denied = PermissionError(errno.EACCES, "Permission denied", "/srv/private/notes.md")
    code, body = unexpected(denied)
    assert code == 403 and body["kind"] == "forbidden"
    assert "/srv" not in body["error"] and "notes" not in body["error"]
    assert unexpected(RuntimeError("boom at /srv/x"))[0] == 500
