"""Property: a node the caller may not see never reaches them, in any mode, with any filter.

Random corpora of nodes with random ACL tags and classification labels are ingested through
the real engine (real analyzers, real MiniLM embeddings); random principals search in every
mode.  The expected visibility is recomputed here from the generated records, independently of
the node fields the engine returns.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from excerpt.engine import Engine
from excerpt.errors import NotFoundError
from excerpt.types import SEARCH_MODES, Filters, Principal

TAGS = ["finance", "security", "hr", "architecture"]
LABELS = ["public", "internal", "secret", "sensitive"]
WORDS = ["payment", "invoice", "token", "shipment", "search", "ledger", "audit", "report"]

record = st.fixed_dictionaries({
    "acl_tags": st.lists(st.sampled_from(TAGS), max_size=2, unique=True),
    "classification_labels": st.lists(st.sampled_from(LABELS), max_size=2, unique=True),
    "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
})
principal = st.one_of(
    st.just(Principal.anonymous()),
    st.builds(lambda t, c: Principal(frozenset(t), frozenset(c)),
              st.sets(st.sampled_from(TAGS)), st.sets(st.sampled_from(LABELS))),
)


def visible(rec: dict[str, list[str]], who: Principal) -> bool:
    acl_ok = not rec["acl_tags"] or bool(set(rec["acl_tags"]) & who.acl_tags)
    return acl_ok and set(rec["classification_labels"]) <= who.clearances


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(records=st.lists(record, min_size=1, max_size=12), who=principal,
       query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
def test_hidden_nodes_never_reach_the_caller(records: list[dict[str, list[str]]],
                                             who: Principal, query: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        with open(corpus, "w", encoding="utf-8") as fh:
            for i, rec in enumerate(records):
                fh.write(json.dumps({"_id": f"d{i:02d}", "title": "",
                                     "text": "common " + " ".join(rec["words"]),
                                     "acl_tags": rec["acl_tags"],
                                     "classification_labels": rec["classification_labels"]}))
                fh.write("\n")
        engine = Engine(Path(tmp) / "home")
        engine.ingest([corpus], collection="c", fmt="beir")
        allowed = {f"d{i:02d}" for i, rec in enumerate(records) if visible(rec, who)}
        if not allowed:  # a collection the caller sees nothing of is not there to it
            with pytest.raises(NotFoundError):
                engine.search("common", Filters("c"), who, "bm25", 50)
            engine.close()
            return
        for mode in SEARCH_MODES:
            hits = engine.search(" ".join(query), Filters("c"), who, mode, 50).hits
            assert {h.node.id for h in hits} <= allowed, mode
        # Every node contains "common": BM25 must return exactly the visible ones, no fewer.
        everything = engine.search("common", Filters("c"), who, "bm25", 50).hits
        assert {h.node.id for h in everything} == allowed
        engine.close()
