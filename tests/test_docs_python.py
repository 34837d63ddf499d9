"""Every Python example of README.md and docs/python.md runs as a test, so the docs cannot rot.

A page's fenced ```python blocks run in order in one namespace (as a reader pasting them into
one interpreter would), in a new folder that holds ``examples/`` (the repository's) and sees the
shared corpora at ``../shared/data`` (the ``shared_data`` fixture's folder), so the paths read
exactly as they do from the repository root. A ```text block right after a python block is the
output it prints; it is compared with :mod:`doctest`'s checker (``...`` matches anything,
whitespace runs are one space). Skipped, saying why, when the shared books are absent.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, shared_data_dir

PAGES = ("README.md", "docs/python.md")
_FENCE = re.compile(r"^```(\w*)\s*$")
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass(frozen=True)
class Example:
    page: str
    line: int  # of the opening fence, 1-based
    code: str
    want: str | None  # the output shown after it, None when the page shows none


def examples(page: str) -> list[Example]:
    """The python blocks of ``page``, each with the text block right after it (if any)."""
    lines = (REPO / page).read_text("utf-8").splitlines()
    blocks: list[tuple[int, int, str, str]] = []  # (opening, closing index, language, body)
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        blocks.append((i, end, opening.group(1), "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    found: list[Example] = []
    for n, (start, end, language, body) in enumerate(blocks):
        if language != "python":
            continue
        after = blocks[n + 1] if n + 1 < len(blocks) else None
        shown = (after[3] if after is not None and after[2] == "text"
                 and not any(s.strip() for s in lines[end + 1:after[0]]) else None)
        found.append(Example(page, start + 1, body, shown))
    return found


class Page:
    """One page's examples run lazily in order, in one namespace and one working folder."""

    def __init__(self, page: str, folder: Path) -> None:
        self.examples = examples(page)
        self.folder = folder
        self.namespace: dict[str, Any] = {"__name__": "__docs__"}
        self.outputs: list[str] = []

    def output(self, index: int) -> str:
        """What example ``index`` printed (running it, and those before it, first)."""
        while len(self.outputs) <= index:
            example = self.examples[len(self.outputs)]
            printed = io.StringIO()
            with _inside(self.folder), contextlib.redirect_stdout(printed):
                exec(compile(example.code, f"{example.page}:{example.line}", "exec"),
                     self.namespace)
            self.outputs.append(printed.getvalue())
        return self.outputs[index]

    def close(self) -> None:
        engine = self.namespace.get("engine")
        if engine is not None and hasattr(engine, "close"):
            engine.close()


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _workspace(root: Path) -> Path:
    """``root/work`` with ``examples/`` linked in and ``root/shared/data`` linked to the data."""
    work = root / "work"
    work.mkdir()
    (work / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    (root / "shared").mkdir()
    (root / "shared" / "data").symlink_to(shared_data_dir().resolve(), target_is_directory=True)
    return work


@pytest.fixture(scope="module")
def pages(shared_data: Callable[..., Path],
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Page]]:
    shared_data("books", "pg174_dorian_gray.txt")
    shared_data("books", "pg6130_iliad_pope.txt")
    made = {page: Page(page, _workspace(tmp_path_factory.mktemp("docs")))
            for page in PAGES}
    yield made
    for page in made.values():
        page.close()


CASES = [(page, index) for page in PAGES for index in range(len(examples(page)))]


@pytest.mark.parametrize(("page", "index"), CASES,
                         ids=[f"{p}:{examples(p)[i].line}" for p, i in CASES])
def test_example_runs_and_prints_what_the_page_shows(
        pages: dict[str, Page], page: str, index: int) -> None:
    printed_as_shown(page, pages[page].examples[index], pages[page].output(index))


def printed_as_shown(page: str, example: Example, got: str) -> None:
    """Fails the test when ``example`` of ``page`` printed ``got`` and the page shows other
    output (doctest's comparison, with this module's flags); an example showing none passes."""
    if example.want is None:
        return
    checker = doctest.OutputChecker()
    if not checker.check_output(example.want, got, _FLAGS):
        shown = doctest.Example(example.code, example.want)
        pytest.fail(f"{page} line {example.line} printed something else:\n"
                    + checker.output_difference(shown, got, _FLAGS))


def test_each_page_has_examples_that_show_their_output() -> None:
    python = examples("docs/python.md")
    assert len(python) >= 8
    assert sum(e.want is not None for e in python) >= len(python) - 2
    readme = examples("README.md")
    assert readme and all(e.want is not None for e in readme)


def test_the_python_page_covers_the_public_api() -> None:
    import excerpt

    text = (REPO / "docs" / "python.md").read_text("utf-8")
    code = "".join(e.code for e in examples("docs/python.md"))
    for name in excerpt.__all__:
        assert name in text, name
    for call in ("ingest(", ".search(", ".ask(", ".graph(", ".context(", "MemoryStore(",
                 "load_settings(", ".ask_options(", "Principal("):
        assert call in code, call
    assert "security.md" in text
    assert "python.md" in (REPO / "README.md").read_text("utf-8")
