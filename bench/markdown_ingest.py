"""Markdown ingest speed (issue 19: 1,000 small Markdown files took ~7 s after markdown-it-py
replaced a regex reader).

Run:  .venv/bin/python bench/markdown_ingest.py [--files 1000] [--runs 5] [--large PATH ...] [--ab]

Writes ``--files`` small generated Markdown files (headings, paragraphs with inline markup,
lists, a table, a fence; ~1.5 kB each) to a temporary folder and times
``load_documents`` over the folder ``--runs`` times (in this process, after one warm-up run),
then the same for each ``--large`` path (real Markdown files or folders, not copied).  Prints
one JSON object: per set, the files, nodes and the median and each run's seconds.  With
``--ab``, instead: the reader's parse with markdown-it's full inline parse against the fast
path, alternated ``--runs`` times in this process, median CPU seconds (``time.process_time``:
steadier than wall time on a loaded machine) per set of ``.md`` texts.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from excerpt.ingest.documents.loader import load_documents
from excerpt.ingest.documents.markdown import FULL_PARSER, parse
from sync import WORDS  # bench/sync.py: the same vocabulary as its .txt notes


def sample_markdown(rng: random.Random, n: int) -> str:
    """One small Markdown file of the kinds a notes folder holds."""

    def words(k: int) -> str:
        return " ".join(rng.choices(WORDS, k=k))

    return "\n".join([
        f"# Note {n}: {words(3)}", "",
        f"{words(40)} *{words(2)}* and `code_{n}` with a [link](http://x/{n}).", "",
        f"## {words(2)}", "",
        f"- {words(8)}", f"- {words(8)}", f"  - {words(6)}", f"1. {words(7)}", "",
        "| key | value |", "|-----|-------|", f"| {words(1)} | {words(3)} |",
        f"| {words(1)} | {words(2)} |", "",
        "```python", f"def f{n}():", f"    return '{words(2)}'", "```", "",
        f"### {words(2)}", "", f"> {words(30)}", "", words(60), "",
    ])


def write_folder(folder: Path, files: int) -> None:
    rng = random.Random(0)
    for i in range(files):
        path = folder / f"part{i % 10}" / f"note{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sample_markdown(rng, i), encoding="utf-8")


def time_load(paths: list[Path], runs: int) -> dict[str, object]:
    corpus = load_documents(paths)  # warm-up: imports, caches
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        load_documents(paths)
        seconds.append(round(time.perf_counter() - started, 3))
    return {"files": len(corpus.documents), "nodes": len(corpus.nodes),
            "median_s": statistics.median(seconds), "runs_s": seconds}


def ab_parse(texts: list[str], runs: int) -> dict[str, object]:
    """Median CPU seconds to parse ``texts`` with the full inline parse and with the fast path."""
    cpu: dict[str, list[float]] = {"full": [], "fast": []}
    for r in range(runs):
        order = [("full", FULL_PARSER), ("fast", None)]
        for label, parser in order if r % 2 else order[::-1]:
            started = time.process_time()
            for text in texts:
                parse(text, "d", "d.md", parser=parser)
            cpu[label].append(time.process_time() - started)
    full, fast = statistics.median(cpu["full"]), statistics.median(cpu["fast"])
    return {"texts": len(texts), "full_cpu_s": round(full, 3), "fast_cpu_s": round(fast, 3),
            "fast_over_full": round(fast / full, 3)}


def md_texts(path: Path) -> list[str]:
    files = sorted(path.rglob("*.md")) if path.is_dir() else [path]
    return [f.read_text(encoding="utf-8", errors="replace") for f in files]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--large", type=Path, nargs="*", default=[])
    parser.add_argument("--ab", action="store_true", help="parse CPU, full vs fast inline path")
    args = parser.parse_args()
    if args.ab:
        rng = random.Random(0)
        sets = {"generated": [sample_markdown(rng, i) for i in range(args.files)]}
        sets.update({str(p): md_texts(p) for p in args.large})
        print(json.dumps({name: ab_parse(texts, args.runs) for name, texts in sets.items()},
                         indent=1))
        return
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="excerpt-bench-md-") as tmp:
        folder = Path(tmp) / "notes"
        write_folder(folder, args.files)
        out["generated"] = time_load([folder], args.runs)
    for path in args.large:
        out[str(path)] = time_load([path], args.runs)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
