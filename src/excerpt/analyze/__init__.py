"""Text analysis for BM25: one function for documents and queries, so their tokens match.

Texts are NFKC-normalised first (fullwidth ``ＢＭ２５`` and ``BM25`` are the same word), then
analysed by language: English with stopwords and Snowball stems (``english.py``), code
identifiers also split into words (``code.py``), Korean with Kiwi morphemes (``korean.py``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from excerpt.analyze import korean_kiwi
from excerpt.analyze.english import analyze_english
from excerpt.analyze.korean import analyze_korean, analyze_korean_many
from excerpt.analyze.language import detect_language

__all__ = ["ANALYZER_VERSION", "LANGUAGES", "analyze", "analyze_many", "detect_language",
           "foresee"]

# Recorded by the store with every index: bump it whenever any text's tokens may change,
# including on an upgrade of kiwipiepy, its model or PyStemmer.
ANALYZER_VERSION = "2"

LANGUAGES = ("en", "ko")


def _normalize(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def analyze(text: str, language: str | None = None) -> list[str]:
    """The BM25 tokens of ``text``; ``language`` is ``"en"``, ``"ko"`` or None to detect it."""
    text = _normalize(text)
    if language is None:
        language = detect_language(text)
    if language == "ko":
        return analyze_korean(text)
    if language == "en":
        return analyze_english(text)
    raise ValueError(f"unknown language {language!r}; expected one of {LANGUAGES}")


def foresee(texts: Sequence[str], language: str) -> None:
    """Texts a process may analyse soon in ``language`` (the terms a query lexicon may add):
    in Korean, made ready in the light Kiwi before its first analysis (analyze/korean_kiwi.py).
    Tokens do not change."""
    if language == "ko" and texts and korean_kiwi.unbuilt():
        korean_kiwi.foresee([_normalize(t) for t in texts])


def analyze_many(texts: Sequence[str]) -> list[list[str]]:
    """``analyze`` for every text, detecting each one's language; Korean goes to Kiwi in bulk."""
    normalized = [_normalize(t) for t in texts]
    out: list[list[str]] = []
    korean: list[int] = []
    for i, text in enumerate(normalized):
        if detect_language(text) == "ko":
            korean.append(i)
            out.append([])
        else:
            out.append(analyze_english(text))
    for i, tokens in zip(korean, analyze_korean_many([normalized[i] for i in korean]), strict=True):
        out[i] = tokens
    return out
