"""Follow-up patterns of issue 28 item 12: a pronoun becomes the previous question's name in
the part it plays (never a phrase that repeats the question's verb), "what about X?" and a
bare "and why?" re-ask the previous question, a possessive reads "X's", and the leading "And"
of a resolved question goes."""

from __future__ import annotations

import time

import pytest

from excerpt.compose import followup
from excerpt.compose.followup import resolve

PATROCLUS = [("user", "Who kills Patroclus?"), ("assistant", "Hector kills him.")]
HENRY = [("user", "What does Lord Henry say to Dorian?"), ("assistant", "…")]
HECTOR = [("user", "Who is Hector?"), ("assistant", "The Trojans' champion.")]
ANDROMACHE = [("user", "Who is Andromache?"), ("assistant", "Hector's wife.")]
WITHDRAW = [("user", "How does Achilles withdraw from the fighting?"), ("assistant", "…")]


@pytest.mark.parametrize(
    ("recent", "question", "resolved", "reason"),
    [
        # pronoun object: the name, not the previous question's "kills Patroclus" phrase
        (PATROCLUS, "And who kills him in revenge?", "Who kills Patroclus in revenge?",
         "pronoun"),
        (ANDROMACHE, "Who kills her in revenge?", "Who kills Andromache in revenge?",
         "pronoun"),
        # pronoun subject, and subject and object together
        (HECTOR, "Why does he fight Achilles?", "Why does Hector fight Achilles?", "pronoun"),
        (HENRY, "What does he tell him?", "What does Lord Henry tell Dorian?", "pronoun"),
        # possessive
        (HECTOR, "Who is his wife?", "Who is Hector's wife?", "pronoun"),
        (ANDROMACHE, "And who is her husband?", "Who is Andromache's husband?", "pronoun"),
        # what about X?
        (PATROCLUS, "What about Hector?", "Who kills Hector?", "ellipsis"),
        (PATROCLUS, "And Sarpedon?", "Who kills Sarpedon?", "ellipsis"),
        # and why?
        (WITHDRAW, "And why?", "Why does Achilles withdraw from the fighting?", "ellipsis"),
        (WITHDRAW, "Why not?", "Why does Achilles withdraw from the fighting?", "ellipsis"),
        # another book, chapter …
        ([("user", "How is Achilles' anger framed in Book 1?")], "And in Book 2?",
         "How is Achilles' anger framed in Book 2?", "ellipsis"),
        (PATROCLUS, "And in Book 16?", "Who kills Patroclus in Book 16?", "ellipsis"),
        # a question that stands alone stays as asked, its "And" too
        (PATROCLUS, "And who is Hector?", "And who is Hector?", ""),
        (HENRY, "Does Basil know that Dorian is young?", "Does Basil know that Dorian is young?",
         ""),
    ],
)
def test_follow_up(recent: list[tuple[str, str]], question: str, resolved: str,
                   reason: str) -> None:
    result = resolve(question, recent)
    assert (result.resolved, result.reason) == (resolved, reason)


def test_the_verb_is_never_repeated() -> None:
    """With no name to stand for "it", the thing is written without the words the question
    has: "who kills it" never reads "kills kills …"."""
    recent = [("user", "Who wrote the handbook?")]
    assert resolve("When was it written?", recent).resolved == "When was handbook written?"
    assert "kills kills" not in resolve("And who kills him in revenge?", PATROCLUS).resolved


def test_a_person_pronoun_with_no_name_before_stays() -> None:
    recent = [("user", "Who wrote the handbook?")]
    assert resolve("When did he die?", recent).reason == ""


def test_a_chain_of_follow_ups_keeps_its_subject() -> None:
    """The previous question is itself resolved first: "his" in the third turn is still
    Patroclus, named only in the first."""
    recent = [*PATROCLUS, ("user", "And who kills him in revenge?"), ("assistant", "…")]
    third = resolve("Who is his friend?", recent)
    assert third.resolved == "Who is Patroclus's friend?"
    assert third.previous == "Who kills Patroclus in revenge?"


def test_names_are_capitalised_runs_that_are_not_question_words() -> None:
    assert followup.names("What does Lord Henry say to Dorian?") == ["Lord Henry", "Dorian"]
    assert followup.names("Who kills Patroclus?") == ["Patroclus"]
    assert followup.names("How is Achilles' anger framed in Book 1?") == ["Achilles"]
    assert followup.names("Is Hector's wife Andromache?") == ["Hector", "Andromache"]


def test_long_turns_cost_little_and_the_resolution_stays_short() -> None:
    """A chat may send long messages: earlier turns are read up to a question's length, a
    name is computed once per turn, and at most a few pronouns are replaced."""
    long_name = "Who kills " + "Patroclus" * 40 + "? "
    turns = [("user", long_name + "Who kills Patroclus and why does he do it? " * 500),
             ("assistant", "…")] * 4
    question = "Why does he fight him? " * 80
    start = time.perf_counter()
    result = resolve(question, turns)
    assert time.perf_counter() - start < 2.0
    assert len(result.resolved) < 2 * len(question)
    assert len(result.previous or "") <= 2000 + 8 * 80  # a turn, and its 8 replacements


def test_the_answer_just_given_is_said_only_when_something_else_is_asked() -> None:
    turns = [("user", "Who kills Patroclus?"), ("assistant", "Hector kills him. [1]")]
    assert resolve("And who kills him in revenge?", turns).said == "Hector kills him. [1]"
    assert resolve("Who kills Patroclus?", turns).said == ""  # asked again: answered again
    assert resolve("Who kills Patroclus?", []).said == ""
