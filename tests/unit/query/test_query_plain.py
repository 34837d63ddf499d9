"""Plain words (issue 16 item 7): everyday words in a question give the regulation's own terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.analyze import analyze
from excerpt.query.lexicon import load_lexicon
from excerpt.query.plain import MAX_TERMS, fires, plain_terms
from excerpt.query.understand import PLAIN_WEIGHT, understand

LEXICON = load_lexicon()


def terms(query: str) -> list[str]:
    return plain_terms(query, analyze(query, "ko"), LEXICON)


@pytest.mark.parametrize(("query", "first"), [
    # the examples of the issue
    ("군대 가야 하는데 학교는 어떻게 해요?", "군입대휴학"),
    ("교수가 1년 쉬면서 연구하고 싶으면?", "연구년"),
    # 쉬다 by context: a professor's year off, an employee's leave, a student's leave
    ("직원인데 몇 달 쉬고 싶어요", "휴직"),
    ("한 학기 쉬고 싶은데요", "휴학"),
    # verb stems whatever the ending (아파서, 아픈 -> 아프; 옮기고, 옮기려면 -> 옮기)
    ("몸이 아파서 이번 학기는 못 다닐 것 같아요", "질병 휴학"),
    ("아픈데 학교를 계속 다녀야 하나요", "질병 휴학"),
    ("다른 과로 옮기려면요?", "전과"),
    ("졸업을 좀 미루고 싶어요", "학사학위취득유예"),
    ("도서관 책을 잃어버렸어요", "자료 변상"),  # 잃어버: text, whatever Kiwi makes of it
    # a phrase of the text (살 is a bound noun Kiwi drops)
    ("교수님은 몇 살까지 일하나요", "정년"),
    ("시험에서 커닝하면 어떻게 돼요", "부정행위"),
])
def test_everyday_words_give_the_regulation_terms(query: str, first: str) -> None:
    assert terms(query)[0] == first


def test_the_governing_regulation_is_named() -> None:
    assert "휴학규정" in terms("군대 가야 하는데 학교는 어떻게 해요?")
    assert "교원연구년제규정" in terms("교수가 1년 쉬면서 연구하고 싶으면?")


@pytest.mark.parametrize("query", ["교수가 쉬는 시간", "직원 휴게실 쉬는 곳"])
def test_unless_keeps_a_student_rule_off_staff_questions(query: str) -> None:
    assert "휴학" not in terms(query)


def test_nothing_for_questions_in_the_books_own_terms_or_off_topic() -> None:
    assert terms("휴학 신청 방법") == []
    assert terms("오늘 날씨가 좋습니다") == []
    assert terms("과일을 옮기는 방법") == []  # 과 alone is not a word of the text


# One question per rule of the packaged lexicon, in file order, with a term the rule gives.
EVERY_RULE = [
    ("군대 가야 하는데 학교는 어떻게 해요?", "군입대휴학"),
    ("다음 달에 입대하는데 학교는요?", "군입대휴학"),
    ("제대하고 다시 학교 다니려면?", "군제대 복학"),
    ("전역하면 바로 학교 다닐 수 있나요", "군제대 복학"),
    ("아픈데 학교를 계속 다녀야 하나요", "질병 휴학"),
    ("몸이 아파서 이번 학기는 못 다닐 것 같아요", "질병 휴학"),
    ("교수가 1년 쉬면서 연구하고 싶으면?", "연구년"),
    ("직원인데 몇 달 쉬고 싶어요", "휴직"),
    ("한 학기 쉬고 싶은데요", "휴학"),
    ("아기가 생겨서 학교를 어떻게 하죠", "육아휴학"),
    ("출산 때문에 학교를 못 나가요", "육아휴학"),
    ("임신해서 학교 다니기 힘들어요", "육아휴학"),
    ("자퇴했는데 다시 다니고 싶어요", "재입학"),
    ("학교를 그만뒀는데 다시 다닐 수 있나요", "재입학"),
    ("다른 과로 옮기려면요?", "전과"),
    ("학과를 옮기고 싶어요", "전과"),
    ("학과를 바꾸고 싶어요", "전과"),
    ("전공을 바꿀 수 있나요", "전과"),
    ("전공을 하나 더 하고 싶어요", "복수전공"),
    ("졸업을 좀 미루고 싶어요", "학사학위취득유예"),
    ("졸업을 늦출 수 있나요", "학사학위취득유예"),
    ("일찍 졸업할 수 있어요?", "조기졸업"),
    ("빨리 졸업하고 싶어요", "조기졸업"),
    ("망친 과목을 다시 듣고 싶어요", "재수강"),
    ("방학에 수업 들을 수 있나요", "계절수업"),
    ("방학 동안 학점을 딸 수 있어요?", "계절수업"),
    ("과목 하나 빼고 싶어요", "수강취소"),
    ("수업 하나 빼도 되나요", "수강취소"),
    ("시험에서 커닝하면 어떻게 돼요", "부정행위"),
    ("성적이 잘못 나왔어요", "성적 이의신청"),
    ("결석하면 어떻게 되나요", "출석인정"),
    ("병원 때문에 수업에 빠졌어요", "출석인정"),
    ("성적표는 어디서 받아요", "성적증명서"),
    ("증명서를 떼고 싶어요", "증명서 발급"),
    ("다른 대학에서 학점을 받을 수 있나요", "학점교류"),
    ("외국 대학에서 딴 학점도 되나요", "국외 타대학 이수학점"),
    ("회사에서 일하면서 학점을 받을 수 있나요", "현장실습학기제"),
    ("빌린 책을 잃어버렸어요", "자료 변상"),
    ("도서관에서 빌린 걸 잃어버렸어요", "자료 변상"),
    ("기숙사 들어가고 싶어요", "생활관"),
    ("밤새 학교에 있어도 돼요?", "야간잔류"),
    ("몸이 불편한 학생도 도움 받나요", "장애학생"),
    ("북한에서 온 학생인데요", "새터민"),
    ("외국 학생이 입학하려면요", "외국인 유학생"),
    ("술 마시고 싸우면 어떻게 돼요", "음주"),
    ("공부 잘하면 상을 주나요", "우수학생 표창"),
    ("성적인 농담을 들었어요", "성희롱"),
    ("성추행을 당했어요", "성희롱"),
    ("교수가 외국에서 연구하려면", "파견연구"),
    ("교수님은 몇 살까지 일하나요", "정년"),
    ("직원은 몇 살까지 일해요", "정년"),
    ("학생들이 교수를 평가하는 건 언제예요", "강의평가"),
    ("직원 휴가는 며칠이에요", "연가"),
    ("부모님 간병 때문에 일을 못 해요", "휴직"),
    ("차비는 얼마 나와요", "여비"),
    ("교통비도 주나요", "여비"),
    ("일찍 그만두면 돈을 더 받나요", "명예퇴직"),
    ("은퇴하면 어떻게 되나요", "정년"),
]


@pytest.mark.parametrize(("query", "term"), EVERY_RULE)
def test_each_rule_on_a_question_of_its_own(query: str, term: str) -> None:
    assert term in plain_terms(query, analyze(query, "ko"), LEXICON, limit=50)


def test_the_table_covers_every_rule_of_the_packaged_lexicon() -> None:
    """No rule is dead: each fires on a question of EVERY_RULE (its words are real Kiwi stems
    or pieces of text: 더 alone, an adverb Kiwi drops, would never match)."""
    assert len(LEXICON.plain_words) == len(EVERY_RULE)
    for rule, (query, _) in zip(LEXICON.plain_words, EVERY_RULE, strict=True):
        assert fires(rule, set(analyze(query, "ko")), query), (rule, query)


def test_at_most_max_terms_and_no_repeats() -> None:
    got = terms("군대 제대 전역 아파서 학교 쉬 기숙사 밤새")
    assert len(got) == MAX_TERMS == len(set(got))


def test_formal_queries_skip_the_plain_words() -> None:
    plan = understand("휴학규정 제3조 군대", "ko")
    assert plan.expansion is not None and plan.expansion.formal
    assert plan.plain == [] and plan.expanded_terms == []


def test_the_callers_tokens_are_used_when_given() -> None:
    query = "교수가 1년 쉬면서 연구하고 싶으면?"  # 쉬 (one syllable) is matched as a token only
    plain = understand(query, "ko").plain
    assert "연구년" in plain
    assert understand(query, "ko", tokens=analyze(query, "ko")).plain == plain
    assert "연구년" not in understand(query, "ko", tokens=["교수"]).plain


def test_plain_terms_weigh_as_much_as_query_words() -> None:
    plan = understand("군대 가야 하는데 학교는 어떻게 해요?", "ko")
    tokens = analyze("군대 가야 하는데 학교는 어떻게 해요?", "ko")
    weights = plan.weights(tokens, lambda t: analyze(t, "ko"), 0.5)
    assert PLAIN_WEIGHT == 1.0
    assert weights["군대"] == 1.0
    assert weights["입영"] == pytest.approx(PLAIN_WEIGHT)  # one new token: the whole weight
    # 휴학규정 -> 휴학, 규정, 휴학규정: the term's weight shared by its three tokens
    assert weights["휴학규정"] == pytest.approx(PLAIN_WEIGHT / 3)


def test_expansion_terms_keep_the_expansion_weight() -> None:
    plan = understand("장학금 신청 방법", "ko")
    assert plan.plain == []
    weights = plan.weights(analyze("장학금 신청 방법", "ko"), lambda t: analyze(t, "ko"), 0.5)
    assert plan.expanded_terms[0] == "장학금 지급"
    assert weights["지급"] == pytest.approx(0.5)  # 장학금 is a query token: 지급 takes it all


def test_another_lexicon_brings_its_own_rules(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.yaml"
    path.write_text("language: en\nplain_words:\n"
                    "  - {when: [time off], unless: [staff], terms: [leave of absence]}\n")
    lexicon = load_lexicon(path)
    assert plain_terms("I need time off", ["need", "time", "off"], lexicon) == ["leave of absence"]
    assert plain_terms("staff need time off", ["staff"], lexicon) == []


def test_the_seeds_expansion_limits_hold_beside_the_plain_terms() -> None:
    """The plain-word terms are their own stage: the expanded query of seed 001 (at most 10
    words, trimmed to 7) neither carries nor counts them."""
    query = "교수가 1년 쉬면서 연구하고 싶으면 신청 자격 요건 기한"
    plan = understand(query, "ko")
    assert plan.plain == ["연구년", "교원연구년제규정"]
    assert plan.expansion is not None
    assert len(plan.expansion.final_expanded.split()) <= 10
    assert not set(plan.plain) & set(plan.expansion.final_expanded.split()[len(query.split()):])
    assert plan.expanded_terms[:2] == plan.plain


def test_every_term_a_query_gets_is_among_those_foreseen() -> None:
    """The terms the light Kiwi is made ready for (analyze.foresee, issue 20 cold start) are
    all those understand() may add: checked on every question of the bench and the table."""
    import yaml

    from excerpt.query.understand import terms_to_add

    bench = Path(__file__).resolve().parents[3] / "bench" / "qa" / "regulations.yaml"
    asked = [q["question"] for q in yaml.safe_load(bench.read_text("utf-8"))["questions"]]
    asked += [query for query, _ in EVERY_RULE]
    foreseen = set(terms_to_add("ko"))
    added = [t for q in asked for t in understand(q, "ko").expanded_terms]
    assert len(added) > 40 and set(added) <= foreseen
    assert terms_to_add("en") == ()  # the packaged lexicon is Korean
