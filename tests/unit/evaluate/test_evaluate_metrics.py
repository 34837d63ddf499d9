"""ir_metrics and latency_summary on hand-made qrels and runs whose metrics are worked out here.

trec_eval's nDCG uses the grade as gain and log2(rank + 1) as discount; every metric is the mean
over the judged queries.
"""

from __future__ import annotations

import math

import pytest

from excerpt.evaluate.metrics import ir_metrics, latency_summary

L3 = math.log2(3)  # discount at rank 2

# query id -> (qrels, run, expected {ndcg@10, recall@10, recall@100, mrr@10})
CASES: dict[str, tuple[dict[str, int], dict[str, float], tuple[float, float, float, float]]] = {
    # graded: d2 (grade 1) at rank 1, d1 (grade 2) at rank 2.
    # DCG = 1/1 + 2/log2(3) = 2.26186; IDCG = 2/1 + 1/log2(3) = 2.63093; nDCG = 0.85972.
    # Both relevant are found -> recall 1; first relevant at rank 1 -> MRR 1.
    "graded": ({"d1": 2, "d2": 1}, {"d2": 0.9, "d1": 0.8, "x": 0.7},
               ((1 + 2 / L3) / (2 + 1 / L3), 1.0, 1.0, 1.0)),
    # nothing relevant retrieved: every metric 0.
    "missed": ({"d5": 1}, {"x1": 1.0, "x2": 0.5}, (0.0, 0.0, 0.0, 0.0)),
    # the one relevant document is 11th (ten better-scored non-relevant ones): outside the
    # first 10 -> nDCG@10 0, Recall@10 0, MRR@10 0; inside the first 100 -> Recall@100 1.
    "eleventh": ({"r": 1}, {**{f"n{i:02d}": 20.0 - i for i in range(10)}, "r": 1.0},
                 (0.0, 0.0, 1.0, 0.0)),
    # a tie between the two relevant documents at ranks 2 and 3 (either order gives the same):
    # DCG = 1/log2(3) + 1/log2(4) = 1.13093; IDCG = 1 + 1/log2(3) = 1.63093; nDCG = 0.69343.
    # MRR = 1/2 (c, not relevant, is first).
    "tied": ({"a": 1, "b": 1}, {"c": 0.9, "a": 0.5, "b": 0.5},
             ((1 / L3 + 1 / 2) / (1 + 1 / L3), 1.0, 1.0, 0.5)),
}
KEYS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_query_by_hand(name: str) -> None:
    qrels, run, expected = CASES[name]
    got = ir_metrics({"q": qrels}, {"q": run})
    assert [got[k] for k in KEYS] == pytest.approx(expected, abs=1e-9)


def test_metrics_are_means_over_the_judged_queries() -> None:
    qrels = {name: case[0] for name, case in CASES.items()}
    run = {name: case[1] for name, case in CASES.items()}
    got = ir_metrics(qrels, {**run, "unjudged": {"d1": 1.0}})
    # nDCG@10 = (0.85972 + 0 + 0 + 0.69343) / 4 = 0.38829; Recall@10 = (1 + 0 + 0 + 1) / 4 = 0.5;
    # Recall@100 = (1 + 0 + 1 + 1) / 4 = 0.75; MRR@10 = (1 + 0 + 0 + 0.5) / 4 = 0.375.
    expected = [sum(case[2][i] for case in CASES.values()) / 4 for i in range(4)]
    assert expected == pytest.approx([0.38829, 0.5, 0.75, 0.375], abs=1e-5)
    assert [got[k] for k in KEYS] == pytest.approx(expected, abs=1e-9)


def test_a_judged_query_missing_from_the_run_counts_as_zero() -> None:
    # "hit" scores 1 everywhere, "absent" (no results, or not in the run) scores 0: mean 0.5.
    qrels = {"hit": {"d1": 1}, "absent": {"d2": 1}}
    for run in ({"hit": {"d1": 1.0}}, {"hit": {"d1": 1.0}, "absent": {}}):
        got = ir_metrics(qrels, run)
        assert [got[k] for k in KEYS] == pytest.approx([0.5] * 4)


def test_recall_at_100_stops_at_rank_100() -> None:
    # one relevant at rank 100 and one at rank 101: Recall@100 = 1/2, the rest 0.
    run = {f"n{i:03d}": 1000.0 - i for i in range(99)} | {"r1": 5.0, "r2": 4.0}
    got = ir_metrics({"q": {"r1": 1, "r2": 1}}, {"q": run})
    assert [got[k] for k in KEYS] == pytest.approx([0.0, 0.0, 0.5, 0.0])


def test_no_judged_query_is_refused() -> None:
    with pytest.raises(ValueError, match="no judged queries"):
        ir_metrics({"q": {}}, {"q": {"d1": 1.0}})


def test_ties_are_scored_in_the_engines_order() -> None:
    # eleven documents with the same score; the engine's order (id ascending) puts d10 11th:
    # nDCG@10 0, Recall@10 0, Recall@100 1, MRR@10 0.
    run = {f"d{i:02d}": 1.0 for i in range(11)}
    got = ir_metrics({"q": {"d10": 1}}, {"q": run})
    assert [got[k] for k in KEYS] == pytest.approx([0.0, 0.0, 1.0, 0.0])


def test_latency_summary_percentiles() -> None:
    # numpy's linear percentile on sorted [10, 20, 30, 40, 100]: p50 is the middle value 30;
    # p95 sits at position 0.95 * 4 = 3.8 -> 40 + 0.8 * (100 - 40) = 88.
    assert latency_summary([40.0, 100.0, 10.0, 30.0, 20.0]) == pytest.approx(
        {"p50": 30.0, "p95": 88.0, "max": 100.0})
    assert latency_summary([7.5]) == {"p50": 7.5, "p95": 7.5, "max": 7.5}
    assert latency_summary([]) == {"p50": 0.0, "p95": 0.0, "max": 0.0}
