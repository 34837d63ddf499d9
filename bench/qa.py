"""Answers to the QA question set (bench/qa/*.yaml): facts stated, gold recall, citations,
verbatim quotes, abstention and latency, per file, split and search mode (issue 16).

Run:  .venv/bin/python bench/qa.py [--home DIR] [--modes bm25,hybrid] [--splits tune,heldout]
                                   [--files books,regulations,code] [--json OUT]

1. The corpora (``$EXCERPT_DATA``, default ../shared/data) are ingested into ``--home``
   (default /tmp/excerpt-qa-home, kept so that a rerun only asks) unless there already:
   the two books (``--format gutenberg``, collection ``books``, MiniLM), the regulation book
   (``--format regulations``, collection ``regulations``, multilingual e5: ~7 minutes on 2
   cores) and the FakeEnterprise bundles 1.0 then 1.1 (``--format code-bundle``, collection
   ``code``, MiniLM).
2. Each file runs per split and mode through :func:`excerpt.evaluate.qa.evaluate_qa`, as
   ``excerpt eval FILE --split S --mode M`` does (anonymous, default ask options, one untimed
   ask first), extractive unless ``EXCERPT_LLM_URL`` is set.
3. One table: the metrics of src/excerpt/evaluate/qa.py per file, split and mode.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from excerpt.engine import Engine
from excerpt.evaluate.qa import evaluate_qa, load_qa
from excerpt.evaluate.qa_report import COLUMNS
from excerpt.evaluate.runs import git_commit

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("EXCERPT_DATA", REPO.parent / "shared" / "data"))
QA = REPO / "bench" / "qa"
CORPORA: dict[str, list[tuple[list[Path], str]]] = {
    "books": [([DATA / "books"], "gutenberg")],
    "regulations": [([DATA / "regulations" / "dongeui_regulations_9-340_20250702.txt"],
                     "regulations")],
    "code": [([DATA / "fake_enterprise" / "Release_FAKE_ENTERPRISE_1.0.zip"], "code-bundle"),
             ([DATA / "fake_enterprise" / "Release_FAKE_ENTERPRISE_1.1.zip"], "code-bundle")],
}


def ensure(engine: Engine, collection: str) -> None:
    if collection in engine.store.collections():
        return
    for paths, fmt in CORPORA[collection]:
        print(f"ingesting {', '.join(p.name for p in paths)} into {collection} ...",
              file=sys.stderr)
        t = time.perf_counter()
        engine.ingest(paths, collection=collection, fmt=fmt)
        print(f"  {time.perf_counter() - t:.0f} s", file=sys.stderr)


def _llm() -> Any:
    from excerpt.compose.llm import LLMClient, LLMConfig

    config = LLMConfig.from_env()
    return LLMClient(config) if config else None


def _cell(value: Any) -> str:
    return "   -" if value is None else f"{value:.2f}"


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"| file | split | mode | n | {' | '.join(n for n, _ in COLUMNS)} "
            f"| ask p50 ms | ask p95 ms |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        cells = " | ".join(_cell(r[key]) for _, key in COLUMNS)
        lines.append(f"| {r['file']} | {r['split']} | {r['mode']} | {r['questions']} | {cells} "
                     f"| {r['latency_ms']['p50']:.0f} | {r['latency_ms']['p95']:.0f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=Path("/tmp/excerpt-qa-home"))
    parser.add_argument("--modes", default="bm25,hybrid")
    parser.add_argument("--splits", default="tune,heldout")
    parser.add_argument("--files", default="books,regulations,code")
    parser.add_argument("--json", type=Path, default=None, help="Write every report here.")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"{DATA} not found: set EXCERPT_DATA to the shared data folder", file=sys.stderr)
        return 2
    engine = Engine(args.home)
    llm = _llm()
    rows, reports = [], []
    for name in args.files.split(","):
        qa = load_qa(QA / f"{name}.yaml")
        ensure(engine, qa.collection or name)
        for split in args.splits.split(","):
            for mode in args.modes.split(","):
                report = evaluate_qa(engine, qa, mode=mode, split=split,
                                     llm=llm)
                rows.append({"file": name, "split": split, **report})
                reports.append(report)
                print(f"{name} {split} {mode}: stated {_cell(report['fact_stated'])}",
                      file=sys.stderr)
    print(f"commit {git_commit()}, answered by {rows[0]['answerer']}\n")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(reports, ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
