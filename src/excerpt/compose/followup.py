"""Follow-up questions: resolve a pronoun or an ellipsis from the conversation before retrieval.

Offline and deterministic, from the previous user question (the last one in the recent turns,
itself resolved first against the ones before it, so a chain of follow-ups keeps its subject).
The previous question's **names** are its runs of capitalised words that are not question
words ("Who kills Patroclus?" -> ``Patroclus``; "What does Lord Henry say to Dorian?" ->
``Lord Henry``, ``Dorian``); its **thing** is its first concept
(:func:`excerpt.compose.grounding.concepts`) that holds no name.

* **Pronouns**, English by the part they play: a subject (he, she) becomes the first name, an
  object (him; her before a framing word) the last, a possessive (his; her before a content
  word) the first name's, "Hector's"; it/they/them become the thing, its/their the thing's;
  this/that only at the end or before "is", "does" …. A thing is written without the words the
  question already has ("who kills it" never reads "kills kills …"). With no name, a person
  pronoun stays. Korean 그/그녀/그분 and 그것/이것/거기 …, alone or with a particle, become the
  first concept and the next one.
* **Ellipsis**: "what about X?", "how about X?", or a question of one or two words, keeps the
  previous question and swaps in X: a name for its first name ("Who kills Patroclus?" -> "What
  about Hector?" -> "Who kills Hector?"), a book, chapter, page or section for the one it
  names (or adds it), else X's last concept for the previous one's last concept that holds no
  name ("What does Lord Henry say about influence?" -> "What about youth?" -> "What does Lord
  Henry say about youth?"). A bare question word ("And why?") asks the previous question with
  it: "How does Achilles withdraw?" -> "Why does Achilles withdraw?".
* A resolved question loses its leading connective ("And who kills him in revenge?" -> "Who
  kills Patroclus in revenge?"). Anything else stands as asked; with no previous question,
  nothing changes. The word lists are in ``data/followup_words.yaml`` so another language or
  style can be added without code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import dropwhile, islice, takewhile
from typing import Any

from excerpt.analyze import detect_language
from excerpt.compose.grounding import concepts, question_stopwords

CHAIN = 4  # user turns resolved in a row: the previous question's own context, bounded
# A name stands for a pronoun when it is at most this long, and at most this many pronouns are
# replaced: the resolved question stays within a few times the question's length.
MAX_TARGET = 80
MAX_REPLACED = 8
MAX_TURN = 2000  # an earlier turn is read up to a question's length (analysis is per character)
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SCOPE = re.compile(r"\b(book|chapter|canto|part|section|page)\s+(\d{1,3}(?:\.\d{1,3})*|"
                    r"[ivxlc]{1,7})\b", re.IGNORECASE)
_END = re.compile(r"[\s?.!]*$")


@dataclass(frozen=True)
class Resolution:
    question: str
    resolved: str
    reason: str  # "pronoun", "ellipsis" or "" (unchanged)
    previous: str | None  # the previous user question, as resolved itself
    said: str = ""
    """The answer the conversation just gave, when this question asks something else: its
    sentences are not quoted again when new ones answer (``AskOptions.said``)."""


@cache
def _words() -> dict[str, Any]:
    import yaml

    text = resources.files("excerpt.compose").joinpath("data/followup_words.yaml")
    data: dict[str, Any] = yaml.safe_load(text.read_text("utf-8"))
    return data


def _alternatives(words: Sequence[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


@dataclass(frozen=True)
class _Previous:
    text: str
    names: list[str]
    concepts: list[str]
    things: list[str]  # the concepts that hold no name, in order, without the question's verb


def _previous(text: str) -> _Previous:
    found, ideas = names(text), concepts(text)
    named = {w for name in found for w in name.split()}
    verb = _verb(text)
    kept = (" ".join(w for w in c.split() if w.lower() != verb) for c in ideas
            if not named & set(c.split()))
    return _Previous(text, found, ideas, [c for c in kept if c and len(c) <= MAX_TARGET])


def _verb(question: str) -> str | None:
    """The main verb of an English wh-question, where its place tells it: right after a
    subject question word ("who *wrote* the handbook"), or second of two words after "does"
    ("why does the king *withdraw*"); None elsewhere."""
    words, stop = _words(), question_stopwords()
    tokens = [m.group().lower() for m in islice(_WORD.finditer(question), 12)]  # its opening
    at = 1 if tokens[:1] and tokens[0] in words["question_words_en"] else 0
    if (at == 1 and len(tokens) > 1 and tokens[0] in words["subject_question_words_en"]
            and tokens[1] not in words["auxiliaries_en"]):
        return tokens[1] if tokens[1] not in stop else None
    if len(tokens) <= at or tokens[at] not in words["do_support_en"]:
        return None
    run = list(takewhile(lambda w: w not in stop, dropwhile(lambda w: w in stop,
                                                              tokens[at + 1:])))
    return run[-1] if len(run) == 2 else None  # of three, which one is the verb is unknown


def names(question: str) -> list[str]:
    """Runs of capitalised words that are not question words, in order, without a possessive
    ending; a book, chapter … and its number are not a name."""
    stop, text = question_stopwords(), _SCOPE.sub(",", question)
    runs: list[list[str]] = [[]]
    end = -1
    for match in _WORD.finditer(text):
        word = match.group().removesuffix("'s").removesuffix("’s").rstrip("'’")
        counted = word[:1].isupper() and word.lower() not in stop and len(word) > 1
        if not counted or not text[end:match.start()].isspace():
            runs.append([])
        if counted:
            runs[-1].append(word)
        end = match.end()
    return list(dict.fromkeys(n for n in (" ".join(r) for r in runs if r) if len(n) <= MAX_TARGET))


def _without_words_of(target: str, question: str) -> str:
    """``target`` less the words ``question`` has already (never empty)."""
    have = {w.lower() for w in _WORD.findall(question)}
    kept = [w for w in target.split() if w.lower() not in have]
    return " ".join(kept) or target


def _possessive(name: str) -> str:
    return name + "'s"


def _english_target(word: str, after: str | None, previous: _Previous,
                    thing: str | None) -> str | None:
    """What the pronoun ``word`` (followed by ``after``, None at the end) stands for; ``thing``:
    the previous question's thing as this question may take it."""
    words, stop = _words(), question_stopwords()
    content_after = after is not None and after.lower() not in stop
    if word in words["ambiguous_her_en"]:
        word = "his" if content_after else "him"
    if word in words["subject_en"] or word in words["possessive_en"]:
        first = previous.names[0] if previous.names else None
        return first if first is None or word in words["subject_en"] else _possessive(first)
    if word in words["object_en"]:
        return previous.names[-1] if previous.names else None
    if thing is None:
        return None
    if word in words["thing_possessive_en"]:
        return _possessive(thing)
    if word in words["demonstrative_en"]:
        return thing if after is None or after.lower() in words["demonstrative_before_en"] else None
    return thing


def _english_pronouns(question: str, previous: _Previous) -> str | None:
    words = _words()
    keys = ("subject_en", "object_en", "possessive_en", "ambiguous_her_en", "thing_en",
            "thing_possessive_en", "demonstrative_en")
    # the next word is looked at, not taken: "tell him his …" has two pronouns
    pattern = re.compile(rf"\b({_alternatives([w for k in keys for w in words[k]])})\b"
                         r"(?=\s+([^\W\d_][\w'’-]*))?", re.IGNORECASE)

    thing = _without_words_of(previous.things[0], question) if previous.things else None

    def swap(match: re.Match[str]) -> str:
        word, after = match.group(1), match.group(2)
        target = _english_target(word.lower(), after, previous, thing)
        if target is None:
            return word
        return target[:1].upper() + target[1:] if match.start() == 0 else target

    out = pattern.sub(swap, question, count=MAX_REPLACED)
    return out if out != question else None


def _korean_pronouns(question: str, previous: _Previous) -> str | None:
    words = _words()
    person = previous.concepts[0]
    thing = next((c for c in previous.concepts if c != person), person)
    if max(len(person), len(thing)) > MAX_TARGET:  # no concept: the whole question
        return None
    particles = _alternatives(words["particles_ko"])
    # a whole word, or one followed by a particle (그것은, 그녀의), never 그럼
    pattern = re.compile(rf"(?<![가-힣])({_alternatives(words['person_ko'] + words['thing_ko'])})"
                         rf"(?=(?:{particles})?(?:\s|$|[?.!,]))")
    out = pattern.sub(lambda m: person if m.group(1) in words["person_ko"] else thing, question,
                      count=MAX_REPLACED)
    return out if out != question else None


def _drop_connective(question: str) -> str:
    """The question without a leading "And", "So" …, its first letter capitalised."""
    connectives = _alternatives(_words()["connectives_en"])
    rest = re.sub(rf"^\s*(?:{connectives})\b[\s,]*", "", question, flags=re.IGNORECASE)
    rest = rest or question
    return rest[:1].upper() + rest[1:]


def _ask_again_with(word: str, previous: str) -> str:
    """The previous question asked with another question word: its own swapped ("How does
    Achilles withdraw?" -> "Why does …", "Who kills Patroclus?" -> "Why kills …"), else put
    first ("Does Achilles withdraw?" -> "Why does Achilles withdraw?")."""
    words = _words()
    first = previous.split(maxsplit=1)
    if len(first) == 2 and first[0].lower() in words["question_words_en"]:
        return f"{word.capitalize()} {first[1]}"
    return f"{word.capitalize()} {previous[:1].lower()}{previous[1:]}"


def _swap_scope(rest: str, previous: str) -> str | None:
    """``rest`` names only a book, chapter …: the previous question in that one instead."""
    found = list(_SCOPE.finditer(rest))
    leftover = _SCOPE.sub(" ", rest)
    if not found or any(w.lower() not in question_stopwords() for w in _WORD.findall(leftover)):
        return None
    out = previous
    for match in found:
        kind = re.compile(rf"\b{match.group(1)}\s+\S+?(?=[\s?.!,]|$)", re.IGNORECASE)
        if kind.search(out):
            out = kind.sub(match.group(0), out, count=1)
        else:  # the previous question named none: ask it in this one
            body = _END.sub("", out)
            out = f"{body} in {match.group(0)}{out[len(body):]}"
    return out


def _topic(rest: str) -> str | None:
    """X of "what about X?", or a question of one or two words; None for a full question."""
    starts = _alternatives(_words()["topic_starts_en"])
    topic = re.match(rf"(?:{starts})\b\s*(.+)", rest, re.IGNORECASE)
    if topic:
        return topic.group(1)
    return rest if len(rest.split()) <= 2 else None


def _swap_topic(topic: str, previous: _Previous) -> str | None:
    new_names, new = names(topic), concepts(topic)
    if new_names and previous.names:
        if new_names[0] in previous.names:
            return None
        return previous.text.replace(previous.names[0], new_names[0], 1)
    thing = next(reversed(previous.things), None)
    if thing is None or not new or new[-1] in previous.concepts or new[-1] == topic.strip():
        return None
    return previous.text.replace(thing, new[-1], 1)


def _english_ellipsis(question: str, previous: _Previous) -> str | None:
    rest = _drop_connective(question)
    words = _words()
    bare = re.fullmatch(rf"({_alternatives(words['question_words_en'])})"
                        rf"(?:\s+(?:{_alternatives(words['question_word_tails_en'])}))?[\s?.!]*",
                        rest, re.IGNORECASE)
    if bare:
        return _ask_again_with(bare.group(1), previous.text)
    scoped = _swap_scope(rest, previous.text)
    if scoped is not None:
        return scoped
    topic = _topic(rest)
    return None if topic is None else _swap_topic(topic, previous)


def _korean_ellipsis(question: str, previous: _Previous) -> str | None:
    lowered = question.strip()
    short = len(lowered.split()) <= 2
    if not (short or any(lowered.startswith(w) for w in _words()["ellipsis_starts_ko"])):
        return None
    now = concepts(question)
    if not now or now[-1] in previous.concepts:
        return None
    swapped = previous.text.replace(previous.concepts[-1], now[-1], 1)
    return swapped if swapped != previous.text else None


def _resolve_one(question: str, previous_text: str) -> tuple[str, str]:
    previous = _previous(previous_text)
    korean = detect_language(question) == "ko"
    pronouns = _korean_pronouns if korean else _english_pronouns
    if (replaced := pronouns(question, previous)) is not None:
        return (replaced if korean else _drop_connective(replaced)), "pronoun"
    ellipsis = _korean_ellipsis if korean else _english_ellipsis
    if (swapped := ellipsis(question, previous)) is not None:
        return swapped, "ellipsis"
    return question, ""


def resolve(question: str, recent: Sequence[tuple[str, str]]) -> Resolution:
    """``recent``: (speaker, text) of the conversation's recent turns, oldest first."""
    asked = [text[:MAX_TURN] for speaker, text in recent if speaker == "user"][-CHAIN:]
    if not asked:
        return Resolution(question, question, "", None)
    previous = asked[0]
    for text in asked[1:]:
        previous = _resolve_one(text, previous)[0]
    resolved, reason = _resolve_one(question, previous)
    said = next((text for speaker, text in reversed(recent) if speaker == "assistant"), "")
    same = _END.sub("", resolved).casefold() == _END.sub("", previous).casefold()
    return Resolution(question, resolved, reason, previous, "" if same else said)
