"""Issue 29 item 3 on both stores: a question about a name no node the caller may see holds is
answered cautiously, however well its other words match (the view's idf weights say which
tokens it never holds; a hidden node's words count as absent)."""

from __future__ import annotations

from pathlib import Path

from excerpt.engine import Engine
from excerpt.types import Filters, Principal

from .view_helpers import corpus

RECORDS = {
    "menu": {"text": "The harbour kitchen serves the lunch menu at noon: fish soup, bread and "
                     "apples, every day of the week."},
    "hours": {"text": "The harbour kitchen opens at eight and the lunch menu changes weekly."},
    "secret": {"text": "Hisarlik guests are served the lunch menu in the garden room.",
               "acl_tags": ["staff"]},
}


def test_a_question_about_a_name_no_visible_node_holds_is_cautious(store_engine: Engine,
                                                                   tmp_path: Path) -> None:
    engine = store_engine
    engine.ingest(corpus(tmp_path / "corpus.jsonl", RECORDS), "c", "beir", embedder="none")
    about_absent = "What does the harbour kitchen serve on the lunch menu for Hisarlik guests?"
    plain = "What does the harbour kitchen serve on the lunch menu?"
    anonymous = engine.ask(about_absent, Filters("c"), Principal.anonymous(), "bm25")
    assert anonymous.composed.cautious and anonymous.composed.quotes  # still shows candidates
    assert not engine.ask(plain, Filters("c"), Principal.anonymous(), "bm25").composed.cautious
    staff = engine.ask(about_absent, Filters("c"), Principal(frozenset({"staff"})), "bm25")
    assert "secret" in [c.node_id for c in staff.composed.citations]  # staff see it named
