"""LLM synthesis over the quotes, checked sentence by sentence against them (optional).

The model gets the same quotes the extractive answer would show, numbered ``[1]..[n]`` in their
order, and is asked for 2-4 sentences that each end with the numbers of the quotes they rest on.
Nothing it writes is trusted: its output is split into sentences (``compose.sentences``; a
marker written after the full stop, ``"… holds. [1]"``, is moved back onto its sentence first),
and a sentence is kept only if

1. it carries at least one marker (``[2]``, ``[1][3]``, ``[1, 3]``, ``[1-3]``),
2. every number it cites is one of the quotes (``[9]`` of three quotes is an invented source:
   the whole sentence goes, not only the marker), and
3. it shares at least ``MIN_SHARED`` distinct content tokens (excerpt's analyzer, each text in
   its detected language, stopwords removed) with at least one of the quotes it cites.

Dropped sentences are reported with the reason (``"no citation"``, ``"cites unknown [7]"``,
``"shares < 2 content words with [2]"``). Kept sentences are rewritten canonically, as the
extractive answer writes them: the sentence, a space, its markers (``"… holds. [1][3]"``).
When nothing survives (or there were no quotes, in which case the model is not called), the
answer is empty and the caller shows the extractive answer instead. Errors of the endpoint
(``ServiceError``) reach the caller, which falls back the same way.

``extract_concepts`` asks the model for a question's key concepts; any failure gives ``[]`` so
that the caller uses the offline concepts.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from excerpt.compose.quotes import Quote, content_tokens
from excerpt.compose.sentences import split_sentences
from excerpt.errors import ServiceError

__all__ = ["CONCEPTS_PROMPT", "MAX_CONCEPTS", "MIN_SHARED", "SYSTEM_PROMPT", "ChatClient",
           "DroppedSentence", "KeptSentence", "Synthesis", "build_messages", "check_attribution",
           "extract_concepts", "synthesize"]

log = logging.getLogger(__name__)

MIN_SHARED = 2
MAX_CONCEPTS = 5
_LANGUAGE_NAMES = {"en": "English", "ko": "Korean"}

_NUMBERS = r"\d+(?:\s*(?:[,\-–]|and)\s*\d+)*"
_MARKER = re.compile(rf"\[\s*({_NUMBERS})\s*\]")
# One or more markers right after a sentence's end, so the splitter gives them to that sentence.
_TRAILING_MARKERS = re.compile(rf"([.!?。])((?:\s*\[\s*{_NUMBERS}\s*\])+)")
_LIST_PREFIX = re.compile(r"^(?:[-*•·]\s+|\d+[.)]\s+)")
_CONCEPT_TRIM = re.compile(r"^(?:[-*•·]\s*|\d+[.)]\s*)|[\"'“”‘’`.,;:。]+$|^[\"'“”‘’`]+")

SYSTEM_PROMPT = """\
You answer a question using only the numbered quotes you are given.
Rules:
- Answer in 2 to 4 sentences, written in {language}.
- Use only what the quotes say. Add no outside knowledge, no guesses, no advice.
- End every sentence with the numbers of the quotes it rests on, in square brackets, like \
"... sentence. [1]" or "... sentence. [1][3]".
- Every sentence needs at least one number; cite only numbers that appear in the quotes.
- Stay close to the quotes' own words.
- If the quotes do not answer the question, say so cautiously in one sentence that names what \
the closest quote does say, with its number.
- Write plain sentences: no lists, no headings, no preamble."""

CONCEPTS_PROMPT = """\
List the key concepts of the question below: at most {limit}, one per line, each a short noun \
phrase in the question's own language and words. Write nothing else: no numbering, no \
explanation.

Question: {question}"""


class ChatClient(Protocol):
    """What synthesis needs of a client: ``LLMClient`` or a fake."""

    @property
    def model(self) -> str: ...

    def chat(self, messages: list[dict[str, str]]) -> str: ...


@dataclass(frozen=True)
class KeptSentence:
    """A sentence of the model's answer that the quotes support."""

    text: str                        # canonical: the sentence, then its markers
    cites: tuple[int, ...]           # every quote number it cites (1-based)
    supported_by: tuple[int, ...]    # the cited quotes it shares >= MIN_SHARED tokens with

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "cites": list(self.cites),
                "supported_by": list(self.supported_by)}


@dataclass(frozen=True)
class DroppedSentence:
    """A sentence of the model's answer that failed the attribution check, and why."""

    text: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "reason": self.reason}


@dataclass(frozen=True)
class Synthesis:
    """The checked answer; ``answer`` is empty when nothing survived (show the extractive one)."""

    answer: str
    kept: tuple[KeptSentence, ...]
    dropped: tuple[DroppedSentence, ...]
    raw: str
    model: str

    def to_json(self) -> dict[str, object]:
        return {"answer": self.answer, "model": self.model,
                "kept": [k.to_json() for k in self.kept],
                "dropped": [d.to_json() for d in self.dropped], "raw": self.raw}


def build_messages(question: str, quotes: Sequence[Quote], language: str) -> list[dict[str, str]]:
    """The chat messages: the rules as the system message, the quotes and question as the user's."""
    name = _LANGUAGE_NAMES.get(language, "the language of the question")
    numbered = "\n".join(f"[{n}] {_one_line(q.text)}" for n, q in enumerate(quotes, start=1))
    return [{"role": "system", "content": SYSTEM_PROMPT.format(language=name)},
            {"role": "user", "content": f"Quotes:\n{numbered}\n\nQuestion: {_one_line(question)}"}]


def synthesize(question: str, quotes: Sequence[Quote], client: ChatClient,
               language: str) -> Synthesis:
    """The model's answer to ``question`` from ``quotes``, keeping only the sentences that cite
    and share words with them. Raises ``ServiceError`` when the endpoint fails."""
    if not quotes:
        return Synthesis("", (), (), "", client.model)
    raw = client.chat(build_messages(question, quotes, language))
    kept, dropped = check_attribution(raw, quotes)
    return Synthesis(" ".join(k.text for k in kept), tuple(kept), tuple(dropped), raw,
                     client.model)


def check_attribution(text: str, quotes: Sequence[Quote]) -> tuple[list[KeptSentence],
                                                                   list[DroppedSentence]]:
    """Split ``text`` into sentences and sort them into kept and dropped (module docstring)."""
    quote_tokens = [frozenset(content_tokens(q.text)) for q in quotes]
    kept: list[KeptSentence] = []
    dropped: list[DroppedSentence] = []
    for sentence in split_sentences(_attach_trailing_markers(text)):
        sentence = _LIST_PREFIX.sub("", sentence)
        cites = _cited_numbers(sentence)
        claim = " ".join(_MARKER.sub(" ", sentence).split())
        claim = re.sub(r"\s+([.!?。,;:])", r"\1", claim)
        if not cites:
            dropped.append(DroppedSentence(sentence, "no citation"))
            continue
        unknown = [n for n in cites if not 1 <= n <= len(quotes)]
        if unknown:
            dropped.append(DroppedSentence(sentence, f"cites unknown {_markers(unknown)}"))
            continue
        tokens = frozenset(content_tokens(claim)) if claim else frozenset()
        support = tuple(n for n in cites if len(tokens & quote_tokens[n - 1]) >= MIN_SHARED)
        if not support:
            reason = f"shares < {MIN_SHARED} content words with {_markers(cites)}"
            dropped.append(DroppedSentence(sentence, reason))
            continue
        kept.append(KeptSentence(f"{claim} {_markers(cites)}", cites, support))
    return kept, dropped


def extract_concepts(question: str, client: ChatClient) -> list[str]:
    """Up to ``MAX_CONCEPTS`` concepts of ``question`` from the model, one per line, stripped
    and deduplicated; ``[]`` when the model fails or says nothing usable."""
    prompt = CONCEPTS_PROMPT.format(limit=MAX_CONCEPTS, question=_one_line(question))
    try:
        raw = client.chat([{"role": "user", "content": prompt}])
    except ServiceError as exc:
        log.warning("LLM concept extraction failed, using the offline concepts: %s", exc)
        return []
    concepts: list[str] = []
    seen: set[str] = set()
    for line in raw.splitlines():
        concept = _CONCEPT_TRIM.sub("", line.strip()).strip()
        # a preamble ("Concepts:") or a sentence of chatter is not a concept
        if not concept or line.rstrip().endswith(":") or len(concept) > 60:
            continue
        key = concept.casefold()
        if key not in seen:
            seen.add(key)
            concepts.append(concept)
            if len(concepts) == MAX_CONCEPTS:
                break
    return concepts


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _attach_trailing_markers(text: str) -> str:
    """``"A holds. [1] B."`` -> ``"A holds [1]. B."``: the splitter cuts after the full stop."""
    return _TRAILING_MARKERS.sub(lambda m: " " + " ".join(m.group(2).split()) + m.group(1), text)


def _cited_numbers(sentence: str) -> tuple[int, ...]:
    """The distinct quote numbers cited in ``sentence``, in order of first appearance."""
    numbers: list[int] = []
    for match in _MARKER.finditer(sentence):
        for part in re.split(r"\s*(?:,|and)\s*", match.group(1)):
            bounds = [int(x) for x in re.split(r"\s*[\-–]\s*", part)]
            low, high = bounds[0], bounds[-1]
            span: Sequence[int] = range(low, high + 1) if 0 <= high - low <= 20 else bounds
            for n in span:
                if n not in numbers:
                    numbers.append(n)
    return tuple(numbers)


def _markers(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)
