"""Quotes: the sentences of the retrieved passages that best answer the query, kept diverse.

Every sentence of the ``passages`` (in rank order) starts a candidate; a sentence shorter than
``SHORT_WORDS`` words is extended over the sentences after it (at most ``MAX_JOINED`` in all)
until it is not, so a quote is a sentence or a short passage, always an exact span of the text.
A candidate's relevance is the share of the query's content tokens it contains (excerpt's
analyzer: Kiwi morphemes for Korean, stems for English), each token weighted by ``weights``
when given (the engine passes BM25 idf, so "influence" counts for more than "say"), plus a small
prior for the rank of its passage so that, between equally matching candidates, the better
passage wins. Candidates with fewer than
``MIN_TOKENS`` content tokens are skipped, and so are headings (never joined to their text):
lines that do not end as a sentence does (``.``, ``!``, ``?``, ``다``, ``요``, ``。``) and have
fewer than ``2 * MIN_TOKENS`` tokens, such as ``제6조의2(종류 및 선발방법)`` on a line of its own.

Selection is MMR-lite (Carbonell & Goldstein, SIGIR 1998, with a hard cut instead of the
trade-off): candidates are taken best first, and one whose token set overlaps an already chosen
quote by ``NEAR_DUPLICATE`` or more (Jaccard), or lies mostly inside it (``CONTAINED`` of the
smaller set: overlapping chunks repeat a sentence's tail), is passed over, so no two quotes say
the same thing. A unit that starts in the middle of a sentence (a lower-case letter: a chunk
boundary cut it) is not a quote.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from excerpt.analyze import analyze, detect_language
from excerpt.compose.sentences import sentence_spans

MIN_TOKENS = 3
NEAR_DUPLICATE = 0.6
CONTAINED = 0.8
RANK_PRIOR = 0.05
SHORT_WORDS = 20
MAX_JOINED = 3
SENTENCE_ENDINGS = (".", "!", "?", "다", "요", "。", ".>")

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


def _units(text: str) -> list[str]:
    """Each sentence, extended over the next ones while it is shorter than SHORT_WORDS words:
    always a span of ``text`` itself (its own characters, line breaks included)."""
    spans = sentence_spans(text)
    units = []
    for i, (start, end) in enumerate(spans):
        j = i
        if text[start:end].endswith(SENTENCE_ENDINGS):  # a heading is not joined to its text
            while (len(text[start:spans[j][1]].split()) < SHORT_WORDS and j + 1 < len(spans)
                   and j - i + 1 < MAX_JOINED):
                j += 1
        units.append(text[start:spans[j][1]])
    return units


def coverage(wanted: AbstractSet[str], tokens: AbstractSet[str],
             weights: Mapping[str, float] | None = None) -> float:
    """Share of the ``wanted`` tokens found in ``tokens``, each counted by its weight (1 when
    ``weights`` has none for it); 0 when nothing is wanted."""
    w = weights or {}
    total = sum(w.get(t, 1.0) for t in wanted)
    return sum(w.get(t, 1.0) for t in wanted & tokens) / total if total else 0.0


def _candidates(query_tokens: frozenset[str], passages: Sequence[tuple[str, str]],
                tokenize: Tokenize, weights: Mapping[str, float]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for rank, (node_id, text) in enumerate(passages):
        for unit in _units(text):
            tokens = frozenset(tokenize(unit))
            if not _quotable(unit, tokens):
                continue
            relevance = coverage(query_tokens, tokens, weights)
            score = relevance + RANK_PRIOR / (1 + rank)
            out.append(_Candidate(Quote(node_id, unit, relevance, rank), tokens, score))
    out.sort(key=lambda c: -c.score)  # stable: ties keep passage and sentence order
    return out


def _quotable(sentence: str, tokens: frozenset[str]) -> bool:
    if len(tokens) < MIN_TOKENS or sentence[0].islower():
        return False
    return sentence.endswith(SENTENCE_ENDINGS) or len(tokens) >= 2 * MIN_TOKENS


def _near_duplicate(a: frozenset[str], b: frozenset[str]) -> bool:
    shared = len(a & b)
    return shared >= NEAR_DUPLICATE * len(a | b) or shared >= CONTAINED * min(len(a), len(b))


def select_quotes(query: str, passages: Sequence[tuple[str, str]], max_quotes: int = 3,
                  tokenize: Tokenize = content_tokens,
                  weights: Mapping[str, float] | None = None,
                  query_tokens: frozenset[str] | None = None) -> list[Quote]:
    """Up to ``max_quotes`` diverse sentences from ``passages`` ((node id, text), best first)
    that best match ``query``; fewer when the passages hold fewer usable sentences.
    ``weights``: token -> weight (default 1 each); ``query_tokens``: the query's tokens when
    the caller has chosen them (default: ``tokenize(query)``)."""
    if max_quotes < 1:
        raise ValueError("max_quotes must be at least 1")
    chosen: list[_Candidate] = []
    wanted = query_tokens if query_tokens is not None else frozenset(tokenize(query))
    for cand in _candidates(wanted, passages, tokenize, weights or {}):
        if not any(_near_duplicate(cand.tokens, c.tokens) for c in chosen):
            chosen.append(cand)
            if len(chosen) == max_quotes:
                break
    return [c.quote for c in chosen]


def extractive_answer(quotes: Sequence[Quote]) -> str:
    """The quotes as one answer, each followed by its [n] marker (n = position in ``quotes``)."""
    return " ".join(f"{q.text} [{n}]" for n, q in enumerate(quotes, start=1))
