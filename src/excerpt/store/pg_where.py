"""One metadata filter (``key=value``, a where of :func:`excerpt.types.check_where`) as a
PostgreSQL predicate, shared by the store's ``metadata_ordinals`` and the ranked reads of
:mod:`excerpt.retrieve.sql`, so the two can never disagree.

A node matches when its value under ``key`` equals ``value`` with its JSON type (jsonb equality:
true is not 1, "1" is not 1, 1 is 1.0) or is a list holding such a value: the document formats
write lists (``pages`` [11, 12], ``section_numbers`` ["2", "2.1"]) so that "on page 12" and "in
section 2" find a node spanning pages 11-12 or under 2.1 (SQLiteStore.metadata_ordinals does the
same with json_each)."""

from __future__ import annotations

import json
from typing import Any


def metadata_test(column: str, key: str, value: Any) -> tuple[str, list[Any]]:
    """The predicate on ``column`` (a json column, e.g. ``n.metadata``) and its parameters."""
    field = f"({column} -> %s)::jsonb"
    test = (f"({field} = %s::jsonb OR (jsonb_typeof({field}) = 'array' AND "
            f"{field} @> %s::jsonb))")
    return test, [key, json.dumps(value), key, key, json.dumps([value])]
