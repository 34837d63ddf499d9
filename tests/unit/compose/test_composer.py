"""The extractive composer on hand-made passages: caution, markers, citations, limits."""

from __future__ import annotations

import re

from excerpt.compose.composer import compose
from excerpt.compose.extract import MAX_WORDS
from excerpt.types import Hit, Node


def hit(node: Node, score: float) -> Hit:
    """A search's hit of ``node``, as the ask pipeline hands it to the composer."""
    return Hit(node, score, "handbook@1")


def node(node_id: str, text: str, **metadata: object) -> Node:
    return Node(id=node_id, document_id="doc", text=text, title=f"title {node_id}",
                source="handbook", metadata=dict(metadata))


TIDES = node("tides", "The moon's gravity pulls the oceans and raises the tides twice a day. "
             "Spring tides come when the sun and the moon line up at new and full moon, and "
             "neap tides when they pull at right angles.", chapter=3)
BREAD = node("bread", "Knead the dough for ten minutes, let it rise overnight in a warm place, "
             "then bake the loaf for forty minutes until the crust sounds hollow.", chapter=7)


def test_a_covered_question_is_answered_with_markers_and_citations() -> None:
    answer = compose("Why are there spring tides and neap tides?",
                     [hit(TIDES, 2.0), hit(BREAD, 0.5)])
    assert not answer.cautious
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", answer.answer)}
    assert markers and markers <= {c.n for c in answer.citations}
    first = answer.citations[0]
    assert (first.node_id, first.title, first.source, first.metadata) == (
        "tides", "title tides", "handbook", {"chapter": 3})
    assert answer.quotes_json()[0]["metadata"] == {"chapter": 3}


def test_an_uncovered_question_is_cautious_but_still_quotes() -> None:
    answer = compose("What is the airspeed velocity of an unladen swallow?",
                     [hit(BREAD, 1.0)])
    assert answer.cautious
    assert answer.answer.startswith("Based on the available passages")
    assert answer.quotes


def test_no_passages_says_so() -> None:
    answer = compose("Why are there tides?", [])
    assert answer.cautious and answer.quotes == [] and answer.citations == []
    assert answer.answer == "The available passages do not answer this question."
    korean = compose("조수는 왜 생기나요?", [], language="ko")
    assert korean.answer.startswith("제공된 문서에서")


def test_max_quotes_bounds_the_listed_quotes_and_the_answer_stays_short() -> None:
    long_text = " ".join(f"Tides number {i} rise and fall with the moon over the long grey "
                         f"harbour wall of the old town." for i in range(40))
    passages = [hit(node(f"p{i}", long_text), 1.0) for i in range(5)]
    answer = compose("How do tides rise and fall with the moon?", passages, max_quotes=2)
    assert len(answer.quotes) <= 2
    assert len(answer.answer.split()) <= MAX_WORDS


DUEL = node("duel", "Hector kills Patroclus before the walls of Troy.")
VENGEANCE = node("vengeance", "Achilles kills Hector to avenge Patroclus, his dearest friend.")
LOAF = node("loaf", "Bread rises overnight in a warm kitchen.")


def test_a_follow_up_moves_on_from_the_answer_just_given() -> None:
    """``said`` (a conversation's previous answer): its sentences give way to new ones that
    answer as surely, and stay when nothing new answers (issue 28 item 12)."""
    passages = [hit(DUEL, 2.0), hit(VENGEANCE, 1.5), hit(LOAF, 0.2)]
    first = compose("Who kills Patroclus?", passages, max_quotes=1)
    assert [c.node_id for c in first.citations] == ["duel"]
    again = compose("Who kills Patroclus in revenge?", passages, max_quotes=1)
    assert [c.node_id for c in again.citations] == ["duel"]  # alone it would repeat
    moved = compose("Who kills Patroclus in revenge?", passages, max_quotes=1,
                    said=first.answer)
    assert [c.node_id for c in moved.citations] == ["vengeance"] and not moved.cautious
    kept = compose("Who kills Patroclus in revenge?", [hit(DUEL, 2.0), hit(LOAF, 0.2)],
                   max_quotes=1, said=first.answer)
    assert [c.node_id for c in kept.citations] == ["duel"]  # nothing new answers: repeated


def test_a_footnote_mark_of_the_source_never_reads_as_a_citation() -> None:
    """DocBook keeps a footnote's reference in the text ("created.[9]"): quoted as it is, the
    answer held a [9] that no citation lists. The answer writes it [^9]; the quote is verbatim."""
    signed = node("sig", "A signature shows that the archive was not tampered with since it "
                  "was created.[9] The signature can be validated by checking the key.")
    answer = compose("How can a signature show that an archive was not tampered with?",
                     [hit(signed, 2.0)])
    assert "[9]" not in answer.answer and "created.[^9]" in answer.answer, answer.answer
    assert {int(n) for n in re.findall(r"\[(\d+)\]", answer.answer)} == {1}
    assert any("created.[9]" in q.text for q in answer.quotes)  # the quote stays verbatim


def test_a_question_about_what_the_collection_never_holds_is_cautious() -> None:
    """Issue 29 item 3: its other words may match well ("the capital"), but nothing can answer
    about a name no node holds; ``absent`` (the view's idf weights say which) makes it cautious."""
    passages = [hit(DUEL, 2.0), hit(VENGEANCE, 1.5)]
    question = "Who kills Patroclus before the walls of Hisarlik?"
    assert not compose(question, passages).cautious
    assert compose(question, passages, absent=frozenset({"hisarlik"})).cautious
    assert not compose(question, passages, absent=frozenset({"wall"})).cautious  # not its focus
