"""What a question asks: its type (who, what, where, when, why, how), its focus (the entity it
asks about) and the cues that a sentence answering that type tends to carry.

* **Type**: the first question word (``who``, ``whom``, ``whose`` -> who; ``why``; ``when``
  and ``what year``/``which day`` -> when; ``where``; ``how`` (``how many``/``how much`` ->
  when-like numbers: ``count``); ``what``/``which`` -> what), else ``other``. Korean: 누구 ->
  who, 왜 -> why, 언제 -> when, 어디 -> where, 어떻게 -> how, 무엇/뭐 -> what, 몇/얼마 -> count.
* **Focus**: the capitalised names of the question (not its first word, unless it is not a
  question word) and the words after "who is/was", "what is/are" (up to the end or a
  preposition), as analyzer tokens. "Who is Patroclus?" -> {patroclus}; "Why does Dorian hide
  the portrait?" -> {dorian}. It counts for definitions only ("who is X", "what is X":
  ``defining``): a why or how answer often says "he" for the name, and "Who painted the
  portrait of Dorian Gray?" is answered by a sentence naming Basil, not Dorian.
* **Cues** per type (:data:`CUES`): words a sentence of that kind of answer tends to use,
  "because", "for", "so that", "lest" for why; kinship and roles ("son of", "friend",
  "companion"; not "hero" or "king", everywhere in Homer) for who; numbers, dates and times
  for when and count; places ("in", "at", "from" before a capitalised word, "city", "land")
  for where; for "who did it" (not a definition), a name the question does not have, inside
  a line (a verse line's first word is capitalised anyway). A sentence's cue score is 1 when
  it holds one (a who cue within ``NEAR`` words of the focus), else 0.
* **Unit** (:func:`question_unit`): what a count or when question counts in. "몇 년", "몇
  점", "몇 명" ask for a number of that unit; "how long", "how many years", "얼마나 되나요"
  about a 기간 or 동안 ask for a period (``period``: a number of years, months, weeks, days,
  학기 or hours, not a date; "3월" is left out, a month or three months). The cue of such a
  question is that number alone
  (:data:`UNITS`): a 1, 2 or 3-digit number before the unit (a four-digit one is a year, a
  date), for 점 a decimal too ("평점평균이 1.50에 미달된 자"); a regulation's amendment notes
  ("<개정 2019. 2. 1.>") and dates ("2011년 10월 1일", "2019. 2. 1.") are left out first,
  every article has dates in them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from excerpt.analyze import analyze, detect_language

_QUESTION_WORDS = {
    "who": "who", "whom": "who", "whose": "who", "why": "why", "when": "when",
    "where": "where", "how": "how", "what": "what", "which": "what",
}
_KOREAN_TYPES = (("누구", "who"), ("누가", "who"), ("왜", "why"), ("언제", "when"),
                 ("어디", "where"), ("어떻게", "how"), ("몇", "count"), ("얼마", "count"),
                 ("무엇", "what"), ("뭐", "what"))
_WORD = re.compile(r"[A-Za-z][\w'’-]*")
_DEFINITION = re.compile(
    r"\b(?:who|what)\s+(?:is|was|are|were)\s+(?:the\s+|a\s+|an\s+)?(.+?)(?:\s+(?:in|of|to|at|"
    r"for|with|about|by|on)\b|[?.!]|$)", re.IGNORECASE)
_WHEN_WORDS = re.compile(r"\b(?:what|which|in\s+which)\s+(?:year|day|time|month|age|date)\b",
                         re.IGNORECASE)
NEAR = 10
_INNER_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]{2,}")
_COUNT_WORDS = re.compile(r"\bhow\s+(?:many|much|long|old|often)\b", re.IGNORECASE)

CUES: dict[str, re.Pattern[str]] = {
    "why": re.compile(r"\b(?:because|for|so that|in order to|lest|since|therefore|reason|"
                      r"cause[ds]?|that (?:he|she|they|it) might|fear|afraid)\b|때문|위하여|위해"
                      r"|므로|으로 인하여", re.IGNORECASE),
    # relations and callings that say who someone is ("hero", "king" are everywhere in Homer)
    "who": re.compile(r"\b(?:son|daughter|wife|husband|father|mother|brother|sister|friend|"
                      r"companion|servant|painter|artist|actress|actor|born|child|heir|"
                      r"charioteer|nurse|guardian|uncle|aunt|cousin|lover|bride)\b",
                      re.IGNORECASE),
    "when": re.compile(r"\d|\b(?:year|day|night|morning|evening|dawn|hour|month|week|"
                       r"before|after|during|until|when|then)\b|년|월|일|기간|이내|전까지",
                       re.IGNORECASE),
    "count": re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
                        r"twenty|hundred|thousand|many|few|several)\b|[0-9]+(?:학점|일|년|명|회)"),
    "where": re.compile(r"\b(?:in|at|from|to|into|near|beside)\s+(?:the\s+)?[A-Z]\w+|\b(?:city|"
                        r"town|land|shore|house|room|street|camp|ships?|walls?|river|sea)\b|"
                        r"장소|기관|부서|제출"),
    "how": re.compile(r"\b(?:by|with|through|using|so|thus|first|then)\b|방법|절차|통하여",
                      re.IGNORECASE),
}


_NUMBER = r"(?<![\d.])\d{1,3}(?:\.\d+)?\s*"
_PERIOD_WORDS = (r"\b(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                 r"twenty|thirty|forty|fifty|hundred|a|an)\s+(?:years?|months?|weeks?|days?|"
                 r"hours?|nights?)\b")
UNITS: dict[str, re.Pattern[str]] = {
    "period": re.compile(rf"{_NUMBER}(?:년|개월|주|일|학기|시간)|{_PERIOD_WORDS}",
                         re.IGNORECASE),
    "점": re.compile(rf"{_NUMBER}점|(?<![\d.])\d{{1,3}}\.\d+"),
}
"""The cue of a question asking for a number of a unit (module docstring, Unit); any other
unit: a 1-3 digit number right before it."""
_KO_UNIT = re.compile(r"몇\s*(년|개월|달|주|일|시간|시|분|학점|점|명|회|번|학기|과목|개|세|살)")
_KO_PERIOD = re.compile(r"얼마")
_EN_PERIOD = re.compile(r"\bhow\s+(?:long|many\s+(?:years|months|weeks|days|hours|nights))\b",
                        re.IGNORECASE)
_NOTES = re.compile(r"[<(](?:개정|신설|삭제|전문개정|본조신설)[^>)]*[>)]"
                    r"|\d{4}\s*년\s*\d{1,2}\s*월(?:\s*\d{1,2}\s*일)?"
                    r"|\d{4}\.\s*\d{1,2}\.(?:\s*\d{1,2}\.)?")


def question_unit(question: str) -> str:
    """What a count or when question counts in (module docstring, Unit); "" when nothing
    says."""
    if _EN_PERIOD.search(question):
        return "period"
    found = _KO_UNIT.search(question)
    if found:
        return found.group(1)
    return "period" if _KO_PERIOD.search(question) and re.search(r"기간|동안|오래",
                                                                    question) else ""


def unit_cue(unit: str, sentence: str) -> bool:
    """Whether ``sentence``, its amendment notes and dates left out, holds a number of
    ``unit``."""
    text = _NOTES.sub(" ", sentence)
    pattern = UNITS.get(unit) or re.compile(rf"{_NUMBER}{re.escape(unit)}")
    return pattern.search(text) is not None


@dataclass(frozen=True)
class QuestionShape:
    kind: str                  # who, what, where, when, why, how, count, other
    focus: frozenset[str]      # analyzer tokens of the entity asked about
    defining: bool = False     # "who is X", "what is X": the answer names X
    names: frozenset[str] = frozenset()  # the question's capitalised words, lower case
    unit: str = ""             # what a count or when question counts in (question_unit)

    def _new_name(self, sentence: str) -> bool:
        """Whether ``sentence`` names someone the question does not (a name inside a line,
        not a verse line's or a sentence's first word)."""
        return any(m.group().lower() not in self.names for m in _INNER_NAME.finditer(sentence))

    def cue(self, sentence: str) -> float:
        """1.0 when ``sentence`` carries a cue of the question's type, else 0.0; for a who
        question with a focus, the cue must stand within ``NEAR`` words of the focus ("his
        friend, after which Patroclus", not "my father … Patroclus" thirty words on)."""
        if self.unit and self.kind in {"count", "when"}:
            return 1.0 if unit_cue(self.unit, sentence) else 0.0
        pattern = CUES.get(self.kind)
        if pattern is None:
            return 0.0
        if self.kind == "who" and not self.defining:  # who did it: a name the question lacks
            return 1.0 if self._new_name(sentence) else 0.0
        if self.kind != "who" or not self.focus:
            return 1.0 if pattern.search(sentence) else 0.0
        words = sentence.split()
        at = [i for i, w in enumerate(words) if self.focus & set(analyze(w, "en"))]
        cues = [len(sentence[:m.start()].split()) for m in pattern.finditer(sentence)]
        return 1.0 if any(abs(c - a) <= NEAR for c in cues for a in at) else 0.0


def question_kind(question: str, language: str | None = None) -> str:
    """The question's type (module docstring); ``language``: the question's, when known."""
    if (language or detect_language(question)) == "ko":
        return next((kind for word, kind in _KOREAN_TYPES if word in question), "other")
    if _WHEN_WORDS.search(question):
        return "when"
    if _COUNT_WORDS.search(question):
        return "count"
    for word in _WORD.findall(question.lower()):
        if word in _QUESTION_WORDS:
            return _QUESTION_WORDS[word]
    return "other"


def question_focus(question: str, language: str | None = None) -> frozenset[str]:
    """The analyzer tokens of what the question is about (module docstring); Korean: none
    (every noun of a Korean question is a key token already). ``language``: the question's,
    when known."""
    language = language or detect_language(question)
    if language == "ko":
        return frozenset()
    words = _WORD.findall(question)
    names = [w for i, w in enumerate(words)
             if w[0].isupper() and (i > 0 or w.lower() not in _QUESTION_WORDS)
             and w.lower() not in {"i", "does", "did", "do", "is", "was", "are", "were"}]
    found = _DEFINITION.search(question)
    text = " ".join(names) + (" " + found.group(1) if found else "")
    return frozenset(analyze(text, language))


def shape(question: str, language: str | None = None) -> QuestionShape:
    """What ``question`` asks (module docstring); ``language``: the question's, when the
    caller has detected it (an ask reads its question once: query/question.py)."""
    language = language or detect_language(question)
    names = frozenset(w.lower() for w in _WORD.findall(question) if w[0].isupper())
    defining = language != "ko" and _DEFINITION.search(question) is not None
    kind = question_kind(question, language)
    unit = question_unit(question) if kind in {"count", "when"} else ""
    return QuestionShape(kind, question_focus(question, language), defining, names, unit)
