"""Where a call reads and as whom: one scope model for every interface (issue 18 item 3).

A **scope** is the CLI's and the HTTP bodies' names: ``collection``, ``snapshot``,
``snapshot_set``, ``where`` (KEY=VALUE), ``acl_tag``, ``clearance``, ``all_access``. The REST
routes, the MCP tools and chat's ``excerpt`` field all read a :class:`Scope`; it gives the
:class:`excerpt.types.Filters` of the call and, against the caller's :class:`Rights`, its
principal.

**Rights** are what a caller may see at most (an API key's tags and clearances, or the
principal options of ``excerpt mcp``): a call's ``acl_tag`` / ``clearance`` narrow them and
never widen them, and ``all_access`` is granted only when the caller may see everything (an
admin key; ``excerpt mcp --all-access``). This is the security invariant of HOUSE.md at the
edge of every interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from excerpt.errors import Forbidden, InputError
from excerpt.names import plain_name
from excerpt.types import Filters, Principal, parse_where


def conversation_name(name: str) -> str:
    """``name`` if it is a plain conversation name (:func:`excerpt.names.plain_name`):
    a served caller's name is appended to its key's prefix, so ``/`` or ``..`` in it must not
    reach another name's conversations."""
    return plain_name(name, "conversation")


@dataclass(frozen=True)
class Rights:
    """Who calls: the most it may see (``ceiling``), whether it may ask for all access, the
    prefix of its conversations (an HTTP key's own, ``"key:IDENTITY/"``; none on stdio, as
    ``excerpt memory`` names them), and whether it may add documents."""

    ceiling: Principal
    may_see_all: bool = False
    conversations: str = ""
    refusal: str = "all access needs an admin key"
    may_ingest: bool = False
    """May add documents (sent as text): ingester and admin keys, ``excerpt mcp --ingester``."""
    may_ingest_paths: bool = False
    """May ingest server-side paths: admin keys (inside the server's ingest roots),
    ``excerpt mcp --ingester`` (the local user's own files)."""
    ingest_refusal: str = "this needs a key with role ingester or admin"

    def check_ingest(self, paths: bool) -> None:
        """Refuses (:class:`Forbidden`) an ingest these rights do not allow."""
        if not self.may_ingest:
            raise Forbidden(self.ingest_refusal)
        if paths and not self.may_ingest_paths:
            raise Forbidden("this needs a key with role admin (a server-side path)")

    def principal(self, acl_tag: Sequence[str] | None = None,
                  clearance: Sequence[str] | None = None, all_access: bool = False) -> Principal:
        """The principal of one call: the ceiling narrowed to ``acl_tag`` / ``clearance``
        when given (never widened); ``all_access`` only when :attr:`may_see_all`."""
        if all_access:
            if not self.may_see_all:
                raise Forbidden(self.refusal)
            return Principal.admin()
        if self.ceiling.all_access:  # everything: what the call names is what it gets
            if acl_tag is None and clearance is None:
                return self.ceiling
            return Principal(frozenset(acl_tag or ()), frozenset(clearance or ()))
        tags, labels = self.ceiling.acl_tags, self.ceiling.clearances
        if acl_tag is not None:
            tags = tags & frozenset(acl_tag)
        if clearance is not None:
            labels = labels & frozenset(clearance)
        return Principal(tags, labels)

    def conversation(self, name: str) -> str:
        """The stored name of the caller's conversation ``name`` (refused unless plain)."""
        return self.conversations + conversation_name(name)


@dataclass(frozen=True)
class Scope:
    """Where a call reads and as whom: the scope model of the CLI and the HTTP bodies."""

    collection: str = "default"
    snapshot: str | None = None
    snapshot_set: str | None = None
    where: Sequence[str] = ()
    acl_tag: Sequence[str] | None = None
    clearance: Sequence[str] | None = None
    all_access: bool = False

    def filters(self) -> Filters:
        try:
            metadata = parse_where(self.where)
        except ValueError as exc:
            raise InputError(f"where: {exc}", param="where") from None
        return Filters(self.collection, self.snapshot, self.snapshot_set, metadata)

    def principal(self, rights: Rights) -> Principal:
        return rights.principal(self.acl_tag, self.clearance, self.all_access)
