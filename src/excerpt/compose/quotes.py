"""Quotes: the sentences of the retrieved passages that best answer the query, kept diverse.

Every sentence of the first ``passages`` (in rank order) is a candidate. Its relevance is the
share of the query's distinct content tokens it contains (excerpt's analyzer: Kiwi morphemes for
Korean, stems for English), plus a small prior for the rank of its passage so that, between
equally matching sentences, the better passage wins. Sentences with fewer than ``MIN_TOKENS``
content tokens are skipped, and so are headings: lines that do not end as a sentence does
(``.``, ``!``, ``?``, ``다``, ``요``, ``。``) and have fewer than ``2 * MIN_TOKENS`` tokens, such as
``제6조의2(종류 및 선발방법)`` on a line of its own.

Selection is MMR-lite (Carbonell & Goldstein, SIGIR 1998, with a hard cut instead of the
trade-off): candidates are taken best first, and one whose token set overlaps an already chosen
quote by ``NEAR_DUPLICATE`` or more (Jaccard) is passed over, so no two quotes say the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from excerpt.analyze import analyze, detect_language
from excerpt.compose.sentences import split_sentences

MIN_TOKENS = 3
NEAR_DUPLICATE = 0.6
RANK_PRIOR = 0.05
SENTENCE_ENDINGS = (".", "!", "?", "다", "요", "。")

Tokenize = Callable[[str], list[str]]


def content_tokens(text: str) -> list[str]:
    """excerpt's BM25 tokens of ``text`` in its detected language."""
    return analyze(text, detect_language(text))


@dataclass(frozen=True)
class Quote:
    """One sentence of a retrieved passage, with why it was chosen."""

    node_id: str
    text: str
    relevance: float
    passage_rank: int

    def to_json(self) -> dict[str, object]:
        return {"id": self.node_id, "text": self.text, "relevance": round(self.relevance, 4),
                "passage_rank": self.passage_rank}


@dataclass(frozen=True)
class _Candidate:
    quote: Quote
    tokens: frozenset[str]
    score: float


def _candidates(query_tokens: frozenset[str], passages: Sequence[tuple[str, str]],
                tokenize: Tokenize) -> list[_Candidate]:
    out: list[_Candidate] = []
    for rank, (node_id, text) in enumerate(passages):
        for sentence in split_sentences(text):
            tokens = frozenset(tokenize(sentence))
            if not _quotable(sentence, tokens):
                continue
            relevance = len(tokens & query_tokens) / len(query_tokens) if query_tokens else 0.0
            score = relevance + RANK_PRIOR / (1 + rank)
            out.append(_Candidate(Quote(node_id, sentence, relevance, rank), tokens, score))
    out.sort(key=lambda c: -c.score)  # stable: ties keep passage and sentence order
    return out


def _quotable(sentence: str, tokens: frozenset[str]) -> bool:
    if len(tokens) < MIN_TOKENS:
        return False
    return sentence.endswith(SENTENCE_ENDINGS) or len(tokens) >= 2 * MIN_TOKENS


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def select_quotes(query: str, passages: Sequence[tuple[str, str]], max_quotes: int = 3,
                  tokenize: Tokenize = content_tokens) -> list[Quote]:
    """Up to ``max_quotes`` diverse sentences from ``passages`` ((node id, text), best first)
    that best match ``query``; fewer when the passages hold fewer usable sentences."""
    if max_quotes < 1:
        raise ValueError("max_quotes must be at least 1")
    chosen: list[_Candidate] = []
    for cand in _candidates(frozenset(tokenize(query)), passages, tokenize):
        if all(_jaccard(cand.tokens, c.tokens) < NEAR_DUPLICATE for c in chosen):
            chosen.append(cand)
            if len(chosen) == max_quotes:
                break
    return [c.quote for c in chosen]


def extractive_answer(quotes: Sequence[Quote]) -> str:
    """The quotes as one answer, each followed by its [n] marker (n = position in ``quotes``)."""
    return " ".join(f"{q.text} [{n}]" for n, q in enumerate(quotes, start=1))
