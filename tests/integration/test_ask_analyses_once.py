"""One ask reads its question once (query/question.py): its language is detected a single time
and its text analysed a single time, however many stages read them (the grounding, the
search of the question as typed, the composer's question shape, key tokens and idf weights).
Texts derived from the question (its concepts, the question without its framing words) and
the passages are other texts: analysing them is the work itself, and is not counted. A plain
search reads its query once too.

The spies wrap the real functions in every loaded excerpt module that looked them up by name
(``from excerpt.analyze import analyze``), after a first ask has imported every module an ask
uses; they count only calls whose text is the question's."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import excerpt.analyze
from excerpt.engine import Engine
from excerpt.types import Filters, Principal, SearchMode

SPIED = ("detect_language", "analyze")
REGULATIONS = ("regulations", "dongeui_regulations_9-340_20250702.txt")


@pytest.fixture(scope="module")
def iliad(tmp_path_factory: pytest.TempPathFactory, shared_data: Callable[..., Path]) -> Engine:
    engine = Engine(tmp_path_factory.mktemp("iliad"))
    engine.ingest([shared_data("books", "pg6130_iliad_pope.txt")], collection="books",
                  fmt="gutenberg", embedder="none")
    engine.ask("Who is Hector?", Filters("books"), Principal.anonymous(), "bm25")  # imports
    return engine


@pytest.fixture(scope="module")
def regulations(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[Engine]:
    """The first 40,000 characters of the real regulations (the foundation's articles of
    association among them), BM25 only."""
    root = tmp_path_factory.mktemp("analyses-once-r")
    text = shared_data(*REGULATIONS).read_text("utf-8")[:40_000]
    (root / REGULATIONS[1]).write_text(text, "utf-8")
    engine = Engine(root / "home")
    engine.ingest(root / REGULATIONS[1], collection="r", embedder="none")
    engine.ask("이사회는 무엇을 하나요?", Filters("r"), Principal.anonymous(), "bm25")
    yield engine
    engine.close()


def counting(question: str, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, int],
                                                                       set[str]]:
    """Spies on the language detector and the analyser wherever excerpt looks them up:
    (calls on ``question`` by function, the modules patched)."""
    calls = dict.fromkeys(SPIED, 0)
    patched: set[str] = set()
    for name in SPIED:
        real = getattr(excerpt.analyze, name)

        def spy(text: str, *args: Any, _name: str = name, _real: Any = real,
                **kwargs: Any) -> Any:
            if text == question:
                calls[_name] += 1
            return _real(text, *args, **kwargs)

        for module_name, module in list(sys.modules.items()):
            if module_name.startswith("excerpt") and getattr(module, name, None) is real:
                monkeypatch.setattr(module, name, spy)
                patched.add(module_name)
    return calls, patched


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
@pytest.mark.parametrize("question", [
    "Why is Achilles angry with Agamemnon?",
    "In book 3, who fights Menelaus?",  # names a book: its searches read a scoped view
])
def test_an_ask_reads_its_question_once(iliad: Engine, monkeypatch: pytest.MonkeyPatch,
                                        question: str, mode: SearchMode) -> None:
    calls, patched = counting(question, monkeypatch)
    assert {"excerpt.analyze", "excerpt.compose.grounding", "excerpt.compose.question",
            "excerpt.query.question"} <= patched  # the stages that used to read it again
    result = iliad.ask(question, Filters("books"), Principal.anonymous(), mode)
    assert result.documents and result.composed.answer
    assert calls == {"detect_language": 1, "analyze": 1}


@pytest.mark.parametrize("question", [
    "정관을 변경하려면 어떻게 해야 하나요?",
    "학교법인동의학원정관 제5조",  # names an article: its own single concept, searched as typed
])
def test_a_korean_ask_reads_its_question_once(regulations: Engine,
                                              monkeypatch: pytest.MonkeyPatch,
                                              question: str) -> None:
    calls, _ = counting(question, monkeypatch)
    result = regulations.ask(question, Filters("r"), Principal.anonymous(), "bm25")
    assert result.language == "ko" and result.documents
    assert calls == {"detect_language": 1, "analyze": 1}


def test_a_search_reads_its_query_once(iliad: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    query = "Why is Achilles angry with Agamemnon?"
    calls, _ = counting(query, monkeypatch)
    result = iliad.search(query, Filters("books"), Principal.anonymous(), "bm25")
    assert result.hits and result.analysis["language"] == "en"
    assert calls == {"detect_language": 1, "analyze": 1}
