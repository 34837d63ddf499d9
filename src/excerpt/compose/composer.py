"""Extractive composition (seed 000): quotes, a short answer whose sentences cite them, citations.

Given the question and the passages that reached composition (best first):

1. **Quotes** are the passages' sentences that best match the question, diverse
   (:func:`excerpt.compose.quotes.select_quotes`), at most ``max_quotes``; numbered 1..n.
2. **The answer** is 2–4 of those sentences, each followed by the marker of the quote it is,
   taken best first while the answer is under ``TARGET_WORDS`` (100) words, skipping a sentence
   that would take it past ``MAX_WORDS`` (160). Every answer sentence is a quote, so it shares all
   its content words with the quote it cites (seed 000's attribution check asks for two).
3. **Caution**: when no passage covers at least ``min_coverage`` of the question's content
   tokens (the relevance threshold: a passage's share of the question's distinct analyzer
   tokens, weighted by idf when the engine gives weights; comparable across search modes,
   unlike raw scores), the answer opens with "Based on
   the available passages, the closest the text comes is:" (or its Korean counterpart) and
   still quotes the best candidates.
4. **Citations** map each n to its node: id, title, source and metadata (book, chapter,
   article …).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from excerpt.compose.quotes import Quote, content_tokens, select_quotes
from excerpt.types import Node

TARGET_WORDS = 100
MAX_WORDS = 160
MAX_SENTENCES = 4
MIN_COVERAGE = 0.5
DEFAULT_MAX_QUOTES = 4
NO_ANSWER = {
    "en": "The available passages do not answer this question.",
    "ko": "제공된 문서에서 이 질문에 대한 답을 찾지 못했습니다.",
}
CAUTION = {
    "en": "Based on the available passages, the closest the text comes is:",
    "ko": "제공된 문서에서 질문에 가장 가까운 내용은 다음과 같습니다:",
}


@dataclass(frozen=True)
class Passage:
    """A node that reached composition, with the score it arrived with."""

    node: Node
    score: float
    snapshot_id: str = ""


@dataclass(frozen=True)
class Citation:
    n: int
    node_id: str
    title: str
    source: str
    metadata: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "id": self.node_id, "title": self.title, "source": self.source,
                "metadata": self.metadata}


@dataclass(frozen=True)
class ComposedAnswer:
    answer: str
    cautious: bool
    quotes: list[Quote]
    citations: list[Citation]
    sentences: list[tuple[str, int]] = field(default_factory=list)  # (text, quote n)
    coverage: float = 0.0

    def quotes_json(self) -> list[dict[str, Any]]:
        by_id = {c.node_id: c for c in self.citations}
        return [{"n": n, "id": q.node_id, "text": q.text, "score": round(q.relevance, 4),
                 "metadata": by_id[q.node_id].metadata}
                for n, q in enumerate(self.quotes, start=1)]


def coverage(question_tokens: frozenset[str], text: str,
             weights: Mapping[str, float] | None = None) -> float:
    """Share of the question's distinct content tokens that occur in ``text`` (each token
    counted by its weight when ``weights`` are given, else 1)."""
    w = weights or {}
    total = sum(w.get(t, 1.0) for t in question_tokens)
    if not total:
        return 0.0
    return sum(w.get(t, 1.0) for t in question_tokens & set(content_tokens(text))) / total


def _words(text: str) -> int:
    return len(text.split())


def _answer_sentences(quotes: Sequence[Quote], words: int = 0) -> list[tuple[str, int]]:
    """Quotes as answer sentences toward TARGET_WORDS; ``words`` already used (a preamble)."""
    chosen: list[tuple[str, int]] = []
    for n, quote in enumerate(quotes, start=1):
        if len(chosen) == MAX_SENTENCES or (words >= TARGET_WORDS and len(chosen) >= 2):
            break
        size = _words(quote.text)
        if chosen and words + size > MAX_WORDS:
            continue
        chosen.append((quote.text, n))
        words += size
    return chosen


def _citations(quotes: Sequence[Quote], passages: Sequence[Passage]) -> list[Citation]:
    nodes = {p.node.id: p.node for p in passages}
    out: list[Citation] = []
    for n, quote in enumerate(quotes, start=1):
        node = nodes[quote.node_id]
        out.append(Citation(n, node.id, node.title, node.source, dict(node.metadata)))
    return out


def compose(question: str, passages: Sequence[Passage], language: str = "en",
            max_quotes: int = DEFAULT_MAX_QUOTES, min_coverage: float = MIN_COVERAGE,
            weights: Mapping[str, float] | None = None) -> ComposedAnswer:
    """The extractive answer to ``question`` from ``passages`` (best first); see the module.
    ``weights`` (token -> idf) weigh the question's tokens in quote relevance and coverage."""
    wanted = frozenset(content_tokens(question))
    best = max((coverage(wanted, p.node.text, weights) for p in passages), default=0.0)
    quotes = select_quotes(question, [(p.node.id, p.node.text) for p in passages], max_quotes,
                           weights=weights)
    caution = CAUTION.get(language, CAUTION["en"])
    cautious = best < min_coverage or not quotes
    sentences = _answer_sentences(quotes, _words(caution) if cautious else 0)
    parts = [f"{text} [{n}]" for text, n in sentences]
    if cautious and parts:
        parts[0] = f"{caution} {parts[0]}"
    elif not parts:
        parts = [NO_ANSWER.get(language, NO_ANSWER["en"])]
    return ComposedAnswer(" ".join(parts), cautious, quotes, _citations(quotes, passages),
                          sentences, best)
