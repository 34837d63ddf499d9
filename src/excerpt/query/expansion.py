"""Multi-stage query expansion (seed 001, TAG-002).

Stage 1, synonyms: for each keyword or topic entity (in query order), its lexicon synonyms;
  at most 3 in total.
Stage 2, hypernyms: the parents of those entities (nearest first); at most 2.
Stage 3, procedure terms: when the query asks for a procedure, the lexicon's procedure terms;
  at most 2.
Terms already in the query, or already added, are not added again. The expanded query is the
original followed by the new terms; when it would exceed ``MAX_WORDS`` (10) words, the terms
are taken by relevance until the query has at most ``TRIMMED_WORDS`` (7) words, never cutting
the original query itself. Relevance: each stage's list is ordered best first, and the stages
take turns (the best synonym, the best procedure term, the best hypernym, then the second of
each), so a trimmed query keeps one term of every kind before a second of any.

A formal query, one that names a regulation and an article (교원인사규정 제15조), is not expanded
and has confidence 1.0. Otherwise confidence is the mean confidence of the entities found
(0.0 when there are none: then nothing is expanded either).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from excerpt.query.entities import Entity, EntityRecognizer, EntityType

MAX_SYNONYMS, MAX_HYPERNYMS, MAX_PROCEDURE_TERMS = 3, 2, 2
MAX_WORDS, TRIMMED_WORDS = 10, 7
KEYWORD_TYPES = {EntityType.PROCEDURE, EntityType.REQUIREMENT, EntityType.BENEFIT,
                 EntityType.DEADLINE, EntityType.TOPIC}


@dataclass
class Expansion:
    original_query: str
    entities: list[Entity] = field(default_factory=list)
    stage1_synonyms: list[str] = field(default_factory=list)
    stage2_hypernyms: list[str] = field(default_factory=list)
    stage3_procedures: list[str] = field(default_factory=list)
    final_expanded: str = ""
    confidence: float = 0.0
    formal: bool = False

    @property
    def added_terms(self) -> list[str]:
        """The terms that made it into ``final_expanded`` (after trimming)."""
        return [t for t in self.stage1_synonyms + self.stage2_hypernyms + self.stage3_procedures
                if t in self._kept]

    _kept: set[str] = field(default_factory=set, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"stage1_synonyms": self.stage1_synonyms,
                "stage2_hypernyms": self.stage2_hypernyms,
                "stage3_procedures": self.stage3_procedures,
                "final_expanded": self.final_expanded, "confidence": self.confidence,
                "formal": self.formal}


class MultiStageExpander:
    def __init__(self, recognizer: EntityRecognizer) -> None:
        self.recognizer = recognizer
        self.lexicon = recognizer.lexicon

    def expand(self, query: str, entities: list[Entity] | None = None) -> Expansion:
        entities = self.recognizer.recognize(query) if entities is None else entities
        out = Expansion(query, entities, final_expanded=query)
        kinds = {e.entity_type for e in entities}
        if EntityType.REGULATION in kinds and EntityType.SECTION in kinds:
            out.formal, out.confidence = True, 1.0
            return out
        keywords = [e for e in entities if e.entity_type in KEYWORD_TYPES]
        if not keywords:
            return out
        out.confidence = round(sum(e.confidence for e in entities) / len(entities), 3)
        seen = set(query.split())
        out.stage1_synonyms = self._take(
            (s for e in keywords for s in self.lexicon.synonyms.get(e.text, ())), seen,
            MAX_SYNONYMS)
        out.stage2_hypernyms = self._take(
            (h for e in keywords for h in e.hypernyms), seen, MAX_HYPERNYMS)
        if EntityType.PROCEDURE in kinds:
            out.stage3_procedures = self._take(iter(self.lexicon.procedure_terms), seen,
                                               MAX_PROCEDURE_TERMS)
        self._finish(out)
        return out

    @staticmethod
    def _take(candidates: Any, seen: set[str], limit: int) -> list[str]:
        taken: list[str] = []
        for term in candidates:
            if len(taken) == limit:
                break
            if term not in seen:
                seen.add(term)
                taken.append(term)
        return taken

    @staticmethod
    def _finish(out: Expansion) -> None:
        stages = [out.stage1_synonyms, out.stage3_procedures, out.stage2_hypernyms]
        terms = [s[i] for i in range(max(map(len, stages))) for s in stages if i < len(s)]
        words = len(out.original_query.split())
        if words + sum(len(t.split()) for t in terms) > MAX_WORDS:
            kept = []
            for term in terms:
                if words + len(term.split()) > TRIMMED_WORDS:
                    continue  # a shorter term further down may still fit
                kept.append(term)
                words += len(term.split())
            terms = kept
        out._kept = set(terms)
        out.final_expanded = " ".join([out.original_query, *terms])
