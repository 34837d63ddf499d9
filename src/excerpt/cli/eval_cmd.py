"""`excerpt eval`: quality and latency on a BEIR folder or a scenario file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from excerpt.cli.main import cli, emit, handles_errors, json_option, progress_bar
from excerpt.types import SEARCH_MODES

BEIR_K = 100


@cli.command("eval")
@click.argument("dataset", type=click.Path(exists=True, path_type=Path))
@click.option("--split", type=click.Choice(["test", "train", "dev"]), default="test",
              show_default=True, help="BEIR split (BEIR folders only).")
@click.option("--collection", default=None,
              help="Default: beir-<folder name>, or the scenario file's 'collection'.")
@click.option("--mode", type=click.Choice(SEARCH_MODES), default="hybrid", show_default=True)
@click.option("-k", "k", type=click.IntRange(min=1), default=None,
              help=f"Hits per query. Default: {BEIR_K} for BEIR (Recall@100 needs 100), "
                   "adaptive for scenario files.")
@click.option("--rerank", "rerank", default=None, metavar="NAME", is_flag=False,
              flag_value="features", help="Rerank each query's 3 x k candidates with NAME.")
@click.option("--no-progress", is_flag=True)
@json_option
@click.pass_context
@handles_errors
def eval_command(ctx: click.Context, dataset: Path, split: str, collection: str | None,
                 mode: str, k: int | None, rerank: str | None, no_progress: bool) -> None:
    """Score retrieval on DATASET: a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv;
    ingested when absent or changed) -> nDCG@10, recall, MRR, latency; or a scenario file
    (.yaml/.json: query, gold ids, reference answer; see examples/regulations/scenarios.yaml)
    over an ingested collection -> contextual recall, faithfulness, answer relevancy."""
    from excerpt.evaluate.scenarios import is_scenario_file

    with progress_bar(not no_progress) as update:
        if is_scenario_file(dataset):
            report = _scenarios(ctx, dataset, collection, mode, k, update, rerank)
            human = _scenario_lines(report)
        else:
            report = _beir(ctx, dataset, split, collection, mode, k, update, rerank)
            human = _beir_line(report)
    emit(ctx, report, lambda: click.echo(human))


def _beir(ctx: click.Context, folder: Path, split: str, collection: str | None, mode: str,
          k: int | None, update: Any, rerank: str | None) -> dict[str, Any]:
    from excerpt.evaluate.runner import evaluate

    return evaluate(ctx.obj["engine"], folder, split, collection, mode,  # type: ignore[arg-type]
                    k or BEIR_K, progress=update, reranker=rerank)


def _scenarios(ctx: click.Context, path: Path, collection: str | None, mode: str,
               k: int | None, update: Any, rerank: str | None) -> dict[str, Any]:
    from excerpt.evaluate.scenarios import evaluate_scenarios, load_scenarios

    return evaluate_scenarios(ctx.obj["engine"], load_scenarios(path), collection,
                              mode, k, progress=update, reranker=rerank)  # type: ignore[arg-type]


def _beir_line(report: dict[str, Any]) -> str:
    lat = report["latency_ms"]
    return (f"{report['queries']} queries ({report['mode']}, k={report['k']}): "
            f"nDCG@10 {report['ndcg@10']:.4f}  R@10 {report['recall@10']:.4f}  "
            f"R@100 {report['recall@100']:.4f}  MRR@10 {report['mrr@10']:.4f}  "
            f"latency p50 {lat['p50']:.1f} ms p95 {lat['p95']:.1f} ms")


def _scenario_lines(report: dict[str, Any]) -> str:
    lat = report["latency_ms"]
    lines = [
        f"{report['scenarios']} scenarios ({report['mode']}, k={report['k']}, "
        f"collection {report['collection']}):",
        f"  contextual recall {report['context_recall']:.3f}  gold recall "
        f"{report['gold_recall']:.3f}  faithfulness {report['faithfulness']:.3f}  "
        f"answer relevancy {report['answer_relevancy']:.3f} "
        f"(mismatched answers {report['answer_relevancy_mismatched']:.3f})",
        f"  latency p50 {lat['p50']:.1f} ms  p95 {lat['p95']:.1f} ms",
    ]
    for kind, m in report["by_kind"].items():
        lines.append(f"  {kind:16} n={m['scenarios']:<3} recall {m['context_recall']:.3f}  "
                     f"gold {m['gold_recall']:.3f}")
    missed = [r for r in report["per_scenario"] if r["missed_gold"]]
    for r in missed:
        lines.append(f"  missed {r['id']}: {', '.join(r['missed_gold'])}  ({r['query']})")
    return "\n".join(lines)
