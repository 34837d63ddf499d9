"""Example questions made from a collection's own headings: what the web UI's overview offers
a reader who does not yet know what to ask (issue 32).

A **heading** is read from a node's metadata and text, as its importer left them:

* a document's section (Markdown, HTML, DOCX, PDF, EPUB: the last of ``headings``, else
  ``chapter_title``), in the document titled ``node.title``;
* a regulation's article caption (``kind`` article, ``caption`` "(휴직)"), in its regulation;
* a Gutenberg book's division title, the upper-case line of an ``argument`` part ("THE DUEL
  OF MENELAUS AND PARIS."), re-cased from the words of the text around it ("the duel of
  Menelaus and Paris"): a name is capitalised where the text always capitalises it.

A question is phrased in the heading's language (English or Korean, the two the analyzers
know), from one of three templates per kind chosen by the question's place, so that three
examples read as three different questions. Everything is a pure function of the nodes given:
the same visible nodes make the same questions, and a node the caller may not see is never
given (the overview reads only visible rows).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from excerpt.analyze import detect_language
from excerpt.types import Node

Kind = Literal["section", "article", "division"]

MAX_TRIES = 6
"""Questions tried per example asked for, when each is checked against a search."""
MAX_HEADING = 60
"""Longer headings read as sentences, not topics: left out of examples."""

SHORT = {"en": 50, "ko": 24}
"""A heading and its document's name at most this long together (characters; a Hangul
syllable says more than a letter) are preferred when there are enough of them."""

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_TRAILING = re.compile(r"[\s.:;,\d]+$")  # "PATROCLUS.280": a footnote mark and the full stop
_DIVISION = re.compile(r"^(BOOK|CHAPTER|PART|ARGUMENT)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Heading:
    """A heading a question can be made from: its text, what it belongs to (a document's or a
    regulation's name), its kind and language, and the node it titles."""

    text: str
    within: str
    kind: Kind
    language: str
    node_id: str
    document_id: str


@dataclass(frozen=True)
class Example:
    question: str
    heading: Heading

    def to_json(self) -> dict[str, str]:
        return {"question": self.question, "heading": self.heading.text,
                "node_id": self.heading.node_id, "language": self.heading.language}


def heading_of(node: Node) -> Heading | None:
    """The heading ``node`` opens or sits under, if its metadata or text has one."""
    meta = node.metadata
    kind: Kind
    if meta.get("kind") == "article" and meta.get("regulation"):
        if meta.get("deleted"):
            return None
        text = str(meta.get("caption") or "").strip().strip("()[]").strip()
        within, kind = str(meta["regulation"]), "article"
    elif isinstance(meta.get("headings"), list) and meta["headings"]:
        text, within, kind = str(meta["headings"][-1]), node.title, "section"
    elif meta.get("chapter_title"):
        text, within, kind = str(meta["chapter_title"]), node.title, "section"
    elif meta.get("part") == "argument" and meta.get("chunk") == 0:
        text, within, kind = _division_title(node.text), node.title, "division"
    else:
        return None
    text = " ".join(text.split())
    if not text or len(text) > MAX_HEADING or not any(c.isalpha() for c in text):
        return None
    return Heading(text, within.strip(), kind, detect_language(text + " " + within), node.id,
                   node.document_id)


def _division_title(text: str) -> str:
    """The upper-case title of a book's division ("BOOK III.", "ARGUMENT.", then "THE DUEL
    OF MENELAUS AND PARIS."), its lines joined; "" when none (:func:`recased` gives it the
    case of the book's words)."""
    lines: list[str] = []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line or _DIVISION.match(line):
            if lines:
                break
            continue
        letters = [c for c in line if c.isalpha()]
        if not letters or not all(c.isupper() for c in letters):
            break
        lines.append(line)
    return _TRAILING.sub("", " ".join(lines)) if lines else ""


def recased(headings: Sequence[Heading], nodes: Sequence[Node]) -> list[Heading]:
    """``headings`` with each division title (upper case) in the case its words have in its
    document's ``nodes``: a word the text only ever writes capitalised (a name: Menelaus,
    Scamander) keeps its capital, every other word is lower-case."""
    wanted = {h.document_id for h in headings if h.kind == "division"}
    seen: dict[str, dict[str, set[bool]]] = {d: {} for d in wanted}
    for node in nodes:
        cases = seen.get(node.document_id)
        if cases is not None:
            for word in _WORD.findall(node.text):
                if not word.isupper() or len(word) == 1:
                    cases.setdefault(word.lower(), set()).add(word[0].isupper())
    return [replace(h, text=_recase(h.text, seen[h.document_id])) if h.kind == "division"
            else h for h in headings]


def _recase(title: str, seen: dict[str, set[bool]]) -> str:
    return _WORD.sub(lambda m: m.group().capitalize()
                     if seen.get(m.group().lower()) == {True} else m.group().lower(), title)


def _topic(text: str) -> str:
    """A heading as words inside a sentence: "Atomic imports" -> "atomic imports"; an acronym
    or a name the heading writes in capitals ("BM25 ranking", "HTTP") keeps them."""
    first, _, rest = text.partition(" ")
    if first[:1].isupper() and first[1:].islower():
        first = first.lower()
    return f"{first} {rest}".strip()


def _topic_particle(word: str) -> str:
    """은 after a final consonant (받침), 는 after a vowel or a non-Hangul letter."""
    last = word[-1]
    if "가" <= last <= "힣":
        return "은" if (ord(last) - 0xAC00) % 28 else "는"
    return "는"


_ENGLISH = {
    "section": ("What should I know about {topic}?", "What does {within} say about {topic}?",
                "Can you explain {topic}?"),
    "division": ("What happens in {topic}?", "How does {within} tell of {topic}?",
                 "What is told of {topic}?"),
    "article": ("What does {within} say about {topic}?", "What should I know about {topic}?",
                "Can you explain {topic}?"),
}
_KOREAN = {
    "article": ("{within}에서 {text}{p} 어떻게 정하고 있나요?",
                "{within}의 {text}에 관한 규정은 무엇인가요?",
                "{within}에 따르면 {text}{p} 어떻게 되나요?"),
    "section": ("{text}{p} 무엇인가요?", "{within}에서 {text}{p} 어떻게 설명하나요?",
                "{text}에 대해 무엇을 알아야 하나요?"),
    "division": ("{text}에서는 무슨 일이 일어나나요?", "{within}에서 {text}{p} 어떻게 그려지나요?",
                 "{text}{p} 무엇에 관한 것인가요?"),
}


def question(heading: Heading, place: int) -> str:
    """The question of ``heading``, in its language, from the template at ``place`` (0, 1, 2,
    ...); the template naming what the heading belongs to is skipped when that is the
    heading itself (a document titled by its only section)."""
    korean = heading.language == "ko"
    templates = (_KOREAN if korean else _ENGLISH)[heading.kind]
    within = heading.within or heading.text
    choice = templates[place % len(templates)]
    if "{within}" in choice and within.casefold() == heading.text.casefold():
        choice = templates[(place + 1) % len(templates)]
        if "{within}" in choice:
            choice = templates[(place + 2) % len(templates)]
    return choice.format(within=within, text=heading.text, topic=_topic(heading.text),
                         p=_topic_particle(heading.text))


def examples(headings: Sequence[Heading], n: int = 3, language: str | None = None,
             answers: Callable[[Example], bool] | None = None) -> list[Example]:
    """``n`` example questions from ``headings`` (in reading order): one heading per title,
    those in ``language`` (the collection's) and short ones first, spread evenly over the
    collection so that they come from different documents when there are several. With
    ``answers`` (does a search for the question find its heading's node first?), a question
    it refuses is phrased again from another template, then another heading is tried, up to
    :data:`MAX_TRIES` questions a heading; deterministic."""
    unique: dict[tuple[str, str], Heading] = {}
    for heading in headings:
        unique.setdefault((heading.within.casefold(), heading.text.casefold()), heading)
    pool = [h for h in unique.values() if language is None or h.language == language]
    if len(pool) < n:
        pool = list(unique.values())
    short = [h for h in pool if len(h.text) + len(h.within) <= SHORT.get(h.language, 50)]
    # a question naming a 40-character regulation reads as a form: short ones first
    shorter = {id(h) for h in short}
    order = (_spread(short, n) + _spread([h for h in pool if id(h) not in shorter], n)
             if len(short) >= n else _spread(pool, n))
    chosen: list[Example] = []
    budget = MAX_TRIES * n
    for heading in order:
        if len(chosen) == n or budget <= 0:
            break
        asked_already = {e.question for e in chosen}
        for shift in range(len(_ENGLISH[heading.kind])):
            asked = Example(question(heading, len(chosen) + shift), heading)
            if asked.question in asked_already:
                continue
            asked_already.add(asked.question)
            budget -= 1
            if answers is None or answers(asked):
                chosen.append(asked)
                break
            if budget <= 0:
                break
    return chosen


def _spread(pool: Sequence[Heading], n: int) -> list[Heading]:
    """Headings of ``pool`` in the order to try them: ``n`` evenly spaced first, then the
    others. When there are ``n`` documents or more, one heading of each comes first, its
    rarest (a regulation's "목적" heads hundreds of articles, "휴직" a few), so that the
    examples come from different documents; with fewer, one document's sections, spread."""
    if n <= 0 or not pool:
        return []
    often: dict[str, int] = {}
    for heading in pool:
        often[heading.text.casefold()] = often.get(heading.text.casefold(), 0) + 1
    documents: dict[str, list[Heading]] = {}
    for heading in pool:
        documents.setdefault(heading.document_id, []).append(heading)
    source = list(pool)
    if len(documents) >= n:
        source = [min(hs, key=lambda h: often[h.text.casefold()]) for hs in documents.values()]
    step = len(source) / n
    first = [source[min(len(source) - 1, int(step * i + step / 2))] for i in range(n)]
    return list(dict.fromkeys([*first, *source, *pool]))
