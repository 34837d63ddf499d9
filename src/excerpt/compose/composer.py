"""Extractive composition (seed 000): quotes, a short answer whose sentences cite them, citations.

Given the question and the passages that reached composition (best first):

1. **Quotes** are the passages' sentences (or short passages) that best match the question,
   diverse (:func:`excerpt.compose.quotes.select_quotes`): a pool of ``POOL_QUOTES`` (8) is
   drawn; the ones the answer cites are listed, then the best others, ``max_quotes`` in all,
   numbered 1..n in pool order.
2. **The answer** is 2–4 sentences, one per cited quote, each followed by its quote's marker.
   The quotes' sentences are scored by how much of the question they cover (idf-weighted) plus
   a bonus for length (up to 35 words). The best sentence of each of the best quotes opens an
   answer sentence until the answer reaches ``TARGET_WORDS`` (100) words or four sentences;
   while it is shorter, the best other sentences of the cited quotes join their quote's answer
   sentence with a semicolon (three at most); nothing takes it past ``MAX_WORDS`` (160). Every
   answer sentence is made of its quote's own sentences, so it shares all its content words
   with the quote it cites (seed 000's attribution check asks for two).
3. **Caution**: when no passage covers at least ``min_coverage`` of the question's key tokens
   (the relevance threshold: :func:`excerpt.compose.grounding.key_tokens`, the analyzer tokens
   without the words that only frame a question, weighted by idf when the engine gives weights;
   comparable across search modes, unlike raw scores), the answer opens with "Based on the
   available passages, the closest the text comes is:" (or its Korean counterpart) and still
   quotes the best candidates.
4. **Citations** map each n to its node: id, title, source and metadata (book, chapter,
   article …).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from excerpt.compose.grounding import key_tokens
from excerpt.compose.quotes import Quote, content_tokens, coverage, select_quotes
from excerpt.compose.sentences import split_sentences
from excerpt.types import Node

TARGET_WORDS = 100
MIN_WORDS = 80
MAX_WORDS = 160
MAX_SENTENCES = 4
MAX_FUSED = 3
MIN_COVERAGE = 0.5
MIN_ANSWER_TOKENS = 3
LENGTH_BONUS = 0.5
LONG_WORDS = 35
DEFAULT_MAX_QUOTES = 4
POOL_QUOTES = 8
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


def _words(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class _Sentence:
    text: str
    n: int  # the quote it comes from
    position: int
    words: int
    score: float


def _sentence_pool(quotes: Sequence[Quote], wanted: frozenset[str],
                   weights: Mapping[str, float] | None) -> list[_Sentence]:
    """Every sentence of the quotes that says something (MIN_ANSWER_TOKENS content tokens),
    scored by its weighted coverage of the question plus a bonus for length up to LONG_WORDS
    (the answer wants 2-4 sentences of about 100-140 words, so long sentences serve it best)."""
    pool = []
    for n, quote in enumerate(quotes, start=1):
        for i, text in enumerate(split_sentences(quote.text)):
            tokens = set(content_tokens(text))
            if len(tokens) < MIN_ANSWER_TOKENS:
                continue
            size = _words(text)
            length = min(size, LONG_WORDS) / LONG_WORDS
            score = coverage(wanted, tokens, weights) + LENGTH_BONUS * length
            pool.append(_Sentence(text, n, i, size, score))
    return sorted(pool, key=lambda s: (-s.score, s.n, s.position))


def _answer_sentences(pool: Sequence[_Sentence], max_quotes: int,
                      words: int = 0) -> list[_Sentence]:
    """Answer sentences, one per cited quote. First the best sentence of each quote, best first,
    while fewer than MAX_SENTENCES quotes (and ``max_quotes``) are cited; then, while the answer
    is under TARGET_WORDS, the best other sentences of the cited quotes join their quote's
    answer sentence (with a semicolon, MAX_FUSED at most). Never past MAX_WORDS; answer
    sentences come out in quote order. ``words``: already used (a preamble)."""
    groups: dict[int, list[_Sentence]] = {}
    used: set[str] = set()
    for sentence in pool:
        if len(groups) == min(MAX_SENTENCES, max_quotes) or (
                words >= TARGET_WORDS and len(groups) >= 2):
            break
        fits = not groups or words + sentence.words + 1 <= MAX_WORDS
        if sentence.n not in groups and sentence.text not in used and fits:
            groups[sentence.n] = [sentence]
            used.add(sentence.text)  # overlapping quotes share sentences: say each once
            words += sentence.words + 1  # and its [n] marker
    for sentence in pool:
        if words >= TARGET_WORDS:
            break
        group = groups.get(sentence.n)
        if (group is not None and sentence.text not in used and len(group) < MAX_FUSED
                and words + sentence.words <= MAX_WORDS):
            used.add(sentence.text)
            group.append(sentence)
            words += sentence.words
    return [_joined(groups[n]) for n in sorted(groups)]


def _joined(parts: list[_Sentence]) -> _Sentence:
    parts = sorted(parts, key=lambda s: s.position)
    text = "; ".join(p.text.rstrip(".!?。") for p in parts[:-1])
    text = f"{text}; {parts[-1].text}" if text else parts[-1].text
    return _Sentence(text, parts[0].n, parts[0].position, sum(p.words for p in parts),
                     max(p.score for p in parts))


def _listed(pool: Sequence[Quote], chosen: Sequence[_Sentence],
            max_quotes: int) -> tuple[list[Quote], dict[int, int]]:
    """The quotes to list: every cited one, then the best others up to ``max_quotes``, in pool
    order; and the map from pool numbers to listed numbers."""
    cited = {s.n for s in chosen}
    keep = [n for n in range(1, len(pool) + 1) if n in cited]
    keep += [n for n in range(1, len(pool) + 1) if n not in cited][: max_quotes - len(keep)]
    keep.sort()
    return [pool[n - 1] for n in keep], {old: new for new, old in enumerate(keep, start=1)}


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
    wanted = key_tokens(question)
    best = max((coverage(wanted, set(content_tokens(p.node.text)), weights) for p in passages),
               default=0.0)
    pool = select_quotes(question, [(p.node.id, p.node.text) for p in passages],
                         max(max_quotes, POOL_QUOTES), weights=weights, query_tokens=wanted)
    caution = CAUTION.get(language, CAUTION["en"])
    cautious = best < min_coverage or not pool
    chosen = _answer_sentences(_sentence_pool(pool, wanted, weights), max_quotes,
                               _words(caution) if cautious else 0)
    quotes, number = _listed(pool, chosen, max_quotes)
    sentences = [(s.text, number[s.n]) for s in chosen]
    parts = [f"{text} [{n}]" for text, n in sentences]
    if cautious and parts:
        parts[0] = f"{caution} {parts[0]}"
    elif not parts:
        parts = [NO_ANSWER.get(language, NO_ANSWER["en"])]
    return ComposedAnswer(" ".join(parts), cautious, quotes, _citations(quotes, passages),
                          sentences, best)
