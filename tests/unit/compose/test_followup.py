"""Follow-up resolution from the conversation's previous user question."""

from __future__ import annotations

import pytest

from excerpt.compose.followup import resolve

HENRY = [("user", "What does Lord Henry say about influence?"),
         ("assistant", "He says that all influence is immoral.")]
LEAVE = [("user", "휴학 중에 장학금을 받을 수 있나요?"), ("assistant", "...")]


@pytest.mark.parametrize(
    ("question", "recent", "resolved", "reason"),
    [
        ("And what does he say about youth?", HENRY,
         "What does Lord Henry say about youth?", "pronoun"),  # its "And" dropped
        ("Is it immoral?", HENRY, "Is influence immoral?", "pronoun"),
        ("What about youth?", HENRY, "What does Lord Henry say about youth?", "ellipsis"),
        ("Why does Dorian hide the portrait?", HENRY, "Why does Dorian hide the portrait?", ""),
        ("그것은 언제까지 신청하나요?", LEAVE, "장학금은 언제까지 신청하나요?", "pronoun"),
        ("그럼 복학은?", LEAVE, "휴학 중에 복학을 받을 수 있나요?", "ellipsis"),
        ("등록금 반환 기준은?", LEAVE, "등록금 반환 기준은?", ""),  # a new question
    ],
)
def test_resolution(question: str, recent: list[tuple[str, str]], resolved: str,
                    reason: str) -> None:
    result = resolve(question, recent)
    assert (result.resolved, result.reason) == (resolved, reason)


def test_nothing_to_resolve_without_a_previous_question() -> None:
    alone = resolve("And what does he say about youth?", [("assistant", "Hello.")])
    assert alone.resolved == alone.question and alone.previous is None
    assert "그럼" not in resolve("그럼 복학은?", LEAVE).resolved  # 그럼 is not the pronoun 그
