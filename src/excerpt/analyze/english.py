"""English (and any non-Hangul) text: words, stopwords, Snowball stems, code identifiers.

A word is a run of two or more ``\\w`` characters (bm25s's default ``(?u)\\b\\w\\w+\\b``; the
``\\b`` there change nothing and cost time).  An ordinary word becomes the Snowball stem of its
lowercase form, or nothing if that form is a stopword.  A code identifier (see ``code.py``)
becomes its lowercase whole, unstemmed, followed by the stems of its non-stopword parts.
"""

from __future__ import annotations

import re
import threading
from functools import cache
from importlib import resources

import Stemmer

from excerpt.analyze.code import is_identifier, split_identifier

WORD = re.compile(r"\w\w+")

# Each distinct word is analysed once and remembered: stemming every occurrence was most of the
# cost.  Keys keep their case because case decides what an identifier is.
_MEMO_LIMIT = 500_000
_memo: dict[str, tuple[str, ...]] = {}

# PyStemmer objects carry state and are documented as not thread-safe: one per thread.  Their own
# cache is off (size 0): the memo above does that job, and the cache made each miss 3x slower.
_local = threading.local()


@cache
def stopwords() -> frozenset[str]:
    """The English stopword list shipped in ``data/stopwords_en.txt``."""
    text = resources.files("excerpt.analyze").joinpath("data/stopwords_en.txt").read_text("utf-8")
    lines = (line.strip() for line in text.splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


def _stemmer() -> Stemmer.Stemmer:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english", 0)
    return stemmer


def word_tokens(word: str) -> tuple[str, ...]:
    """The tokens of one word (a ``WORD`` match, original case), without the memo."""
    stop = stopwords()
    if is_identifier(word):
        parts = [p for p in split_identifier(word) if p not in stop]
        return (word.lower(), *_stemmer().stemWords(parts))
    lower = word.lower()
    return () if lower in stop else (_stemmer().stemWord(lower),)


def analyze_english(text: str) -> list[str]:
    """BM25 tokens of ``text`` in reading order."""
    memo = _memo
    out: list[str] = []
    for word in WORD.findall(text):
        tokens = memo.get(word)
        if tokens is None:
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            tokens = memo[word] = word_tokens(word)
        out.extend(tokens)
    return out
