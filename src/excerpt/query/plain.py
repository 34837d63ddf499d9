"""Plain words: a question in everyday words gets the regulation's own terms (issue 16 item 7).

People ask "군대 가야 하는데 학교는 어떻게 해요?" where the book says 군입대휴학, or "교수가 1년
쉬면서 연구하고 싶으면?" where it says 연구년. The lexicon's ``plain_words`` rules map such words,
read in context, to the book's terms, most often naming the governing regulation itself
(휴학규정): regulation articles are indexed with their title, so the regulation's whole name
(one token, :mod:`excerpt.analyze.korean`) lifts every article of that regulation, which works
as a regulation-title boost.

A rule fires when every word of ``when`` is in the query and no word of ``unless`` is. A word
matches a token of the query's analysis (Kiwi stems: 아파서 -> 아프, 쉬면서 -> 쉬) or, when it
has two characters or more, a piece of the query text that starts a word (몇 살 -> "몇 살까지").
Context picks the sense: 쉬 with 교수 is a 연구년, with 직원 a 휴직, otherwise a 휴학.

Rules with more ``when`` words are applied first, then in file order; terms already in the
query or already added are skipped, and at most ``MAX_TERMS`` terms are added in all. This is a
separate stage from the seed's expansion (its limits apply to synonyms, hypernyms and procedure
terms, :mod:`excerpt.query.expansion`): it translates the question rather than widening it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from excerpt.query.lexicon import Lexicon, PlainRule

MAX_TERMS = 4
_SPACES = re.compile(r"\s+")


def _present(word: str, tokens: set[str], text: str) -> bool:
    if word in tokens:
        return True
    if len(word) < 2:
        return False  # a one-syllable piece of text (과, 쉬) matches inside too many words
    return re.search(r"(?<![가-힣A-Za-z0-9])" + re.escape(word), text) is not None


def fires(rule: PlainRule, tokens: set[str], text: str) -> bool:
    return (all(_present(w, tokens, text) for w in rule.when)
            and not any(_present(w, tokens, text) for w in rule.unless))


def plain_terms(query: str, tokens: Sequence[str], lexicon: Lexicon,
                limit: int = MAX_TERMS) -> list[str]:
    """The regulation terms the lexicon's plain-word rules give ``query`` (tokens: its analysis)."""
    if not lexicon.plain_words:
        return []
    text = _SPACES.sub(" ", query)
    have = set(tokens)
    rules = sorted(lexicon.plain_words, key=lambda r: -len(r.when))  # stable: file order next
    terms: list[str] = []
    for rule in rules:
        if not fires(rule, have, text):
            continue
        for term in rule.terms:
            if len(terms) == limit:
                return terms
            if term not in terms and term not in text:
                terms.append(term)
    return terms
