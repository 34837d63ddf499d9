"""Issue 16 item 3: the sentence that answers comes first: focus, question type, semantic
similarity (the packaged MiniLM), MMR, reading order."""

from __future__ import annotations

from typing import Any

import pytest

from excerpt.compose.composer import compose
from excerpt.compose.extract import Embed, SlowEmbed, candidates, view_embed
from excerpt.compose.question import question_focus, question_kind, shape
from excerpt.types import Hit, Node


def passage(node_id: str, text: str) -> Hit:
    return Hit(Node(node_id, "doc", text, title=node_id), 1.0, "doc@1")


@pytest.mark.parametrize(("question", "kind"), [
    ("Who is Patroclus?", "who"), ("Why does Dorian hide the portrait?", "why"),
    ("When was the house built?", "when"), ("What year did it end?", "when"),
    ("Where does Hector live?", "where"), ("How many ships sailed?", "count"),
    ("How does Hector die?", "how"), ("What is a snapshot?", "what"),
    ("휴학은 언제 신청하나요?", "when"), ("왜 장학금이 취소되나요?", "why")])
def test_question_kind(question: str, kind: str) -> None:
    assert question_kind(question) == kind


def test_question_focus_is_the_entity_asked_about() -> None:
    assert question_focus("Who is Patroclus?") == {"patroclus"}
    assert question_focus("Why does Dorian hide the portrait?") == {"dorian"}
    assert question_focus("What is a snapshot in excerpt?") == {"snapshot"}


PATROCLUS = [
    passage("funeral", "Thus o'er Patroclus while the hero pray'd, on his cold hand the sacred "
                       "lock he laid, and all the Greeks stood round Patroclus in their grief."),
    passage("who", "Patroclus, the son of Menoetius, was the dearest friend and companion of "
                   "Achilles, and fought beside him before the walls of Troy."),
]


def test_a_who_question_opens_with_the_sentence_naming_the_role() -> None:
    composed = compose("Who is Patroclus?", PATROCLUS)
    assert composed.answer.startswith("Patroclus, the son of Menoetius")


PORTRAIT = [
    passage("door", "Dorian locked the door of the old schoolroom and put the key in his "
                    "pocket, and looked round the room where the portrait stood."),
    passage("why", "Dorian hid the portrait because it bore the record of his sins and grew "
                   "old while he stayed young, and no one must ever see it."),
]


def test_a_why_question_opens_with_the_reason() -> None:
    question = "Why does Dorian hide the portrait?"
    composed = compose(question, PORTRAIT, embed=view_embed(["minilm"], lambda _: minilm(),
                                                            question))
    assert composed.sentences[0][0].startswith("Dorian hid the portrait because")


def minilm() -> Any:
    from excerpt.embed import get_embedder

    return get_embedder("minilm")


def test_semantic_similarity_decides_between_equal_word_matches() -> None:
    """Both sentences hold the same words of the question, in one passage (same rank): the
    one that means the answer opens it with MiniLM, document order decides without it."""
    both = [passage("p", "Achilles was never angry at the feasts the king made, where the cups "
                         "went round all night and the old men sang. Achilles was angry because "
                         "the king made him give up his prize, so he withdrew from the battle.")]
    question = "What makes Achilles angry with the king?"
    lexical = compose(question, both, min_confidence=0.0)
    assert lexical.sentences[0][0].startswith("Achilles was never angry")
    embed = view_embed(["minilm"], lambda _: minilm(), question)
    assert embed is not None
    composed = compose(question, both, embed=embed, min_confidence=0.0)
    assert composed.sentences[0][0].startswith("Achilles was angry because")
    assert "sem" in composed.features


def test_no_embedder_for_mixed_or_missing_models() -> None:
    load: Any = lambda _: minilm()  # noqa: E731
    assert view_embed(["minilm", "e5"], load, "q") is None
    assert isinstance(view_embed(["e5"], load, "q"), SlowEmbed)  # the opener alone, for caution
    assert view_embed([None], load, "q") is None


def test_sentences_of_a_passage_follow_the_best_one_in_document_order() -> None:
    text = ("The snapshot is first written to a staging folder on the same disk. "
            "Readers never look inside the staging folder while it is written. "
            "A snapshot becomes visible only when its folder is renamed into place by excerpt. "
            "The rename is atomic on every file system that excerpt supports for its store.")
    embed: Embed | None = None
    composed = compose("When does a snapshot become visible?", [passage("s", text)],
                       embed=embed)
    texts = [t for t, _ in composed.sentences]
    assert texts[0].startswith("A snapshot becomes visible")
    rest = texts[1:]
    assert rest == sorted(rest, key=text.index)


def test_a_when_question_answered_without_a_date_loses_half_its_confidence() -> None:
    text = [passage("born", "Dorian Gray was born to a beautiful mother who ran away with a "
                            "penniless young soldier, and Dorian grew up with his grandfather."),
            passage("dated", "Dorian Gray was born in the year 1863 in a house on the square, "
                             "and Dorian grew up there with his grandfather.")]
    undated = compose("In which year was Dorian Gray born?", text[:1], min_confidence=0.0)
    dated = compose("In which year was Dorian Gray born?", text[1:], min_confidence=0.0)
    assert undated.features["cue"] == 0.0 and dated.features["cue"] == 1.0
    assert undated.confidence < 0.6 * dated.confidence


def test_a_cautious_answer_says_so_plainly_and_still_cites_the_candidates() -> None:
    composed = compose("Who is the wife of Hector?", PATROCLUS)  # the calibrated default
    assert composed.cautious
    assert composed.answer.startswith(
        "Based on the available passages, they do not answer this directly; the closest the "
        "text comes is: ")
    assert composed.quotes and composed.citations
    assert "[1]" in composed.answer


def test_a_who_cue_far_from_the_focus_does_not_count() -> None:
    composed = compose("Who is Patroclus?", [
        passage("far", "So vow'd my father, but he vow'd in vain; no more Achilles sees his "
                       "native plain; in that vain hope these hairs no longer grow, and "
                       "Patroclus bears them to the shades below."),
        passage("near", "Achilles offers a libation for the success of his friend, after "
                        "which Patroclus leads the Myrmidons to battle.")], min_confidence=0.0)
    assert composed.sentences[0][0].startswith("Achilles offers a libation")


def test_who_did_it_cues_a_name_the_question_lacks() -> None:
    asked = shape("Who painted the portrait of Dorian Gray?")
    assert not asked.defining
    assert asked.cue("The portrait was painted by his friend, the artist Basil Hallward.") == 1
    assert asked.cue("The portrait of Dorian Gray hung where Dorian Gray played.") == 0
    assert asked.cue("He painted it in the summer,\nAnd then he slept.") == 0  # a verse line
    assert shape("Who is Patroclus?").defining


def test_a_code_node_is_answered_from_its_lines() -> None:
    """Code has no sentences: its lines are the candidates, quoted verbatim (a whole chunk was
    one unquotable 'sentence', and every code question came back cautious and empty)."""
    code = ("// FakeEnterprise release 1.1\n// Component: NearestNeighbors.FindTopK\n"
            "// Keywords: Finds nearest vectors using cosine distance.\nnamespace Fake;\n"
            "public static class NearestNeighbors { public static void FindTopK() { } }\n")
    node = Node("C0008", "NearestNeighbors.cs", code, metadata={"code_language": "csharp"})
    composed = compose("Which distance does the nearest neighbour search use?",
                       [Hit(node, 1.0, "doc@1")])
    assert not composed.cautious
    assert "cosine distance" in composed.answer
    assert composed.quotes and all(q.text in code for q in composed.quotes)


def test_illustration_captions_are_never_quoted() -> None:
    """Gutenberg's "[Illustration: …]" lines are a picture's title, not the book's words
    (issue 29): over one line, several, or cut off by the end of a node."""
    text = ("[Illustration: ACHILLES CONTENDING WITH THE RIVERS.]\n\n"
            "He said; and on the chief descends amain, increased with gore and the slain.\n\n"
            "[Illustration: Lord Henry in the garden,\nwhere the roses bloom.]\n\n"
            "Lord Henry walked in the garden where the roses bloom all summer long.\n\n"
            "[Illustration: The river Xanthus rising against the hero")
    node = Node(id="n", document_id="d", text=text, title="t", source="s")
    quoted = [node.text[s.start:s.end] for s in candidates([node])]
    assert quoted and not any("Illustration" in q or "Xanthus" in q for q in quoted), quoted
    assert any(q.startswith("He said") for q in quoted)
    assert any(q.startswith("Lord Henry walked") for q in quoted)
