"""Issue 29 item 2: the sentence that answers, first, on the regulation book's own articles: a
list's lead with its items, Korean compounds cut two ways, the number of the unit asked for,
a regulation's addendum after its body, the article's paragraph that holds the limit too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from excerpt.compose.composer import compose
from excerpt.compose.extract import (
    SLOW_CHARS,
    SlowEmbed,
    candidates,
    confidence,
    held,
    view_embed,
    with_items,
)
from excerpt.compose.question import question_unit, shape, unit_cue
from excerpt.compose.sentences import sentence_spans
from excerpt.types import Hit, Node

BOOK = ("regulations", "dongeui_regulations_9-340_20250702.txt")


def lines(shared_data: Callable[..., Path]) -> list[str]:
    return shared_data(*BOOK).read_text(encoding="utf-8").splitlines()


def article(shared_data: Callable[..., Path], head: str, after: str = "",
            kind: str = "article") -> Hit:
    """The article of the book starting with ``head`` (the first after a line starting with
    ``after``), up to the next article or a blank line, as a passage."""
    text = lines(shared_data)
    start = text.index(next(t for t in text if t.startswith(after))) if after else 0
    first = next(i for i in range(start, len(text)) if text[i].startswith(head))
    end = first + 1
    while end < len(text) and text[end].strip() and not text[end].startswith("제"):
        end += 1
    body = "\n".join(text[first:end])
    return Hit(Node(head, "regulations", body, metadata={"kind": kind}), 1.0, "regulations@1")


def addendum(shared_data: Callable[..., Path], after: str) -> Hit:
    """The 부칙 (addendum) right after the line starting with ``after``."""
    text = lines(shared_data)
    at = text.index(next(t for t in text if t.startswith(after)))
    first = next(i for i in range(at, len(text)) if text[i].replace(" ", "") == "부칙")
    end = first + 1
    while end < len(text) and text[end][:1].isdigit():
        end += 1
    return Hit(Node("부칙", "regulations", "\n".join(text[first:end]),
                    metadata={"kind": "addendum"}), 1.0, "regulations@1")


def test_a_list_lead_carries_its_items(shared_data: Callable[..., Path]) -> None:
    """"② 다음 각호에 해당하는 자는 재입학을 할 수 없다." says who only with its items; "1. 징계
    제적자" alone is too short to quote. The lead takes them in, within LONGEST words."""
    node = article(shared_data, "제17조 (재입학)").node
    spans = sentence_spans(node.text)
    merged = [node.text[a:b] for a, b in with_items(node.text, spans)]
    lead = next(s for s in merged if s.startswith("② 다음 각호"))
    assert "1. 징계 제적자" in lead and "4. 체육특기자전형 입학자" in lead
    assert len(merged) < len(spans)
    found = [s.text for s in candidates([node])]
    assert any("징계 제적자" in s for s in found)


def test_the_answer_quotes_the_list_that_answers(shared_data: Callable[..., Path]) -> None:
    composed = compose("징계를 받아 제적되면 재입학이 가능한가요?",
                       [article(shared_data, "제17조 (재입학)")])
    assert "징계 제적자" in composed.answer


def test_a_korean_compound_cut_otherwise_in_the_text_is_held(
        shared_data: Callable[..., Path]) -> None:
    """Kiwi makes "건축학과는" one token in a question, "건축학 과" in the article: the sentence
    holds the question's token all the same."""
    node = article(shared_data, "제4조 (수업연한 및 재학연한)").node
    five = next(s for s in candidates([node]) if "5년으로" in s.text)
    assert "건축학과" not in five.tokens
    assert "건축학과" in held(frozenset({"건축학과", "졸업"}), five)
    assert "졸업" not in held(frozenset({"건축학과", "졸업"}), five)


@pytest.mark.parametrize(("question", "unit"), [
    ("건축학과의 수업연한은 몇 년인가요?", "년"), ("학사경고는 평점 몇 점 미만인가요?", "점"),
    ("조교로 일하는 기간은 얼마인가요?", "period"), ("How long did the siege of Troy last?",
                                            "period"),
    ("How many ships did the Greeks bring?", ""), ("휴학은 언제 신청하나요?", "")])
def test_the_unit_a_question_counts_in(question: str, unit: str) -> None:
    assert question_unit(question) == unit


def test_a_unit_cue_is_a_number_of_that_unit_not_a_date() -> None:
    assert unit_cue("년", "다만, 공과대학 건축학과는 5년으로 하며 한의과대학은 한의예과 2년")
    assert not unit_cue("년", "이 변경 규정은 2015년 2월 1일부터 시행한다.")
    assert not unit_cue("년", "6학기 내지 7학기(공과대학 건축학과는 8학기 내지 9학기)를 등록한 자")
    assert not unit_cue("period", "③ 조교는 교원의 업무를 보조한다. <개정 2012. 3. 1.>")
    assert unit_cue("점", "매 학기 학업 성적의 평점평균이 1.50에 미달된 자")
    assert unit_cue("period", "the siege lasted ten years before the city fell.")


def test_the_number_of_the_unit_asked_opens_the_answer(shared_data: Callable[..., Path]) -> None:
    """The early-graduation article names 건축학과 and 졸업, the other only 건축학과 (idf weights
    as the engine passes them: the department rarer than graduating); the one saying how many
    years opens, not the one counting 학기."""
    passages = [article(shared_data, "제28조 (조기졸업)"),
                article(shared_data, "제4조 (수업연한 및 재학연한)")]
    weights = {"건축학과": 5.0, "졸업": 2.0, "다니": 3.0}
    composed = compose("건축학과는 졸업까지 몇 년을 다니나요?", passages, "ko", weights=weights)
    assert "건축학과는 5년으로" in composed.sentences[0][0]


def test_the_body_before_the_addendum_and_the_limit_after_the_term(
        shared_data: Callable[..., Path]) -> None:
    """조교규정: the addendum's transitional rule ("통산하여 3년이 경과된 조교") gives way to the
    article (제5조 ① "1년"), and the article's ② ("통산 2년을 초과할 수 없다", too short for
    the answer's length and matching the question worse than the 평의원회 article, which
    counts 조교 among its members) follows it."""
    passages = [addendum(shared_data, "제7조 (대우 및 보수) ① 조교의 보수는"),
                article(shared_data, "제4조 (임용) ① (일반)조교"),
                article(shared_data, "제5조 (임용기간) ① 조교의"),
                article(shared_data, "제3조 (구성 및 자격) ① 평의원회")]
    composed = compose("조교로 일하는 기간은 얼마인가요?", passages, "ko")
    assert composed.sentences[0][0].startswith("제5조 (임용기간) ① 조교의 임용기간은 1년")
    assert "통산 2년" in composed.sentences[1][0]


def test_confidence_is_the_opening_sentences(shared_data: Callable[..., Path]) -> None:
    passages = [addendum(shared_data, "제7조 (대우 및 보수) ① 조교의 보수는"),
                article(shared_data, "제5조 (임용기간) ① 조교의")]
    question = "조교로 일하는 기간은 얼마인가요?"
    composed = compose(question, passages, "ko")
    assert shape(question).unit == "period"
    assert composed.features["cue"] == 1.0
    assert composed.confidence == confidence(composed.features)


def e5() -> Any:
    from excerpt.embed import get_embedder

    return get_embedder("e5")


def test_a_slow_embedder_scores_the_opener_for_caution(shared_data: Callable[..., Path]) -> None:
    """Issue 29 item 3: a Korean question rarely repeats its article's words ("모두 합쳐" for
    "통산하여"); the collection's e5 scores the opening sentence alone (rescaled from its
    floor), and the answer is no longer cautious; a question the article does not answer
    ("애완동물" in the dormitory article) stays cautious."""
    leave = [article(shared_data, "제6조 (통산기간 및 연장)")]
    question = "휴학은 모두 합쳐 몇 년까지 가능한가요?"
    embed = view_embed(["e5"], lambda _: e5(), question)
    assert isinstance(embed, SlowEmbed)
    assert compose(question, leave, "ko").cautious
    answered = compose(question, leave, "ko", embed=embed)
    assert not answered.cautious and answered.features["slow"] == 1.0
    dorm = [article(shared_data, "제19조 (기숙사)")]
    pets = "기숙사에 애완동물을 데려가도 되나요?"
    assert compose(pets, dorm, "ko", embed=view_embed(["e5"], lambda _: e5(), pets)).cautious


def test_a_slow_embedder_does_not_rank(shared_data: Callable[..., Path]) -> None:
    """e5 embeds one sentence per answer (some 20 ms): the sentences are ranked as without it."""
    passages = [article(shared_data, "제6조 (통산기간 및 연장)"),
                article(shared_data, "제4조 (수업연한 및 재학연한)")]
    question = "휴학은 모두 합쳐 몇 년까지 가능한가요?"
    texts: list[str] = []

    def counted(batch: Sequence[str]) -> tuple[Any, Any] | None:
        texts.extend(batch)
        return None

    plain = compose(question, passages, "ko")
    slow = compose(question, passages, "ko", embed=SlowEmbed(counted, 0.76))
    assert slow.sentences == plain.sentences and len(texts) == 1


def test_a_slow_embedder_reads_the_openers_beginning(shared_data: Callable[..., Path]) -> None:
    """An article sentence with its list items runs to 250 characters, 124 ms in e5 on 2 cores;
    e5 reads its first SLOW_CHARS."""
    passages = [article(shared_data, "제3조 (구성 및 자격) ① 평의원회")]
    texts: list[str] = []

    def counted(batch: Sequence[str]) -> tuple[Any, Any] | None:
        texts.extend(batch)
        return None

    # min_confidence over any confidence: e5 is asked whatever the lexical share
    composed = compose("평의원회에는 모두 몇 명이 있나요?", passages, "ko", min_confidence=2.0,
                       embed=SlowEmbed(counted, 0.76))
    assert len(composed.sentences[0][0]) > SLOW_CHARS
    assert texts == [composed.sentences[0][0][:SLOW_CHARS]]


def test_a_slow_embedder_is_asked_only_when_it_can_decide(
        shared_data: Callable[..., Path]) -> None:
    """The confidence with the opener's similarity is the larger of the two: when the lexical
    share alone reaches min_confidence the answer is not cautious whatever e5 says, and e5
    is not run."""
    passages = [article(shared_data, "제6조 (통산기간 및 연장)")]
    calls: list[int] = []

    def counted(batch: Sequence[str]) -> tuple[Any, Any] | None:
        calls.append(len(batch))
        return None

    question = "휴학은 모두 합쳐 몇 년까지 가능한가요?"
    assert not compose(question, passages, "ko", min_confidence=0.0,
                       embed=SlowEmbed(counted, 0.76)).cautious
    assert calls == []
    assert compose(question, passages, "ko", min_confidence=0.99,
                   embed=SlowEmbed(counted, 0.76)).cautious
    assert calls == [1]
