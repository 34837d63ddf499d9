"""The ask pipeline: ground, retrieve per concept, rerank (over-fetch then narrow), compose.

1. **Grounding**: the question's concepts (:mod:`excerpt.compose.grounding`, or the LLM's
   when one is configured and answers) and the part of a book or document it names (scope:
   a book or chapter, a page, a numbered section).
2. **Exploration**: each concept (``per_concept = max(1, fetch_count // len(concepts))``
   passages), then the question itself (``fetch_count``), inside the scope (a page: first as
   the printed page label, then as the page's position, :func:`excerpt.compose.grounding.
   alternatives`; without any scope when none of these matches), merged in that order, a
   node seen again dropped (first occurrence kept); a question that is its own single concept
   is searched once. With a dense ranking the question is searched as typed; BM25 alone gets
   it without its framing words (:func:`excerpt.compose.grounding.search_text`: a bare "who"
   matches any "who may see"). Measured on the answerable questions of bench/qa/books.yaml
   (bench/qa_retrieval.py), a passage holding every fact is among the candidates for 0.92 of
   them in hybrid (0.62 from the concepts alone, 0.83 from the question alone) and 0.79 in
   BM25 (0.62, 0.79; the question as typed: 0.71).
3. **Focus** (seed 003): with a reranker, ``fetch_count = max(fetch_limit or OVERFETCH_FACTOR *
   doc_limit, doc_limit)`` and the reranker narrows the candidates to ``doc_limit`` in its order
   with its scores; it is never called on an empty list. Without one, ``fetch_count =
   doc_limit`` and the candidates reach composition unchanged, in order.
4. **Diversify** (optional): MMR over the candidates' stored vectors, λ = ``mmr_lambda``,
   relevance taken from the order they arrived in.
5. **Synthesis**: the extractive composer (:mod:`excerpt.compose.composer`) always; then the
   reader (:mod:`excerpt.compose.readers`: ``options.reader``) when it is a model: its answer
   after the attribution check (:mod:`excerpt.compose.synthesis`, each sentence as soon as it is
   judged to ``on_sentence``) opens the answer and the extractive answer follows it (a model
   only adds: what the quotes state is never lost to a reader that left it out); the
   extractive answer alone, saying why, when nothing survives or the model fails.
   ``AskResult.reader`` says who wrote the answer, with its tokens and time.

The question is read once (:class:`excerpt.query.question.Question`: its language, tokens and,
when it is searched as typed, its query plan): grounding, exploration and composition read it
instead of detecting and analysing the text again (the engine passes the one it read, with its
query lexicon; a text given here is read with the packaged one).

Every stage can emit a PROV-O event (:class:`excerpt.provenance.prov.ProvenanceRecorder`). The
pipeline only ever sees what ``search`` returned, which is what the caller may see, so the
events, quotes and citations cannot mention anything else.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from excerpt import telemetry
from excerpt.compose.answer_json import document_json, quotes_with_context
from excerpt.compose.composer import MIN_CONFIDENCE, ComposedAnswer, compose
from excerpt.compose.extract import Embed
from excerpt.compose.grounding import alternatives, search_text
from excerpt.compose.grounding import concepts as offline_concepts
from excerpt.compose.grounding import scope as question_scope
from excerpt.compose.synthesis import ChatClient, KeptSentence
from excerpt.provenance.prov import ExplainCallback, ProvenanceRecorder
from excerpt.query.question import Question
from excerpt.rerank.base import Reranker
from excerpt.retrieve.searcher import OVERFETCH_FACTOR
from excerpt.types import Hit, IdfWeights

SearchFn = Callable[[str, int, Mapping[str, Any]], list[Hit]]
"""(query, k, metadata scope) -> the hits the caller may see, best first: a search's own, which
every stage passes on (a reranker only changes their scores), so the nodes quoted and recorded
are the ones the search fetched."""


@dataclass(frozen=True)
class AskOptions:
    doc_limit: int = 10
    fetch_limit: int | None = None
    max_quotes: int = 4
    mmr_lambda: float | None = None
    min_confidence: float = MIN_CONFIDENCE
    said: str = field(default="", repr=False)
    """A conversation's previous answer: its sentences give way to new ones that answer as
    surely (a follow-up moves on instead of repeating; see compose.composer.compose)."""
    reader: str = "extractive"
    """Who writes the answer (compose.readers.READERS)."""
    reader_model: str | None = None
    """reader 'local': a GGUF file instead of the reader_model setting (the command line's and
    the Python API's; requests over the network never carry a path)."""


def fetch_count(doc_limit: int, fetch_limit: int | None, reranking: bool) -> int:
    """Candidates to retrieve: over-fetch only when a reranker will narrow them (seed 003)."""
    if not reranking:
        return doc_limit
    return max(fetch_limit or OVERFETCH_FACTOR * doc_limit, doc_limit)


def per_concept(count: int, concepts: int) -> int:
    return max(1, count // max(1, concepts))


@dataclass
class AskResult:
    question: str
    language: str
    concepts: list[str]
    scope: dict[str, Any]
    candidates: list[Hit]
    documents: list[Hit]
    composed: ComposedAnswer
    reranker: str | None
    timings_ms: dict[str, float] = field(default_factory=dict)
    recorder: ProvenanceRecorder | None = None
    synthesis: dict[str, Any] | None = None
    reader: dict[str, Any] = field(default_factory=lambda: extractive_reader())

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "question": self.question,
            "answer": self.composed.answer,
            "cautious": self.composed.cautious,
            "quotes": quotes_with_context(self.composed.quotes_json(), self.documents),
            "citations": [c.to_json() for c in self.composed.citations],
            "concepts": self.concepts,
            "scope": self.scope,
            "reranker": self.reranker,
            "documents": [document_json(p) for p in self.documents],
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
            "reader": self.reader,
        }
        if self.synthesis is not None:
            out["synthesis"] = self.synthesis
        if explain and self.recorder is not None:
            out["provenance"] = [e.to_json() for e in self.recorder.events]
        return out


@dataclass
class AskPipeline:
    search: SearchFn
    reranker: Reranker | None = None
    weights: Callable[[Question], IdfWeights] | None = None
    """question -> the idf weights of its tokens in the collection (the composer's coverage)."""
    vectors: Callable[[Sequence[Hit]], Any] | None = None
    llm: ChatClient | None = None
    """The reader's chat client (compose.readers.open_reader); None: extractive only."""
    reader_name: str = "extractive"
    model_concepts: bool = False
    """Ask the model for the question's concepts too (the openai reader: a remote model is
    quick; a local one would double the wait)."""
    embed: Callable[[str], Embed | None] | None = None
    """question -> a sentence embedder for it (the collection's model), or None."""
    as_typed: bool = False
    """Search the question as typed (a dense ranking: its model learned from questions) rather
    than without its framing words (BM25 alone, where "who" would match any "who")."""

    def run(self, question: str | Question, options: AskOptions | None = None,
            explain: ExplainCallback | None = None, record: bool = False,
            on_sentence: Callable[[KeptSentence], None] | None = None) -> AskResult:
        """Answer ``question``: a text, or the question its caller read already (the engine:
        with its query lexicon); every stage reads the one :class:`Question`."""
        asked = question if isinstance(question, Question) else Question.read(question)
        question, language = asked.text, asked.language
        options = options or AskOptions()
        timings: dict[str, float] = {}
        recorder = ProvenanceRecorder(question, explain) if (explain or record) else None
        if recorder:
            recorder.question()
        t = time.perf_counter()
        concepts, scope = self._ground(asked), question_scope(question)
        timings["grounding"] = telemetry.elapsed("grounding", t)
        if recorder:
            recorder.grounding(concepts)
        with telemetry.stage("retrieval", timings) as retrieval:
            count = fetch_count(options.doc_limit, options.fetch_limit,
                                self.reranker is not None)
            candidates, scope = self._explore(asked, concepts, count, scope)
            retrieval.set("excerpt.candidates", len(candidates))
        if recorder:
            recorder.exploration(candidates)
        documents = self._focus(question, candidates, options, recorder, timings)
        documents = self._diversify(documents, options, timings)
        t = time.perf_counter()
        weights = self.weights(asked) if self.weights else None
        composed = compose(asked, documents, language, options.max_quotes,
                           options.min_confidence, weights,
                           self.embed(question) if self.embed else None, options.said,
                           weights.absent if weights is not None else frozenset())
        timings["compose"] = telemetry.elapsed("compose", t)
        composed, synthesis, reader = self._read(question, composed, language, timings,
                                                 on_sentence)
        if recorder:
            cited = {c.node_id for c in composed.citations}
            recorder.synthesis(composed.answer,
                               [h for h in documents if h.node.id in cited], reader)
        timings["total"] = sum(timings.values())
        return AskResult(question, language, concepts, scope, candidates, documents, composed,
                         self.reranker.name if self.reranker else None, timings, recorder,
                         synthesis, reader)

    def _ground(self, question: Question) -> list[str]:
        if self.llm is not None and self.model_concepts:
            from excerpt.compose.synthesis import extract_concepts

            found = extract_concepts(question.text, self.llm)
            if found:
                return found
        return offline_concepts(question.text, question.language)

    def _explore(self, question: Question, concepts: Sequence[str], count: int,
                 scope: dict[str, Any]) -> tuple[list[Hit], dict[str, Any]]:
        queries = [(c, per_concept(count, len(concepts))) for c in concepts]
        whole = question.text if self.as_typed else search_text(question.text,
                                                                 question.language)
        queries += [(whole, count)] if whole not in concepts else []
        for tried in alternatives(scope):
            merged = _merge([self.search(q, k, tried) for q, k in queries])
            if merged:
                return merged, tried
        # no scope, or it matched nothing: search the whole view
        return _merge([self.search(q, k, {}) for q, k in queries]), {}

    def _focus(self, question: str, candidates: list[Hit], options: AskOptions,
               recorder: ProvenanceRecorder | None,
               timings: dict[str, float]) -> list[Hit]:
        if self.reranker is None:
            return candidates
        if not candidates:  # the reranker never sees an empty list, and no focus is recorded
            return []
        t = time.perf_counter()
        results = self.reranker.rerank(question, [h.node.text for h in candidates],
                                       options.doc_limit)
        timings["rerank"] = telemetry.elapsed("rerank", t)
        kept = [replace(candidates[r.index], score=r.score) for r in results]
        if recorder:
            recorder.focus(kept)
        return kept

    def _diversify(self, documents: list[Hit], options: AskOptions,
                   timings: dict[str, float]) -> list[Hit]:
        if options.mmr_lambda is None or self.vectors is None or len(documents) < 3:
            return documents
        from excerpt.rerank.mmr import mmr

        t = time.perf_counter()
        query_vec, doc_vecs = self.vectors(documents)
        if doc_vecs is None:
            return documents
        # Relevance from the pipeline's order (scores of different concepts' searches, or of a
        # reranker, are not on one scale): 1.0 for the first passage down to 1/n for the last.
        n = len(documents)
        order = mmr(query_vec, doc_vecs, [1.0 - i / n for i in range(n)], n,
                    options.mmr_lambda)
        timings["mmr"] = telemetry.elapsed("mmr", t)
        return [documents[i] for i in order]

    def _read(self, question: str, composed: ComposedAnswer, language: str,
              timings: dict[str, float], on_sentence: Callable[[KeptSentence], None] | None
              ) -> tuple[ComposedAnswer, dict[str, Any] | None, dict[str, Any]]:
        """The reader's turn: (the answer, the synthesis JSON, the reader JSON). A model only
        adds: its checked sentences open the answer and the extractive answer follows."""
        synthesis = self._synthesize(question, composed, language, timings, on_sentence)
        reader = self._reader_json(synthesis, composed)
        if not reader["fell_back"] and synthesis:
            composed = replace(composed, answer=f"{synthesis['answer']}\n\n{composed.answer}")
        return composed, synthesis, reader

    def _synthesize(self, question: str, composed: ComposedAnswer, language: str,
                    timings: dict[str, float],
                    on_sentence: Callable[[KeptSentence], None] | None
                    ) -> dict[str, Any] | None:
        """The reader's checked answer as JSON (``"error"`` when the model failed), or None when
        no model reads (extractive, no quotes to read, or a cautious answer: the passages do
        not answer the question, and a model would only restate them or answer from what it
        knows, "The capital of Australia is Canberra. [3]")."""
        if self.llm is None or not composed.quotes or composed.cautious:
            return None
        from excerpt.compose.synthesis import quote_agreement, synthesize
        from excerpt.errors import ServiceError

        with telemetry.stage("read", timings, _chat_attributes(self.llm.model)) as read:
            embed = self.embed(question) if self.embed else None
            agreement = quote_agreement(embed, composed.quotes) if embed is not None else None
            try:
                result = synthesize(question, composed.quotes, self.llm, language, agreement,
                                    on_sentence)
            except (ServiceError, RuntimeError, ValueError, OSError) as exc:  # failed
                read.set("error.type", type(exc).__name__)
                return {"error": str(exc) or type(exc).__name__, "answer": "",
                        "model": self.llm.model}
            read.set("gen_ai.usage.input_tokens", result.tokens_in)
            read.set("gen_ai.usage.output_tokens", result.tokens_out)
        return result.to_json()

    def _reader_json(self, synthesis: dict[str, Any] | None,
                     composed: ComposedAnswer) -> dict[str, Any]:
        """Who wrote the answer: the reader, its model, tokens and time, and whether the
        extractive answer stands in for it (``fell_back``) and why."""
        if self.llm is None:
            return extractive_reader()
        out: dict[str, Any] = {"name": self.reader_name, "model": self.llm.model,
                               "tokens_in": 0, "tokens_out": 0, "ms": 0.0, "fell_back": True}
        if synthesis is None:
            return {**out, "reason": "no quotes to read" if not composed.quotes else
                    "the passages do not answer this closely (cautious): the model was not asked"}
        out.update(tokens_in=synthesis.get("tokens_in", 0),
                   tokens_out=synthesis.get("tokens_out", 0), ms=synthesis.get("ms", 0.0))
        if synthesis.get("error"):
            return {**out, "reason": f"the model failed: {synthesis['error']}"}
        if not synthesis.get("answer"):
            return {**out, "reason": "no sentence of the model's survived the check"
                                     if synthesis.get("raw", "").strip() else
                                     "the model said nothing"}
        return {**out, "fell_back": False}


def extractive_reader() -> dict[str, Any]:
    """The ``reader`` of an answer no model read."""
    return {"name": "extractive", "model": None, "tokens_in": 0, "tokens_out": 0, "ms": 0.0,
            "fell_back": False}


def _merge(lists: Sequence[Sequence[Hit]]) -> list[Hit]:
    """The searches' hits in order, a node seen again dropped (its first hit kept)."""
    seen: set[tuple[str, str]] = set()
    out: list[Hit] = []
    for hits in lists:
        for h in hits:
            key = (h.snapshot_id, h.node.id)
            if key not in seen:
                seen.add(key)
                out.append(h)
    return out


def _chat_attributes(model: str) -> dict[str, str]:
    """The read stage's GenAI attributes: a chat with the reader's model (a local model's
    file by its name only: the server's paths are not the trace's business)."""
    return {"gen_ai.operation.name": "chat",
            "gen_ai.request.model": model.replace("\\", "/").rsplit("/", 1)[-1]}
