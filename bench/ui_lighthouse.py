"""Lighthouse on the web UI (issue 32: accessibility >= 95 and performance >= 90 on the local
server).

Run:  .venv/bin/python bench/ui_lighthouse.py [--out DIR] [--home DIR]

Serves a small home (``examples/handbook`` ingested with the default embedder into a temporary
home, or ``--home DIR`` as it is with ``--collection``) with a real ``excerpt serve`` on a free
loopback port and a fresh reader's key, then audits it with Debian's headless Chromium
(/usr/bin/chromium, or $CHROME_PATH) and the Lighthouse pinned in tools/ui-audit/ (12.2.3,
installed by ``make install``; nothing is downloaded):

- ``start-mobile``, ``start-desktop``: Lighthouse's CLI on the start page, with its mobile
  defaults (a phone's screen, simulated slow 4G and a 4x slower CPU) and ``--preset=desktop``;
- tools/ui-audit/flow.mjs, a Lighthouse user flow (mobile defaults): the start page loaded, an
  ingester's key pasted (``overview``: a snapshot of the collection overview and the upload
  panel), a question asked (``ask``: a timespan from the click to the answer, scored from total
  blocking time, layout shift and interaction to next paint; ``answer``: a snapshot of the page
  then, scored for accessibility), a follow-up (``follow-up``, ``conversation``), then a search
  (``search``, ``results``).

Prints one JSON line per audited step (scores 0-100, the metrics in ms, layout shift unitless,
whether the issue's targets hold) and writes Lighthouse's HTML and JSON reports into ``--out``
(default bench/out/ui_lighthouse/).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _serve import free_port, wait_healthy

REPO = Path(__file__).resolve().parents[1]
UI_AUDIT = REPO / "tools" / "ui-audit"
LIGHTHOUSE = UI_AUDIT / "node_modules" / ".bin" / "lighthouse"
CHROME_FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run "
                "--disable-background-networking --disable-component-update --disable-sync")
QUESTION = "How does excerpt keep a snapshot from being half written?"
FOLLOW_UP = "And what happens to it when the process is killed?"
QUERY = "snapshot"
TARGETS = {"accessibility": 95, "performance": 90}
METRICS = ("first-contentful-paint", "largest-contentful-paint", "total-blocking-time",
           "cumulative-layout-shift", "interaction-to-next-paint")


def excerpt(home: Path, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "excerpt", "--home", str(home), *args],
                         check=True, capture_output=True, text=True)
    return out.stdout


def cli_run(url: str, out: Path, name: str, env: dict[str, str], *extra: str) -> dict[str, Any]:
    """Lighthouse's CLI on ``url``: the step's scores and metrics."""
    command = [str(LIGHTHOUSE), url, "--quiet", f"--chrome-flags={CHROME_FLAGS}",
               "--only-categories=accessibility,performance", "--no-enable-error-reporting",
               "--output=json", "--output=html", f"--output-path={out / name}", *extra]
    subprocess.run(command, check=True, env=env, timeout=300)
    lhr = json.loads((out / f"{name}.report.json").read_text("utf-8"))
    return {
        "name": name, "mode": lhr["gatherMode"],
        "scores": {k: round(c["score"] * 100) for k, c in lhr["categories"].items()},
        "metrics": {m: round(lhr["audits"][m]["numericValue"], 3) for m in METRICS
                    if lhr["audits"].get(m, {}).get("numericValue") is not None},
        "failing": [a["id"] for a in lhr["audits"].values()
                    if a["scoreDisplayMode"] == "binary" and a["score"] == 0],
        "command": shlex.join(command).replace(str(REPO) + "/", "").replace(url, "URL")
        .replace(str(out), "OUT"),
    }


def audit(out: Path, home: Path | None = None,
          collection: str = "handbook") -> list[dict[str, Any]]:
    """Every step audited (the CLI's two runs on the start page, then the user flow), each with
    ``meets_targets``; Lighthouse's reports written into ``out``. Raises SystemExit, saying
    why, when Lighthouse or Chromium is not installed."""
    if not LIGHTHOUSE.exists():
        raise SystemExit(f"Lighthouse is not installed in {UI_AUDIT}: `make install` runs npm ci "
                         "there when npm exists")
    chrome = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
    if not Path(chrome).exists():
        raise SystemExit(f"{chrome} not found: apt-get install chromium (or set CHROME_PATH)")
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ui-lighthouse-"))
    if home is None:
        home = scratch / "home"
        excerpt(home, "ingest", str(REPO / "examples" / "handbook"), "--collection",
                collection, "--no-progress")
    key = json.loads(excerpt(home, "keys", "add", f"lighthouse-{os.getpid()}", "--role",
                             "ingester", "--json"))["key"]  # the upload panel is audited too
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(home), "serve",
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    env = {**os.environ, "CHROME_PATH": chrome}
    steps: list[dict[str, Any]] = []
    try:
        wait_healthy(url, server)
        steps.append(cli_run(url + "/", out, "start-mobile", env))
        steps.append(cli_run(url + "/", out, "start-desktop", env, "--preset=desktop"))
        flow = ["node", "flow.mjs", url, collection, QUESTION, FOLLOW_UP, QUERY,
                str(out / "flow")]
        subprocess.run(flow, check=True, cwd=UI_AUDIT, env={**env, "EXCERPT_KEY": key},
                       timeout=600)
        for step in json.loads((out / "flow.json").read_text("utf-8")):
            step["name"] = "flow: " + step["name"]
            step["command"] = ("node tools/ui-audit/flow.mjs URL COLLECTION QUESTION FOLLOW_UP "
                               "QUERY OUT")
            steps.append(step)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)
    for step in steps:
        step["meets_targets"] = all(v >= TARGETS[k] for k, v in step["scores"].items()
                                    if k in TARGETS and v is not None)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "ui_lighthouse")
    parser.add_argument("--home", type=Path, help="an existing home (default: the handbook)")
    parser.add_argument("--collection", default="handbook")
    args = parser.parse_args()
    for step in audit(args.out, args.home, args.collection):
        print(json.dumps(step))
    print(f"reports: {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
