"""`excerpt eval`: quality and latency on a BEIR folder or a scenario file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from excerpt.cli.main import (
    cli,
    emit,
    handles_errors,
    json_option,
    make_principal,
    principal_options,
    progress_bar,
)
from excerpt.compose.readers import READERS, chosen_reader
from excerpt.errors import InputError
from excerpt.evaluate.qa import SPLITS
from excerpt.evaluate.qa_report import qa_lines
from excerpt.evaluate.runs import principal_label
from excerpt.types import SEARCH_MODES, Principal

BEIR_K = 100
BEIR_SPLITS = ("test", "train", "dev")
QA_SPLITS = (*SPLITS, "all")


GATE_FAILED = 3  # exit status when a --fail-under bar is not met (1: an error)


class _EvalGroup(click.Group):
    """``excerpt eval DATASET ...`` runs an evaluation; ``excerpt eval runs|report|compare``
    work on stored runs."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@cli.group("eval", cls=_EvalGroup)
def eval_group() -> None:
    """Measure quality: `excerpt eval DATASET [options]` runs one evaluation and stores it
    (see `excerpt eval run --help`); `runs` lists stored runs, `report` draws them, `compare`
    tests two of them against each other."""


@eval_group.command("run")
@click.argument("dataset", type=click.Path(exists=True, path_type=Path))
@click.option("--split", type=click.Choice([*BEIR_SPLITS, *QA_SPLITS]), default=None,
              help="BEIR split (test, train, dev; default test) or the questions of a QA "
                   f"file to ask ({', '.join(QA_SPLITS)}; default all).")
@click.option("--collection", default=None,
              help="Default: beir-<folder name>, or the scenario file's 'collection'.")
@click.option("--mode", type=click.Choice(SEARCH_MODES), default="hybrid", show_default=True,
              help="Retrieval mode; bm25 alone embeds nothing (a BEIR corpus is imported "
                   "without vectors).")
@click.option("-k", "k", type=click.IntRange(min=1), default=None,
              help=f"Hits per query. Default: {BEIR_K} for BEIR (Recall@100 needs 100), "
                   "adaptive for scenario files.")
@click.option("--rerank", "rerank", default=None, metavar="NAME", is_flag=False,
              flag_value="features", help="Rerank each query's 3 x k candidates with NAME.")
@click.option("--report", "report_dir", default=None, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="Also write DIR/report.html with its plots (PNG).")
@click.option("--fail-under", "fail_under", default=None, metavar="METRIC=V[,METRIC=V]",
              help=f"Exit {GATE_FAILED} when a metric is below its bar "
                   "(e.g. ndcg@10=0.70,recall@100=0.90).")
@click.option("--reader", type=click.Choice(READERS), default=None,
              help="QA files: who writes the answers, as `excerpt ask --reader` (the run "
                   "records which answered).")
@click.option("--reader-model", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="QA files: the GGUF chat model of --reader local.")
@click.option("--llm/--no-llm", default=True, show_default=True,
              help="QA files: --no-llm answers extractively even when EXCERPT_LLM_URL is set.")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@principal_options
@json_option
@click.pass_context
@handles_errors
def eval_command(ctx: click.Context, dataset: Path, split: str | None, collection: str | None,
                 mode: str, k: int | None, rerank: str | None, report_dir: Path | None,
                 fail_under: str | None, reader: str | None, reader_model: str | None,
                 llm: bool, no_progress: bool,
                 acl_tags: tuple[str, ...],
                 clearances: tuple[str, ...], all_access: bool) -> None:
    """Score retrieval on DATASET: a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv;
    ingested when absent or changed) -> nDCG@10, recall, MRR, latency per stage; or a scenario
    file (.yaml/.json: query, gold ids, reference answer; see
    examples/regulations/scenarios.yaml) over an ingested collection -> contextual recall,
    faithfulness, answer relevancy; or a QA file (`kind: qa`: questions, the facts an answer
    must state, gold ids, answerable or not, tune/heldout/fresh split; see bench/qa/) asked through
    `excerpt ask` -> facts stated, gold recall, citation precision, verbatim quotes, citation
    numbering, abstention, latency per stage. Queries run as the principal the options give
    (anonymous by default), which the output and the stored run name. The run is kept in the
    store (`excerpt eval runs`)."""
    from excerpt.evaluate.qa import is_qa_file
    from excerpt.evaluate.runs import failed_gates, parse_gates, run_record
    from excerpt.evaluate.scenarios import is_scenario_file

    gates = parse_gates(fail_under) if fail_under else {}
    engine = ctx.obj["engine"]
    principal = make_principal(acl_tags, clearances, all_access)
    qa = is_qa_file(dataset)
    _check_split(split, qa)
    with progress_bar(not no_progress) as update:
        if qa:
            kind, report = "qa", _qa(ctx, dataset, collection, mode, k, update, rerank,
                                     principal, split or "all",
                                     chosen_reader(reader, reader_model, llm), reader_model)
        elif is_scenario_file(dataset):
            kind, report = "scenarios", _scenarios(ctx, dataset, collection, mode, k, update,
                                                   rerank, principal)
        else:
            kind, report = "beir", _beir(ctx, dataset, split or "test", collection, mode, k,
                                         update, rerank, principal)
    record = run_record(kind, dataset, report, engine.settings)
    report = {"run_id": engine.store.save_eval_run(record),
              **{key: v for key, v in report.items() if key != "per_query"}}
    if report_dir is not None:
        from excerpt.evaluate.report import write_report

        report["report"] = str(write_report([engine.store.eval_run(report["run_id"])],
                                            report_dir))
    failed = failed_gates(record["summary"], gates)
    human = {"scenarios": _scenario_lines, "qa": qa_lines}.get(kind, _beir_line)(report)
    stored = (f"run #{report['run_id']} stored (`excerpt eval runs`, `excerpt eval report "
              f"{report['run_id']} --out DIR`)"
              + (f"; report: {report['report']}" if report.get("report") else ""))
    emit(ctx, {**report, **({"gates_failed": failed} if gates else {})},
         lambda: click.echo(f"{human}\n{stored}"))
    if failed:
        click.echo("excerpt: below the bar: " + "; ".join(failed), err=True)
        ctx.exit(GATE_FAILED)


def _check_split(split: str | None, qa: bool) -> None:
    if split is None:
        return
    if qa and split not in QA_SPLITS:
        raise InputError(f"--split {split}: a QA file's splits are {', '.join(QA_SPLITS)}")
    if not qa and split not in BEIR_SPLITS:
        raise InputError(f"--split {split}: only QA files have it (BEIR: "
                         f"{', '.join(BEIR_SPLITS)})")


def _qa(ctx: click.Context, path: Path, collection: str | None, mode: str, k: int | None,
        update: Any, rerank: str | None, principal: Principal, split: str,
        reader: str | None, reader_model: str | None) -> dict[str, Any]:
    from excerpt.evaluate.qa import evaluate_qa, load_qa

    engine = ctx.obj["engine"]
    options = engine.ask_options(k, reader=reader, reader_model=reader_model)
    return evaluate_qa(engine, load_qa(path), collection, mode, options,  # type: ignore[arg-type]
                       rerank, principal, split, progress=update)


def _beir(ctx: click.Context, folder: Path, split: str, collection: str | None, mode: str,
          k: int | None, update: Any, rerank: str | None,
          principal: Principal) -> dict[str, Any]:
    from excerpt.evaluate.runner import evaluate

    return evaluate(ctx.obj["engine"], folder, split, collection, mode,  # type: ignore[arg-type]
                    k or BEIR_K, progress=update, reranker=rerank, principal=principal)


def _scenarios(ctx: click.Context, path: Path, collection: str | None, mode: str,
               k: int | None, update: Any, rerank: str | None,
               principal: Principal) -> dict[str, Any]:
    from excerpt.evaluate.scenarios import evaluate_scenarios, load_scenarios

    return evaluate_scenarios(ctx.obj["engine"], load_scenarios(path), collection,
                              mode, k, progress=update, reranker=rerank,  # type: ignore[arg-type]
                              principal=principal)


def _beir_line(report: dict[str, Any]) -> str:
    lat = report["latency_ms"]
    return (f"{report['queries']} queries ({report['mode']}, k={report['k']}, as "
            f"{principal_label(report['principal'])}): "
            f"nDCG@10 {report['ndcg@10']:.4f}  R@10 {report['recall@10']:.4f}  "
            f"R@100 {report['recall@100']:.4f}  MRR@10 {report['mrr@10']:.4f}  "
            f"latency p50 {lat['p50']:.1f} ms p95 {lat['p95']:.1f} ms")


def _scenario_lines(report: dict[str, Any]) -> str:
    lat = report["latency_ms"]
    lines = [
        f"{report['scenarios']} scenarios ({report['mode']}, k={report['k']}, "
        f"collection {report['collection']}, as {principal_label(report['principal'])}):",
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


@eval_group.command("runs")
@json_option
@click.pass_context
@handles_errors
def eval_runs(ctx: click.Context) -> None:
    """List the stored evaluation runs, oldest first."""
    runs = ctx.obj["engine"].store.eval_runs()

    def human() -> None:
        if not runs:
            click.echo("no evaluation runs yet: `excerpt eval DATASET` makes one")
        for r in runs:
            s = r["summary"]
            main = (f"nDCG@10 {s['ndcg@10']:.4f}" if "ndcg@10" in s
                    else f"stated {s.get('fact_stated') or 0:.3f}" if r["kind"] == "qa"
                    else f"recall {s.get('context_recall', 0):.3f}")
            click.echo(f"#{r['id']:<4} {r['created_at'][:19]}  {r['kind']:<9} {r['mode']:<8} "
                       f"{r['collection']:<20} {main}  {Path(r['dataset']).name}  "
                       f"({principal_label(r['principal'])})")

    emit(ctx, {"runs": runs}, human)


@eval_group.command("report")
@click.argument("run_ids", nargs=-1, required=True, type=int)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The folder for report.html and its PNG plots.")
@json_option
@click.pass_context
@handles_errors
def eval_report(ctx: click.Context, run_ids: tuple[int, ...], out: Path) -> None:
    """Write OUT/report.html for stored runs RUN_IDS (two: the second against the first)."""
    from excerpt.evaluate.report import write_report

    store = ctx.obj["engine"].store
    page = write_report([store.eval_run(i) for i in run_ids], out)
    emit(ctx, {"report": str(page), "plots": sorted(p.name for p in out.glob("*.png"))},
         lambda: click.echo(str(page)))


@eval_group.command("compare")
@click.argument("run_a", type=int)
@click.argument("run_b", type=int)
@click.option("--test", type=click.Choice(["student", "fisher"]), default="student",
              show_default=True, help="ranx's paired test: Student's t, or Fisher's "
                                      "randomization.")
@click.option("--max-p", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="The p-value at or below which a difference counts as significant.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many of the most changed queries to list.")
@json_option
@click.pass_context
@handles_errors
def eval_compare(ctx: click.Context, run_a: int, run_b: int, test: str, max_p: float,
                 top: int) -> None:
    """Run B against run A: metric differences with a paired significance test, and the
    queries that changed most with their top hits side by side."""
    from excerpt.evaluate.compare import compare_runs

    store = ctx.obj["engine"].store
    result = compare_runs(store.eval_run(run_a), store.eval_run(run_b), test, max_p, top)

    def human() -> None:
        click.echo(f"#{run_b} against #{run_a} on {result['queries']} queries ({test}):")
        for m in result["metrics"]:
            mark = " *" if m["significant"] else ""
            click.echo(f"  {m['metric']:<18} {m['a']:.4f} -> {m['b']:.4f}  "
                       f"({m['delta']:+.4f}, p {m['p_value']:.3g}){mark}")
        for q in result["changed"]:
            click.echo(f"  {q['id']}: {q['metric']} {q['a']:.3f} -> {q['b']:.3f}  {q['query']}")
            marked = [[h["id"] + ("*" if h["relevant"] else "") for h in q[side]]
                      for side in ("top_a", "top_b")]  # * = judged relevant
            tops = zip(*marked, strict=False)
            for left, right in tops:
                click.echo(f"      {left:<40} {right}")

    emit(ctx, result, human)
