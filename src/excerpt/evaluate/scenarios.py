"""Scenario files: questions with gold passages and reference answers, scored with RAG metrics.

A scenario file is YAML (or JSON) with an optional ``collection`` and a list ``scenarios``; each
scenario has ``id``, ``query``, ``gold`` (node ids that answer it), ``reference`` (the correct
answer, in sentences) and optionally ``kind`` (for the per-kind breakdown) and ``answer`` (an
answer to judge instead of excerpt's own). ``examples/regulations/scenarios.yaml`` is one.

For each scenario the query runs through :meth:`Engine.search` (adaptive ``k`` unless one is
given), the hits' texts are the contexts, and the answer is excerpt's extractive answer (the
best quotes of the hits, :mod:`excerpt.compose.quotes`) unless the scenario brings one. Scores
(definitions and sources in :mod:`excerpt.evaluate.rag`):

* ``context_recall``: reference sentences supported by the contexts (RAGAS context recall);
* ``gold_recall``: gold ids among the hits;
* ``faithfulness``: answer sentences supported by the contexts. An extractive answer is made of
  context sentences, so it scores 1.0 by construction; the measure bites on answers written by
  someone else (``answer`` in the file, or an LLM);
* ``answer_relevancy``: cosine of question and answer under the embedding model; next to it,
  ``answer_relevancy_mismatched``, the same cosine between each question and the answer of
  another scenario (the next one), shows how much of the score any fluent answer would get.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from excerpt.embed.base import Embedder
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.evaluate.metrics import latency_summary, stage_summary
from excerpt.evaluate.rag import (
    answer_relevancy,
    context_recall,
    context_recall_ids,
    faithfulness,
)
from excerpt.types import Filters, Principal, SearchMode

METRICS = ("context_recall", "gold_recall", "faithfulness", "answer_relevancy")

@dataclass(frozen=True)
class Scenario:
    id: str
    query: str
    gold: tuple[str, ...]
    reference: str
    kind: str = ""
    answer: str | None = None


@dataclass(frozen=True)
class ScenarioFile:
    path: Path
    collection: str | None
    scenarios: tuple[Scenario, ...]


def read_data(path: Path) -> Any:
    """The parsed YAML or JSON of ``path``; InputError when it cannot be read or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not valid JSON: {exc}") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML: {exc}") from None


def _scenario(raw: Any, where: str) -> Scenario:
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: a scenario must be a mapping")
    missing = [f for f in ("id", "query", "gold", "reference") if not raw.get(f)]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    gold = raw["gold"]
    if isinstance(gold, str):
        gold = [gold]
    if not isinstance(gold, list) or not all(isinstance(g, str) for g in gold):
        raise InputError(f"{where}: gold must be a list of node ids")
    answer = raw.get("answer")
    return Scenario(str(raw["id"]), str(raw["query"]), tuple(gold), str(raw["reference"]),
                    str(raw.get("kind") or ""), str(answer) if answer else None)


def load_scenarios(path: Path) -> ScenarioFile:
    """Read and check a scenario file; InputError names the first problem."""
    data = read_data(path)
    if not isinstance(data, Mapping) or not isinstance(data.get("scenarios"), list):
        raise InputError(f"{path}: expected a mapping with a list 'scenarios'")
    items = [_scenario(raw, f"{path}: scenario {i + 1}") for i, raw in enumerate(data["scenarios"])]
    if not items:
        raise InputError(f"{path}: no scenarios")
    ids = [s.id for s in items]
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: scenario ids repeat")
    collection = data.get("collection")
    return ScenarioFile(path, str(collection) if collection else None, tuple(items))


def is_scenario_file(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in {".yaml", ".yml", ".json"}


def _cosine(embedder: Embedder) -> Callable[[str, str], float]:
    """Cosine of a question and an answer; each text is embedded once (the mismatched
    baseline pairs the same questions and answers again)."""
    query = lru_cache(maxsize=None)(embedder.embed_query)
    document = lru_cache(maxsize=None)(lambda text: embedder.embed_documents([text])[0])

    def similarity(question: str, answer: str) -> float:
        return float(query(question) @ document(answer))

    return similarity


def default_judge(scenarios: Sequence[Scenario]) -> Embedder:
    """The embedder for answer relevancy: e5 when the questions are Korean, MiniLM otherwise."""
    from excerpt.analyze import detect_language
    from excerpt.embed.registry import choose_embedder_for_language, get_embedder

    language = detect_language(" ".join(s.query for s in scenarios))
    return get_embedder(choose_embedder_for_language(language))


def _score(engine: Engine, scenario: Scenario, filters: Filters, principal: Principal,
           mode: SearchMode, k: int | None, similarity: Callable[[str, str], float],
           reranker: str | None = None) -> dict[str, Any]:
    t = time.perf_counter()
    result = engine.search(scenario.query, filters, principal, mode, k, reranker=reranker)
    latency = (time.perf_counter() - t) * 1000
    passages = [(h.node.id, h.node.text) for h in result.hits]
    contexts = [text for _, text in passages]
    answer = scenario.answer
    t = time.perf_counter()
    if answer is None:  # composed from the hits as ask composes: the answer users get
        answer = engine.compose(scenario.query, result.hits, filters, principal,
                                engine.ask_options()).answer
    stages = {**result.timings_ms, "compose": (time.perf_counter() - t) * 1000}
    return {
        "id": scenario.id,
        "kind": scenario.kind,
        "query": scenario.query,
        "k": result.k,
        "hits": [node_id for node_id, _ in passages],
        "ranking": [node_id for node_id, _ in passages],
        "relevant": list(scenario.gold),
        "missed_gold": [g for g in scenario.gold if g not in {p for p, _ in passages}],
        "answer": answer,
        "context_recall": context_recall(scenario.reference, contexts),
        "gold_recall": context_recall_ids(scenario.gold, [p for p, _ in passages]),
        "faithfulness": faithfulness(answer, contexts),
        "answer_relevancy": answer_relevancy(scenario.query, answer, similarity),
        "latency_ms": latency,
        "stages_ms": stages,
    }


def _mean(rows: Sequence[Mapping[str, Any]], key: str) -> float:
    return sum(float(r[key]) for r in rows) / len(rows) if rows else 0.0


def _mismatched(rows: Sequence[Mapping[str, Any]],
                similarity: Callable[[str, str], float]) -> float:
    if len(rows) < 2:
        return 0.0
    shifted = [*rows[1:], *rows[:1]]
    return sum(answer_relevancy(r["query"], s["answer"], similarity)
               for r, s in zip(rows, shifted, strict=True)) / len(rows)


def seen_snapshots(engine: Engine, collection: str, principal: Principal) -> list[str]:
    """The default view's snapshots the principal may see a node of (the run names no other)."""
    infos = engine.resolve(Filters(collection=collection))
    seen = engine.access.seen_snapshots(infos, principal)
    return [s.snapshot_id for s in infos if s.snapshot_id in seen]


def evaluate_scenarios(engine: Engine, file: ScenarioFile, collection: str | None = None,
                       mode: SearchMode = "hybrid", k: int | None = None,
                       judge: Embedder | None = None,
                       progress: Callable[[str, int, int], None] | None = None,
                       reranker: str | None = None,
                       principal: Principal | None = None) -> dict[str, Any]:
    """Run every scenario of ``file`` as ``principal`` (default: anonymous; its hits and
    answers hold only what it may see) and report the means, per kind, and per scenario."""
    principal = principal or Principal.anonymous()
    name = collection or file.collection
    if not name:
        raise InputError("no collection: give --collection or 'collection:' in the file")
    if name not in engine.store.collections():
        hint = engine.catalogue.suggestion(name, principal)  # only names it may see
        raise InputError(f"collection {name!r} does not exist"
                         f"{hint or '; ingest the book into it first'}")
    similarity = _cosine(judge or default_judge(file.scenarios))
    rows = []
    for i, scenario in enumerate(file.scenarios):
        rows.append(_score(engine, scenario, Filters(collection=name), principal, mode, k,
                           similarity, reranker))
        if progress:
            progress("scenarios", i + 1, len(file.scenarios))
    kinds = sorted({r["kind"] for r in rows if r["kind"]})
    return {
        "scenarios": len(rows),
        "collection": name,
        "mode": mode,
        "k": k if k is not None else "adaptive",
        "reranker": reranker or "none",
        "principal": principal.describe(),
        **{m: _mean(rows, m) for m in METRICS},
        "answer_relevancy_mismatched": _mismatched(rows, similarity),
        "latency_ms": latency_summary([r["latency_ms"] for r in rows]),
        "stage_latency_ms": stage_summary([r["stages_ms"] for r in rows]),
        "snapshot_ids": seen_snapshots(engine, name, principal),
        "by_kind": {kind: {"scenarios": len(sub), **{m: _mean(sub, m) for m in METRICS}}
                    for kind in kinds if (sub := [r for r in rows if r["kind"] == kind])},
        "per_scenario": rows,
    }
