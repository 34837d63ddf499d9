"""The running summary of evicted utterances: extractive, entity-preserving, deterministic.

Method (offline, no model):

* Evicted utterances are cut into sentences (after ``.``, ``!``, ``?``, ``。`` and at line
  breaks); each sentence is kept verbatim, prefixed by its speaker (``user: ...``), one per
  line of the summary.  Merging is incremental: the new sentences are appended to the stored
  summary, which is then trimmed to the conversation's ``summary_token_limit``.
* The entity signal (:func:`key_entities`): capitalised words that are not stopwords or common
  function words (names, places, titles, and actions at the start of a request: ``Book``),
  acronyms and numbers, from any non-Hangul text; in Korean text, Kiwi's proper nouns (NNP)
  and common nouns (NNG) of two syllables or more, plus numbers (SN).  Entities are compared
  in lower case.  The same function measures retention in the tests and the benchmark.
* A sentence's value per token is ``(3 * entities no other kept sentence has + its entities
  + 0.1 * its content tokens from excerpt.analyze) / its tokens``.  Trimming removes the
  sentence of lowest value per token (the oldest of equals) until the summary fits, and
  recomputes after each removal, so an entity mentioned twice loses one mention before an
  entity mentioned once is lost.  A sentence is never cut, unless the one sentence left alone
  exceeds the limit: then it is cut at the last character that fits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from excerpt.analyze import analyze
from excerpt.analyze.english import stopwords
from excerpt.analyze.language import HANGUL
from excerpt.memory.model import Utterance
from excerpt.tokens import count_tokens

_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n+")
_LATIN_WORD = re.compile(r"[^\W_][\w'’-]*")
_SPEAKER_PREFIX = re.compile(r"^(user|assistant|system): ")
# Capitalised function words and conversational fillers are no entity: Lucene's 33 stopwords
# (excerpt.analyze) miss most of them, and they open many sentences of a dialogue.
_FUNCTION_WORDS_TEXT = """
i i'm i've i'll i'd me my mine myself we we're we've we'll us our ours you you're you've you'll
your yours he he's him his she she's her hers it's its they're them our what which who whom
whose when where why how all any both each few more most other some such only own same so than
too very can could would should shall may might must do does did done doing have has had
having am been being was were let's let here there's that's what's how's where's when's
hi hello hey yes yeah yep no nope ok okay sure thanks thank please great good fine well oh ah
also just maybe perhaps sorry alright right now then again still about after before because
from up down out over under until while during through between above below off once every
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
_KO_NOUNS = frozenset({"NNP", "NNG"})
_KO_FOREIGN = frozenset({"SL", "SN"})


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones dropped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


@lru_cache(maxsize=8192)
def _entities(text: str) -> frozenset[str]:
    stop = stopwords() | _FUNCTION_WORDS
    found: set[str] = set()
    for match in _LATIN_WORD.finditer(text):
        word = match.group().strip("'’-")
        if not word or HANGUL.search(word):
            continue
        if word[0].isdigit() or (word[0].isupper() and word.lower() not in stop):
            found.add(word.lower())
    if HANGUL.search(text):
        from excerpt.analyze.korean import kiwi

        for token in kiwi().tokenize(text):
            if (token.tag in _KO_NOUNS and len(token.form) >= 2) or (
                    token.tag in _KO_FOREIGN and token.form[:1].isdigit()):
                found.add(token.form.lower())
    return frozenset(found)


def key_entities(text: str) -> set[str]:
    """The key entities of ``text`` in lower case (see the module docstring for the method)."""
    return set(_entities(_SPEAKER_PREFIX.sub("", text)))


def entity_retention(source: str, summary: str) -> float:
    """Share of ``source``'s key entities that ``summary`` keeps (1.0 when it has none)."""
    wanted = key_entities(source)
    if not wanted:
        return 1.0
    return len(wanted & key_entities(summary)) / len(wanted)


@lru_cache(maxsize=8192)
def _profile(sentence: str) -> tuple[frozenset[str], int, int]:
    return (_entities(_SPEAKER_PREFIX.sub("", sentence)), len(analyze(sentence)),
            max(1, count_tokens(sentence)))


def summary_lines(summary: str) -> list[str]:
    return [line for line in summary.split("\n") if line]


def _join(lines: Iterable[str]) -> str:
    return "\n".join(lines)


def trim(lines: Sequence[str], token_limit: int) -> list[str]:
    """``lines`` (summary sentences, in order) trimmed to ``token_limit`` tokens as a whole.

    The size is bounded by the lines' own token counts plus one per line break (cl100k can only
    merge a break into a neighbour, never split anything further), so no re-count of the whole
    summary is needed per removal.
    """
    kept = list(lines)
    profiles = [_profile(line) for line in kept]
    size = sum(p[2] for p in profiles) + len(kept) - 1
    if size <= token_limit or count_tokens(_join(kept)) <= token_limit:
        return kept
    counts: dict[str, int] = {}
    for entities, _, _ in profiles:
        for entity in entities:
            counts[entity] = counts.get(entity, 0) + 1
    while len(kept) > 1 and size > token_limit:
        best_pos, best_value = 0, float("inf")
        for pos, (entities, content, tokens) in enumerate(profiles):
            unique = sum(1 for e in entities if counts[e] == 1)
            value = (3 * unique + len(entities) + 0.1 * content) / tokens
            if value < best_value:
                best_pos, best_value = pos, value
        del kept[best_pos]
        entities, _, tokens = profiles.pop(best_pos)
        for entity in entities:
            counts[entity] -= 1
        size -= tokens + 1
    if len(kept) == 1 and count_tokens(kept[0]) > token_limit:
        return [_cut(kept[0], token_limit)] if token_limit > 0 else []
    return kept


def _cut(sentence: str, token_limit: int) -> str:
    """The longest prefix of ``sentence`` within ``token_limit`` tokens (binary search)."""
    low, high = 0, len(sentence)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(sentence[:mid]) <= token_limit:
            low = mid
        else:
            high = mid - 1
    return sentence[:low].rstrip()


def merge(summary: str, evicted: Sequence[Utterance], token_limit: int) -> str:
    """The stored summary with ``evicted`` merged in, within ``token_limit`` tokens."""
    lines = summary_lines(summary)
    for utterance in evicted:
        lines.extend(f"{utterance.speaker}: {s}" for s in split_sentences(utterance.text))
    return _join(trim(lines, token_limit))


def read_summary(summary: str, token_limit: int | None = None) -> tuple[str, int]:
    """The summary text (trimmed to ``token_limit`` when given) and its token count."""
    lines = summary_lines(summary)
    if token_limit is not None:
        lines = trim(lines, token_limit)
    text = _join(lines)
    return text, count_tokens(text) if text else 0
