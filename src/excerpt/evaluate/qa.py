"""QA evaluation: questions with the facts an answer must state, run through ``Engine.ask``.

A QA file is YAML (or JSON) marked ``kind: qa``, with a ``collection`` and ``questions``::

    kind: qa
    collection: books
    questions:
      - id: dorian-portrait-hidden
        question: Why does Dorian hide the portrait?
        facts: [[sin*], [age, ageing, aging, old*]]   # every fact stated; any phrasing of each
        gold: [pg174:ch10:0002]                        # node ids that hold the facts
        answerable: true                               # default true
        split: tune                                    # tune | heldout | fresh | fresh2 | blind
        corpus: dorian                                 # optional; default: the collection

An answerable question needs ``facts`` and ``gold``, or ``evidence`` instead of ``gold``: short
verbatim spans of the passage that answers, found in the collection when the evaluation runs
(the nodes whose text holds a span, white space aside, are its gold), so that a question written
without running excerpt needs no node id and survives a change of chunking; a span found in no
node the caller may see is an error naming it. An unanswerable one (``answerable: false``: it
sounds like the corpus but the corpus does not say) has neither; ``out_of_collection: true``
marks one whose subject the collection does not hold at all. A fact given as a string is one
phrasing. Matching rules: :mod:`excerpt.evaluate.qa_metrics`.

Each question is asked once (``Engine.ask``, as the given principal, with the given mode,
``doc_limit`` and reranker; with the LLM when one is given) and scored; the report gives,
overall, per split and per corpus:

* ``fact_stated``: answerable questions whose answer (markers stripped) states every fact;
* ``fact_in_quotes``: answerable questions whose quotes together state every fact;
  ``fact_in_documents`` the same over the passages composition read, ``fact_in_candidates`` over
  every passage retrieval found before they were narrowed to those: which stage lost a fact;
* ``gold_recall@k``: gold ids among the passages that reached composition (``documents``),
  averaged over answerable questions; ``gold_in_quotes`` the same over the quotes' nodes;
* ``citation_precision``: answer sentences (that cite) supported by the quotes they cite;
* ``quotes_verbatim``: quotes that are exact substrings of their node's stored text
  (``quotes_verbatim_spaces``: the same with white space normalised);
* ``citation_numbering``: answers whose numbering is right (1..n, all cited, no node twice);
* ``cautious_precision`` / ``cautious_recall``: of the cautious answers, those to unanswerable
  questions / of the unanswerable questions, those answered cautiously;
  ``cautious_out_of_collection``: of the questions marked ``out_of_collection``, those answered
  cautiously;
  ``cautious_on_answerable``: answerable questions answered cautiously; ``abstention_accuracy``:
  cautious on unanswerable and not cautious on answerable;
* latency percentiles of the whole ask and of each of its stages (after one untimed ask, so
  that loading the models is not counted against the first question).

A ratio with nothing to count (no unanswerable question in a split, say) is None.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from excerpt.compose.ask import AskOptions, AskResult
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.evaluate.metrics import latency_summary, stage_summary
from excerpt.evaluate.qa_metrics import (
    Fact,
    cited_sentences,
    is_verbatim,
    is_verbatim_spaces,
    missing_facts,
    numbering_problems,
    ratio,
    sentence_support,
    strip_marks,
)
from excerpt.evaluate.scenarios import read_data, seen_snapshots
from excerpt.types import Filters, Principal, SearchMode

SPLITS = ("tune", "heldout", "fresh", "fresh2", "blind")
"""tune: read while choosing; heldout: measured, not read; fresh and fresh2: further held-out sets,
each written after the ones before it had been measured, for a choice those can no longer judge;
blind: written (issue 29) by readers who never ran excerpt nor saw a figure, a quarter of them
unanswerable, and never read while choosing: its share is reported, its questions are not."""
METRICS = ("fact_stated", "fact_in_quotes", "fact_in_documents", "fact_in_candidates",
           "gold_recall@k", "gold_in_quotes",
           "citation_precision", "quotes_verbatim", "quotes_verbatim_spaces",
           "citation_numbering", "cautious_precision", "cautious_recall",
           "cautious_on_answerable", "cautious_out_of_collection", "abstention_accuracy")


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    facts: tuple[Fact, ...]
    gold: tuple[str, ...]
    answerable: bool
    split: str
    corpus: str
    evidence: tuple[str, ...] = ()
    out_of_collection: bool = False


@dataclass(frozen=True)
class QAFile:
    path: Path
    collection: str | None
    questions: tuple[Question, ...]


def is_qa_file(path: Path) -> bool:
    """A .yaml/.yml/.json file whose top level says ``kind: qa``."""
    if not (path.is_file() and path.suffix.lower() in {".yaml", ".yml", ".json"}):
        return False
    data = read_data(path)
    return isinstance(data, Mapping) and data.get("kind") == "qa"


def _strings(value: Any, where: str, field: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(f"{where}: {field} must be a list of non-empty strings "
                         "(quote numbers: \"1.50\")")
    return tuple(value)


def _facts(value: Any, where: str) -> tuple[Fact, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f"{where}: facts must be a list (each fact a phrasing or a list of them)")
    return tuple(_strings(fact, where, "each fact") for fact in value)


def _question(raw: Any, where: str, default_corpus: str) -> Question:
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: a question must be a mapping")
    missing = [f for f in ("id", "question", "split") if not raw.get(f)]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    where = f"{where} ({raw['id']})"
    answerable = raw.get("answerable", True)
    if not isinstance(answerable, bool):
        raise InputError(f"{where}: answerable must be true or false")
    if raw["split"] not in SPLITS:
        raise InputError(f"{where}: split must be one of {', '.join(SPLITS)}")
    facts = _facts(raw.get("facts"), where)
    gold = _strings(raw.get("gold") or [], where, "gold") if raw.get("gold") else ()
    evidence = _strings(raw["evidence"], where, "evidence") if raw.get("evidence") else ()
    outside = raw.get("out_of_collection", False)
    if not isinstance(outside, bool) or (outside and answerable):
        raise InputError(f"{where}: out_of_collection is true or false, and only an "
                         "unanswerable question is out of the collection")
    if answerable and not (facts and (gold or evidence)):
        raise InputError(f"{where}: an answerable question needs facts and gold (or evidence)")
    if not answerable and (facts or evidence):
        raise InputError(f"{where}: an unanswerable question has no facts and no evidence")
    return Question(str(raw["id"]), str(raw["question"]), facts, gold, answerable,
                    str(raw["split"]), str(raw.get("corpus") or default_corpus), evidence,
                    outside)


def load_qa(path: Path) -> QAFile:
    """Read and check a QA file; InputError names the file, the question and the field."""
    data = read_data(path)
    if not isinstance(data, Mapping) or data.get("kind") != "qa":
        raise InputError(f"{path}: not a QA file (expected 'kind: qa' at the top)")
    if not isinstance(data.get("questions"), list) or not data["questions"]:
        raise InputError(f"{path}: expected a non-empty list 'questions'")
    collection = str(data["collection"]) if data.get("collection") else None
    items = [_question(raw, f"{path}: question {i + 1}", collection or "")
             for i, raw in enumerate(data["questions"])]
    ids = [q.id for q in items]
    if repeated := sorted({i for i in ids if ids.count(i) > 1}):
        raise InputError(f"{path}: question ids repeat: {', '.join(repeated)}")
    return QAFile(path, collection, tuple(items))


NodeTexts = Callable[[Sequence[str]], Mapping[str, str]]


def score_answer(question: Question, result: AskResult,
                 node_texts: NodeTexts) -> dict[str, Any]:
    """One question's row: what the answer said, and each check's outcome."""
    composed = result.composed
    answer = composed.answer
    quotes = [(q.node_id, q.text) for q in composed.quotes]
    joined_quotes = "\n".join(text for _, text in quotes)
    documents = [p.node.id for p in result.documents]
    texts = {p.node.id: p.node.text for p in result.documents}
    if unseen := [i for i, _ in quotes if i not in texts]:
        texts.update(node_texts(unseen))
    support = sentence_support(answer, {n: t for n, (_, t) in enumerate(quotes, start=1)})
    citations = [(c.n, c.node_id) for c in composed.citations]
    problems = numbering_problems(answer, citations)
    facts_missing = missing_facts(strip_marks(answer), question.facts)
    quotes_missing = missing_facts(joined_quotes, question.facts)
    read = missing_facts("\n".join(p.node.text for p in result.documents), question.facts)
    found = missing_facts("\n".join(p.node.text for p in result.candidates), question.facts)
    gold = set(question.gold)
    return {
        "id": question.id, "question": question.question, "query": question.question,
        "split": question.split,
        "corpus": question.corpus, "answerable": question.answerable,
        "out_of_collection": question.out_of_collection,
        "answer": answer, "cautious": composed.cautious,
        "quotes": [{"id": i, "text": t} for i, t in quotes],
        "citations": [i for _, i in citations],
        "documents": documents,
        "relevant": list(question.gold), "ranking": documents,
        "fact_stated": not facts_missing if question.answerable else None,
        "facts_missing": [list(f) for f in facts_missing] if question.answerable else [],
        "fact_in_quotes": not quotes_missing if question.answerable else None,
        "fact_in_documents": not read if question.answerable else None,
        "fact_in_candidates": not found if question.answerable else None,
        "gold_recall@k": (len(gold & set(documents)) / len(gold)) if gold else None,
        "gold_in_quotes": (len(gold & {i for i, _ in quotes}) / len(gold)) if gold else None,
        "missed_gold": [g for g in question.gold if g not in documents],
        "sentences": len(cited_sentences(answer)),
        "sentences_cited": len(support), "sentences_supported": sum(support),
        "quotes_total": len(quotes),
        "quotes_verbatim": sum(is_verbatim(t, texts.get(i)) for i, t in quotes),
        "quotes_verbatim_spaces": sum(is_verbatim_spaces(t, texts.get(i)) for i, t in quotes),
        "citation_numbering": not problems, "numbering_problems": problems,
        "abstention_accuracy": float(composed.cautious != question.answerable),
        "llm_answer": result.reader["name"] != "extractive" and not result.reader["fell_back"],
        "reader": result.reader, "synthesis": result.synthesis,
        "stages_ms": dict(result.timings_ms),
    }


def _share(rows: Sequence[Mapping[str, Any]], key: str) -> float | None:
    values = [float(r[key]) for r in rows if r.get(key) is not None]
    return ratio(sum(values), len(values))


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The metrics of a group of question rows (see the module docstring)."""
    unanswerable = [r for r in rows if not r["answerable"]]
    outside = [r for r in unanswerable if r.get("out_of_collection")]
    answerable = [r for r in rows if r["answerable"]]
    cautious = [r for r in rows if r["cautious"]]
    right = sum(1 for r in rows if r["cautious"] != r["answerable"])
    return {
        "questions": len(rows), "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "fact_stated": _share(answerable, "fact_stated"),
        "fact_in_quotes": _share(answerable, "fact_in_quotes"),
        "fact_in_documents": _share(answerable, "fact_in_documents"),
        "fact_in_candidates": _share(answerable, "fact_in_candidates"),
        "gold_recall@k": _share(answerable, "gold_recall@k"),
        "gold_in_quotes": _share(answerable, "gold_in_quotes"),
        "citation_precision": ratio(sum(r["sentences_supported"] for r in rows),
                                    sum(r["sentences_cited"] for r in rows)),
        "quotes_verbatim": ratio(sum(r["quotes_verbatim"] for r in rows),
                                 sum(r["quotes_total"] for r in rows)),
        "quotes_verbatim_spaces": ratio(sum(r["quotes_verbatim_spaces"] for r in rows),
                                        sum(r["quotes_total"] for r in rows)),
        "citation_numbering": _share(rows, "citation_numbering"),
        "cautious_precision": ratio(sum(not r["answerable"] for r in cautious), len(cautious)),
        "cautious_recall": ratio(sum(r["cautious"] for r in unanswerable), len(unanswerable)),
        "cautious_on_answerable": ratio(sum(r["cautious"] for r in answerable), len(answerable)),
        "cautious_out_of_collection": ratio(sum(r["cautious"] for r in outside), len(outside)),
        "abstention_accuracy": ratio(right, len(rows)),
        "latency_ms": latency_summary([r["latency_ms"] for r in rows]),
        "stage_latency_ms": stage_summary([r["stages_ms"] for r in rows]),
    }


def _node_texts(engine: Engine, filters: Filters, principal: Principal) -> NodeTexts:
    """Stored texts of nodes the caller may see, whole (no token budget cuts them)."""
    def fetch(ids: Sequence[str]) -> dict[str, str]:
        found = engine.context(list(ids), filters=filters, principal=principal,
                               budget_tokens=10**9, max_chars=10**12)
        return {n.id: n.text for n in found.node_texts}

    return fetch


def with_gold(engine: Engine, question: Question, filters: Filters,
              principal: Principal) -> Question:
    """``question`` with the nodes that hold its evidence spans as its gold (white space aside;
    each span searched with BM25 and checked verbatim in the top 50), when it gives evidence;
    InputError naming the question and the span that no node the principal may see holds."""
    if not question.evidence:
        return question
    gold: list[str] = list(question.gold)
    for span in question.evidence:
        wanted = _squashed(span)
        hits = engine.search(span, filters, principal, "bm25", 50).hits
        found = [h.node.id for h in hits if wanted in _squashed(h.node.text)]
        if not found:
            raise InputError(f"{question.id}: no passage holds the evidence {span[:80]!r}")
        gold += [node_id for node_id in found if node_id not in gold]
    return replace(question, gold=tuple(gold))


def _squashed(text: str) -> str:
    return " ".join(text.split()).casefold()


def select(questions: Sequence[Question], split: str) -> list[Question]:
    """The questions of ``split`` (one of :data:`SPLITS`, or "all")."""
    return list(questions) if split == "all" else [q for q in questions if q.split == split]


def evaluate_qa(engine: Engine, file: QAFile, collection: str | None = None,
                mode: SearchMode = "hybrid", options: AskOptions | None = None,
                reranker: str | None = None, principal: Principal | None = None,
                split: str = "all", llm: Any = None,
                progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Ask every question of ``file`` in ``split`` as ``principal`` (default anonymous) and
    report the metrics overall, per split and per corpus, with one row per question."""
    principal = principal or Principal.anonymous()
    name = collection or file.collection
    if not name:
        raise InputError("no collection: give --collection or 'collection:' in the file")
    if name not in engine.store.collections():
        hint = engine.catalogue.suggestion(name, principal)  # only names it may see
        raise InputError(f"collection {name!r} does not exist"
                         f"{hint or '; ingest the corpus into it first'}")
    questions = select(file.questions, split)
    if not questions:
        raise InputError(f"{file.path}: no questions in split {split!r}")
    filters = Filters(collection=name)
    texts = _node_texts(engine, filters, principal)
    questions = [with_gold(engine, q, filters, principal) for q in questions]
    # One untimed ask first: loading the models is not a cost of any one question.
    engine.ask(questions[0].question, filters, principal, mode, options, reranker)
    rows = []
    for i, question in enumerate(questions):
        t = time.perf_counter()
        result = engine.ask(question.question, filters, principal, mode, options, reranker,
                            llm=llm)
        row = score_answer(question, result, texts)
        rows.append({**row, "latency_ms": (time.perf_counter() - t) * 1000})
        if progress:
            progress("questions", i + 1, len(questions))
    return _report(engine, name, rows, mode, options, reranker, principal, split)


def _report(engine: Engine, name: str, rows: list[dict[str, Any]], mode: str,
            options: AskOptions | None, reranker: str | None, principal: Principal,
            split: str) -> dict[str, Any]:
    reader = rows[0]["reader"]
    model = reader["model"]
    return {
        "collection": name, "mode": mode, "split": split,
        "k": (options or engine.ask_options()).doc_limit,
        "reranker": reranker or engine.settings.reranker, "principal": principal.describe(),
        "answerer": f"{reader['name']}:{model}" if model else reader["name"],
        "reader": reader["name"], "llm_model": model,
        "llm_answers": sum(r["llm_answer"] for r in rows),
        **summarise(rows),
        "by_split": {s: summarise(sub) for s in SPLITS
                     if (sub := [r for r in rows if r["split"] == s])},
        "by_corpus": {c: summarise(sub) for c in sorted({r["corpus"] for r in rows})
                      if (sub := [r for r in rows if r["corpus"] == c])},
        "snapshot_ids": seen_snapshots(engine, name, principal),
        "per_question": rows,
    }
