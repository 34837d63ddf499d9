"""Korean text: Kiwi morphemes, keeping content words, article references and Latin words.

* Kept as they are: nouns (NNG, NNP, NR), roots (XR) and verb/adjective stems (VV, VA,
  including Kiwi's irregular ``-I``/regular ``-R`` variants: 아름다운 → 아름답).
* Article references stay one token without spaces: 제15조, 제15조의2, 제3항, 제2호, 제1장, 제4절
  (and 관, 편).  Kiwi would cut them into 제/XPN 15/SN 조/NNB, so they are handed to Kiwi
  pretokenized.
* A run of touching non-Hangul morphemes (Latin, digits, hanja, ``_``, ``.``: Kiwi cuts
  ``proc_SearchShipments_BM25`` into five) goes, as the original text it covers, through the
  English pipeline, so ``BM25``, ``Scholarship`` or ``學則`` in a Korean text gives the same
  tokens as in a text without Hangul.
* A regulation name written as one word (교원인사규정, 학생상벌에관한규정) also gives the whole
  word after its parts, so the exact name outranks documents that merely mention 교원, 인사 and
  규정: when a noun ends in a name suffix (규정, 세칙, 학칙 …), the Hangul run it closes (back to
  the previous space or symbol, particles inside included) is added if it is longer than the
  noun.
* Everything else is dropped: particles (J*), endings (E*), affixes (XP*, XS*), bound nouns
  (NNB), copulas, auxiliaries, adverbs, determiners.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from excerpt.analyze.english import analyze_english
from excerpt.analyze.korean_kiwi import kiwi, kiwi_for

__all__ = ["REFERENCE", "analyze_korean", "analyze_korean_many", "kiwi"]

_UNITS = "조항호장절관편"

# 제 must not sit inside a Hangul word (경제 3항), except right after another reference
# (제14조제3항).  Spaces are tolerated (제 15 조, 제17조제 1항) and removed from the token.
REFERENCE = re.compile(rf"(?:(?<![가-힣])|(?<=[{_UNITS}]))제 ?\d+ ?[{_UNITS}](?:의\d+)?")

_KEEP = frozenset({"NNG", "NNP", "NR", "XR", "VV", "VV-I", "VV-R", "VA", "VA-I", "VA-R"})
_NOUNS = frozenset({"NNG", "NNP"})
_NAME_SUFFIXES = ("규정", "규칙", "세칙", "지침", "학칙", "요령", "내규", "규약", "정관")
# Dots inside names (연구노트작성․관리규정; NFKC turns ․ into "."), joined between Hangul only.
_NAME_JOINERS = "·・."

# No URL/e-mail/hashtag/serial matching: those spans are non-Hangul runs anyway, and a matched
# URL or hashtag would hide the Hangul words inside it from Kiwi.
_NO_PATTERNS = 0

def _references(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), "NNP") for m in REFERENCE.finditer(text)]


def _is_symbolic(tag: str) -> bool:
    return tag[0] == "S" or tag.startswith("W_")


def _name_word(text: str, noun: Any) -> str | None:
    """The Hangul word that ends with ``noun`` when ``noun`` ends in a name suffix."""
    end = noun.start + noun.len
    if not noun.form.endswith(_NAME_SUFFIXES) or text[noun.start:end] != noun.form:
        return None
    start = noun.start
    while start > 0 and (_is_hangul(text[start - 1]) or (
            text[start - 1] in _NAME_JOINERS and start > 1 and _is_hangul(text[start - 2]))):
        start -= 1
    return text[start:end] if start < noun.start else None


def _is_hangul(ch: str) -> bool:
    return "가" <= ch <= "힣"


def _tokens(text: str, morphs: Iterable[Any]) -> list[str]:
    out: list[str] = []
    run_start = run_end = -1

    def end_run() -> None:
        nonlocal run_start, run_end
        if run_start >= 0:
            out.extend(analyze_english(text[run_start:run_end]))
            run_start = run_end = -1

    for m in morphs:
        start, end, tag = m.start, m.start + m.len, m.tag
        if _is_symbolic(tag):
            if start != run_end:
                end_run()
                run_start = start
            run_end = end
            continue
        end_run()
        if tag == "NNP" and REFERENCE.fullmatch(m.form):
            out.append(m.form.replace(" ", ""))
            continue
        if tag in _KEEP:
            out.append(m.form)
        if tag in _NOUNS and (whole := _name_word(text, m)) is not None:
            out.append(whole)
    end_run()
    return out


def analyze_korean(text: str) -> list[str]:
    """BM25 tokens of a text that contains Hangul, in reading order (a one-off text does not
    load all of Kiwi: :func:`excerpt.analyze.korean_kiwi.kiwi_for`)."""
    morphs = kiwi_for(text).tokenize(text, match_options=_NO_PATTERNS,
                                     pretokenized=_references(text))
    return _tokens(text, morphs)


def analyze_korean_many(texts: Sequence[str]) -> list[list[str]]:
    """``analyze_korean`` for many texts, through Kiwi's multi-threaded batch API."""
    if not texts:
        return []
    batches = kiwi().tokenize(list(texts), match_options=_NO_PATTERNS, pretokenized=_references)
    return [_tokens(text, morphs) for text, morphs in zip(texts, batches, strict=True)]
