"""One scope model for every interface (excerpt.scope): a key's rights narrowed the same way
by the REST routes (Caller.narrowed), MCP and chat; never widened; all access for admins."""

from __future__ import annotations

import pytest

from excerpt.edge.keys import Caller
from excerpt.errors import Forbidden, InputError
from excerpt.scope import Rights, Scope
from excerpt.types import Filters, Principal

BOB = Principal(frozenset({"board", "hr"}), frozenset({"secret"}))


@pytest.mark.parametrize(("tags", "labels", "expected"), [
    (None, None, BOB),
    (["hr"], None, Principal(frozenset({"hr"}), frozenset({"secret"}))),
    (["hr", "finance"], [], Principal(frozenset({"hr"}), frozenset())),  # never widened
    ([], ["secret", "top"], Principal(frozenset(), frozenset({"secret"}))),
])
def test_a_call_narrows_the_rights_and_never_widens_them(
        tags: list[str] | None, labels: list[str] | None, expected: Principal) -> None:
    rights = Rights(BOB)
    assert rights.principal(tags, labels) == expected
    caller = Caller("bob", "reader", BOB, "60303ae2")  # REST: the same rule, the same answer
    assert caller.narrowed(tags, labels) == expected == caller.rights().principal(tags, labels)
    assert Scope(acl_tag=tags, clearance=labels).principal(caller.rights()) == expected


def test_all_access_only_for_who_may_see_all() -> None:
    with pytest.raises(Forbidden, match="admin key"):
        Caller("bob", "reader", BOB, "60303ae2").narrowed(None, None, all_access=True)
    root = Caller("root", "admin", BOB, "9f86d081")
    assert root.narrowed(None, None, True) == Principal.admin()
    # conversations are the key's own by its identity, not by its name (issue 28 item 5)
    assert root.rights().conversations == "key:9f86d081/"


def test_a_scope_gives_the_filters_and_refuses_a_bad_where() -> None:
    scope = Scope("books", "pg174-r1", None, ["book=1", "part=body"])
    assert scope.filters() == Filters("books", "pg174-r1", None, {"book": 1, "part": "body"})
    with pytest.raises(InputError, match="where"):
        Scope(where=["no-equals-sign"]).filters()


def test_a_local_command_gets_exactly_the_rights_it_names() -> None:
    """The CLI's principal options through the same rule: nothing named is anonymous (never
    the local process's all access), tags and labels as named, all access when asked."""
    from excerpt.cli.main import make_principal

    assert make_principal((), (), False) == Principal()
    assert make_principal(("hr",), ("secret",), False) == Principal(frozenset({"hr"}),
                                                                   frozenset({"secret"}))
    assert make_principal((), (), True) == Principal.admin()
