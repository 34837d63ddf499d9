"""`excerpt eval`: quality and latency on a BEIR folder."""

from __future__ import annotations

from pathlib import Path

import click

from excerpt.cli.main import cli, emit, handles_errors, json_option, progress_bar
from excerpt.types import SEARCH_MODES


@cli.command("eval")
@click.argument("dataset_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--split", type=click.Choice(["test", "train", "dev"]), default="test",
              show_default=True)
@click.option("--collection", default=None, help="Default: beir-<folder name>.")
@click.option("--mode", type=click.Choice(SEARCH_MODES), default="hybrid", show_default=True)
@click.option("-k", "k", type=click.IntRange(min=1), default=100, show_default=True,
              help="Hits retrieved per query (Recall@100 needs 100).")
@click.option("--no-progress", is_flag=True)
@json_option
@click.pass_context
@handles_errors
def eval_command(ctx: click.Context, dataset_dir: Path, split: str, collection: str | None,
                 mode: str, k: int, no_progress: bool) -> None:
    """Ingest a BEIR folder if needed, run its queries, report nDCG@10, recall, MRR, latency."""
    from excerpt.evaluate.runner import evaluate

    with progress_bar(not no_progress) as update:
        report = evaluate(ctx.obj["engine"], dataset_dir, split, collection, mode,  # type: ignore[arg-type]
                          k, progress=update)

    def human() -> None:
        lat = report["latency_ms"]
        click.echo(
            f"{report['queries']} queries ({report['mode']}, k={report['k']}): "
            f"nDCG@10 {report['ndcg@10']:.4f}  R@10 {report['recall@10']:.4f}  "
            f"R@100 {report['recall@100']:.4f}  MRR@10 {report['mrr@10']:.4f}  "
            f"latency p50 {lat['p50']:.1f} ms p95 {lat['p95']:.1f} ms"
        )

    emit(ctx, report, human)
