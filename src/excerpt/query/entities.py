"""Entities in a query: article references, regulation names, keyword categories, topics.

Everything language-specific comes from the :class:`~excerpt.query.lexicon.Lexicon`. A keyword
or topic matches at the start of a word and only where a morpheme ends (Kiwi's analysis of the
query), and not before a noun-forming suffix (XSN): 신청을 and 신청하는 contain 신청,
방법론을 (방법 + 론/XSN) does not contain 방법; references and
regulation names match the lexicon's patterns.
Overlapping matches keep the longest (then the earliest). Confidence: 1.0 for a pattern match,
0.9 for a keyword at a word start followed by a particle, 1.0 when it is the whole word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from excerpt.query.lexicon import Lexicon

_WORD_START = r"(?<![가-힣A-Za-z0-9])"


class EntityType(StrEnum):
    SECTION = "section"
    PARAGRAPH = "paragraph"
    ITEM = "item"
    REGULATION = "regulation"
    PROCEDURE = "procedure"
    REQUIREMENT = "requirement"
    BENEFIT = "benefit"
    DEADLINE = "deadline"
    TOPIC = "topic"


@dataclass(frozen=True)
class Entity:
    text: str
    entity_type: EntityType
    start: int
    end: int
    confidence: float = 1.0
    expanded_terms: tuple[str, ...] = field(default=())
    hypernyms: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "type": self.entity_type.value,
                "confidence": self.confidence, "expanded_terms": list(self.expanded_terms),
                "hypernyms": list(self.hypernyms)}


class EntityRecognizer:
    """Finds the entities of one lexicon; built once, then cheap per query."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self._keywords = self._keyword_table(lexicon)
        words = sorted(self._keywords, key=len, reverse=True)
        self._keyword_re = (re.compile(_WORD_START + "(" + "|".join(map(re.escape, words)) + ")")
                            if words else None)

    @staticmethod
    def _keyword_table(lexicon: Lexicon) -> dict[str, tuple[EntityType, tuple[str, ...]]]:
        table: dict[str, tuple[EntityType, tuple[str, ...]]] = {}
        for topic in lexicon.topics:
            table[topic] = (EntityType.TOPIC, ())
        for category in lexicon.categories:
            kind = EntityType(category.name)
            for word in category.keywords:
                table[word] = (kind, category.expansions)
        return table

    def recognize(self, query: str) -> list[Entity]:
        found = self._pattern_matches(query) + self._keyword_matches(query)
        found.sort(key=lambda e: (e.start, -(e.end - e.start)))
        kept: list[Entity] = []
        for entity in found:
            if kept and entity.start < kept[-1].end:
                continue  # overlaps a longer or earlier match
            kept.append(entity)
        return kept

    def _pattern_matches(self, query: str) -> list[Entity]:
        out = []
        for name, pattern in self.lexicon.patterns.items():
            kind = EntityType(name if name != "paragraph" else "paragraph")
            for m in pattern.finditer(query):
                text = re.sub(r"\s+", "", m.group(0))
                out.append(Entity(text, kind, m.start(), m.end(), 1.0, (text,)))
        return out

    def _keyword_matches(self, query: str) -> list[Entity]:
        if self._keyword_re is None:
            return []
        out = []
        boundaries: set[int] | None = None
        for m in self._keyword_re.finditer(query):
            word = m.group(1)
            if m.end() < len(query) and query[m.end()].isalnum():
                boundaries = _morpheme_ends(query) if boundaries is None else boundaries
                if m.end() not in boundaries:
                    continue  # the keyword is only the start of a longer word
            kind, expansions = self._keywords[word]
            whole = m.end() == len(query) or not query[m.end()].isalnum()
            terms = tuple(dict.fromkeys((word, *expansions)))
            out.append(Entity(word, kind, m.start(), m.end(), 1.0 if whole else 0.9, terms,
                              tuple(self.lexicon.hypernym_chain(word))))
        return out


def _morpheme_ends(text: str) -> set[int]:
    """Offsets where Kiwi ends a morpheme of ``text`` that no noun-forming suffix continues."""
    from excerpt.analyze.korean_kiwi import kiwi_for

    tokens = kiwi_for(text).tokenize(text)
    ends = set()
    for token, after in zip(tokens, [*tokens[1:], None], strict=True):
        if after is None or after.tag != "XSN":
            ends.add(token.start + token.len)
    return ends
