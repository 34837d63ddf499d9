"""The readers side by side on the QA question sets (issue 29 item 4): the extractive answer
and a model's, on the same questions, per file and split.

Run:  .venv/bin/python bench/readers.py --home /tmp/qa29/home --model MODEL.gguf
                                        [--files books] [--splits tune,heldout,blind]
                                        [--threads 2] [--json OUT]

``MODEL.gguf`` is a GGUF chat model for the ``local`` reader; the bench's own is
Qwen2.5-Coder-1.5B-Instruct Q4_K_M, which ``bench/reader_model.py`` fetches from the registry
and verifies. The collections must be in ``--home`` already (bench/qa.py ingests them).

Per reader, file and split (``excerpt eval FILE --reader R`` computes the same, one at a time):
``stated`` (facts in the answer), ``cite`` (the eval's own judgement of every answer sentence:
all its content words in the quotes it cites), caution on unanswerable and answerable
questions, p50/p95 of the whole ask. For the model, also: ``model`` (answers where one of its
sentences survived the check), ``model stated`` (facts in its checked sentences alone),
``model cite`` (the eval's judgement of its checked sentences alone), ``kept`` / ``dropped``
(its sentences), ``unans kept`` (unanswerable questions where a sentence of it survived) and
the p95 of its prompt tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.evaluate.qa import evaluate_qa, load_qa
from excerpt.evaluate.qa_metrics import missing_facts, ratio, sentence_support, strip_marks
from excerpt.evaluate.runs import git_commit
from excerpt.settings import Settings

QA = Path(__file__).resolve().parent / "qa"
COLLECTIONS = {"books": "books", "regulations": "regulations", "manuals": "manuals"}


def model_figures(report: dict[str, Any], questions: dict[str, Any]) -> dict[str, Any]:
    """What the model's own checked sentences did, question by question."""
    rows = report["per_question"]
    stated, supported, kept, dropped, unanswered_kept, tokens = [], [], 0, 0, 0, []
    for row in rows:
        synthesis = row.get("synthesis") or {}
        text = synthesis.get("answer", "")
        quotes = {n: q["text"] for n, q in enumerate(row["quotes"], start=1)}
        kept += len(synthesis.get("kept", []))
        dropped += len(synthesis.get("dropped", []))
        tokens.append(float(row["reader"]["tokens_in"]))
        if row["answerable"]:
            facts = questions[row["id"]].facts
            stated.append(float(bool(text) and not missing_facts(strip_marks(text), facts)))
        elif text:
            unanswered_kept += 1
        supported += sentence_support(text, quotes) if text else []
    return {"model": ratio(sum(not r["reader"]["fell_back"] for r in rows), len(rows)),
            "model_stated": ratio(sum(stated), len(stated)),
            "model_cite": ratio(sum(supported), len(supported)),
            "kept": kept, "dropped": dropped, "unans_kept": unanswered_kept,
            "tokens_p95": latency_summary(tokens)["p95"]}


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


COLUMNS = ("fact_stated", "citation_precision", "cautious_recall", "cautious_on_answerable",
           "cautious_out_of_collection", "model", "model_stated", "model_cite", "kept",
           "dropped", "unans_kept", "tokens_p95")


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| reader | file | split | n | stated | cite | caut-R | caut-ans | caut-out | model "
            "| model stated | model cite | kept | dropped | unans kept | prompt p95 | p50 ms "
            "| p95 ms |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        cells = " | ".join(_cell(r.get(c)) for c in COLUMNS)
        lines.append(f"| {r['reader']} | {r['file']} | {r['split']} | {r['questions']} | "
                     f"{cells} | {r['latency_ms']['p50']:.0f} | {r['latency_ms']['p95']:.0f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--model", required=True, help="a GGUF chat model (reader local)")
    parser.add_argument("--files", default="books")
    parser.add_argument("--splits", default="tune,heldout,blind")
    parser.add_argument("--readers", default="extractive,local")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    engine = Engine(args.home, Settings().with_(reader_threads=args.threads))
    rows: list[dict[str, Any]] = []
    for name in args.files.split(","):
        qa = load_qa(QA / f"{name}.yaml")
        questions = {q.id: q for q in qa.questions}
        for split in args.splits.split(","):
            for reader in args.readers.split(","):
                options = engine.ask_options(reader=reader, reader_model=args.model)
                report = evaluate_qa(engine, qa, COLLECTIONS.get(name), "hybrid", options,
                                     split=split)
                extra = model_figures(report, questions) if reader != "extractive" else {}
                rows.append({"reader": reader, "file": name, "split": split,
                             **report, **extra})
                print(f"{reader} {name} {split}: stated {_cell(report['fact_stated'])}"
                      f" {json.dumps(extra)}", file=sys.stderr, flush=True)
    print(f"commit {git_commit()}, model {Path(args.model).name}, "
          f"{args.threads} threads\n")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
