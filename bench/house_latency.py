"""Ask and search latency of two checkouts side by side (issue 31: the house step must leave
them no worse than at the start of the issue).

Run:  .venv/bin/python bench/house_latency.py --before DIR [--rounds 3] [--repeat 3]

``DIR`` is a checkout of the commit to compare with (``git worktree add DIR <commit>``); the
current checkout is "after". Both search one home (the two books with MiniLM embeddings,
ingested by the current code when missing, in ``--home``): the on-disk format did not change.
Each round runs one process per checkout, alternating (before, after, before, after ...), so a
machine's drift falls on both. A process asks the bench questions of bench/ask.py and searches
them in bm25 and hybrid, each once to warm up, then ``--repeat`` times; one sample is a
question's median. Printed: per checkout, the p50 / p95 of each round and their medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SURFACES = ("ask", "search bm25", "search hybrid")


def measure(home: Path, repeat: int) -> dict[str, list[float]]:
    """Per surface, each question's median latency in ms (run in the checkout under test)."""
    sys.path.insert(0, str(REPO / "bench"))
    from ask import QUESTIONS
    from excerpt.compose.ask import AskOptions
    from excerpt.engine import Engine
    from excerpt.types import Filters, Principal

    engine = Engine(home)
    filters, who = Filters("books"), Principal.anonymous()
    calls = {
        "ask": lambda q: engine.ask(q, filters, who, "hybrid", AskOptions()),
        "search bm25": lambda q: engine.search(q, filters, who, "bm25", 10),
        "search hybrid": lambda q: engine.search(q, filters, who, "hybrid", 10),
    }
    out: dict[str, list[float]] = {}
    for surface, call in calls.items():
        for q in QUESTIONS:
            call(q)
        samples = []
        for q in QUESTIONS:
            runs = []
            for _ in range(repeat):
                t = time.perf_counter()
                call(q)
                runs.append((time.perf_counter() - t) * 1000)
            samples.append(statistics.median(runs))
        out[surface] = samples
    engine.close()
    return out


def ensure_home(home: Path) -> None:
    from ask import ensure_books
    from excerpt.engine import Engine

    engine = Engine(home)
    ensure_books(engine)
    engine.close()


def _run(checkout: Path, home: Path, repeat: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    done = subprocess.run([sys.executable, __file__, "--measure", str(home), "--repeat",
                           str(repeat)], env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return (round(statistics.median(ordered), 1),
            round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="a checkout of the commit to compare with")
    parser.add_argument("--home", type=Path,
                        default=Path(tempfile.gettempdir()) / "excerpt-house-latency")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.repeat)))
        return 0
    if args.before is None or not (args.before / "src" / "excerpt").is_dir():
        parser.error("--before must be a checkout of excerpt (git worktree add DIR <commit>)")
    sys.path.insert(0, str(REPO / "bench"))
    ensure_home(args.home)
    rows: dict[str, dict[str, list[tuple[float, float]]]] = {"before": {}, "after": {}}
    for round_ in range(args.rounds):
        for name, checkout in (("before", args.before), ("after", REPO)):
            for surface, samples in _run(checkout, args.home, args.repeat).items():
                rows[name].setdefault(surface, []).append(_summary(samples))
            print(f"round {round_ + 1} {name}: "
                  + json.dumps({s: v[-1] for s, v in rows[name].items()}), file=sys.stderr)
    result: dict[str, Any] = {}
    for surface in SURFACES:
        result[surface] = {
            name: {"rounds_p50_p95": rows[name][surface],
                   "median_p50": statistics.median(p for p, _ in rows[name][surface]),
                   "median_p95": statistics.median(p for _, p in rows[name][surface])}
            for name in rows}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
