"""A metadata filter on a key whose value is a list matches a node whose list holds the value
(with its JSON type), on both stores and through both of PostgreSQL's paths (the ranked reads
of retrieve/sql.py and ``metadata_ordinals``); equality on scalars is unchanged. The document
formats write ``pages`` and ``section_numbers`` as lists so that ``ask``'s "on page 12" and "in
section 2" find a node spanning pages 11-12 or under section 2.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from excerpt.engine import Engine
from excerpt.types import Filters

from .view_helpers import corpus

RECORDS = {
    "span": {"text": "boiler pressure one", "metadata": {"pages": [11, 12]}},
    "alone": {"text": "boiler pressure two", "metadata": {"pages": [12]}},
    "scalar": {"text": "boiler pressure three", "metadata": {"pages": 12}},
    "real": {"text": "boiler pressure four", "metadata": {"pages": [12.0, 13]}},
    "text": {"text": "boiler pressure five", "metadata": {"pages": ["12"]}},
    "nested": {"text": "boiler pressure six", "metadata": {"pages": [[12]]}},
    "object": {"text": "boiler pressure seven", "metadata": {"pages": {"first": 12}}},
    "flags": {"text": "boiler pressure eight", "metadata": {"pages": [True], "flag": [False]}},
    "s21": {"text": "boiler pressure nine", "metadata": {"section_numbers": ["2", "2.1"]}},
    "s3": {"text": "boiler pressure ten", "metadata": {"section_numbers": ["3"],
                                                        "section_number": "3"}},
}


def hits(engine: Engine, where: dict[str, Any]) -> set[str]:
    result = engine.search("boiler pressure", Filters("c", metadata=where), None, "bm25", 20)
    return {h.node.id for h in result.hits}


def ordinals(engine: Engine, where: tuple[str, Any]) -> set[str]:
    store = engine.store
    (info,) = store.snapshots("c")
    found = store.metadata_ordinals(info.snapshot_id, *where)
    return {n.id for n in store.nodes_by_ordinal(info.snapshot_id, found)}


CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({"pages": 12}, {"span", "alone", "scalar", "real"}),  # 12 is 12.0; "12" is not 12
    ({"pages": 11}, {"span"}),
    ({"pages": "12"}, {"text"}),
    ({"pages": 99}, set()),
    ({"pages": True}, {"flags"}),  # true is not 1, in a list as alone
    ({"pages": 1}, set()),
    ({"flag": False}, {"flags"}),
    ({"section_numbers": "2"}, {"s21"}),
    ({"section_numbers": "2.1"}, {"s21"}),
    ({"section_numbers": "2.1", "pages": 12}, set()),  # every filter must hold
    ({"section_number": "3"}, {"s3"}),
]


def test_a_list_matches_the_values_it_holds(store_engine: Engine, tmp_path: Path) -> None:
    engine = store_engine
    engine.ingest(corpus(tmp_path / "corpus.jsonl", RECORDS), "c", "beir", embedder="none")
    for where, expected in CASES:
        assert hits(engine, where) == expected, where
        if len(where) == 1:
            assert ordinals(engine, next(iter(where.items()))) == expected, where


def test_a_filter_asks_the_store_once_per_snapshot(tmp_path: Path, monkeypatch: Any) -> None:
    """An ask scoped to a page searches several times; the store answers the filter once."""
    engine = Engine(tmp_path / "home")
    engine.ingest(corpus(tmp_path / "c" / "corpus.jsonl", RECORDS).parent, collection="c",
                  embedder="none")
    asked: list[tuple[str, Any]] = []
    real = engine.store.metadata_ordinals

    def counted(snapshot_id: str, key: str, value: Any) -> list[int]:
        asked.append((key, value))
        return real(snapshot_id, key, value)

    monkeypatch.setattr(engine.store, "metadata_ordinals", counted)
    first = hits(engine, {"pages": 12})
    assert hits(engine, {"pages": 12}) == first and asked == [("pages", 12)]
    assert hits(engine, {"pages": "12"}) == {"text"} and asked[-1] == ("pages", "12")
    engine.close()
