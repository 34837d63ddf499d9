"""Quote selection: relevant, diverse sentences of the retrieved passages, in both languages."""

from __future__ import annotations

import pytest

from excerpt.compose.quotes import extractive_answer, select_quotes
from excerpt.compose.sentences import split_sentences, strip_citation_marks
from excerpt.evaluate.rag import statements

SNAPSHOTS = (
    "Snapshots are immutable once published. "
    "An import run writes every segment to a temporary folder first. "
    "The run is published by renaming the folder, so a reader never sees half a snapshot."
)
WEATHER = "The weather was mild in the spring. Gardens were planted early that year."
REGULATION = (
    "제6조의2(종류 및 선발방법)\n"
    "① 장학금의 종류와 선발방법은 시행세칙으로 정한다.\n"
    "② 장학금을 받으려는 학생은 학기마다 장학금 신청서를 학생지원처에 제출하여야 한다.\n"
)


def test_the_sentence_that_answers_comes_first() -> None:
    quotes = select_quotes("how is a snapshot published by renaming",
                           [("weather", WEATHER), ("snap", SNAPSHOTS)])
    assert quotes[0].node_id == "snap"
    assert "renaming" in quotes[0].text
    assert quotes[0].passage_rank == 1


def test_korean_quote_and_heading_skipped() -> None:
    quotes = select_quotes("장학금 신청서는 어디에 제출하나요", [("reg", REGULATION)], max_quotes=5)
    assert "② 장학금을 받으려는 학생은" in quotes[0].text
    assert all(not q.text.startswith("제6조의2") for q in quotes)  # a heading is not a quote


LONG = (
    "Every import of a source creates a new snapshot that stays immutable once it has been "
    "published, so earlier readers keep seeing exactly what they saw before the import. "
    "The import run writes each segment into a temporary staging folder first, and no reader "
    "ever opens that folder while the run is still working on it. "
    "Publishing renames the staging folder into place inside the same database transaction, "
    "so a reader sees either the whole snapshot or nothing of it at all."
)


def test_near_duplicates_are_passed_over() -> None:
    twice = [("a", LONG), ("b", LONG)]
    quotes = select_quotes("snapshot import staging folder published reader", twice, 3)
    texts = [q.text for q in quotes]
    assert len(texts) == len(set(texts)) >= 2
    assert {q.node_id for q in quotes} == {"a"}  # b's copies are duplicates of a's sentences


def test_a_fragment_or_a_contained_tail_is_not_a_second_quote() -> None:
    overlapping = [("c1", "He hid the portrait. It was the secret of his life and his soul."),
                   ("c2", "secret of his life and his soul. Then he locked the door.")]
    texts = [q.text for q in select_quotes("portrait secret life soul", overlapping, 5)]
    assert not any(t.startswith("secret") for t in texts)  # starts mid-sentence
    assert len(texts) == len(set(texts))


def test_max_quotes_and_empty_inputs() -> None:
    assert len(select_quotes("snapshot", [("a", LONG)], max_quotes=1)) == 1
    assert select_quotes("snapshot", []) == []
    with pytest.raises(ValueError):
        select_quotes("snapshot", [("a", LONG)], max_quotes=0)


def test_extractive_answer_marks_each_quote() -> None:
    quotes = select_quotes("snapshot published renaming gardens planted",
                           [("a", SNAPSHOTS), ("w", WEATHER)], max_quotes=2)
    answer = extractive_answer(quotes)
    assert answer.count("[1]") == 1 and answer.count("[2]") == 1
    assert statements(answer) == [s for q in quotes for s in split_sentences(q.text)]


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
