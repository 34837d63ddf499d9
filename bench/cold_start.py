"""Cold and warm latency of a Korean `excerpt search` (issue 20, item 4: cold <= 1.5 s).

Run:  .venv/bin/python bench/cold_start.py [--runs 10] [--home DIR] [--e5-home DIR]
                                          [--base SRC] [--questions]

Cold: ``--runs`` fresh ``excerpt --home H search Q --json`` processes, one after another (the
files in the page cache, as for anyone who searches twice); each one's wall time, and its CPU
time (user + system, all threads), which the other processes of a busy machine inflate less.
Warm: the same search repeated in one process that has searched once (the engine's own
timing). ``--home`` holds the regulations, BM25 only (ingested into it when empty); with
``--e5-home`` (a home whose collection ``regs`` was ingested with ``--embedder e5``) the
hybrid search, which also loads the ONNX model, is measured too. Each row also says whether
the process ended with the full Kiwi loaded, and checks that the hits are those of a process
that loaded the full Kiwi first (the light one must not change a result). ``import_cpu_s``:
the CPU of fresh processes that only import the CLI (``from excerpt.cli.main import cli``).

``--questions``: also one cold search per Korean question of ``bench/qa/regulations.yaml``
(each checked against a process that loaded the full Kiwi): the spread over questions, and
how many of them loaded the full Kiwi (a multi-word entry or pre-analysed ending matched).

``--base SRC`` (the ``src`` of another tree, e.g. ``git archive`` of an older commit unpacked
in /tmp) measures that tree too, run by run alternating with this one (``PYTHONPATH=SRC``), so
both see the same load on a busy machine; its rows are marked ``"tree": "base"``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REGULATIONS = Path(os.environ.get("EXCERPT_DATA", REPO.parent / "shared" / "data")) / "regulations"
QUERY = "학생 징계 절차"

PROBE = """
import json, sys
from excerpt.cli.main import cli
from excerpt.analyze import korean
try:
    from excerpt.analyze import korean_kiwi  # absent before issue 20: the full Kiwi only
except ImportError:
    korean_kiwi = None
if sys.argv[1] == "full":
    korean.kiwi()
try:
    cli(sys.argv[2:], standalone_mode=False, obj={"json": False})
finally:
    full = True if korean_kiwi is None else korean_kiwi._full is not None
    print(json.dumps({"full_kiwi": full}), file=sys.stderr)
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def search_args(home: Path, mode: str, query: str = QUERY) -> list[str]:
    return ["--home", str(home), "search", query, "--collection", "regs", "--mode", mode,
            "-k", "10", "--json"]


def tree_env(src: Path | None) -> dict[str, str] | None:
    """The environment of a process running the tree at ``src`` (None: this one)."""
    return None if src is None else {**os.environ, "PYTHONPATH": str(src)}


def one(home: Path, mode: str, kiwi: str = "default", src: Path | None = None,
        query: str = QUERY) -> tuple[float, float, dict[str, object]]:
    """One fresh process: wall seconds, CPU seconds, its hits and which Kiwi it ended with."""
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, kiwi, *search_args(home, mode, query)],
                          capture_output=True, text=True, check=True, env=tree_env(src))
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    found = json.loads(done.stdout)
    state = json.loads(done.stderr.strip().splitlines()[-1])
    return wall, cpu, {"hits": [(h["id"], h["score"]) for h in found["hits"]], **state}


def import_cpu(src: Path | None) -> float:
    """CPU seconds of a fresh process that only imports the CLI."""
    cpu = children_cpu()
    subprocess.run([sys.executable, "-c", "from excerpt.cli.main import cli"], check=True,
                   env=tree_env(src))
    return children_cpu() - cpu


def warm(home: Path, mode: str, runs: int, src: Path | None = None) -> float:
    """Median engine time (ms) of the search repeated in one process after a first one."""
    code = (
        "import json, sys\n"
        "from excerpt.engine import Engine\n"
        "from excerpt.cli.main import local_scope\n"
        "from excerpt.scope import Scope\n"
        f"engine = Engine({str(home)!r})\n"
        "filters, principal = local_scope(Scope('regs', None, None, (), (), (), False))\n"
        f"run = lambda: engine.search({QUERY!r}, filters, principal, {mode!r}, 10)\n"
        "run()\n"
        f"print(json.dumps([run().timings_ms['total'] for _ in range({runs})]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=tree_env(src)).stdout
    return float(statistics.median(json.loads(out)))


def summary(walls: list[float], cpus: list[float], imports: list[float]
            ) -> dict[str, object]:
    def spread(values: list[float]) -> dict[str, float]:
        return {"median": round(statistics.median(values), 2), "min": round(min(values), 2)}

    return {"cold_wall_s": spread(walls), "cold_cpu_s": spread(cpus),
            "import_cpu_s": spread(imports)}


def measure(home: Path, mode: str, runs: int, base: Path | None = None
            ) -> list[dict[str, object]]:
    """Rows of this tree (and of ``base``, alternating run by run)."""
    trees: dict[str, Path | None] = {"this": None, **({"base": base} if base else {})}
    reference = one(home, mode, "full")[2]["hits"]
    seen: dict[str, dict[str, list[Any]]] = {
        t: {"walls": [], "cpus": [], "imports": [], "full": []} for t in trees}
    for _ in range(runs):
        for tree, src in trees.items():
            wall, cpu, found = one(home, mode, src=src)
            assert found["hits"] == reference, f"{tree}: the light Kiwi changed a result"
            got = seen[tree]
            got["walls"].append(wall)
            got["cpus"].append(cpu)
            got["full"].append(found["full_kiwi"])
            got["imports"].append(import_cpu(src))
    return [{"tree": tree, "mode": mode, "runs": runs,
             **summary(seen[tree]["walls"], seen[tree]["cpus"], seen[tree]["imports"]),
             "warm_ms": round(warm(home, mode, runs, src), 1),
             "full_kiwi_loaded": any(seen[tree]["full"]), "same_hits_as_full_kiwi": True,
             "load_average": round(os.getloadavg()[0], 2)} for tree, src in trees.items()]


def questions(home: Path, base: Path | None = None) -> list[dict[str, object]]:
    """One cold BM25 search per Korean question of bench/qa/regulations.yaml, per tree
    (alternating): wall time spread and how many processes loaded the full Kiwi."""
    import yaml

    asked = [q["question"] for q in yaml.safe_load(
        (REPO / "bench" / "qa" / "regulations.yaml").read_text(encoding="utf-8"))["questions"]]
    trees: dict[str, Path | None] = {"this": None, **({"base": base} if base else {})}
    walls: dict[str, list[float]] = {t: [] for t in trees}
    full: dict[str, int] = dict.fromkeys(trees, 0)
    for query in asked:
        reference = one(home, "bm25", "full", query=query)[2]["hits"]
        for tree, src in trees.items():
            wall, _, found = one(home, "bm25", src=src, query=query)
            assert found["hits"] == reference, f"{tree}: the light Kiwi changed {query!r}"
            walls[tree].append(wall)
            full[tree] += bool(found["full_kiwi"])
    return [{"tree": tree, "questions": len(asked),
             "cold_wall_s": {"median": round(statistics.median(walls[tree]), 2),
                             "p90": round(sorted(walls[tree])[int(0.9 * len(asked))], 2),
                             "max": round(max(walls[tree]), 2)},
             "full_kiwi_loaded": full[tree], "same_hits_as_full_kiwi": True,
             "load_average": round(os.getloadavg()[0], 2)} for tree in trees]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--e5-home", type=Path, default=None)
    parser.add_argument("--base", type=Path, default=None,
                        help="src of another tree to measure beside this one, alternating")
    parser.add_argument("--questions", action="store_true",
                        help="also every Korean question of bench/qa/regulations.yaml, once")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="excerpt-cold-")) / "home"
    listed = subprocess.run([sys.executable, "-m", "excerpt", "--home", str(home), "snapshots",
                             "--collection", "regs"], capture_output=True)
    if listed.returncode != 0:
        subprocess.run([sys.executable, "-m", "excerpt", "--home", str(home), "ingest",
                        str(REGULATIONS), "--collection", "regs", "--embedder", "none",
                        "--no-progress"], check=True)
    for row in measure(home, "bm25", args.runs, args.base):
        print(json.dumps({"home": str(home), **row}), flush=True)
    if args.questions:
        for row in questions(home, args.base):
            print(json.dumps({"home": str(home), **row}), flush=True)
    if args.e5_home is not None:
        for row in measure(args.e5_home, "hybrid", args.runs, args.base):
            print(json.dumps({"home": str(args.e5_home), **row}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
