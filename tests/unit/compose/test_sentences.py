"""The sentence splitter: abbreviations, initials, closing quotes, ellipses, Korean endings, and
spans that are the source's own characters (issue 16 item 4)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.compose.sentences import (
    sentence_spans,
    sentence_spans_many,
    split_sentences,
    strip_citation_marks,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("Mr. Gray came in. He sat down.", ["Mr. Gray came in.", "He sat down."]),
    ("Mrs. Vane and Dr. Smith met at St. Paul's. They talked.",
     ["Mrs. Vane and Dr. Smith met at St. Paul's.", "They talked."]),
    ("Some fruits, e.g. Apples, keep. Others, i.e. Pears, rot. Fine.",
     ["Some fruits, e.g. Apples, keep.", "Others, i.e. Pears, rot.", "Fine."]),
    ("The book is by J. R. R. Tolkien. It is long.",
     ["The book is by J. R. R. Tolkien.", "It is long."]),
    ("He said, “Go away.” She left.", ["He said, “Go away.”", "She left."]),
    ("(It was late.) They slept.", ["(It was late.)", "They slept."]),
    ("I wonder... Perhaps not. And then… Nothing.",
     ["I wonder...", "Perhaps not.", "And then…", "Nothing."]),
    ("“Is it you?” he asked. Yes.", ["“Is it you?” he asked.", "Yes."]),
    ("Apples, pears, etc. The rest went.", ["Apples, pears, etc.", "The rest went."]),
])
def test_english_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_korean_endings_without_a_full_stop_end_a_sentence() -> None:
    text = "장학금을 받을 수 있나요 그리고 복학 절차는 어떻게 되나요"
    assert split_sentences(text) == ["장학금을 받을 수 있나요", "그리고 복학 절차는 어떻게 되나요"]


def test_a_korean_amendment_date_stays_with_its_sentence() -> None:
    text = "학생은 휴학할 수 있다. 다만 총장이 정한다 <개정 2021. 9. 1.> 제4조 학생은 복학한다"
    assert split_sentences(text)[1] == "다만 총장이 정한다 <개정 2021. 9. 1.>"


def test_spans_are_the_source_characters_hard_wraps_included() -> None:
    text = "Thus humbled in the dust,\nthe pensive train mourn’d.  “Not yet,” he said.\n"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [
        "Thus humbled in the dust,\nthe pensive train mourn’d.", "“Not yet,” he said."]
    assert split_sentences(text)[0] == "Thus humbled in the dust, the pensive train mourn’d."


@pytest.mark.parametrize("book", ["pg174_dorian_gray.txt", "pg6130_iliad_pope.txt"])
def test_on_a_whole_book_every_sentence_is_verbatim_and_no_mr_is_cut(
        shared_data: Callable[..., Path], book: str) -> None:
    text = shared_data("books", book).read_bytes().decode("utf-8", errors="replace")
    spans = sentence_spans(text)
    assert len(spans) > 1000
    for start, end in spans:
        piece = text[start:end]
        assert piece == piece.strip() and piece
        for abbreviation in ("Mr.", "Mrs.", "Dr.", "St."):
            assert not piece.endswith(" " + abbreviation), piece
    starts = [a for a, _ in spans]
    assert starts == sorted(starts)


def test_many_texts_at_once_cut_as_each_alone(shared_data: Callable[..., Path]) -> None:
    """The batch (one Kiwi call for every Korean block of every text) cuts each text exactly
    as a call of its own does: real regulation articles, English and mixed texts."""
    book = shared_data("regulations", "dongeui_regulations_9-340_20250702.txt")
    korean = book.read_text("utf-8")[20_000:26_000]
    texts = [korean[:2_000], "Thus humbled in the dust,\nthe pensive train mourn’d. Mr. Gray sat.",
             korean[2_000:], "",
             "제1조 (목적) 이 규정은 학칙을 따른다. Then it ends.\n\n다음 문단이다"]
    alone = [sentence_spans(t) for t in texts]
    assert sentence_spans_many(texts) == alone
    assert sum(len(a) for a in alone) > 20 and alone[3] == []


def test_sentences_and_citation_marks() -> None:
    assert split_sentences("One. Two!\n\n① 셋째 항이다.\n42") == ["One.", "Two!", "① 셋째 항이다."]
    assert strip_citation_marks("It holds [1][2, 3].") == "It holds."


def test_hard_wrapped_lines_are_one_sentence_and_list_items_are_not() -> None:
    text = ("# Title\nA sentence wrapped\nacross two lines. Another one.\n\n"
            "- first item\n- second item\n① 첫째 항이다.\n② 둘째 항은\n이어진다.")
    assert split_sentences(text) == [
        "# Title", "A sentence wrapped across two lines.", "Another one.", "- first item",
        "- second item", "① 첫째 항이다.", "② 둘째 항은 이어진다.",
    ]
