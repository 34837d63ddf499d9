"""Two stored evaluation runs side by side: metric differences with a paired significance test
(two-sided paired Student's t-test, or Fisher's randomization test), and the queries that
changed most, with their top hits from each run.

The test pairs the runs' per-query values of a metric over the queries both runs scored. The
t-test is ranx's implementation, called on those arrays, so its p-value is the one
``ranx.compare`` reports. The randomization test is ranx's definition (each permutation swaps
the two systems' scores of each query with probability 1/2; p = the share of permutations whose
absolute mean difference reaches the observed one) computed here with numpy's seeded
generator: ranx draws its permutations in parallel numba threads, so the same two runs gave
p = 0.000 to 0.005 from one call to the next; here the same runs and seed give the same p.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from excerpt.errors import InputError

IR_METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")
RAG_METRICS = ("context_recall", "gold_recall", "faithfulness", "answer_relevancy")
QA_METRICS = ("fact_stated", "fact_in_quotes", "gold_recall@k", "citation_numbering",
              "abstention_accuracy")  # per question too (evaluate/qa.py)
TESTS = ("student", "fisher")


def metrics_of(run: Mapping[str, Any]) -> tuple[str, ...]:
    return {"beir": IR_METRICS, "qa": QA_METRICS}.get(run["kind"], RAG_METRICS)


def item_value(item: Mapping[str, Any], metric: str) -> float:
    """A per-query value of ``metric``; 0 when the item has none."""
    return float(item.get(metric) or 0.0)


def scored(items_a: Mapping[str, Mapping[str, Any]], items_b: Mapping[str, Mapping[str, Any]],
           metric: str) -> list[str]:
    """The queries both runs scored on ``metric`` (a QA question has no fact_stated when it
    is unanswerable: it is left out of that metric's pairs)."""
    return [q for q in items_a if q in items_b
            and items_a[q].get(metric, 0.0) is not None and items_b[q].get(metric, 0.0) is not None]


def paired_p_value(control: Sequence[float], treatment: Sequence[float],
                   test: str = "student", n_permutations: int = 1000,
                   random_seed: int = 42) -> float:
    """ranx's p-value for the paired per-query scores of two systems (1.0 when they are
    identical: no test can tell them apart)."""
    a, b = np.asarray(control, dtype=np.float64), np.asarray(treatment, dtype=np.float64)
    if len(a) < 2 or np.array_equal(a, b):
        return 1.0
    if test == "student":
        from ranx.statistical_tests import paired_student_t_test

        p_value, _ = paired_student_t_test(a, b)
    elif test == "fisher":
        p_value = randomization_p_value(a, b, n_permutations, random_seed)
    else:
        raise InputError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
    value = float(p_value)
    return 1.0 if np.isnan(value) else value


def randomization_p_value(control: np.ndarray, treatment: np.ndarray, n_permutations: int,
                          random_seed: int, block: int = 256) -> float:
    """Fisher's paired randomization test (module docstring): swapping a query's two scores
    flips the sign of its difference, so each permutation is a row of random signs."""
    diff = np.asarray(control, dtype=np.float64) - np.asarray(treatment, dtype=np.float64)
    observed = abs(diff.mean())
    rng = np.random.default_rng(random_seed)
    reached = 0
    for start in range(0, n_permutations, block):  # bounded memory for long query lists
        signs = rng.choice((-1.0, 1.0), size=(min(block, n_permutations - start), len(diff)))
        reached += int(np.count_nonzero(np.abs(signs @ diff) / len(diff) >= observed))
    return reached / n_permutations


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    a: float
    b: float
    p_value: float
    significant: bool

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "a": round(self.a, 6), "b": round(self.b, 6),
                "delta": round(self.b - self.a, 6), "p_value": self.p_value,
                "significant": self.significant}


def _items(run: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(item["id"]): item for item in run["items"]}


def compare_runs(a: Mapping[str, Any], b: Mapping[str, Any], test: str = "student",
                 max_p: float = 0.05, top: int = 10) -> dict[str, Any]:
    """Run ``b`` against run ``a`` (the control) on the queries both scored."""
    if (a["kind"], a["dataset"], a.get("split")) != (b["kind"], b["dataset"], b.get("split")):
        raise InputError(f"runs {a['id']} and {b['id']} evaluate different datasets "
                         f"({a['dataset']} {a.get('split') or ''} / {b['dataset']} "
                         f"{b.get('split') or ''})")
    items_a, items_b = _items(a), _items(b)
    common = [q for q in items_a if q in items_b]
    if not common:
        raise InputError(f"runs {a['id']} and {b['id']} share no query")
    deltas = []
    for metric in metrics_of(a):
        pairs = scored(items_a, items_b, metric)
        if not pairs:
            continue
        xs = [item_value(items_a[q], metric) for q in pairs]
        ys = [item_value(items_b[q], metric) for q in pairs]
        p_value = paired_p_value(xs, ys, test)
        deltas.append(MetricDelta(metric, float(np.mean(xs)), float(np.mean(ys)), p_value,
                                  p_value <= max_p))
    main = metrics_of(a)[0]
    changed = sorted(common, key=lambda q: (-abs(item_value(items_b[q], main)
                                                 - item_value(items_a[q], main)), q))
    return {
        "a": a["id"], "b": b["id"], "test": test, "max_p": max_p, "queries": len(common),
        "metrics": [d.to_json() for d in deltas],
        "changed": [_changed(items_a[q], items_b[q], main) for q in changed[:top]
                    if items_a[q].get(main) != items_b[q].get(main)],
    }


def _changed(a: Mapping[str, Any], b: Mapping[str, Any], metric: str) -> dict[str, Any]:
    relevant = set(a.get("relevant", []))
    return {"id": a["id"], "query": a.get("query", ""), "metric": metric,
            "a": item_value(a, metric), "b": item_value(b, metric),
            "top_a": [{"id": i, "relevant": i in relevant} for i in a.get("ranking", [])[:5]],
            "top_b": [{"id": i, "relevant": i in relevant} for i in b.get("ranking", [])[:5]]}
