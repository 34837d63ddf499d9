"""One ask resolves what its caller may read once: the snapshots of its view are looked up a
single time, and a view is laid out once per metadata scope its searches read (the whole
read, and a book the question names), however many searches the ask runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from excerpt.catalogue import Catalogue
from excerpt.engine import Engine
from excerpt.types import Filters, Principal


@pytest.fixture(scope="module")
def iliad(tmp_path_factory: pytest.TempPathFactory, shared_data: Callable[..., Path]) -> Engine:
    engine = Engine(tmp_path_factory.mktemp("iliad"))
    engine.ingest([shared_data("books", "pg6130_iliad_pope.txt")], collection="books",
                  fmt="gutenberg", embedder="none")
    return engine


def counting(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    calls: dict[str, list[Any]] = {"resolve": [], "view": []}
    resolve, view = Catalogue.resolve, engine.access.view

    def resolving(self: Catalogue, *args: Any, **kwargs: Any) -> Any:
        calls["resolve"].append(args)
        return resolve(self, *args, **kwargs)

    def viewing(snapshots: Any, principal: Any, metadata: Any = None) -> Any:
        calls["view"].append(dict(metadata or {}))
        return view(snapshots, principal, metadata)

    monkeypatch.setattr(Catalogue, "resolve", resolving)
    monkeypatch.setattr(engine.access, "view", viewing)
    return calls


@pytest.mark.parametrize(("question", "scopes"), [
    ("Why is Achilles angry with Agamemnon?", [{}]),
    ("In book 3, who fights Menelaus?", [{}, {"book": 3}]),
])
def test_an_ask_resolves_its_read_once(iliad: Engine, monkeypatch: pytest.MonkeyPatch,
                                       question: str, scopes: list[dict[str, Any]]) -> None:
    calls = counting(iliad, monkeypatch)
    result = iliad.ask(question, Filters("books"), Principal.anonymous(), "bm25")
    assert result.documents, "the ask found passages"
    assert len(calls["resolve"]) == 1
    assert calls["view"] == scopes  # each scope laid out once, however many searches read it
    if len(scopes) > 1:
        assert result.scope and all(p.node.metadata.get("book") == 3 for p in result.documents)
