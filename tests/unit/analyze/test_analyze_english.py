"""English analysis: words, stopwords, Snowball stems, normalisation."""

from __future__ import annotations

import bm25s
import pytest
import Stemmer

from excerpt.analyze import analyze
from excerpt.analyze.english import stopwords

PLAIN_TEXTS = [
    "The running dogs were chasing a ball into the garden.",
    "Alterations of the architecture of cerebral white matter in the developing human brain "
    "can affect cortical development and result in functional disabilities.",
    "0-dimensional biomaterials lack inductive properties (n = 17; p < 0.05).",
    "1 in 5 million in UK have abnormal PrP positivity.",
]


def test_stopwords_are_removed() -> None:
    assert analyze("the cat is on the mat") == ["cat", "mat"]


def test_stopwords_are_the_bm25s_list() -> None:
    assert stopwords() == frozenset(bm25s.stopwords.STOPWORDS_EN)
    assert len(stopwords()) == 33


@pytest.mark.parametrize(
    ("word", "stem"), [("running", "run"), ("studies", "studi"), ("shipments", "shipment")]
)
def test_words_are_stemmed(word: str, stem: str) -> None:
    assert analyze(word) == [stem]


def test_lowercase_and_single_characters_dropped() -> None:
    assert analyze("A B Cats x 42 7") == ["cat", "42"]


def test_plain_text_matches_bm25s_tokenizer() -> None:
    expected = bm25s.tokenize(
        PLAIN_TEXTS,
        stopwords="en",
        stemmer=Stemmer.Stemmer("english"),
        return_ids=False,
        show_progress=False,
    )
    assert [analyze(t) for t in PLAIN_TEXTS] == expected


def test_fullwidth_and_compatibility_forms_are_normalised() -> None:
    assert analyze("ＢＭ２５ Ｓｅａｒｃｈ") == analyze("BM25 Search") == ["bm25", "search"]


def test_forced_language_and_unknown_language() -> None:
    assert analyze("running", language="en") == ["run"]
    assert analyze("running", language="ko") == ["run"]
    with pytest.raises(ValueError, match="unknown language"):
        analyze("running", language="fr")
