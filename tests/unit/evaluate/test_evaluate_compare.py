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


def test_the_t_test_p_value_is_the_one_ranx_compare_reports() -> None:
    from ranx import Qrels, Run, compare, evaluate

    qrels, a, b = example()
    run_a, run_b, judged = Run(a, name="a"), Run(b, name="b"), Qrels(qrels)
    report = compare(judged, [run_a, run_b], ["ndcg@10"], stat_test="student", max_p=0.05)
    expected = float(report.comparisons[frozenset(["a", "b"])]["ndcg@10"]["p_value"])
    ours = paired_p_value(evaluate(judged, run_a, "ndcg@10", return_mean=False),
                          evaluate(judged, run_b, "ndcg@10", return_mean=False), "student")
    assert ours == pytest.approx(expected, abs=1e-12) and ours < 0.05


def exact_randomization_p(a: np.ndarray, b: np.ndarray) -> float:
    """Every one of the 2^n sign patterns of the paired differences (n = 20: a million)."""
    diff = a - b
    n = len(diff)
    observed = abs(diff.mean())
    reached = 0
    for high in range(2 ** (n - 10)):  # 1024 blocks of the 1024 patterns of the low 10 bits
        patterns = (np.arange(1024)[:, None] + (high << 10)) >> np.arange(n) & 1
        reached += int(np.count_nonzero(np.abs((1 - 2 * patterns) @ diff) / n >= observed))
    return reached / 2 ** n


@pytest.mark.parametrize("shift", [0.0, 0.02, 0.05])
def test_the_randomization_test_is_exact_within_its_resolution_and_reproducible(
        shift: float) -> None:
    """ranx's definition, seeded: within 4 standard errors of the exact p-value (all 2^20
    permutations), the same value at every call, and near ranx's own (whose parallel draws
    vary from call to call)."""
    rng = np.random.default_rng(3)
    a = rng.random(20)
    b = a + shift + rng.normal(0, 0.05, 20)
    exact = exact_randomization_p(a, b)
    ours = paired_p_value(a, b, "fisher", n_permutations=4000)
    resolution = 4 * np.sqrt(max(exact * (1 - exact), 1 / 4000) / 4000)
    assert abs(ours - exact) <= resolution
    assert paired_p_value(a, b, "fisher", n_permutations=4000) == ours
    from ranx.statistical_tests import fisher_randomization_test

    theirs, _ = fisher_randomization_test(a, b, 4000, 0.05, 42)
    assert abs(float(theirs) - exact) <= 2 * resolution


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
