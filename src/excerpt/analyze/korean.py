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
* A regulation name written as one word (교원인사규정) also gives the whole compound after its
  parts, so the exact name outranks documents that merely mention 교원, 인사 and 규정.
* Everything else is dropped: particles (J*), endings (E*), affixes (XP*, XS*), bound nouns
  (NNB), copulas, auxiliaries, adverbs, determiners.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from excerpt.analyze.english import analyze_english

_UNITS = "조항호장절관편"

# 제 must not sit inside a Hangul word (경제 3항), except right after another reference
# (제14조제3항).  Spaces are tolerated (제 15 조, 제17조제 1항) and removed from the token.
REFERENCE = re.compile(rf"(?:(?<![가-힣])|(?<=[{_UNITS}]))제 ?\d+ ?[{_UNITS}](?:의\d+)?")

_KEEP = frozenset({"NNG", "NNP", "NR", "XR", "VV", "VV-I", "VV-R", "VA", "VA-I", "VA-R"})
_NOUNS = frozenset({"NNG", "NNP"})
_NAME_SUFFIXES = ("규정", "규칙", "세칙", "지침", "학칙", "요령", "내규", "규약", "정관")

# No URL/e-mail/hashtag/serial matching: those spans are non-Hangul runs anyway, and a matched
# URL or hashtag would hide the Hangul words inside it from Kiwi.
_NO_PATTERNS = 0

_kiwi: Any = None
_kiwi_lock = threading.Lock()


def kiwi() -> Any:
    """The shared Kiwi instance, loaded (about a second) on first use."""
    global _kiwi
    if _kiwi is None:
        with _kiwi_lock:
            if _kiwi is None:
                from kiwipiepy import Kiwi

                _kiwi = Kiwi(model_type="cong")
    return _kiwi


def _references(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), "NNP") for m in REFERENCE.finditer(text)]


def _is_symbolic(tag: str) -> bool:
    return tag[0] == "S" or tag.startswith("W_")


def _compound(nouns: list[Any]) -> str | None:
    if len(nouns) < 2:
        return None
    whole = "".join(n.form for n in nouns)
    return whole if whole.endswith(_NAME_SUFFIXES) else None


def _tokens(text: str, morphs: Iterable[Any]) -> list[str]:
    out: list[str] = []
    run_start = run_end = -1
    nouns: list[Any] = []  # the touching NNG/NNP morphemes just seen

    def end_run() -> None:
        nonlocal run_start, run_end
        if run_start >= 0:
            out.extend(analyze_english(text[run_start:run_end]))
            run_start = run_end = -1

    def end_nouns() -> None:
        if (whole := _compound(nouns)) is not None:
            out.append(whole)
        nouns.clear()

    for m in morphs:
        start, end, tag = m.start, m.start + m.len, m.tag
        if _is_symbolic(tag):
            end_nouns()
            if start != run_end:
                end_run()
                run_start = start
            run_end = end
            continue
        end_run()
        if tag == "NNP" and REFERENCE.fullmatch(m.form):
            end_nouns()
            out.append(m.form.replace(" ", ""))
            continue
        if tag not in _NOUNS or (nouns and nouns[-1].start + nouns[-1].len != start):
            end_nouns()
        if tag in _NOUNS:
            nouns.append(m)
        if tag in _KEEP:
            out.append(m.form)
    end_nouns()
    end_run()
    return out


def analyze_korean(text: str) -> list[str]:
    """BM25 tokens of a text that contains Hangul, in reading order."""
    morphs = kiwi().tokenize(text, match_options=_NO_PATTERNS, pretokenized=_references(text))
    return _tokens(text, morphs)


def analyze_korean_many(texts: Sequence[str]) -> list[list[str]]:
    """``analyze_korean`` for many texts, through Kiwi's multi-threaded batch API."""
    if not texts:
        return []
    batches = kiwi().tokenize(list(texts), match_options=_NO_PATTERNS, pretokenized=_references)
    return [_tokens(text, morphs) for text, morphs in zip(texts, batches, strict=True)]
