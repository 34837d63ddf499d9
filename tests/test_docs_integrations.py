"""Every Python example of docs/integrations.md runs as a test, as those of docs/python.md do
(tests/test_docs_python.py: in order, in one namespace, in a new folder that sees
``../shared/data``; a ```text block after an example is what it prints). The page's served
examples read ``EXCERPT_URL`` and ``EXCERPT_KEY``: before the first of them runs, a real
``excerpt serve`` starts on the page's store with a reader's key, as the page tells its reader
to do."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.http import add_keys, excerpt_serve
from tests.test_docs_python import Page, _workspace, examples, printed_as_shown

PAGE = "docs/integrations.md"


class ServedPage(Page):
    """A page whose examples after ``EXCERPT_URL`` first appears read a served store."""

    def __init__(self, page: str, folder: Path, free_port: Callable[[], int],
                 monkeypatch: pytest.MonkeyPatch, stack: ExitStack) -> None:
        super().__init__(page, folder)
        self.free_port, self.monkeypatch, self.stack = free_port, monkeypatch, stack

    def output(self, index: int) -> str:
        while len(self.outputs) < index:
            self.output(len(self.outputs))
        if "EXCERPT_URL" in self.examples[index].code and len(self.outputs) == index:
            home = self.folder / ".excerpt"
            key = add_keys(home, [("reader",)], revoke=())["reader"]
            url = self.stack.enter_context(excerpt_serve(["--home", str(home)],
                                                         self.free_port()))
            self.monkeypatch.setenv("EXCERPT_URL", url)
            self.monkeypatch.setenv("EXCERPT_KEY", key)
        return super().output(index)


@pytest.fixture(scope="module")
def page(shared_data: Callable[..., Path], free_port: Callable[[], int],
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPage]:
    shared_data("books", "pg174_dorian_gray.txt")
    shared_data("books", "pg6130_iliad_pope.txt")
    with ExitStack() as stack, pytest.MonkeyPatch.context() as monkeypatch:
        made = ServedPage(PAGE, _workspace(tmp_path_factory.mktemp("integrations")),
                          free_port, monkeypatch, stack)
        yield made
        made.close()


INDEXES = range(len(examples(PAGE)))


@pytest.mark.parametrize("index", INDEXES, ids=[f"{PAGE}:{e.line}" for e in examples(PAGE)])
def test_example_runs_and_prints_what_the_page_shows(page: ServedPage, index: int) -> None:
    printed_as_shown(PAGE, page.examples[index], page.output(index))


def test_the_page_shows_both_frameworks_local_and_served() -> None:
    code = "".join(e.code for e in examples(PAGE))
    for call in ("integrations.langchain import", "integrations.llama_index import",
                 ".invoke(", ".retrieve(", "RetrieverQueryEngine", "principal=",
                 "api_key=", "where="):
        assert call in code, call
    assert all(e.want is not None for e in examples(PAGE)[:-1])
