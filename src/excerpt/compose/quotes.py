"""What the composers share: a quote (a span of a node's text, with its relevance), the
tokens a sentence is matched on, and the coverage of a question's tokens.

Tokens are excerpt's analyzer's (Kiwi morphemes for Korean, stems for English), so a sentence
and the question match as a passage and a query do in BM25. Coverage weighs each token
(:func:`coverage`: the engine passes BM25 idf, so "influence" counts for more than "say").
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from excerpt.analyze import analyze, detect_language

SENTENCE_ENDINGS = (".", "!", "?", "다", "요", "。", ".>")


def content_tokens(text: str) -> list[str]:
    """excerpt's BM25 tokens of ``text`` in its detected language."""
    return analyze(text, detect_language(text))


@dataclass(frozen=True)
class Quote:
    """An exact span of a passage's stored text, with why it was chosen."""

    node_id: str
    text: str
    relevance: float
    passage_rank: int

    def to_json(self) -> dict[str, object]:
        return {"id": self.node_id, "text": self.text, "relevance": round(self.relevance, 4),
                "passage_rank": self.passage_rank}


def coverage(wanted: AbstractSet[str], tokens: AbstractSet[str],
             weights: Mapping[str, float] | None = None) -> float:
    """Share of the ``wanted`` tokens found in ``tokens``, each counted by its weight (1 when
    ``weights`` has none for it); 0 when nothing is wanted."""
    w = weights or {}
    total = sum(w.get(t, 1.0) for t in wanted)
    return sum(w.get(t, 1.0) for t in wanted & tokens) / total if total else 0.0
