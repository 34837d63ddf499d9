"""excerpt's LangChain retriever: LangChain's own standard retriever tests (langchain-tests),
local (an Engine) and remote (a real ``excerpt serve`` with API keys); a chain run end to end
over Dorian Gray whose output keeps the citations; and the rights: a reader's key, or a local
principal without the tag, never gets a board-tagged node."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_tests.integration_tests import RetrieversIntegrationTests
from tests.http import add_keys, excerpt_serve
from tests.retriever_library import BOARD_ID, BOARD_QUERY, QUERY, ingest_books

from excerpt import Engine, Principal
from excerpt.errors import DependencyError, Forbidden, InputError, NotFoundError
from excerpt.integrations._documents import place
from excerpt.integrations.langchain import ExcerptRetriever


@pytest.fixture(scope="module")
def library(shared_data: Callable[..., Path],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = ingest_books(tmp_path_factory.mktemp("langchain") / "home",
                          shared_data("books", "pg174_dorian_gray.txt"))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def served(library: Engine, free_port: Callable[[], int]) -> Iterator[tuple[str, dict[str, str]]]:
    """A real ``excerpt serve`` over the same store, and the cast's keys (tests/http.py)."""
    keys = add_keys(library.home)
    with excerpt_serve(["--home", str(library.home)], free_port()) as url:
        yield url, keys


class TestLocalStandard(RetrieversIntegrationTests):
    """LangChain's standard retriever tests over a local engine, as an anonymous reader."""

    engine: Engine

    @pytest.fixture(autouse=True)
    def _library(self, library: Engine) -> None:
        type(self).engine = library

    @property
    def retriever_constructor(self) -> type[ExcerptRetriever]:
        return ExcerptRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"engine": self.engine, "collection": "books", "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return QUERY


class TestRemoteStandard(RetrieversIntegrationTests):
    """The same standard tests against ``excerpt serve`` with a reader's key."""

    url: str
    key: str

    @pytest.fixture(autouse=True)
    def _served(self, served: tuple[str, dict[str, str]]) -> None:
        type(self).url, type(self).key = served[0], served[1]["alice"]

    @property
    def retriever_constructor(self) -> type[ExcerptRetriever]:
        return ExcerptRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"url": self.url, "api_key": self.key, "collection": "books", "mode": "bm25",
                "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return QUERY


def ids(documents: list[Document]) -> list[str | None]:
    return [d.id for d in documents]


def test_a_document_carries_the_node_id_score_citation_and_metadata(library: Engine) -> None:
    retriever = ExcerptRetriever(engine=library, collection="books", mode="bm25", k=3)
    found = retriever.invoke(QUERY)
    expected = library.search(QUERY, _books(), mode="bm25", k=3).hits
    assert ids(found) == [hit.node.id for hit in expected]
    first, hit = found[0], expected[0]
    assert first.page_content == hit.node.text
    assert first.metadata["id"] == hit.node.id and first.metadata["score"] == round(hit.score, 6)
    assert first.metadata["title"] == "The Picture of Dorian Gray"
    chapter = hit.node.metadata["chapter"]
    assert first.metadata["citation"] == f"The Picture of Dorian Gray · chapter {chapter}"
    assert first.metadata["place"] == f"chapter {chapter}" and first.metadata["kind"] == "book"
    assert first.metadata["metadata"] == dict(hit.node.metadata)
    assert first.metadata["snapshot_id"] == hit.snapshot_id
    json.dumps([d.metadata for d in found])  # a document store or a trace can keep it


def test_the_citation_is_the_web_uis_place() -> None:
    """The cases the web UI's places.js is tested on (in a browser) give the same kind and
    label here."""
    from tests.integration.test_web_ui_places import PLACES

    for metadata, expected in PLACES:
        assert list(place(metadata, "The Iliad", "/x/iliad.txt")) == expected, metadata
    assert place({}, "", "/x/iliad.txt") == ("document", "iliad.txt")


def test_local_and_remote_return_the_same_documents(
        library: Engine, served: tuple[str, dict[str, str]]) -> None:
    url, keys = served
    local = ExcerptRetriever(engine=library, collection="books", mode="bm25", k=4)
    remote = ExcerptRetriever(url=url, api_key=keys["alice"], collection="books", mode="bm25",
                              k=4)
    assert ([(d.id, d.metadata) for d in local.invoke(QUERY)]
            == [(d.id, d.metadata) for d in remote.invoke(QUERY)])


@pytest.mark.parametrize("where", [{"chapter": 7}, {"chapter": 7, "part": "body"}])
def test_where_mode_and_k_reach_the_search_locally_and_remotely(
        library: Engine, served: tuple[str, dict[str, str]], where: dict[str, Any]) -> None:
    url, keys = served
    for retriever in (ExcerptRetriever(engine=library, collection="books", where=where),
                      ExcerptRetriever(url=url, api_key=keys["alice"], collection="books",
                                       where=where)):
        found = retriever.invoke("Sibyl Vane", k=5, mode="bm25")
        assert len(found) == 5
        assert {d.metadata["metadata"]["chapter"] for d in found} == {7}


def test_a_string_that_looks_like_json_stays_a_string_remotely(
        served: tuple[str, dict[str, str]]) -> None:
    url, keys = served
    retriever = ExcerptRetriever(url=url, api_key=keys["alice"], collection="books",
                                 where={"chapter": "7"})
    assert retriever.invoke("Sibyl Vane", k=3) == []  # chapters are numbers, "7" matches none


def test_a_snapshot_limits_the_read_locally_and_remotely(
        library: Engine, served: tuple[str, dict[str, str]]) -> None:
    url, keys = served
    board = ExcerptRetriever(url=url, api_key=keys["bob"], collection="books", mode="bm25")
    snapshot = board.invoke(BOARD_QUERY, k=1)[0].metadata["snapshot_id"]
    books = board.invoke(QUERY, k=1)[0].metadata["snapshot_id"]  # Dorian Gray's
    assert books != snapshot
    for retriever in (ExcerptRetriever(engine=library, principal=Principal.admin(),
                                       collection="books", mode="bm25", snapshot=books),
                      ExcerptRetriever(url=url, api_key=keys["bob"], collection="books",
                                       mode="bm25", snapshot=books)):
        found = retriever.invoke(BOARD_QUERY, k=20)
        assert found and {d.metadata["snapshot_id"] for d in found} == {books}
    assert board.invoke(BOARD_QUERY, k=1, snapshot=snapshot)[0].id == BOARD_ID


def test_a_reader_key_never_gets_a_board_node_and_the_board_key_does(
        served: tuple[str, dict[str, str]]) -> None:
    url, keys = served

    def found(key: str, k: int = 10) -> list[str | None]:
        return ids(ExcerptRetriever(url=url, api_key=key, collection="books", mode="bm25",
                                    k=k).invoke(BOARD_QUERY))

    assert BOARD_ID in found(keys["bob"])
    for k in (1, 10, 50):
        assert BOARD_ID not in found(keys["alice"], k)


def test_a_local_principal_without_the_tag_never_gets_a_board_node(library: Engine) -> None:
    def found(principal: Principal | None) -> list[str | None]:
        return ids(ExcerptRetriever(engine=library, principal=principal, collection="books",
                                    mode="bm25", k=50).invoke(BOARD_QUERY))

    assert BOARD_ID in found(Principal(acl_tags=frozenset({"board"})))
    assert BOARD_ID in found(Principal.admin())  # all access only when asked for
    for principal in (None, Principal.anonymous(), Principal(acl_tags=frozenset({"hr"}))):
        assert BOARD_ID not in found(principal)


def test_refusals_are_excerpts_errors(library: Engine,
                                      served: tuple[str, dict[str, str]]) -> None:
    url, keys = served
    with pytest.raises(InputError, match="either a local engine"):
        ExcerptRetriever(collection="books")
    with pytest.raises(InputError, match="either a local engine"):
        ExcerptRetriever(engine=library, url=url, api_key=keys["alice"])
    with pytest.raises(InputError, match="key's rights"):
        ExcerptRetriever(url=url, api_key=keys["alice"], principal=Principal.admin())
    with pytest.raises(InputError, match="api_key"):
        ExcerptRetriever(url=url)
    with pytest.raises(Forbidden, match="valid API key"):
        ExcerptRetriever(url=url, api_key="exk_wrong", collection="books").invoke(QUERY)
    with pytest.raises(Forbidden, match="valid API key"):  # eve's key is revoked
        ExcerptRetriever(url=url, api_key=keys["eve"], collection="books").invoke(QUERY)
    for retriever in (ExcerptRetriever(engine=library, collection="nowhere"),
                      ExcerptRetriever(url=url, api_key=keys["alice"], collection="nowhere")):
        with pytest.raises(NotFoundError):
            retriever.invoke(QUERY)
        with pytest.raises(InputError, match="security field"):
            retriever.invoke(QUERY, where={"acl_tags": "board"})
        with pytest.raises(InputError, match="unknown search option"):
            retriever.invoke(QUERY, principal=Principal.admin())


def test_the_key_is_kept_out_of_the_retrievers_repr(served: tuple[str, dict[str, str]]) -> None:
    url, keys = served
    retriever = ExcerptRetriever(url=url, api_key=keys["alice"], collection="books")
    shown = repr(retriever) + str(retriever) + repr(retriever._source()) + str(retriever.to_json())
    assert keys["alice"] not in shown


def format_docs(documents: list[Document]) -> str:
    return "\n\n".join(f"[{n}] {d.metadata['citation']} ({d.id})\n{d.page_content}"
                       for n, d in enumerate(documents, 1))


def test_a_chain_over_the_books_keeps_the_citations(served: tuple[str, dict[str, str]]) -> None:
    """retriever | format | prompt | chat model | parser, the chat model a fake that repeats
    its prompt (no model runs here): the passages and their citations reach the output."""
    url, keys = served
    retriever = ExcerptRetriever(url=url, api_key=keys["alice"], collection="books", k=3)
    prompt = ChatPromptTemplate.from_template(
        "Answer from these passages, citing them as [n].\n\n{context}\n\nQuestion: {question}")
    chain = ({"context": retriever | format_docs, "question": RunnablePassthrough()}
             | prompt | ParrotFakeChatModel() | StrOutputParser())
    out = chain.invoke("What does Lord Henry say about influence?")
    documents = retriever.invoke("What does Lord Henry say about influence?")
    assert len(documents) == 3
    for n, document in enumerate(documents, 1):
        assert f"[{n}] {document.metadata['citation']} ({document.id})" in out
        assert document.page_content in out
    assert "The Picture of Dorian Gray · chapter " in out


def test_importing_the_module_imports_no_framework() -> None:
    code = ("import sys, excerpt.integrations.langchain, excerpt.integrations.llama_index; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('langchain_core', 'llama_index', 'pydantic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_without_langchain_the_retriever_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import excerpt.integrations.langchain as module

    monkeypatch.delitem(module.__dict__, "ExcerptRetriever", raising=False)
    monkeypatch.delitem(sys.modules, "excerpt.integrations._langchain", raising=False)
    for name in [n for n in sys.modules if n.split(".")[0] == "langchain_core"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    with pytest.raises(DependencyError, match=r"pip install 'excerpt\[langchain\]'"):
        from excerpt.integrations.langchain import ExcerptRetriever  # noqa: F401


def _books() -> Any:
    from excerpt import Filters

    return Filters("books")
