"""Extractive answering: the sentences of the passages that answer the question, scored, kept
diverse and put in reading order (issue 16 item 3).

1. **Candidates** (:func:`candidates`): every sentence of the passages (best passage first) as a
   span of its node's stored text (:func:`excerpt.compose.sentences.sentence_spans`), unless it
   is a fragment a chunk boundary cut (it starts with a lower-case letter, or it does not end
   as a sentence does: Korean pieces of ``2 * MIN_TOKENS`` tokens excepted, Kiwi cut them), a
   heading (all capitals), too short (``MIN_TOKENS`` content tokens) or too long for two of
   them to fit an answer (``LONGEST`` words), or it lies in the text the node repeats from the
   chunk before (its ``overlap`` metadata, written by the text and Gutenberg loaders: an
   overlap may start inside a sentence, "Basil Hallward had painted of him.", and the whole
   sentence is the chunk before's).
   A sentence met again (overlapping chunks repeat their edges) keeps its first, better-ranked
   passage. A sentence that introduces a list ("다음 각 호에 해당하는 자는 재입학을 할 수
   없다.", "… the following:") carries the list items that follow it (:func:`with_items`,
   within ``LONGEST`` words): an item alone ("1. 징계 제적자") is too short to quote, and the
   lead alone does not say what the items are.
2. **Lexical features**: ``coverage``, the idf-weighted share of the question's key tokens the
   sentence holds (a Korean token of two syllables or more counts as held when the sentence's
   text, spaces aside, contains it: Kiwi cuts a compound one way in a question and another in
   the text, "건축학과" against "건축학 과"); ``focus``, the share of the focus tokens (the
   entity asked about, :mod:`excerpt.compose.question`; the coverage when the question has
   none); ``cue``, 1 when the sentence carries a cue of the question's type ("because" for
   why, "son of" for who, the number of the unit asked for …).
   The ``PREFILTER`` (12) best by these (plus the rank prior) are embedded (the rest stay as
   fillers for the answer's length, without ``sem``): 12, 16, 24 or 32 give
   the same answers on bench/qa/books.yaml, and each sentence embedded costs about 7 ms
   (MiniLM int8, 2 cores; the ask budget is 150 ms BM25, 300 ms hybrid).
3. **Semantic similarity**: the cosine of sentence and question in the collection's own
   embedder (``embed``: MiniLM; e5, ten times slower, scores the opening sentence alone, for
   caution: :class:`SlowEmbed`); absent without one.
4. **Score** = ``W_SEM·sem + W_COV·coverage + W_FOCUS·focus + W_CUE·cue + W_LEN·length +
   W_RANK/(1 + passage rank) + W_EVIDENCE·evidence - W_ADDENDUM·addendum``, ``W_UNIT``
   instead of ``W_CUE`` when the question asks for a number of a unit ("몇 년", "how long":
   a sentence without one does not answer it), addendum being 1 for a sentence of a
   regulation's addendum (부칙: when each change took effect, transitional rules) unless the
   question asks when (the body's article states the rule), evidence being 1 for a code line that
   does what a code relation question asks about (:mod:`excerpt.compose.code_evidence`; two
   such lines of different nodes are never near-duplicates: each is one writer, one caller),
   length being ``min(words, LONG_WORDS) / LONG_WORDS`` (the answer
   wants 80-160 words in 2-5 sentences, so a sentence that says more serves it better).
   **Confidence** (what caution is calibrated on) is the opening sentence's (:func:`opener`)
   content match alone:
   ``(W_SEM·sem + W_COV·coverage + W_FOCUS·focus) / (W_SEM + W_COV + W_FOCUS)``, ``W_SEM``
   left out of both sums when there is no embedder; with a slow embedder (e5,
   :class:`SlowEmbed`: only the opener is embedded, and not ranked by it) the larger of that
   lexical share and the opener's rescaled similarity (Korean questions match their
   articles' tokens poorly: particles, compounds, "통틀어" for "통산"); halved (``UNTYPED``)
   for a when or how-many question whose best sentence holds no number, date or time.
5. **Selection** (:func:`select`): MMR (Carbonell & Goldstein 1998): the best sentence first
   (by its score without the length bonus: the one that answers opens the answer), then the
   one maximising ``score - MMR_PENALTY · max similarity to a chosen one`` (cosine of the
   sentence vectors, token Jaccard without them; ``+ W_CONTINUE`` for a sentence of the
   opener's passage that holds the number of the unit asked for too, short or not: the
   article's next paragraph, "임용연한은 통산 2년을 초과할 수 없다", after "조교의
   임용기간은 1년으로 한다."), near-duplicates skipped, until the answer
   has ``TARGET_WORDS`` words or ``MAX_SENTENCES`` sentences, from at most ``max_sources``
   nodes, never past ``MAX_WORDS``.
6. **Order** (:func:`reading_order`): the best sentence first, then the other chosen sentences
   of its passage in document order, then the other passages (by their best sentence), each in
   document order: the answer reads as one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from excerpt.analyze import analyze_many
from excerpt.compose.code_evidence import code_evidence
from excerpt.compose.question import QuestionShape
from excerpt.compose.quotes import SENTENCE_ENDINGS, coverage
from excerpt.compose.sentences import one_line, sentence_spans_many
from excerpt.embedder_names import SPECS
from excerpt.types import Node

MIN_TOKENS = 3
PREFILTER = 12
W_SEM, W_COV, W_FOCUS, W_CUE, W_LEN, W_RANK = 1.0, 1.0, 0.5, 0.2, 0.3, 0.1
W_UNIT = 0.5  # the cue of a question asking for a number of a unit ("몇 년", "how long")
W_ADDENDUM = 0.3  # a regulation's addendum (부칙) sentence, for a question not asking when
W_EVIDENCE = 1.0  # a code line doing what a relation question asks (compose/code_evidence.py)
LONG_WORDS = 35
MMR_PENALTY = 0.5
W_CONTINUE = 1.0  # the opener's passage's other sentences holding the number asked for
TYPED_KINDS = frozenset({"when", "count"})
UNTYPED = 0.5
NEAR_DUPLICATE = 0.6
TARGET_WORDS = 100
MIN_WORDS = 80
LONGEST = 70
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
MAX_WORDS = 160
MAX_SENTENCES = 5

Embed = Callable[[Sequence[str]], "tuple[Any, Any] | None"]
"""texts -> (question vector, one row per text), L2-normalised; None when there is no embedder."""


@dataclass
class Sentence:
    """A candidate sentence: ``node.text[start:end]`` verbatim, with its features."""

    node: Node
    rank: int
    start: int
    end: int
    tokens: frozenset[str]
    features: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    vector: Any = None

    @property
    def text(self) -> str:
        return self.node.text[self.start:self.end]

    @property
    def words(self) -> int:
        return len(self.text.split())


_CAPTION = re.compile(r"\[Illustration\b[^\]]{0,400}(?:\]|$)", re.IGNORECASE)
"""A Gutenberg illustration's caption ("[Illustration: ACHILLES CONTENDING WITH THE RIVERS.]",
over one line or several): a picture's title, never a sentence of the book to quote."""


def _quotable(text: str, tokens: frozenset[str], last: bool) -> bool:
    ends = text.rstrip("\"'”’)]»").endswith(SENTENCE_ENDINGS) or text.endswith(SENTENCE_ENDINGS)
    if len(tokens) < MIN_TOKENS or text[0].islower() or (last and not ends):
        return False
    if len(text.split()) > LONGEST:  # two of them would not fit an answer of 160 words
        return False
    letters = [ch for ch in text if ch.isalpha()]
    if letters and all(ch.isupper() for ch in letters if ch.isascii()) and any(
            ch.isascii() for ch in letters):
        return False  # a heading in capitals: BOOK XVI., THE ACTS AND DEATH OF PATROCLUS
    # a Korean list item may end on a noun (Kiwi cut it); an English piece that does not end
    # as a sentence does is a fragment (a verse paragraph ending on ":" before a speech)
    return ends or (_HANGUL.search(text) is not None and len(tokens) >= 2 * MIN_TOKENS)


_LIST_LEAD = re.compile(r"다음\s*각\s*(?:호|목)|다음과\s*같|:\s*$")
_ITEM = re.compile(r"\s*(?:\d+[.)]|[가-힣][.)]|[-*•·])\s")


def with_items(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with each sentence that introduces a list (:data:`_LIST_LEAD`) extended over
    the list items right after it (:data:`_ITEM`), as long as the whole stays within
    ``LONGEST`` words; the items it took in are no longer sentences of their own."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        start, end = spans[i]
        i += 1
        if _LIST_LEAD.search(text[start:end]):
            while (i < len(spans) and _ITEM.match(text[spans[i][0]:spans[i][1]])
                   and len(text[start:spans[i][1]].split()) <= LONGEST):
                end = spans[i][1]
                i += 1
        out.append((start, end))
    return out


def candidates(nodes: Sequence[Node]) -> list[Sentence]:
    """The quotable sentences of ``nodes`` (best first), each once (module docstring, 1); the
    lines of a code node (:func:`_code_lines`). Sentences are cut and analysed for all the
    nodes at once (Kiwi's batch calls for Korean)."""
    code = [bool(node.metadata.get("code_language")) for node in nodes]
    prose = iter(sentence_spans_many([n.text for n, c in zip(nodes, code, strict=True) if not c]))
    spans = [_code_lines(n.text) if c else with_items(n.text, next(prose))
             for n, c in zip(nodes, code, strict=True)]
    texts = [node.text[a:b] for node, per_node in zip(nodes, spans, strict=True)
             for a, b in per_node]
    tokens = iter(analyze_many(texts))
    out: list[Sentence] = []
    seen: set[str] = set()
    for rank, (node, is_code, per_node) in enumerate(zip(nodes, code, spans, strict=True)):
        repeated = int(node.metadata.get("overlap", 0))
        captions = [] if is_code else [m.span() for m in _CAPTION.finditer(node.text)]
        for i, (start, end) in enumerate(per_node):
            text, found = node.text[start:end], frozenset(next(tokens))
            key = one_line(text)
            quotable = (len(found) >= MIN_TOKENS - 1 if is_code
                        else end > repeated and _quotable(text, found, i == len(per_node) - 1)
                        and not any(a < end and start < b for a, b in captions))
            if key in seen or not quotable:
                continue
            seen.add(key)
            out.append(Sentence(node, rank, start, end, found))
    return out


def _code_lines(text: str) -> list[tuple[int, int]]:
    """The non-blank lines of a code node as spans, white space trimmed: code has no sentences,
    and a comment or a declaration is what a line says (a whole method would crowd an answer)."""
    spans, start = [], 0
    for line in text.splitlines(keepends=True):
        body = line.strip()
        if body and any(ch.isalpha() for ch in body) and len(body.split()) <= LONGEST:
            left = start + len(line) - len(line.lstrip())
            spans.append((left, left + len(body)))
        start += len(line)
    return spans


def held(wanted: frozenset[str], sentence: Sentence) -> frozenset[str]:
    """The sentence's tokens, with the Korean ``wanted`` tokens (two syllables or more) its
    text holds, spaces aside, though Kiwi cut them otherwise there (module docstring, 2)."""
    missing = [t for t in wanted - sentence.tokens if len(t) > 1 and _HANGUL.match(t)]
    if not missing:
        return sentence.tokens
    text = "".join(sentence.text.split())
    return sentence.tokens | {t for t in missing if t in text}


def _lexical(sentence: Sentence, wanted: frozenset[str], shape: QuestionShape,
             weights: Mapping[str, float] | None,
             evidence: Callable[[str], float] | None = None) -> None:
    cov = coverage(wanted, held(wanted, sentence), weights)
    focus = (len(shape.focus & sentence.tokens) / len(shape.focus)
             if shape.focus and shape.defining else cov)
    sentence.features = {"coverage": cov, "focus": focus, "cue": shape.cue(sentence.text),
                         "length": min(sentence.words, LONG_WORDS) / LONG_WORDS,
                         "rank": 1.0 / (1 + sentence.rank),
                         "needs_cue": 1.0 if shape.kind in TYPED_KINDS else 0.0,
                         "unit": 1.0 if shape.unit else 0.0,
                         "addendum": 1.0 if sentence.node.metadata.get("kind") == "addendum"
                         and shape.kind != "when" else 0.0}
    if evidence is not None and sentence.node.metadata.get("code_language"):
        sentence.features["evidence"] = evidence(sentence.text)


def _combine(f: Mapping[str, float]) -> float:
    return (W_SEM * f.get("sem", 0.0) + W_COV * f["coverage"] + W_FOCUS * f["focus"]
            + (W_UNIT if f.get("unit") else W_CUE) * f["cue"] + W_LEN * f["length"]
            + W_RANK * f["rank"] + W_EVIDENCE * f.get("evidence", 0.0)
            - W_ADDENDUM * f.get("addendum", 0.0))


def confidence(features: Mapping[str, float]) -> float:
    """How well a sentence matches the question's content, 0..1 (module docstring, 4)."""
    if not features:
        return 0.0
    sem = "sem" in features and not features.get("slow")
    total = W_COV * features["coverage"] + W_FOCUS * features["focus"]
    total += W_SEM * features["sem"] if sem else 0.0
    share = total / (W_COV + W_FOCUS + (W_SEM if sem else 0.0))
    if features.get("slow"):  # a slow model's similarity of the opener alone (SlowEmbed)
        share = max(share, features["sem"])
    if features.get("evidence"):  # the line that does what a code question asks about
        return max(share, features["evidence"])
    # a when / how-many question answered by a sentence with no number or time in it is
    # not answered ("In which year was Dorian born?" meets sentences about Dorian)
    return share * UNTYPED if features.get("needs_cue") and not features["cue"] else share


def score(pool: list[Sentence], question: str, wanted: frozenset[str], shape: QuestionShape,
          weights: Mapping[str, float] | None, embed: Embed | None) -> list[Sentence]:
    """The candidates with their features and scores, best first; only the ``PREFILTER`` best
    by the lexical features are embedded (the others stay as fillers, scored without ``sem``)."""
    if isinstance(embed, SlowEmbed):
        embed = None  # too slow to rank by: the composer scores the opener alone
    code = any(s.node.metadata.get("code_language") for s in pool)
    evidence = code_evidence(question) if code else None
    for sentence in pool:
        _lexical(sentence, wanted, shape, weights, evidence)
        sentence.score = _combine(sentence.features)
    pool = sorted(pool, key=lambda s: -s.score)  # stable: ties keep text order
    head = pool[:PREFILTER]
    found = embed([one_line(s.text) for s in head]) if embed and head else None
    if found is not None:
        query, matrix = found
        sims = np.asarray(matrix, dtype=np.float32) @ np.asarray(query, dtype=np.float32)
        for sentence, sim, row in zip(head, sims.tolist(), matrix, strict=True):
            sentence.features["sem"] = max(0.0, float(sim))
            sentence.vector = row
            sentence.score = _combine(sentence.features)
    return sorted(pool, key=lambda s: -s.score)


def _answer_score(sentence: Sentence) -> float:
    """The score without the length bonus: the opening sentence is the one that answers, not
    the one that fills the answer's words fastest."""
    return sentence.score - W_LEN * sentence.features["length"]


def opener(ranked: Sequence[Sentence]) -> Sentence | None:
    """The sentence the answer opens with (:func:`select`'s first): the best by its score
    without the length bonus; None when there is none."""
    return max(ranked, key=_answer_score) if ranked else None


def _similarity(a: Sentence, b: Sentence) -> float:
    if a.vector is not None and b.vector is not None:
        return float(np.dot(a.vector, b.vector))
    union = a.tokens | b.tokens
    return len(a.tokens & b.tokens) / len(union) if union else 0.0


def _near_duplicate(a: Sentence, b: Sentence) -> bool:
    if a.node.id != b.node.id and a.features.get("evidence") and b.features.get("evidence"):
        return False
    shared = len(a.tokens & b.tokens)
    return shared >= NEAR_DUPLICATE * min(len(a.tokens), len(b.tokens))


def _mmr(sentence: Sentence, chosen: Sequence[Sentence]) -> float:
    """The MMR value of ``sentence`` after ``chosen`` (module docstring, 5)."""
    value = sentence.score - MMR_PENALTY * max(_similarity(sentence, c) for c in chosen)
    return value + W_CONTINUE if _continues(sentence, chosen) else value


def _continues(sentence: Sentence, chosen: Sequence[Sentence]) -> bool:
    """Whether ``sentence`` is of the opener's passage and holds the number the question
    asks for too (the article's other paragraph: "임용연한은 통산 2년을 초과할 수 없다")."""
    return (sentence.node.id == chosen[0].node.id and bool(sentence.features.get("unit"))
            and bool(sentence.features["cue"]))


def select(ranked: Sequence[Sentence], max_sources: int, words: int = 0) -> list[Sentence]:
    """MMR over ``ranked`` (best first) within the answer's limits (module docstring, 5);
    ``words``: already used by a preamble."""
    chosen: list[Sentence] = []
    left = list(ranked)
    while left and len(chosen) < MAX_SENTENCES and (words < TARGET_WORDS or len(chosen) < 2):
        nodes = {s.node.id for s in chosen}
        fits = [s for s in left
                if (not chosen or words + s.words + 1 <= MAX_WORDS)
                and (s.node.id in nodes or len(nodes) < max_sources)
                and not any(_near_duplicate(s, c) for c in chosen)]
        if not fits:
            break
        # 80 words in at most 5 sentences: past the first, a sentence too short to get there
        # in the sentences left gives way to a longer one when there is one (prose: a line of
        # code says what it does in few words, "DELETE [dbo].[Venues] WHERE …")
        need = (MIN_WORDS - words) / (MAX_SENTENCES - len(chosen))
        fits = [s for s in fits if s.words >= need or not chosen or _continues(s, chosen)
                or s.node.metadata.get("code_language")] or fits
        best = max(fits, key=lambda s: _mmr(s, chosen)) if chosen else max(
            fits, key=_answer_score)
        chosen.append(best)
        left.remove(best)
        words += best.words + 1  # and its [n] marker
    return chosen


def reading_order(chosen: Sequence[Sentence]) -> list[Sentence]:
    """The best sentence, then its passage's others in document order, then the other
    passages by their best sentence, each in document order (module docstring, 6)."""
    if not chosen:
        return []
    first = chosen[0]
    groups: dict[str, list[Sentence]] = {}
    for sentence in chosen:
        groups.setdefault(sentence.node.id, []).append(sentence)
    out = [first]
    for group in groups.values():
        out += sorted((s for s in group if s is not first), key=lambda s: s.start)
    return out


FAST_MODELS = frozenset(spec.name for spec in SPECS if spec.ranks_sentences)
"""Models that embed a few dozen sentences within the ask budget (excerpt.embedder_names)."""
SLOW_FLOORS = {spec.name: spec.unrelated_below for spec in SPECS
               if spec.unrelated_below is not None}
"""Models too slow to rank sentences, embedding the opening one alone (:class:`SlowEmbed`),
with the cosine under which a sentence is taken as unrelated (each model's line in
excerpt.embedder_names says why its floor is where it is)."""


SLOW_CHARS = 160
"""The opening sentence's characters a slow model reads: its cost grows with the length (e5,
2 cores: 31 ms for 31 characters, 124 ms for an article's 246 with its list items), and an
article sentence says what it is about first (the tune half's confidences are the same as
with whole sentences)."""


@dataclass(frozen=True)
class SlowEmbed:
    """An embedder too slow to rank sentences by (e5: some 20 ms a Korean sentence on 2
    cores): it scores the opening sentence alone, for caution (:func:`slow_similarity`)."""

    embed: Embed
    floor: float

    def __call__(self, texts: Sequence[str]) -> tuple[Any, Any] | None:
        return self.embed(texts)


def slow_similarity(embed: SlowEmbed, sentence: Sentence) -> None:
    """Give ``sentence`` its ``sem``: the cosine of its first ``SLOW_CHARS`` characters with the
    question in ``embed``'s model, rescaled from the model's floor (0) to 1, and mark it
    ``slow`` (:func:`confidence`)."""
    found = embed([one_line(sentence.text)[:SLOW_CHARS]])
    if found is None:
        return
    query, matrix = found
    cosine = float(np.asarray(matrix, dtype=np.float32)[0] @ np.asarray(query, np.float32))
    sentence.features["sem"] = max(0.0, (cosine - embed.floor) / (1.0 - embed.floor))
    sentence.features["slow"] = 1.0


def view_embed(models: Sequence[str | None], load: Callable[[str], Any],
               question: str) -> Embed | None:
    """The sentence embedder of a view whose parts were all embedded by one model
    (``models``: each part's), ``load`` giving that model's embedder: a fast model's
    (:data:`FAST_MODELS`) ranks sentences, a slow one's (:data:`SLOW_FLOORS`) is a
    :class:`SlowEmbed`; None for mixed models, a view without vectors or another model."""
    found = set(models)
    if len(found) != 1:
        return None
    model = found.pop()
    if model is None or model not in FAST_MODELS | SLOW_FLOORS.keys():
        return None

    def embed(texts: Sequence[str]) -> tuple[Any, Any] | None:
        embedder = load(model)
        return embedder.embed_query(question), embedder.embed_documents(list(texts))

    return SlowEmbed(embed, SLOW_FLOORS[model]) if model in SLOW_FLOORS else embed
