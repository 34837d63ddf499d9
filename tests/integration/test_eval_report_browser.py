"""The evaluation report renders in Debian's headless Chromium: no console error, every plot
decoded at its size, the comparison table there, and a screenshot of the page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tests.browser import console_errors, png_size

from excerpt.cli.main import cli
from excerpt.evaluate.report import FIGURE_PX

MINI = Path(__file__).resolve().parents[1] / "data" / "mini-beir"


def excerpt(home: Path, *args: str) -> Any:
    out = CliRunner().invoke(cli, ["--home", str(home), *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_the_report_renders_offline_with_every_plot(tmp_path: Path, page: Any) -> None:
    home = tmp_path / "home"
    for mode in ("bm25", "hybrid"):
        excerpt(home, "eval", str(MINI), "--mode", mode, "--no-progress")
    report = Path(excerpt(home, "eval", "report", "1", "2", "--out", str(tmp_path / "r"))[
        "report"])
    errors = console_errors(page)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    sizes = page.eval_on_selector_all(
        "img", "imgs => imgs.map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
    assert sizes == [[True, *FIGURE_PX]] * 4  # metrics, latency, recall, win-loss
    assert errors == []
    assert all(u.startswith(("file:", "data:")) for u in requests)  # nothing from a network
    headings = page.locator("h2").all_inner_texts()
    assert headings[:3] == ["Runs", "Metrics", "Latency per stage"]
    assert headings[-1].startswith("#2 against #1")
    assert "ndcg@10" in page.inner_text("table >> nth=3")
    shot = page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    width, height = png_size(shot)
    assert width == 1100 and height > 4 * FIGURE_PX[1]
    page.set_viewport_size({"width": 600, "height": 900})  # narrower than any table's content
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0  # tables scroll in their own box; the page never scrolls sideways
