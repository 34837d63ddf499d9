"""Snapshot listings on both stores (issue 15 item 1): a caller learns a snapshot's id, source
and counts only when it may see one of its nodes, and the counts are of what it may see; a set
lists only such members and is absent when it has none; a snapshot or set it may not see is
"not found" exactly as one that does not exist; and a search's filters name only what it may
see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.errors import NotFoundError
from excerpt.types import Filters, Principal

from .view_helpers import corpus

ANONYMOUS, HR, ADMIN = Principal(), Principal(frozenset({"hr"})), Principal.admin()
MIXED = {"a1": {"text": "lunch in the cafeteria"},
         "a2": {"text": "lunch budget for hr", "acl_tags": ["hr"]},
         "a3": {"text": "hr lunch notes", "acl_tags": ["hr"]}}
HIDDEN = {"b1": {"text": "layoffs of the lunch staff", "acl_tags": ["hr"]}}


def build(engine: Engine, root: Path) -> tuple[str, str]:
    mixed = engine.ingest(corpus(root / "mixed" / "corpus.jsonl", MIXED), "c", "beir",
                          embedder="none", source="mixed").snapshot_id
    hidden = engine.ingest(corpus(root / "layoffs" / "corpus.jsonl", HIDDEN), "c", "beir",
                           embedder="none", source="upload:layoffs.jsonl").snapshot_id
    assert mixed and hidden
    engine.snapshot_set("both", [mixed, hidden], "c")
    engine.snapshot_set("secret-only", [hidden], "c")
    return mixed, hidden


def listing(engine: Engine, principal: Principal | None) -> list[tuple[str, str, int, int]]:
    return [(s["snapshot_id"], s["source"], s["documents"], s["nodes"])
            for s in engine.snapshots("c", principal)["snapshots"]]


def test_listings_show_what_the_caller_may_see(store_engine: Engine, tmp_path: Path) -> None:
    engine = store_engine
    mixed, hidden = build(engine, tmp_path)
    for principal in (None, ANONYMOUS):  # no principal is the anonymous one
        assert listing(engine, principal) == [(mixed, "mixed", 1, 1)]
        sets = engine.snapshots("c", principal)["sets"]
        assert sets == [{"name": "both", "snapshot_ids": [mixed]}]  # secret-only is absent
        assert "layoffs" not in json.dumps(engine.snapshots(None, principal))
    assert listing(engine, HR) == [(mixed, "mixed", 3, 3),
                                   (hidden, "upload:layoffs.jsonl", 1, 1)]
    assert listing(engine, ADMIN) == listing(engine, HR)
    assert len(engine.snapshots("c", HR)["sets"]) == 2
    assert engine.snapshots("c", ADMIN)["all_access"] is True


def test_what_the_caller_may_not_see_is_not_found(store_engine: Engine,
                                                  tmp_path: Path) -> None:
    engine = store_engine
    _, hidden = build(engine, tmp_path)
    cases = [Filters("c", snapshot_id=hidden), Filters("c", snapshot_set="secret-only")]
    for filters, absent in zip(cases, [Filters("c", snapshot_id="c-r99"),
                                       Filters("c", snapshot_set="nothing")], strict=True):
        with pytest.raises(NotFoundError) as seen:
            engine.search("lunch", filters, ANONYMOUS, "bm25")
        with pytest.raises(NotFoundError) as missing:
            engine.search("lunch", absent, ANONYMOUS, "bm25")
        name = filters.snapshot_id or filters.snapshot_set
        other = absent.snapshot_id or absent.snapshot_set
        assert str(seen.value) == str(missing.value).replace(str(other), str(name))
        assert engine.search("lunch", filters, HR, "bm25").hits  # hr sees it


def test_search_filters_name_only_seen_snapshots(store_engine: Engine,
                                                 tmp_path: Path) -> None:
    engine = store_engine
    mixed, hidden = build(engine, tmp_path)

    def run(filters: Filters, principal: Principal) -> list[str]:
        ids: list[str] = engine.search("lunch", filters, principal, "bm25").filters[
            "snapshot_ids"]
        return ids

    assert run(Filters("c"), ANONYMOUS) == [mixed]
    assert run(Filters("c", snapshot_set="both"), ANONYMOUS) == [mixed]
    assert run(Filters("c"), HR) == [mixed, hidden]
    assert run(Filters("c", snapshot_set="both"), ADMIN) == [mixed, hidden]
