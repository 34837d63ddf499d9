"""excerpt's LlamaIndex retriever: nodes with excerpt's ids, scores and citations, local (an
Engine) and remote (a real ``excerpt serve`` with API keys); a query engine run end to end over
Dorian Gray with a mock LLM and no network, its citations in the response; and the rights: a
reader's key, or a local principal without the tag, never gets a board-tagged node."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import Settings
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore
from tests.http import add_keys, excerpt_serve
from tests.retriever_library import BOARD_ID, BOARD_QUERY, QUERY, ingest_books

from excerpt import Engine, Filters, Principal
from excerpt.errors import DependencyError, Forbidden, InputError
from excerpt.integrations.llama_index import ExcerptRetriever


@pytest.fixture(scope="module")
def library(shared_data: Callable[..., Path],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = ingest_books(tmp_path_factory.mktemp("llama") / "home",
                          shared_data("books", "pg174_dorian_gray.txt"))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def served(library: Engine, free_port: Callable[[], int]) -> Iterator[tuple[str, dict[str, str]]]:
    keys = add_keys(library.home)
    with excerpt_serve(["--home", str(library.home)], free_port()) as url:
        yield url, keys


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No model, no network: LlamaIndex's settings hold mocks (never OpenAI's defaults), and
    any connection or name look-up beyond the loopback fails the test."""
    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in ("127.0.0.1", "localhost"):
            raise AssertionError(f"a network look-up of {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)
    before = Settings._llm, Settings._embed_model
    Settings.llm = MockLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    yield
    Settings._llm, Settings._embed_model = before


def ids(nodes: list[NodeWithScore]) -> list[str]:
    return [n.node.node_id for n in nodes]


def test_a_node_carries_excerpts_id_score_and_citation(library: Engine) -> None:
    nodes = ExcerptRetriever(library, collection="books", mode="bm25", k=3).retrieve(QUERY)
    hits = library.search(QUERY, Filters("books"), mode="bm25", k=3).hits
    assert ids(nodes) == [hit.node.id for hit in hits]
    first, hit = nodes[0], hits[0]
    assert first.score == round(hit.score, 6) and first.node.get_content() == hit.node.text
    chapter = hit.node.metadata["chapter"]
    assert first.node.metadata["citation"] == f"The Picture of Dorian Gray · chapter {chapter}"
    assert first.node.metadata["metadata"] == dict(hit.node.metadata)
    shown = first.node.get_content(MetadataMode.LLM)  # what a synthesizer gives a model
    assert shown.startswith(f"citation: The Picture of Dorian Gray · chapter {chapter}\n")
    assert "snapshot_id" not in shown and "score" not in shown
    assert first.node.get_content(MetadataMode.EMBED) == hit.node.text


def test_local_and_remote_return_the_same_nodes(
        library: Engine, served: tuple[str, dict[str, str]]) -> None:
    url, keys = served
    local = ExcerptRetriever(library, collection="books", mode="bm25", k=4,
                             where={"chapter": 2})
    remote = ExcerptRetriever(url=url, api_key=keys["alice"], collection="books", mode="bm25",
                              k=4, where={"chapter": 2})
    found = local.retrieve(QUERY)
    assert len(found) == 4 and {n.node.metadata["metadata"]["chapter"] for n in found} == {2}
    assert ([(n.node.node_id, n.score, n.node.metadata) for n in found]
            == [(n.node.node_id, n.score, n.node.metadata) for n in remote.retrieve(QUERY)])


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("where", ["local", "remote"])
def test_a_query_engine_over_the_books_keeps_the_citations(
        library: Engine, served: tuple[str, dict[str, str]], where: str) -> None:
    """RetrieverQueryEngine with a response synthesizer over MockLLM (which answers with the
    prompt it was given): the passages and their citations reach the response."""
    url, keys = served
    retriever = (ExcerptRetriever(library, collection="books", k=3) if where == "local" else
                 ExcerptRetriever(url=url, api_key=keys["alice"], collection="books", k=3))
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM(), response_mode="compact")
    question = "What does Lord Henry say about influence?"
    response = engine.query(question)
    assert ids(response.source_nodes) == ids(retriever.retrieve(question))
    text = str(response)
    for source in response.source_nodes:
        citation = source.node.metadata["citation"]
        assert citation.startswith("The Picture of Dorian Gray · chapter ")
        assert f"citation: {citation}" in text
    assert "influence" in text


def test_a_reader_key_never_gets_a_board_node_and_the_board_key_does(
        served: tuple[str, dict[str, str]]) -> None:
    url, keys = served

    def found(key: str, k: int = 10) -> list[str]:
        return ids(ExcerptRetriever(url=url, api_key=key, collection="books", mode="bm25",
                                    k=k).retrieve(BOARD_QUERY))

    assert BOARD_ID in found(keys["bob"])
    for k in (1, 10, 50):
        assert BOARD_ID not in found(keys["alice"], k)


def test_a_local_principal_without_the_tag_never_gets_a_board_node(library: Engine) -> None:
    def found(principal: Principal | None) -> list[str]:
        return ids(ExcerptRetriever(library, principal, collection="books", mode="bm25",
                                    k=50).retrieve(BOARD_QUERY))

    assert BOARD_ID in found(Principal(acl_tags=frozenset({"board"})))
    for principal in (None, Principal.anonymous(), Principal(acl_tags=frozenset({"hr"}))):
        assert BOARD_ID not in found(principal)


def test_refusals_are_excerpts_errors(library: Engine,
                                      served: tuple[str, dict[str, str]]) -> None:
    url, keys = served
    with pytest.raises(InputError, match="either a local engine"):
        ExcerptRetriever(collection="books")
    with pytest.raises(InputError, match="key's rights"):
        ExcerptRetriever(url=url, api_key=keys["alice"], principal=Principal.admin())
    with pytest.raises(InputError, match=r"excerpt\.Principal"):
        ExcerptRetriever(library, principal="board")
    with pytest.raises(Forbidden, match="valid API key"):
        ExcerptRetriever(url=url, api_key="exk_wrong", collection="books").retrieve(QUERY)
    remote = ExcerptRetriever(url=url, api_key=keys["alice"], collection="books")
    assert keys["alice"] not in repr(remote) + repr(vars(remote))
    with pytest.raises(InputError, match="security field"):
        ExcerptRetriever(library, collection="books", where={"acl_tags": "board"}).retrieve(QUERY)


def test_without_llama_index_the_retriever_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import excerpt.integrations.llama_index as module

    monkeypatch.delitem(module.__dict__, "ExcerptRetriever", raising=False)
    monkeypatch.delitem(sys.modules, "excerpt.integrations._llama_index", raising=False)
    for name in [n for n in sys.modules if n.split(".")[0] == "llama_index"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    with pytest.raises(DependencyError, match=r"pip install 'excerpt\[llamaindex\]'"):
        from excerpt.integrations.llama_index import ExcerptRetriever  # noqa: F401
