"""The page and numbered section a question names (issue 19 item 4): "on page 12" / "p. 12" /
"12쪽" become ``{"pages": 12}`` (tried first as the printed page label), "in section 2.1" /
"§ 2.1" ``{"section_numbers": "2.1"}``, beside the book and chapter scope of books; numbers
that only look alike (versions, decimals, page counts) name no scope, and the scope words are
left out of the concepts."""

from __future__ import annotations

from typing import Any

import pytest

from excerpt.compose.grounding import alternatives, concepts, scope


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is said about boiler pressure on page 12?", {"pages": 12}),
        ("What does p. 12 say about valves?", {"pages": 12}),
        ("p.7 valves", {"pages": 7}),
        ("Summarise pages 40 to 45", {"pages": 40}),  # the first page named
        ("pg 3 limits", {"pages": 3}),
        ("Which valve is shown on Page 112?", {"pages": 112}),
        ("What does page iv say?", {"page_label": "iv"}),  # a roman label, as printed
        ("see p. XII", {"page_label": "xii"}),
        ("12쪽에 나오는 압력 기준은?", {"pages": 12}),
        ("12 페이지의 내용", {"pages": 12}),
        ("What does section 2.1 require?", {"section_numbers": "2.1"}),
        ("What is in Section 2?", {"section_numbers": "2"}),
        ("limits in § 3.4.1", {"section_numbers": "3.4.1"}),
        ("limits in §2", {"section_numbers": "2"}),
        ("sec. 4 scope", {"section_numbers": "4"}),
        ("What does section 2 say.", {"section_numbers": "2"}),  # the full stop is not a dot
        ("2.1절의 요구사항은?", {"section_numbers": "2.1"}),
        ("3.4.1 절 기준", {"section_numbers": "3.4.1"}),
        ("What happens in chapter 3?", {"chapter": 3}),
        ("In chapter 3, what does section 3.2 on page 14 say?",
         {"chapter": 3, "section_numbers": "3.2", "pages": 14}),
    ],
)
def test_a_page_or_section_is_read(question: str, expected: dict[str, Any]) -> None:
    assert scope(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "Which page covers boiler pressure?",  # no number
        "What changed in version 1.2?",
        "Is page 3.5 a page?",  # a decimal is not a page
        "How many pages does the manual have?",
        "What does the section on valves say?",
        "setup. 12 steps",  # "p." inside a word
        "What is new in Python 3.11?",
        "What page is it on",  # "page is": not a numeral
        "the 1.2.3 release",
        "교원인사규정 제2절의 내용",  # a regulation's section: a formal reference
        "제3장 교원의 임용",
        "2절 기준",  # an undotted number before 절 is not read
    ],
)
def test_other_numbers_name_no_scope(question: str) -> None:
    assert scope(question) == {}


def test_a_page_is_tried_as_its_label_then_as_its_position() -> None:
    assert alternatives({"pages": 12}) == [{"page_label": "12"}, {"pages": 12}]
    assert alternatives({"chapter": 2, "pages": 12}) == [
        {"chapter": 2, "page_label": "12"}, {"chapter": 2, "pages": 12}]
    assert alternatives({"section_numbers": "2.1"}) == [{"section_numbers": "2.1"}]
    assert alternatives({"page_label": "iv"}) == [{"page_label": "iv"}]
    assert alternatives({}) == []


def test_the_scope_words_are_not_concepts() -> None:
    assert concepts("What does section 2.1 say about boiler pressure?") == ["boiler pressure"]
    assert concepts("Which valves are listed on page 12?") == ["valves", "listed"]
    assert concepts("What does § 3 require of operators?") == ["require", "operators"]
    assert concepts("12쪽에 나오는 압력 기준은?") == ["압력 기준"]
    assert concepts("2.1절의 요구사항은?") == ["요구사항"]
    assert concepts("12페이지의 압력 기준") == ["압력 기준"]
