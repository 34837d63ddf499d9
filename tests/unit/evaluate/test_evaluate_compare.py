"""The paired significance test of `excerpt eval compare` is ranx's: on the same runs, our
p-values equal those ``ranx.compare`` reports (its own usage: qrels, runs, a metric), for the
t-test and the randomization test; and excerpt's per-query nDCG@10 (trec_eval's, through
pytrec_eval) equals ranx's, so comparing stored runs gives ranx's answer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from excerpt.errors import InputError
from excerpt.evaluate.compare import compare_runs, paired_p_value
from excerpt.evaluate.metrics import ir_per_query

# ranx's own nDCG code casts document counts from uint64 (its warning, not ours)
pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")


def example() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]],
                       dict[str, dict[str, float]]]:
    """Qrels and two systems' runs over 20 queries, 40 documents (seeded)."""
    rng = np.random.default_rng(7)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(1, 3)) for j in rng.choice(40, 4, replace=False)}
             for i in range(20)}

    def system(seed: int, boost: float) -> dict[str, dict[str, float]]:
        r = np.random.default_rng(seed)
        out = {}
        for q, rel in qrels.items():
            scores = {f"d{j}": float(r.random()) for j in range(40)}
            for d in rel:
                scores[d] += boost * float(r.random())
            out[q] = scores
        return out

    return qrels, system(1, 0.3), system(2, 0.8)


@pytest.mark.parametrize("test", ["student", "fisher"])
def test_p_values_are_the_ones_ranx_compare_reports(test: str) -> None:
    from ranx import Qrels, Run, compare, evaluate

    qrels, a, b = example()
    run_a, run_b, judged = Run(a, name="a"), Run(b, name="b"), Qrels(qrels)
    report = compare(judged, [run_a, run_b], ["ndcg@10"], stat_test=test, max_p=0.05)
    expected = float(report.comparisons[frozenset(["a", "b"])]["ndcg@10"]["p_value"])
    ours = paired_p_value(evaluate(judged, run_a, "ndcg@10", return_mean=False),
                          evaluate(judged, run_b, "ndcg@10", return_mean=False), test)
    # ranx.compare tests both orders and keeps the last (b as control); the t-test does not
    # care, the randomization test draws other permutations: equal within its resolution.
    assert ours == pytest.approx(expected, abs=1e-12 if test == "student" else 3 / 1000)
    assert ours < 0.05


def stored(run_id: int, per_query: dict[str, dict[str, float]]) -> dict[str, Any]:
    return {"id": run_id, "kind": "beir", "dataset": "/data/x", "split": "test",
            "items": [{"id": q, **m, "ranking": [], "relevant": []}
                      for q, m in per_query.items()]}


def test_stored_runs_compare_as_ranx_compares_the_raw_runs() -> None:
    from ranx import Qrels, Run, compare

    qrels, a, b = example()
    result = compare_runs(stored(1, ir_per_query(qrels, a)), stored(2, ir_per_query(qrels, b)))
    report = compare(Qrels(qrels), [Run(a, name="a"), Run(b, name="b")], ["ndcg@10"],
                     stat_test="student")
    ndcg = next(m for m in result["metrics"] if m["metric"] == "ndcg@10")
    assert ndcg["p_value"] == pytest.approx(
        float(report.comparisons[frozenset(["a", "b"])]["ndcg@10"]["p_value"]), rel=1e-9)
    assert ndcg["a"] == pytest.approx(float(report.to_dict()["a"]["scores"]["ndcg@10"]),
                                      abs=1e-6)  # pytrec_eval's nDCG@10 is ranx's


def test_runs_of_different_datasets_are_not_compared() -> None:
    a = stored(1, {"q1": {"ndcg@10": 0.5}})
    b = {**stored(2, {"q1": {"ndcg@10": 0.7}}), "split": "train"}
    with pytest.raises(InputError, match="different datasets"):
        compare_runs(a, b)
    with pytest.raises(InputError, match="unknown test"):
        paired_p_value([0.1, 0.2], [0.3, 0.1], "wilcoxon")
