"""The checks a QA evaluation makes of one answer (:mod:`excerpt.evaluate.qa` runs them).

Pure functions over text, so each can be tested on answers written by hand:

* **Facts** (:func:`states_fact`): a fact is a list of alternative phrasings, one of which must
  appear. Matching is case-insensitive, with curly quotes made straight and runs of white space
  made one space. A Latin-script phrasing matches on word boundaries ("sin" does not match
  "single"); a trailing ``*`` lets it end inside a word ("sin*" matches "sins", "sinful"); a
  boundary is any character that is not a Latin letter or a digit, so a Korean particle after a
  number ends it ("1.50" is stated by "1.50에 미달된 자"). A
  phrasing with Hangul matches as a substring with all white space removed on both sides (Korean
  attaches particles to words and spaces compounds freely: "휴학" is stated by "휴학은").
* **Answer sentences** (:func:`cited_sentences`): the answer is cut after each group of
  citation markers (``[1]``, ``[1, 2]``, ``[1][2]``); each piece with letters is one answer
  sentence citing those numbers; a piece with no marker cites nothing.
* **Support** (:func:`supports`): a cited sentence is supported when, markers stripped, it is a
  substring of one of its cited quotes (white space normalised), or every content token of it
  (excerpt's analyzer: stems for English, Kiwi morphemes for Korean) is in the union of its
  cited quotes' tokens. A sentence citing a number no quote has is unsupported.
* **Verbatim** (:func:`is_verbatim`): a quote is verbatim when it is an exact substring of its
  node's stored text. :func:`is_verbatim_spaces` is the looser check, white space normalised on
  both sides, to tell a quote that re-flowed the text's line breaks from one that changed words.
* **Numbering** (:func:`numbering_problems`): the citations are numbered 1..n in order, every
  number the answer cites is listed, every listed citation is cited, and no node is listed
  under two numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from excerpt.analyze import analyze, detect_language

Fact = tuple[str, ...]

_MARKS = re.compile(r"((?:\s*\[\d+(?:\s*,\s*\d+)*\])+)")
_NUMBER = re.compile(r"\d+")
_HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Lower case, straight quotes, one space for any run of white space."""
    return _SPACES.sub(" ", text.translate(_QUOTES).lower()).strip()


_LATIN = r"[0-9a-z_\u00c0-\u024f]"  # what continues a Latin word (text is lower case)


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    prefix = phrase.endswith("*")
    body = re.escape(normalise(phrase.rstrip("*"))).replace(r"\ ", r"\s+")
    return re.compile(rf"(?<!{_LATIN}){body}" + ("" if prefix else rf"(?!{_LATIN})"))


def states_phrase(text: str, phrase: str) -> bool:
    """Whether ``text`` contains ``phrase`` (see the module docstring for the rules)."""
    if _HANGUL.search(phrase):
        squeeze = _SPACES.sub("", normalise(phrase.rstrip("*")))
        return squeeze in _SPACES.sub("", normalise(text))
    return bool(_phrase_pattern(phrase).search(normalise(text)))


def states_fact(text: str, fact: Fact) -> bool:
    """Whether ``text`` states ``fact``: any one of its phrasings."""
    return any(states_phrase(text, phrase) for phrase in fact)


def missing_facts(text: str, facts: Sequence[Fact]) -> list[Fact]:
    """The facts ``text`` does not state, in order."""
    return [fact for fact in facts if not states_fact(text, fact)]


def strip_marks(text: str) -> str:
    return _SPACES.sub(" ", _MARKS.sub("", text)).strip()


def cited_sentences(answer: str) -> list[tuple[str, tuple[int, ...]]]:
    """The answer's sentences with the quote numbers each cites (see the module docstring)."""
    parts = _MARKS.split(answer)
    out: list[tuple[str, tuple[int, ...]]] = []
    for i in range(0, len(parts), 2):
        text = parts[i].strip()
        marks = parts[i + 1] if i + 1 < len(parts) else ""
        numbers = tuple(dict.fromkeys(int(n) for n in _NUMBER.findall(marks)))
        if any(ch.isalpha() for ch in text):
            out.append((text, numbers))
    return out


def cited_numbers(answer: str) -> set[int]:
    return {n for _, numbers in cited_sentences(answer) for n in numbers}


def _tokens(text: str) -> set[str]:
    return set(analyze(text, detect_language(text)))


def supports(sentence: str, quotes: Sequence[str]) -> bool:
    """Whether the ``quotes`` (the texts a sentence cites) support ``sentence``."""
    if not quotes:
        return False
    claim = normalise(strip_marks(sentence)).rstrip(" .;:")
    if claim and any(claim in normalise(q) for q in quotes):
        return True
    wanted = _tokens(strip_marks(sentence))
    have = set().union(*(_tokens(q) for q in quotes))
    return bool(wanted) and wanted <= have


def sentence_support(answer: str, quotes: Mapping[int, str]) -> list[bool]:
    """For each answer sentence that cites something, whether its cited quotes support it."""
    return [supports(text, [quotes[n] for n in numbers if n in quotes])
            and all(n in quotes for n in numbers)
            for text, numbers in cited_sentences(answer) if numbers]


def is_verbatim(quote: str, node_text: str | None) -> bool:
    return node_text is not None and bool(quote) and quote in node_text


def is_verbatim_spaces(quote: str, node_text: str | None) -> bool:
    if node_text is None or not quote.strip():
        return False
    return _SPACES.sub(" ", quote).strip() in _SPACES.sub(" ", node_text)


def numbering_problems(answer: str, citations: Sequence[tuple[int, str]]) -> list[str]:
    """What is wrong with the answer's citation numbering (``citations``: (n, node id) as
    listed); empty when it is right."""
    problems = []
    listed = [n for n, _ in citations]
    if listed != list(range(1, len(listed) + 1)):
        problems.append(f"citations numbered {listed}, not 1..{len(listed)}")
    cited = cited_numbers(answer)
    if unknown := sorted(cited - set(listed)):
        problems.append(f"cites {unknown}, not listed")
    if uncited := sorted(set(listed) - cited):
        problems.append(f"lists {uncited}, never cited")
    ids = [node_id for _, node_id in citations]
    if repeated := sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"{', '.join(repeated)} listed under several numbers")
    return problems


def ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator, None when there is nothing to count."""
    return numerator / denominator if denominator else None
