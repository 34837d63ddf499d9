"""Accessibility checks the browser tests share: axe-core (from the npm registry, pinned and
installed into tools/ui-audit/ by `make install`) injected into a Playwright page, its
violations returned as plain dicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

UI_AUDIT = Path(__file__).resolve().parents[1] / "tools" / "ui-audit"
AXE = UI_AUDIT / "node_modules" / "axe-core" / "axe.min.js"
SEVERE = ("serious", "critical")

# axe.run over the whole document, violations only; the page's language is what the page says
RUN_AXE = """async () => {
  const result = await window.axe.run(document, {resultTypes: ['violations']});
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map((n) => n.target.join(' ')),
  }));
}"""


def axe_source() -> str:
    """axe.min.js's text; skips the test, saying why, where it is not installed."""
    if not AXE.is_file():
        pytest.skip(f"axe-core is not installed in {UI_AUDIT} (`make install` runs npm ci "
                    "there when npm exists)")
    return AXE.read_text("utf-8")


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """The page's axe-core violations as it is now: each rule's id, impact ("minor",
    "moderate", "serious" or "critical"), help text and the CSS targets of the nodes that
    break it. axe is evaluated in the page (a page's Content-Security-Policy does not stop
    that) unless an earlier call already did."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source() + "\n;undefined")
    pinned = json.loads((UI_AUDIT / "package.json").read_text("utf-8"))["dependencies"]
    assert page.evaluate("() => window.axe.version") == pinned["axe-core"]
    return list(page.evaluate(RUN_AXE))


def severe(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The serious and critical ones."""
    return [v for v in violations if v["impact"] in SEVERE]


def described(violations: list[dict[str, Any]]) -> str:
    """One line a violation, for an assertion's message."""
    return "\n".join(f"{v['impact']} {v['id']}: {v['help']} at {', '.join(v['targets'][:5])}"
                     for v in violations)


def looked_at(page: Any, folder: Path, name: str) -> None:
    """The view ``page`` shows now, at each of tests.browser's LOOKS (width and colour scheme):
    the page's own theme following the scheme, a full-page screenshot saved into ``folder``
    (and kept, tests.browser.keep), nothing scrolling sideways, and no serious or critical axe
    violation. The view is not rebuilt per
    look: the page is resized and its colour scheme switched, as a reader's would be."""
    from tests.browser import LOOKS, keep, png_size

    for label, (width, scheme) in LOOKS.items():
        page.emulate_media(color_scheme=scheme)
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("getComputedStyle(document.documentElement).colorScheme") == scheme
        shot = folder / f"{name}-{label}.png"
        assert png_size(page.screenshot(path=str(shot), full_page=True))[0] == width
        keep(shot)
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0, \
            f"{name} scrolls sideways at {width} px"
        found = severe(axe_violations(page))
        assert found == [], f"{name} at {label}:\n{described(found)}"
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1100, "height": 900})
