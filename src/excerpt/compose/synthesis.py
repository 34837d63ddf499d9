"""LLM synthesis over the quotes, checked sentence by sentence against them (optional).

The model gets the same quotes the extractive answer would show, numbered ``[1]..[n]`` in their
order, and is asked for 2-4 sentences that each end with the numbers of the quotes they rest on.
Nothing it writes is trusted: its output is split into sentences (``compose.sentences``; a
marker written after the full stop, ``"… holds. [1]"``, is moved back onto its sentence first),
and a sentence is kept only if

1. it carries at least one marker (``[2]``, ``[1][3]``, ``[1, 3]``, ``[1-3]``),
2. every number it cites is one of the quotes (``[9]`` of three quotes is an invented source:
   the whole sentence goes, not only the marker), and
3. it shares at least ``MIN_SHARED`` distinct content tokens (excerpt's analyzer, each text in
   its detected language, stopwords removed) with at least one of the quotes it cites, and
   ``MIN_COVERAGE`` of its content tokens are in the quotes it cites (a small model writes
   fluent sentences of its own words around two of the quote's: "Dorian forces Basil to get rid
   of Basil's body by ordering Lord Henry to tell him why …"),
4. every name (a capitalised word not opening the sentence) and every number it states is in
   the quotes it cites ("Sibyl Vane was a general who fought at Troy. [1]" over a quote that
   never says Troy), and
5. when the collection has a sentence embedder (``compose.extract.Embed``), its embedding
   agrees with that quote's: cosine >= ``MIN_AGREEMENT`` (two shared words are not enough for
   "The capital of Australia is Canberra. [3]" over a quote about a younger son's capital).
   Measured with MiniLM over the books: claims the quote states 0.53-0.74, off-topic claims
   -0.12-0.27; a claim that swaps who did what to whom is not caught (0.70).

Dropped sentences are reported with the reason (``"no citation"``, ``"cites unknown [7]"``,
``"shares < 2 content words with [2]"``). Kept sentences are rewritten canonically, as the
extractive answer writes them: the sentence, a space, its markers (``"… holds. [1][3]"``).
When nothing survives (or there were no quotes, in which case the model is not called), the
answer is empty and the caller shows the extractive answer instead. Errors of the endpoint
(``ServiceError``) reach the caller, which falls back the same way.

A client that can ``stream`` (the local reader) is read piece by piece through a
:class:`SentenceGate`: each sentence is judged the moment the next one begins, and only the
kept ones reach ``on_sentence`` — a caller streams checked sentences, never raw model text.

``extract_concepts`` asks the model for a question's key concepts; any failure gives ``[]`` so
that the caller uses the offline concepts.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from excerpt.compose.quotes import Quote, content_tokens
from excerpt.compose.sentences import split_sentences
from excerpt.errors import ServiceError

__all__ = ["CONCEPTS_PROMPT", "EXAMPLE_ANSWER", "EXAMPLE_QUESTION", "MAX_CONCEPTS",
           "MAX_PROMPT_TOKENS", "MAX_SENTENCES", "MIN_AGREEMENT", "MIN_COVERAGE", "MIN_SHARED",
           "SYSTEM_PROMPT", "Agreement", "ChatClient", "DroppedSentence", "KeptSentence",
           "SentenceGate", "Synthesis", "build_messages", "check_attribution",
           "extract_concepts", "quote_agreement", "synthesize"]

log = logging.getLogger(__name__)

MIN_SHARED = 2
MAX_PROMPT_TOKENS = 900
MIN_QUOTE_TOKENS = 60
_FIXED_TOKENS = 280  # the rules (240), the worked example and a question, excerpt's counter
MAX_SENTENCES = 5
"""Sentences of a reply judged at most: the prompt asks for 2-4, and a model that goes on is
stopped (SmolLM2-135M wrote 384 tokens, 24 s, of repetition)."""
MIN_COVERAGE = 0.8
MIN_AGREEMENT = 0.4
MAX_CONCEPTS = 5
_LANGUAGE_NAMES = {"en": "English", "ko": "Korean"}

_NUMBERS = r"\d+(?:\s*(?:[,\-–]|and)\s*\d+)*"
_MARKER = re.compile(rf"\[\s*({_NUMBERS})\s*\]")
# One or more markers right after a sentence's end, so the splitter gives them to that sentence.
_TRAILING_MARKERS = re.compile(rf"([.!?。])((?:\s*\[\s*{_NUMBERS}\s*\])+)")
_LIST_PREFIX = re.compile(r"^(?:[-*•·]\s+|\d+[.)]\s+)")
_WORD = re.compile(r"\w+(?:['’-]\w+)*")
_POSSESSIVE = re.compile(r"['’]s$")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_STARTED = re.compile(r"[^\W\d_]")  # a sentence has begun once it holds a letter
_CONCEPT_TRIM = re.compile(r"^(?:[-*•·]\s*|\d+[.)]\s*)|[\"'“”‘’`.,;:。]+$|^[\"'“”‘’`]+")

SYSTEM_PROMPT = """\
You answer a question using only the numbered quotes you are given.
Rules:
- Answer in 2 to 4 sentences, written in {language}.
- Use only what the quotes say. Add no outside knowledge, no guesses, no advice.
- End every sentence with the numbers of the quotes it rests on, in square brackets, like \
"... sentence. [1]" or "... sentence. [1][3]".
- Every sentence needs at least one number; cite only numbers that appear in the quotes.
- Stay close to the quotes' own words.
- If the quotes do not answer the question, say so cautiously in one sentence that names what \
the closest quote does say, with its number.
- Write plain sentences: no lists, no headings, no preamble."""

EXAMPLE_QUESTION = """\
Quotes:
[1] The ferry leaves the harbour at six every morning and reaches the island by noon.
[2] Tickets are sold at the harbour office, which opens at half past five.

Question: When does the ferry leave, and where are tickets sold?"""
EXAMPLE_ANSWER = ("The ferry leaves the harbour at six every morning. [1] Tickets are sold at "
                  "the harbour office, which opens at half past five. [2]")

CONCEPTS_PROMPT = """\
List the key concepts of the question below: at most {limit}, one per line, each a short noun \
phrase in the question's own language and words. Write nothing else: no numbering, no \
explanation.

Question: {question}"""


class ChatClient(Protocol):
    """What synthesis needs of a client: ``LLMClient`` or a fake."""

    @property
    def model(self) -> str: ...

    def chat(self, messages: list[dict[str, str]]) -> str: ...


Agreement = Callable[[str, int], float]
"""(a claim, a quote's 1-based number) -> cosine of their embeddings."""


@dataclass(frozen=True)
class KeptSentence:
    """A sentence of the model's answer that the quotes support."""

    text: str                        # canonical: the sentence, then its markers
    cites: tuple[int, ...]           # every quote number it cites (1-based)
    supported_by: tuple[int, ...]    # the cited quotes it shares >= MIN_SHARED tokens with
    agreement: float | None = None   # the best cosine with a supporting quote (None: no embedder)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"text": self.text, "cites": list(self.cites),
                                  "supported_by": list(self.supported_by)}
        if self.agreement is not None:
            out["agreement"] = round(self.agreement, 3)
        return out


@dataclass(frozen=True)
class DroppedSentence:
    """A sentence of the model's answer that failed the attribution check, and why."""

    text: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "reason": self.reason}


@dataclass(frozen=True)
class Synthesis:
    """The checked answer; ``answer`` is empty when nothing survived (show the extractive one)."""

    answer: str
    kept: tuple[KeptSentence, ...]
    dropped: tuple[DroppedSentence, ...]
    raw: str
    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    ms: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"answer": self.answer, "model": self.model,
                "kept": [k.to_json() for k in self.kept],
                "dropped": [d.to_json() for d in self.dropped], "raw": self.raw,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "ms": round(self.ms, 1)}


def build_messages(question: str, quotes: Sequence[Quote], language: str) -> list[dict[str, str]]:
    """The chat messages: the rules as the system message, one worked example (small models
    copy a shape better than they follow a rule: without it Qwen2.5-1.5B left out the markers),
    then the quotes and question as the user's; each quote cut to its share of
    ``MAX_PROMPT_TOKENS`` (the regulation book's articles made prompts of 3,500 tokens, over a
    minute of reading on two cores). The check still reads the whole quotes."""
    name = _LANGUAGE_NAMES.get(language, "the language of the question")
    share = max(MIN_QUOTE_TOKENS, (MAX_PROMPT_TOKENS - _FIXED_TOKENS) // max(1, len(quotes)))
    numbered = "\n".join(f"[{n}] {_cut(_one_line(q.text), share)}"
                         for n, q in enumerate(quotes, start=1))
    return [{"role": "system", "content": SYSTEM_PROMPT.format(language=name)},
            {"role": "user", "content": EXAMPLE_QUESTION},
            {"role": "assistant", "content": EXAMPLE_ANSWER},
            {"role": "user", "content": f"Quotes:\n{numbered}\n\nQuestion: {_one_line(question)}"}]


def synthesize(question: str, quotes: Sequence[Quote], client: ChatClient, language: str,
               agreement: Agreement | None = None,
               on_sentence: Callable[[KeptSentence], None] | None = None) -> Synthesis:
    """The model's answer to ``question`` from ``quotes``, keeping only the sentences that cite,
    share words with and (given ``agreement``) agree with them; each kept sentence also goes to
    ``on_sentence`` as soon as it is judged. Raises ``ServiceError`` when the model fails."""
    if not quotes:
        return Synthesis("", (), (), "", client.model)
    started = time.perf_counter()
    gate = SentenceGate(quotes, agreement, on_sentence)
    messages = build_messages(question, quotes, language)
    stream: Callable[[list[dict[str, str]]], Iterator[str]] | None = getattr(client, "stream",
                                                                             None)
    cut = False
    if stream is None:
        gate.feed(client.chat(messages))
    else:
        pieces = stream(messages)
        try:
            for piece in pieces:
                gate.feed(piece)
                if cut := gate.judged >= MAX_SENTENCES:  # asked for 2-4: the rest is rambling
                    break
        finally:
            close = getattr(pieces, "close", None)
            if close is not None:
                close()  # a local model stops generating at its next token
    kept, dropped = gate.close(cut)
    usage: dict[str, Any] = getattr(client, "last_usage", None) or {}
    return Synthesis(" ".join(k.text for k in kept), tuple(kept), tuple(dropped), gate.raw,
                     client.model, int(usage.get("prompt_tokens", 0)),
                     int(usage.get("completion_tokens", 0)),
                     (time.perf_counter() - started) * 1000)


def check_attribution(text: str, quotes: Sequence[Quote],
                      agreement: Agreement | None = None) -> tuple[list[KeptSentence],
                                                                   list[DroppedSentence]]:
    """Split ``text`` into sentences and sort them into kept and dropped (module docstring)."""
    gate = SentenceGate(quotes, agreement)
    gate.feed(text)
    return gate.close()


class SentenceGate:
    """Judges a reply sentence by sentence as it arrives: ``feed`` pieces, ``close`` at the end.

    A sentence is judged once the next one has begun (markers written after its full stop,
    ``"… holds. [1]"``, still belong to it), so streamed and whole replies are judged alike."""

    def __init__(self, quotes: Sequence[Quote], agreement: Agreement | None = None,
                 on_sentence: Callable[[KeptSentence], None] | None = None) -> None:
        self.quotes = quotes
        self.quote_tokens = [frozenset(content_tokens(q.text)) for q in quotes]
        self.agreement = agreement
        self.on_sentence = on_sentence
        self.raw = ""
        self.judged = 0
        self.kept: list[KeptSentence] = []
        self.dropped: list[DroppedSentence] = []

    def feed(self, piece: str) -> None:
        self.raw += piece
        sentences = split_sentences(_attach_trailing_markers(self.raw))
        complete = len(sentences) - 1
        if sentences and _STARTED.search(_MARKER.sub(" ", sentences[-1])) is None:
            complete -= 1  # only markers (or part of one) after the last stop: not yet begun
        self._judge(sentences[self.judged:max(complete, self.judged)])

    def close(self, cut: bool = False) -> tuple[list[KeptSentence], list[DroppedSentence]]:
        """The verdicts; the sentence still being written is judged too unless the reply was
        ``cut`` short (it would be a fragment)."""
        if not cut:
            self._judge(split_sentences(_attach_trailing_markers(self.raw))[self.judged:])
        return self.kept, self.dropped

    def _judge(self, sentences: Sequence[str]) -> None:
        for sentence in sentences:
            self.judged += 1
            verdict = judge_sentence(sentence, self.quotes, self.quote_tokens, self.agreement)
            if isinstance(verdict, DroppedSentence):
                self.dropped.append(verdict)
                continue
            self.kept.append(verdict)
            if self.on_sentence is not None:
                self.on_sentence(verdict)


def judge_sentence(sentence: str, quotes: Sequence[Quote],
                   quote_tokens: Sequence[frozenset[str]],
                   agreement: Agreement | None = None) -> KeptSentence | DroppedSentence:
    """One sentence of a reply, kept (rewritten canonically) or dropped with the reason."""
    sentence = _LIST_PREFIX.sub("", sentence)
    cites = _cited_numbers(sentence)
    claim = " ".join(_MARKER.sub(" ", sentence).split())
    claim = re.sub(r"\s+([.!?。,;:])", r"\1", claim)
    if not cites:
        return DroppedSentence(sentence, "no citation")
    unknown = [n for n in cites if not 1 <= n <= len(quotes)]
    if unknown:
        return DroppedSentence(sentence, f"cites unknown {_markers(unknown)}")
    tokens = frozenset(content_tokens(claim)) if claim else frozenset()
    support = tuple(n for n in cites if len(tokens & quote_tokens[n - 1]) >= MIN_SHARED)
    if not support:
        return DroppedSentence(sentence,
                               f"shares < {MIN_SHARED} content words with {_markers(cites)}")
    if unquoted := _unquoted_names(claim, [quotes[n - 1].text for n in cites]):
        return DroppedSentence(sentence, f"{', '.join(unquoted)} not in {_markers(cites)}")
    held = frozenset().union(*(quote_tokens[n - 1] for n in cites))
    if tokens and len(tokens & held) < MIN_COVERAGE * len(tokens):
        return DroppedSentence(sentence, f"{len(tokens - held)} of its {len(tokens)} content "
                                         f"words are not in {_markers(cites)}")
    best = max(agreement(claim, n) for n in support) if agreement is not None else None
    if best is not None and best < MIN_AGREEMENT:
        return DroppedSentence(sentence, f"disagrees with {_markers(support)} "
                                         f"(cosine {best:.2f} < {MIN_AGREEMENT})")
    return KeptSentence(f"{claim} {_markers(cites)}", cites, support, best)


def _unquoted_names(claim: str, quoted: Sequence[str]) -> list[str]:
    """The names and numbers of ``claim`` that none of the ``quoted`` texts holds."""
    held = " ".join(quoted)
    words = _WORD.findall(claim)
    names = [_POSSESSIVE.sub("", w) for w in words[1:] if w[:1].isupper()]
    missing = [w for w in names if not re.search(rf"\b{re.escape(w)}\b", held, re.IGNORECASE)]
    missing += [n for n in _NUMBER.findall(claim)
                if not re.search(rf"(?<![\d.,]){re.escape(n)}(?![\d]|[.,]\d)", held)]
    return list(dict.fromkeys(missing))


def quote_agreement(embed: Callable[[Sequence[str]], Any], quotes: Sequence[Quote]
                    ) -> Agreement | None:
    """An :data:`Agreement` from a sentence embedder (``compose.extract.Embed``): the quotes
    are embedded once, each claim when it is judged. None when ``embed`` gives no vectors."""
    found = embed([q.text for q in quotes])
    if found is None:
        return None
    rows = found[1]

    def agree(claim: str, number: int) -> float:
        claimed = embed([claim])
        return 0.0 if claimed is None else float(claimed[1][0] @ rows[number - 1])

    return agree


def extract_concepts(question: str, client: ChatClient) -> list[str]:
    """Up to ``MAX_CONCEPTS`` concepts of ``question`` from the model, one per line, stripped
    and deduplicated; ``[]`` when the model fails or says nothing usable."""
    prompt = CONCEPTS_PROMPT.format(limit=MAX_CONCEPTS, question=_one_line(question))
    try:
        raw = client.chat([{"role": "user", "content": prompt}])
    except ServiceError as exc:
        log.warning("LLM concept extraction failed, using the offline concepts: %s", exc)
        return []
    concepts: list[str] = []
    seen: set[str] = set()
    for line in raw.splitlines():
        concept = _CONCEPT_TRIM.sub("", line.strip()).strip()
        # a preamble ("Concepts:") or a sentence of chatter is not a concept
        if not concept or line.rstrip().endswith(":") or len(concept) > 60:
            continue
        key = concept.casefold()
        if key not in seen:
            seen.add(key)
            concepts.append(concept)
            if len(concepts) == MAX_CONCEPTS:
                break
    return concepts


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, tokens: int) -> str:
    """``text`` within ``tokens`` (excerpt's counter), cut after its last whole word, "…"."""
    from excerpt.tokens import count_tokens

    if count_tokens(text) <= tokens:
        return text
    words = text.split(" ")
    low, high = 1, len(words)
    while low < high:  # the most words that fit
        middle = (low + high + 1) // 2
        if count_tokens(" ".join(words[:middle])) <= tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low]) + " …"


def _attach_trailing_markers(text: str) -> str:
    """``"A holds. [1] B."`` -> ``"A holds [1]. B."``: the splitter cuts after the full stop."""
    return _TRAILING_MARKERS.sub(lambda m: " " + " ".join(m.group(2).split()) + m.group(1), text)


def _cited_numbers(sentence: str) -> tuple[int, ...]:
    """The distinct quote numbers cited in ``sentence``, in order of first appearance."""
    numbers: list[int] = []
    for match in _MARKER.finditer(sentence):
        for part in re.split(r"\s*(?:,|and)\s*", match.group(1)):
            bounds = [int(x) for x in re.split(r"\s*[\-–]\s*", part)]
            low, high = bounds[0], bounds[-1]
            span: Sequence[int] = range(low, high + 1) if 0 <= high - low <= 20 else bounds
            for n in span:
                if n not in numbers:
                    numbers.append(n)
    return tuple(numbers)


def _markers(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)
