"""An evaluation report you can look at: ``report.html`` with PNG plots (matplotlib), one or
more stored runs (evaluate/runs.py).

    write_report([store.eval_run(3), store.eval_run(4)], Path("out"))   # -> out/report.html

Plots, each ``FIGURE_PX`` pixels: the metrics of every run; latency per query and its
percentiles per pipeline stage; Recall@k curves (k = 1 … the run's depth, over the queries
with judged documents); and for two runs, the per-query wins and losses of the second against
the first, with the paired significance test of evaluate/compare.py. The PNG files are written
beside the page and embedded in it (data URIs): the page opens offline, alone, with no other
asset.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from excerpt.errors import InputError
from excerpt.evaluate.compare import compare_runs, item_value, metrics_of, scored
from excerpt.evaluate.runs import principal_label

FIGURE_INCHES = (8.0, 4.0)
DPI = 100
FIGURE_PX = (800, 400)  # FIGURE_INCHES x DPI: the size of every PNG


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    return plt


def _label(run: Mapping[str, Any]) -> str:
    return f"#{run['id']} {run['mode']}" + (
        f" +{run['settings'].get('reranker')}" if run["settings"].get("reranker") not in
        (None, "none") else "")


def _save(fig: Any, path: Path) -> Path:
    fig.set_size_inches(*FIGURE_INCHES)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, format="png")
    _pyplot().close(fig)
    return path


def plot_metrics(runs: Sequence[Mapping[str, Any]], path: Path) -> Path:
    plt = _pyplot()
    names = [m for m in metrics_of(runs[0]) if all(m in r["summary"] for r in runs)]
    fig, ax = plt.subplots()
    width = 0.8 / len(runs)
    x = np.arange(len(names))
    for i, run in enumerate(runs):
        values = [float(run["summary"][m]) for m in names]
        bars = ax.bar(x + i * width - 0.4 + width / 2, values, width, label=_label(run))
        ax.bar_label(bars, fmt="%.3f", fontsize=7)
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1.05)
    ax.set_title("Metrics per run")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_latency(runs: Sequence[Mapping[str, Any]], path: Path) -> Path:
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2)
    for run in runs:
        latencies = [float(item["latency_ms"]) for item in run["items"]]
        left.hist(latencies, bins=30, alpha=0.6, label=_label(run))
    left.set_xlabel("ms per query")
    left.set_title("Latency per query")
    left.legend(fontsize=8)
    stages = [s for s in dict.fromkeys(s for r in runs for s in r["stage_latency_ms"])
              if s != "total"]
    y = np.arange(len(stages))
    height = 0.8 / (2 * len(runs))
    for i, run in enumerate(runs):
        for j, pct in enumerate(("p50", "p95")):
            values = [run["stage_latency_ms"].get(s, {}).get(pct, 0.0) for s in stages]
            right.barh(y + (2 * i + j) * height - 0.4, values, height,
                       label=f"{_label(run)} {pct}")
    right.set_yticks(y, stages)
    right.invert_yaxis()
    right.set_xlabel("ms")
    right.set_title("Per stage: p50 and p95")
    right.legend(fontsize=7)
    return _save(fig, path)


def recall_curve(run: Mapping[str, Any]) -> np.ndarray:
    """Mean Recall@k for k = 1 … depth over the items with relevant documents."""
    items = [i for i in run["items"] if i.get("relevant")]
    k = run.get("settings", {}).get("k")  # a run that returned fewer hits keeps its recall
    depth = max([len(i.get("ranking", [])) for i in items] + [k if isinstance(k, int) else 0])
    if not items or not depth:
        return np.zeros(0)
    curves = np.zeros((len(items), depth))
    for row, item in enumerate(items):
        relevant = set(item["relevant"])
        found = np.cumsum([d in relevant for d in item["ranking"]])
        curves[row, :len(found)] = found / len(relevant)
        curves[row, len(found):] = found[-1] / len(relevant) if len(found) else 0.0
    return np.asarray(curves.mean(axis=0), dtype=np.float64)


def plot_recall(runs: Sequence[Mapping[str, Any]], path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots()
    for run in runs:
        curve = recall_curve(run)
        ax.plot(np.arange(1, len(curve) + 1), curve, label=_label(run))
    ax.set_xscale("log")
    ax.set_xlabel("k")
    ax.set_ylabel("Recall@k")
    ax.set_ylim(0, 1.02)
    ax.set_title("Recall@k")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_win_loss(comparison: Mapping[str, Any], a: Mapping[str, Any],
                  b: Mapping[str, Any], path: Path) -> Path:
    plt = _pyplot()
    metric = metrics_of(a)[0]
    items_a = {str(i["id"]): i for i in a["items"]}
    items_b = {str(i["id"]): i for i in b["items"]}
    deltas = sorted(item_value(items_b[q], metric) - item_value(items_a[q], metric)
                    for q in scored(items_a, items_b, metric))
    fig, ax = plt.subplots()
    colors = ["#2a9d4b" if d > 0 else "#c0392b" if d < 0 else "#999999" for d in deltas]
    ax.bar(np.arange(len(deltas)), deltas, color=colors, width=1.0)
    wins, losses = sum(d > 0 for d in deltas), sum(d < 0 for d in deltas)
    ax.set_title(f"{metric} per query, {_label(b)} against {_label(a)}: {wins} better, "
                 f"{losses} worse, {len(deltas) - wins - losses} equal")
    ax.set_xlabel("queries, sorted by change")
    ax.set_ylabel(f"Δ {metric}")
    ax.axhline(0, color="black", linewidth=0.5)
    return _save(fig, path)


def write_report(runs: Sequence[Mapping[str, Any]], out: Path) -> Path:
    """``out/report.html`` and its plots for one or more stored runs (the first is the
    control when there are two)."""
    if not runs:
        raise InputError("give at least one evaluation run")
    if len({r["kind"] for r in runs}) > 1:
        raise InputError("the runs mix BEIR and scenario (or QA) evaluations; report them apart")
    out.mkdir(parents=True, exist_ok=True)
    plots = [plot_metrics(runs, out / "metrics.png"), plot_latency(runs, out / "latency.png"),
             plot_recall(runs, out / "recall.png")]
    comparison = None
    if len(runs) == 2:
        comparison = compare_runs(runs[0], runs[1])
        plots.append(plot_win_loss(comparison, runs[0], runs[1], out / "win-loss.png"))
    page = out / "report.html"
    page.write_text(_html(runs, plots, comparison), "utf-8")
    return page


def _e(value: Any) -> str:
    return html.escape(str(value))


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<div class="scroll"><table><thead><tr>{cells}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return (f'<figure><img alt="{_e(path.stem)}" width="{FIGURE_PX[0]}" '
            f'height="{FIGURE_PX[1]}" src="data:image/png;base64,{data}">'
            f'<figcaption>{_e(path.name)}</figcaption></figure>')


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _html(runs: Sequence[Mapping[str, Any]], plots: Sequence[Path],
          comparison: Mapping[str, Any] | None) -> str:
    about = _table(
        ["run", "when", "dataset", "split", "collection", "mode", "k", "reranker", "principal",
         "version", "commit"],
        [[f"#{r['id']}", r["created_at"], r["dataset"], r.get("split") or "", r["collection"],
          r["mode"], r["settings"].get("k"), r["settings"].get("reranker"),
          principal_label(r.get("principal", {})), r["version"],
          (r.get("git_commit") or "")[:12]] for r in runs])
    names = metrics_of(runs[0])
    metrics = _table(["run", *names, "p50 ms", "p95 ms"],
                     [[f"#{r['id']}", *[_fmt(r["summary"].get(m, "")) for m in names],
                       _fmt(r["summary"]["latency_ms"]["p50"]),
                       _fmt(r["summary"]["latency_ms"]["p95"])] for r in runs])
    stages = _table(["run", "stage", "p50 ms", "p95 ms", "max ms"],
                    [[f"#{r['id']}", s, _fmt(v["p50"]), _fmt(v["p95"]), _fmt(v["max"])]
                     for r in runs for s, v in r["stage_latency_ms"].items()])
    parts = [f"<h2>Runs</h2>{about}", f"<h2>Metrics</h2>{metrics}",
             f"<h2>Latency per stage</h2>{stages}", *[_img(p) for p in plots]]
    if comparison is not None:
        parts.append(_comparison_html(comparison))
    title = "excerpt evaluation: " + ", ".join(f"run #{r['id']}" for r in runs)
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}"
            f"</title><style>{_CSS}</style></head><body><h1>{_e(title)}</h1>"
            + "".join(parts) + "</body></html>\n")


def _comparison_html(c: Mapping[str, Any]) -> str:
    rows = [[m["metric"], _fmt(m["a"]), _fmt(m["b"]), f"{m['delta']:+.4f}",
             f"{m['p_value']:.4g}", "yes" if m["significant"] else "no"] for m in c["metrics"]]
    table = _table(["metric", f"#{c['a']}", f"#{c['b']}", "Δ", f"p ({c['test']})",
                    f"p ≤ {c['max_p']}"], rows)
    changed = _table(
        ["query", "id", f"#{c['a']}", f"#{c['b']}", f"top hits #{c['a']}", f"top hits #{c['b']}"],
        [[q["query"], q["id"], _fmt(q["a"]), _fmt(q["b"]),
          " ".join(h["id"] + ("*" if h["relevant"] else "") for h in q["top_a"]),
          " ".join(h["id"] + ("*" if h["relevant"] else "") for h in q["top_b"])]
         for q in c["changed"]])
    return (f"<h2>#{c['b']} against #{c['a']} ({c['queries']} queries)</h2>{table}"
            f"<h3>Queries that changed most (* = judged relevant)</h3>{changed}")


_CSS = ("body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:1100px;"
        "color:#222}table{border-collapse:collapse;margin:.5rem 0 1.2rem}"
        "td,th{border-bottom:1px solid #ddd;padding:.2rem .6rem;text-align:left;"
        "vertical-align:top;overflow-wrap:anywhere}"
        ".scroll{overflow-x:auto;max-width:100%}figure{margin:1rem 0}"
        "img{max-width:100%;height:auto}"
        "figcaption{color:#666;font-size:12px}")
