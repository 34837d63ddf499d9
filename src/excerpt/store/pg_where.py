"""One metadata filter (``key=value``, a where of :func:`excerpt.types.check_where`) as a
PostgreSQL predicate, shared by the store's ``metadata_ordinals`` and the ranked reads of
:mod:`excerpt.retrieve.sql`, so the two can never disagree.

A node matches when its value under ``key`` equals ``value`` with its JSON type (jsonb equality:
true is not 1, "1" is not 1, 1 is 1.0) or is a list holding such a value: the document formats
write lists (``pages`` [11, 12], ``section_numbers`` ["2", "2.1"]) so that "on page 12" and "in
section 2" find a node spanning pages 11-12 or under 2.1 (SQLiteStore.metadata_ordinals does the
same with json_each). jsonb containment of a scalar is exactly that: ``12 @> 12``, ``[11, 12] @>
12``, but not ``[[12]]``, ``{"a": 12}`` or ``"12"``; on 1,751 PDF nodes it costs what equality
did (4-8 ms a query over two runs), where equality OR'd with an array test took 15-19 ms."""

from __future__ import annotations

import json
from typing import Any


def metadata_test(column: str, key: str, value: Any) -> tuple[str, list[Any]]:
    """The predicate on ``column`` (a json column, e.g. ``n.metadata``) and its parameters."""
    return f"({column} -> %s)::jsonb @> %s::jsonb", [key, json.dumps(value)]
