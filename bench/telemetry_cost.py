"""What telemetry costs a search (issue 33): tracing off against the commit before it, and on.

Run:  .venv/bin/python bench/telemetry_cost.py --before DIR [--home HOME] [--rounds 5]

``DIR`` holds the ``src/`` of the commit to compare with (``git archive <commit> src | tar -x
-C DIR``); HOME a store with a ``books`` collection (bench/ask.py's ``ensure_books`` makes one).
Each round runs one process per variant, alternating: ``before`` (that commit), ``off`` (this
checkout, no endpoint), ``on`` (this checkout, tracing into the SDK's batch processor over an
in-memory exporter: the spans made, not sent). A process searches the questions of bench/ask.py
in bm25 and hybrid, warm once, then 200 searches of each mode; a round's figure is the median
search in microseconds, and the printed ones the median and the least of the rounds (the
least: the round the machine's other work disturbed least).
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

REPO = Path(__file__).resolve().parents[1]
SEARCHES = 200


def measure(home: Path, tracing: bool) -> dict[str, float]:
    sys.path.insert(0, str(REPO / "bench"))
    from ask import QUESTIONS
    from excerpt.engine import Engine
    from excerpt.types import Filters

    if tracing:
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )

        from excerpt import telemetry

        telemetry.use(BatchSpanProcessor(InMemorySpanExporter()))
    engine = Engine(home)
    out = {}
    for mode in ("bm25", "hybrid"):
        for q in QUESTIONS:
            engine.search(q, Filters("books"), mode=mode)  # type: ignore[arg-type]
        runs = []
        for i in range(SEARCHES):
            q = QUESTIONS[i % len(QUESTIONS)]
            t = time.perf_counter()
            engine.search(q, Filters("books"), mode=mode)  # type: ignore[arg-type]
            runs.append((time.perf_counter() - t) * 1e6)
        out[mode] = statistics.median(runs)
    return out


def _run(src: Path, home: Path, tracing: bool) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(src)
    args = [sys.executable, __file__, "--measure", str(home)] + (["--tracing"] if tracing else [])
    done = subprocess.run(args, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--home", type=Path,
                        default=Path(tempfile.gettempdir()) / "excerpt-house-latency")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tracing", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.tracing)))
        return 0
    if args.before is None or not (args.before / "src" / "excerpt").is_dir():
        parser.error("--before must hold the src/ of the commit to compare with")
    variants = {"before": (args.before / "src", False), "off": (REPO / "src", False),
                "on": (REPO / "src", True)}
    rows: dict[str, dict[str, list[float]]] = {name: {} for name in variants}
    for round_ in range(args.rounds):
        for name, (src, tracing) in variants.items():
            for mode, us in _run(src, args.home, tracing).items():
                rows[name].setdefault(mode, []).append(us)
            print(f"round {round_ + 1} {name}: "
                  + json.dumps({m: round(v[-1]) for m, v in rows[name].items()}),
                  file=sys.stderr)
    print(json.dumps({name: {mode: {"median": round(statistics.median(v)), "min": round(min(v))}
                             for mode, v in modes.items()}
                      for name, modes in rows.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
