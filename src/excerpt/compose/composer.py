"""Extractive composition (seed 000, issue 16): an answer made of the source's own sentences,
each followed by the number of the passage it comes from, the quotes and the citations.

1. **Sentences** (:mod:`excerpt.compose.extract`): the passages' sentences scored against the
   question (semantic similarity in the collection's embedder, idf-weighted coverage, the
   question's focus and type), chosen with MMR and put in reading order; the first one is the
   best answer.
2. **The answer** is those sentences, each followed by its marker ``[n]``. A sentence is
   shown on one line (the runs of white space of a hard-wrapped text made one space: display
   only); otherwise it is the stored text's, end punctuation included. Nothing is joined,
   shortened or reworded.
3. **Numbers and citations**: one number per node, in order of first appearance in the answer
   (1..n, no gaps); several sentences of one node share its number. Every citation listed is
   cited, and no node has two numbers; a bracketed number of the source's own (a footnote
   reference, "created.[9]") is written "[^9]" in the answer, so it never reads as one.
4. **Quotes**: one per cited node, numbered as its citation: the exact span of the node's
   stored text from its first cited sentence to its last (``quote.text in node.text``).
5. **Caution**: ``confidence`` (the opening sentence's content match,
   :func:`excerpt.compose.extract.confidence`) below ``min_confidence`` (calibrated on the
   tune half of the QA set; ``bench/qa.py``) makes the answer open with "Based on the
   available passages, they do not answer this directly; the closest the text comes is:" (or
   its Korean counterpart); the best candidates are still given and listed. So does a question
   whose focus (a name it gives, the thing a "what is" asks about) the collection never holds
   ("Who excavated Troy at Hisarlik?" over the Iliad: no node says Hisarlik), whatever the
   score of sentences that share its other words. A view embedded by a model too slow to
   rank sentences by (e5: :class:`excerpt.compose.extract.SlowEmbed`) has the opening
   sentence embedded only when its lexical confidence is under ``min_confidence``: the
   larger of the two (:func:`excerpt.compose.extract.confidence`) can then decide.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from excerpt.compose.extract import (
    Embed,
    Sentence,
    SlowEmbed,
    candidates,
    confidence,
    opener,
    reading_order,
    score,
    slow_similarity,
)
from excerpt.compose.extract import select as select_sentences
from excerpt.compose.grounding import key_tokens
from excerpt.compose.question import shape
from excerpt.compose.quotes import Quote
from excerpt.compose.sentences import one_line
from excerpt.query.question import Question
from excerpt.types import Hit

# calibrated on the tune half of bench/qa/books.yaml, BM25 and hybrid pooled (bench/ask.py
# --calibrate): balanced abstention accuracy 0.79 on tune, 0.77 on heldout
MIN_CONFIDENCE = 0.42
DEFAULT_MAX_QUOTES = 4
NO_ANSWER = {
    "en": "The available passages do not answer this question.",
    "ko": "제공된 문서에서 이 질문에 대한 답을 찾지 못했습니다.",
}
CAUTION = {
    "en": "Based on the available passages, they do not answer this directly; the closest the "
          "text comes is:",
    "ko": "제공된 문서로는 이 질문에 바로 답할 수 없으며, 가장 가까운 내용은 다음과 같습니다:",
}


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
    sentences: list[tuple[str, int]] = field(default_factory=list)  # (text, citation n)
    confidence: float = 0.0
    features: dict[str, float] = field(default_factory=dict)  # the best sentence's

    def quotes_json(self) -> list[dict[str, Any]]:
        by_id = {c.node_id: c for c in self.citations}
        return [{"n": n, "id": q.node_id, "text": q.text, "score": round(q.relevance, 4),
                 "metadata": by_id[q.node_id].metadata}
                for n, q in enumerate(self.quotes, start=1)]


def _numbers(ordered: Sequence[Sentence]) -> dict[str, int]:
    """One number per node, in order of first appearance: 1..n without gaps."""
    numbers: dict[str, int] = {}
    for sentence in ordered:
        numbers.setdefault(sentence.node.id, len(numbers) + 1)
    return numbers


def _quotes(ordered: Sequence[Sentence], numbers: Mapping[str, int]) -> list[Quote]:
    """One quote per cited node, in number order: its stored text from the first cited
    sentence to the last (an exact substring of the node)."""
    quotes = []
    for node_id in numbers:
        group = [s for s in ordered if s.node.id == node_id]
        start, end = min(s.start for s in group), max(s.end for s in group)
        quotes.append(Quote(node_id, group[0].node.text[start:end],
                            max(s.score for s in group), group[0].rank))
    return quotes


def _citations(ordered: Sequence[Sentence], numbers: Mapping[str, int]) -> list[Citation]:
    nodes = {s.node.id: s.node for s in ordered}
    return [Citation(n, node_id, nodes[node_id].title, nodes[node_id].source,
                     dict(nodes[node_id].metadata)) for node_id, n in numbers.items()]


_SOURCE_MARK = re.compile(r"\[(\d+)\]")


def as_said(sentence: Sentence) -> str:
    """A quoted sentence as the answer says it: on one line, and a bracketed number of the
    source's own (a footnote reference, "created.[9]") written "[^9]", so that no number in
    the answer but excerpt's own [n] reads as a citation (the quote stays verbatim)."""
    return _SOURCE_MARK.sub(r"[^\1]", one_line(sentence.text))


def _moving_on(ranked: list[Sentence], said: str, min_confidence: float) -> list[Sentence]:
    """``ranked`` without the sentences of ``said`` (the previous answer, which quotes whole
    sentences) when what is left still answers confidently: a follow-up ("And who kills him
    in revenge?") then says something new instead of the answer just given; when only the
    repeated sentences answer well, they are kept (a question asked again gets its answer)."""
    if not said:
        return ranked
    fresh = [s for s in ranked if as_said(s) not in said]
    first = opener(fresh)
    if first and len(fresh) < len(ranked) and confidence(first.features) >= min_confidence:
        return fresh
    return ranked


def compose(question: str | Question, passages: Sequence[Hit], language: str = "en",
            max_quotes: int = DEFAULT_MAX_QUOTES, min_confidence: float = MIN_CONFIDENCE,
            weights: Mapping[str, float] | None = None,
            embed: Embed | None = None, said: str = "",
            absent: frozenset[str] = frozenset()) -> ComposedAnswer:
    """The extractive answer to ``question`` from ``passages`` (best first); see the module.
    ``weights`` (token -> idf) weigh the question's tokens; ``embed`` gives sentence vectors
    in the collection's embedder (None: lexical features only); ``max_quotes``: most passages
    cited; ``said``: the answer a conversation just gave (its sentences give way, see
    :func:`_moving_on`); ``absent``: the question's tokens the collection never holds (an
    answer to a question about one of them is cautious, see the module docstring, 5).
    ``question``: a text, or the question an ask has read (its language and tokens are not
    worked out again)."""
    if max_quotes < 1:
        raise ValueError("max_quotes must be at least 1")
    read = question if isinstance(question, Question) else Question.read(question)
    asked = shape(read.text, read.language)
    wanted = key_tokens(read.text, read.language, read.tokens)
    ranked = score(candidates([p.node for p in passages]), read.text, wanted, asked, weights,
                   embed)
    ranked = _moving_on(ranked, said, min_confidence)
    first = opener(ranked)
    best = confidence(first.features) if first else 0.0
    if first and isinstance(embed, SlowEmbed) and best < min_confidence:
        slow_similarity(embed, first)  # only when it can decide (module docstring, 5)
        best = confidence(first.features)
    cautious = best < min_confidence or bool(asked.focus & absent)
    caution = CAUTION.get(language, CAUTION["en"])
    chosen = select_sentences(ranked, max_quotes, len(caution.split()) if cautious else 0)
    ordered = reading_order(chosen)
    numbers = _numbers(ordered)
    sentences = [(as_said(s), numbers[s.node.id]) for s in ordered]
    parts = [f"{text} [{n}]" for text, n in sentences]
    if cautious and parts:
        parts[0] = f"{caution} {parts[0]}"
    elif not parts:
        parts = [NO_ANSWER.get(language, NO_ANSWER["en"])]
    features = dict(first.features) if first else {}
    return ComposedAnswer(" ".join(parts), cautious, _quotes(ordered, numbers),
                          _citations(ordered, numbers), sentences, best, features)
