"""Follow-up questions: resolve a pronoun or an ellipsis from the conversation before retrieval.

Offline and deterministic, from the previous user question (the last one in the recent turns):

* **Pronouns** (English he/she/him/her/his -> the previous question's first named concept, a
  capitalised phrase such as ``Lord Henry``; it/its/this/that/they/them/their -> its first
  other concept; Korean 그/그녀/그분 and 그것/이것/거기 …, alone or with a particle, likewise)
  are replaced by that concept.
* **Ellipsis**: a question of one or two words, or one that starts "what about", "how about",
  "and", "그럼", "그리고"…, keeps the previous question and swaps its last concept for the
  question's last one: after "What does Lord Henry say about influence?", "What about youth?"
  becomes "What does Lord Henry say about youth?".
* Anything else stands as asked. With no previous question, nothing changes. The words lists
  are in ``data/followup_words.yaml`` so another language or style can be added without code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from excerpt.compose.grounding import concepts


@dataclass(frozen=True)
class Resolution:
    question: str
    resolved: str
    reason: str  # "pronoun", "ellipsis" or "" (unchanged)
    previous: str | None


@cache
def _words() -> dict[str, Any]:
    import yaml

    text = resources.files("excerpt.compose").joinpath("data/followup_words.yaml")
    data: dict[str, Any] = yaml.safe_load(text.read_text("utf-8"))
    return data


def _alternatives(words: Sequence[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def _pronoun_pattern(words: Sequence[str], korean: bool) -> re.Pattern[str]:
    if korean:  # a whole word, or one followed by a particle (그것은, 그녀의), never 그럼
        particles = _alternatives(_words()["particles_ko"])
        return re.compile(rf"(?<![가-힣])(?:{_alternatives(words)})"
                          rf"(?=(?:{particles})?(?:\s|$|[?.!,]))")
    return re.compile(rf"\b(?:{_alternatives(words)})\b", re.IGNORECASE)


def _named(found: Sequence[str]) -> str | None:
    return next((c for c in found if c[:1].isupper()), None)


def _replace_pronoun(question: str, previous: Sequence[str]) -> str | None:
    words = _words()
    person = _named(previous) or previous[0]
    thing = next((c for c in previous if c != person), previous[0])
    out = question
    for key, target in (("person_en", person), ("thing_en", thing), ("thing_ko", thing),
                        ("person_ko", person)):
        pattern = _pronoun_pattern(words[key], key.endswith("_ko"))
        out = pattern.sub(target, out)
    return out if out != question else None


def _elliptical(question: str) -> bool:
    lowered = question.strip().lower()
    short = len(lowered.split()) <= 2
    return short or any(lowered.startswith(w) for w in _words()["ellipsis_starts"])


def resolve(question: str, recent: Sequence[tuple[str, str]]) -> Resolution:
    """``recent``: (speaker, text) of the conversation's recent turns, oldest first."""
    previous = next((text for speaker, text in reversed(recent) if speaker == "user"), None)
    if previous is None:
        return Resolution(question, question, "", None)
    before, now = concepts(previous), concepts(question)
    if (replaced := _replace_pronoun(question, before)) is not None:
        return Resolution(question, replaced, "pronoun", previous)
    if _elliptical(question) and before and now and now[-1] not in before:
        swapped = previous.replace(before[-1], now[-1], 1)
        if swapped != previous:
            return Resolution(question, swapped, "ellipsis", previous)
    return Resolution(question, question, "", previous)
