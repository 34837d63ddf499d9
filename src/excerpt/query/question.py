"""A question read once: its language, its analyser tokens and, when it is searched, its query
plan (entities, expansion, plain-word terms, adaptive k) and BM25 weights.

An ask used to detect its question's language about ten times and analyse it about five (the
grounding, the search of the question, the composer's shape, key tokens and idf weights each
started from the text). A :class:`Question` is read once per ask, or per plain search, and
every stage reads it instead; a stage that needs a derived text (a concept, the question
without its framing words) still analyses that text, which is another text.

Each reading is computed the first time a stage asks for it and then kept, so a stage that
needs none of it pays nothing, and the order in which work happens does not change: an ask
grounds its question (loading the whole of Kiwi for a Korean one) before anything analyses it,
as it did before it read the question once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from excerpt.analyze import analyze, detect_language, foresee
from excerpt.query.understand import QueryPlan, terms_to_add, understand

EXPANSION_WEIGHT = 0.5
"""The BM25 weight of an expansion term when the caller gives none (the setting's default)."""


@dataclass(frozen=True)
class Question:
    """A question or query as every stage reads it: ``language`` at once; ``tokens``, ``plan``
    and ``weights`` when first read, then kept (an ask whose question BM25 searches without
    its framing words never pays for the question's own plan)."""

    text: str
    language: str
    lexicon: str = field(default="", repr=False)
    """The query lexicon's path ('' = the packaged one): what the plan reads."""
    expansion_weight: float = field(default=EXPANSION_WEIGHT, repr=False)

    @classmethod
    def read(cls, text: str, lexicon: str = "",
             expansion_weight: float = EXPANSION_WEIGHT) -> Question:
        """``text`` as a question, its language detected (once)."""
        return cls(text, detect_language(text), lexicon, expansion_weight)

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        """The analyser's tokens. The terms the lexicon may add are foreseen first
        (analyze.foresee: in Korean the light Kiwi is built ready for them, so analysing them
        after the question does not rebuild it)."""
        foresee(terms_to_add(self.language, self.lexicon), self.language)
        return tuple(analyze(self.text, self.language))

    @cached_property
    def plan(self) -> QueryPlan:
        """Entities, expansion, plain-word terms and adaptive k (query/understand.py)."""
        return understand(self.text, self.language, self.lexicon, self.tokens)

    @cached_property
    def weights(self) -> Mapping[str, float]:
        """BM25 query weights: the tokens, then the plan's added terms at their weights
        (shared by every search of this question: read, never changed)."""
        return self.plan.weights(self.tokens, lambda term: analyze(term, self.language),
                                 self.expansion_weight)
