"""The rights of an MCP call (excerpt.mcp.tools.Rights): the caller's rights narrowed by
what the call names, never widened; all access only where the process or key allows it."""

from __future__ import annotations

import pytest

from excerpt.errors import Forbidden
from excerpt.scope import Rights, Scope
from excerpt.types import Principal

BOB = Principal(frozenset({"board", "staff"}), frozenset({"secret"}))


def test_a_call_narrows_the_callers_rights_and_never_widens_them() -> None:
    rights = Rights(BOB)
    assert rights.principal() == BOB
    assert rights.principal(["board", "finance"], None) == Principal(
        frozenset({"board"}), frozenset({"secret"}))
    assert rights.principal(None, ["top-secret"]) == Principal(frozenset({"board", "staff"}))
    assert Rights(Principal()).principal(["board"], ["secret"]) == Principal()


def test_all_access_needs_permission_and_an_all_access_ceiling_narrows_to_what_is_named() -> None:
    with pytest.raises(Forbidden, match="all access needs an admin key"):
        Rights(BOB).principal(all_access=True)
    everything = Rights(Principal.admin(), may_see_all=True)
    assert everything.principal().all_access
    assert everything.principal(all_access=True).all_access
    assert everything.principal(["board"], None) == Principal(frozenset({"board"}))


def test_conversations_are_prefixed_with_the_callers_name() -> None:
    assert Rights(BOB, conversations="bob/").conversation("plans") == "bob/plans"
    assert Rights(BOB).conversation("plans") == "plans"
    assert Scope("demo", where=("book=Iliad",)).filters().metadata == {"book": "Iliad"}
