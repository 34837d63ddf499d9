"""Code identifiers are kept whole and also split into (stemmed) words."""

from __future__ import annotations

import pytest
import Stemmer

from excerpt.analyze import analyze
from excerpt.analyze.code import is_identifier, split_identifier

STEM = Stemmer.Stemmer("english").stemWord


def test_snake_and_camel_identifier() -> None:
    tokens = analyze("proc_SearchShipments_BM25")
    assert tokens == ["proc_searchshipments_bm25", "proc", "search", "shipment", "bm25"]


def test_camel_case_identifier() -> None:
    assert analyze("SearchFacade") == ["searchfacade", "search", STEM("facade")]


@pytest.mark.parametrize(
    ("identifier", "words"),
    [
        ("table_Payments", ["table", "payments"]),
        ("ValidateToken", ["validate", "token"]),
        ("getHTTPResponse", ["get", "http", "response"]),
        ("HTTPServer_v2", ["http", "server", "v2"]),
        ("computeSha256Hash", ["compute", "sha256", "hash"]),
    ],
)
def test_whole_unstemmed_then_stemmed_parts(identifier: str, words: list[str]) -> None:
    assert analyze(identifier) == [identifier.lower(), *(STEM(w) for w in words)]


@pytest.mark.parametrize("word", ["mRNA", "miRNAs", "IL6", "TNFalpha", "mTOR", "cAMP", "getX"])
def test_scientific_names_are_not_split(word: str) -> None:
    assert not is_identifier(word)
    assert analyze(word) == [STEM(word.lower())]


def test_short_and_stopword_parts_are_dropped() -> None:
    assert split_identifier("getX_value") == ["get", "value"]
    assert analyze("is_active") == ["is_active", STEM("active")]


def test_dotted_name_is_two_identifiers() -> None:
    tokens = analyze("SqlExecutor.Execute")
    assert tokens == ["sqlexecutor", "sql", STEM("executor"), STEM("execute")]


def test_plain_words_query_matches_identifier() -> None:
    assert set(analyze("search facade")) <= set(analyze("class SearchFacade"))
    assert set(analyze("search shipments")) <= set(analyze("EXEC proc_SearchShipments_BM25"))


def test_identifier_in_korean_text_gives_the_same_tokens() -> None:
    assert analyze("proc_SearchShipments_BM25를 호출한다")[:5] == analyze(
        "proc_SearchShipments_BM25"
    )
