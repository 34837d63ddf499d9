"""Metadata filters (``where``) on both stores: a value is a string, a number or true/false
and matches only a value of that JSON type; lists, objects, null, keys that would break a JSON
path and the security fields are refused with an InputError, never a store error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.types import Filters, Principal

from .view_helpers import corpus

RECORDS = {
    "n-int": {"text": "lunch menu one", "metadata": {"x": 1}},
    "n-float": {"text": "lunch menu two", "metadata": {"x": 1.0}},
    "n-str": {"text": "lunch menu three", "metadata": {"x": "1"}},
    "n-true": {"text": "lunch menu four", "metadata": {"x": True}},
    "n-false": {"text": "lunch menu five", "metadata": {"x": False}},
    "n-half": {"text": "lunch menu six", "metadata": {"x": 1.5, "a.b": "dot"}},
    "n-hr": {"text": "lunch menu seven", "metadata": {"x": 1}, "acl_tags": ["hr"]},
}


def hits(engine: Engine, where: dict[str, Any], principal: Principal | None = None) -> set[str]:
    result = engine.search("lunch menu", Filters("c", metadata=where), principal, "bm25", 20)
    return {h.node.id for h in result.hits}


def test_a_filter_matches_its_own_json_type_only(store_engine: Engine, tmp_path: Path) -> None:
    engine = store_engine
    engine.ingest(corpus(tmp_path / "corpus.jsonl", RECORDS), "c", "beir", embedder="none")
    assert hits(engine, {"x": 1}) == {"n-int", "n-float"}  # 1 and 1.0 are one number
    assert hits(engine, {"x": 1.5}) == {"n-half"}
    assert hits(engine, {"x": "1"}) == {"n-str"}
    assert hits(engine, {"x": True}) == {"n-true"}  # true is not 1
    assert hits(engine, {"x": False}) == {"n-false"}
    assert hits(engine, {"a.b": "dot"}) == {"n-half"}  # a dotted key is one key
    assert hits(engine, {"x": 1}, Principal(frozenset({"hr"}))) == {"n-int", "n-float", "n-hr"}


REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"x": [1]}, "not a list"),
    ({"x": {"a": 1}}, "not an object"),
    ({"x": None}, "not null"),
    ({"x": 2**70}, "not a number out of range"),
    ({"x": float("nan")}, "not a number out of range"),
    ({'a"b': 1}, "without quotes"),
    ({"acl_tags": ["finance"]}, "security field"),
    ({"acl_tags": "hr"}, "security field"),
    ({"classification_labels": "secret"}, "security field"),
]


def test_other_values_and_security_keys_are_refused(store_engine: Engine,
                                                    tmp_path: Path) -> None:
    engine = store_engine
    engine.ingest(corpus(tmp_path / "corpus.jsonl", RECORDS), "c", "beir", embedder="none")
    for where, reason in REFUSED:
        with pytest.raises(InputError, match=reason):
            hits(engine, where)
        with pytest.raises(InputError, match=reason):
            engine.ask("lunch menu", Filters("c", metadata=where), None, "bm25")
