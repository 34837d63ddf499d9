"""excerpt sync of an unchanged folder (issue 19 target: 1,000 files in under 5 s).

Run:  .venv/bin/python bench/sync.py [--files 1000] [--store postgresql://…] [--cli]

Writes ``--files`` text files (about 1.5 kB each, in 10 subfolders) to a temporary folder,
syncs them once (BM25 only: the first pass is not what is measured), then times a second sync
of the unchanged folder: every file hashed and compared with the hashes the store recorded,
nothing imported. With ``--cli`` the second pass is a whole ``excerpt sync`` process
(interpreter start and imports included), as a user or a cron job pays it. Prints one JSON
object: the first pass's seconds, the unchanged pass's seconds and whether it met the target.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from excerpt.engine import Engine
from excerpt.store.open import open_store
from excerpt.sync import SyncOptions

WORDS = ["river", "stone", "lantern", "harbor", "meadow", "copper", "violet", "thunder",
         "orchard", "signal", "quiet", "ember", "falcon", "marble", "willow", "canyon"]
TARGET_SECONDS = 5.0


def write_folder(folder: Path, files: int) -> None:
    rng = random.Random(0)
    for i in range(files):
        path = folder / f"part{i % 10}" / f"doc{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(" ".join(rng.choices(WORDS, k=220)) + ".", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--store", default=None, help="a postgresql:// URL (default: embedded)")
    parser.add_argument("--cli", action="store_true", help="time a whole `excerpt sync` run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="excerpt-bench-sync-") as tmp:
        folder, home = Path(tmp) / "notes", Path(tmp) / "home"
        write_folder(folder, args.files)
        options = SyncOptions(collection="bench", embedder="none")
        engine = Engine(home, store=open_store(home, args.store))
        started = time.perf_counter()
        first = engine.sync(folder, options)
        first_seconds = time.perf_counter() - started
        assert len(first.added) == args.files, first.to_json()
        engine.close()
        started = time.perf_counter()
        if args.cli:
            command = [sys.executable, "-c", "from excerpt.cli import sync_cmd; from excerpt."
                       "cli.main import main; main()", "--home", str(home), "sync", str(folder),
                       "--collection", "bench", "--embedder", "none", "--no-progress", "--json"]
            if args.store:
                command[3:3] = ["--store", args.store]
            second = json.loads(subprocess.run(command, capture_output=True, text=True,
                                               check=True).stdout)
        else:
            engine = Engine(home, store=open_store(home, args.store))
            second = engine.sync(folder, options).to_json()
            engine.close()
        seconds = time.perf_counter() - started
        assert second["unchanged"] == args.files, second
    print(json.dumps({"files": args.files, "store": "postgres" if args.store else "sqlite",
                      "cli": args.cli, "first_sync_s": round(first_seconds, 2),
                      "unchanged_sync_s": round(seconds, 3),
                      "target_s": TARGET_SECONDS, "met": seconds < TARGET_SECONDS}))


if __name__ == "__main__":
    main()
