"""The reader's check, sentence by sentence as a model writes (compose.synthesis.SentenceGate):
a streamed reply is judged exactly as the whole one, a sentence is passed on the moment the
next one begins (never before its trailing markers arrive), and a sentence naming what its
quote never says is dropped."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from excerpt.compose.quotes import Quote
from excerpt.compose.synthesis import (
    KeptSentence,
    SentenceGate,
    check_attribution,
    synthesize,
)
from excerpt.errors import ServiceError

QUOTES = [
    Quote("dorian:7", "Sibyl Vane, a young actress, plays Juliet every night at a shabby "
                      "theatre in Holborn.", 0.9, 0),
    Quote("dorian:9", "Lord Henry tells Dorian that all influence is immoral, because to "
                      "influence a person is to give him one's own soul.", 0.8, 1),
]
REPLY = ("Sibyl Vane is a young actress who plays Juliet at a theatre in Holborn. [1] "
         "Lord Henry says all influence is immoral. [2] "
         "Sibyl Vane plays Juliet at a theatre in Paris since 1870. [1] "
         "Influence, Lord Henry says, gives a person one's own soul.[2]")


def pieces(text: str, size: int) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i:i + size]


@pytest.mark.parametrize("size", [1, 3, 7, 50])
def test_a_streamed_reply_is_judged_as_the_whole_one(size: int) -> None:
    whole_kept, whole_dropped = check_attribution(REPLY, QUOTES)
    gate = SentenceGate(QUOTES)
    for piece in pieces(REPLY, size):
        gate.feed(piece)
    kept, dropped = gate.close()
    assert kept == whole_kept and dropped == whole_dropped
    assert [k.cites for k in kept] == [(1,), (2,), (2,)]


def test_a_sentence_is_passed_on_when_the_next_begins_with_its_markers() -> None:
    seen: list[KeptSentence] = []
    gate = SentenceGate(QUOTES, on_sentence=seen.append)
    gate.feed("Lord Henry says all influence is immoral.")
    gate.feed(" [")  # its marker is still coming: nothing judged yet
    assert seen == [] and gate.dropped == []
    gate.feed("2] Sibyl")  # the next sentence has begun
    assert [k.text for k in seen] == ["Lord Henry says all influence is immoral. [2]"]
    gate.feed(" Vane is a young actress. [1]")
    gate.close()
    assert [k.cites for k in seen] == [(2,), (1,)]


def test_names_and_numbers_the_quote_never_states_drop_the_sentence() -> None:
    kept, dropped = check_attribution(REPLY, QUOTES)
    assert all("Paris" not in k.text for k in kept)
    reasons = {d.text: d.reason for d in dropped}
    assert reasons == {"Sibyl Vane plays Juliet at a theatre in Paris since 1870 [1].":
                       "Paris, 1870 not in [1]"}
    # a possessive is the name; the quote's own number is fine
    kept, _ = check_attribution("Holborn's theatre is where Sibyl Vane plays Juliet. [1]",
                                QUOTES)
    assert len(kept) == 1


def test_a_sentence_mostly_of_its_own_words_is_dropped() -> None:
    own = "Sibyl Vane fascinates every critic with her lovely voice and beauty. [1]"
    kept, dropped = check_attribution(own, QUOTES)
    assert kept == [] and dropped[0].reason == "6 of its 9 content words are not in [1]"
    close = "Sibyl Vane, a young actress, plays Juliet every night in Holborn. [1]"
    assert len(check_attribution(close, QUOTES)[0]) == 1


def test_an_embedding_that_disagrees_drops_the_sentence() -> None:
    def agreement(claim: str, number: int) -> float:
        return 0.1 if "Juliet" in claim else 0.9

    kept, dropped = check_attribution(REPLY, QUOTES, agreement)
    assert [k.cites for k in kept] == [(2,), (2,)] and kept[0].agreement == 0.9
    assert any("cosine 0.10 < 0.4" in d.reason for d in dropped)


class Streaming:
    """A client that can stream: the pieces, and the usage a real client reports."""

    model = "streaming-stand-in"

    def __init__(self, reply: str, fail_after: int | None = None) -> None:
        self.reply, self.fail_after = reply, fail_after
        self.last_usage = {"prompt_tokens": 120, "completion_tokens": 40}

    def chat(self, messages: list[dict[str, str]]) -> str:
        return self.reply

    def stream(self, messages: list[dict[str, str]]) -> Iterator[str]:
        for i, piece in enumerate(pieces(self.reply, 5)):
            if self.fail_after is not None and i == self.fail_after:
                raise ServiceError("the model stopped")
            yield piece


def test_synthesis_streams_kept_sentences_and_reports_the_usage() -> None:
    seen: list[str] = []
    result = synthesize("Who is Sibyl Vane?", QUOTES, Streaming(REPLY), "en",
                        on_sentence=lambda k: seen.append(k.text))
    assert seen == [k.text for k in result.kept] and result.answer == " ".join(seen)
    assert (result.tokens_in, result.tokens_out) == (120, 40) and result.ms > 0
    assert result.raw == REPLY


def test_a_model_failing_mid_stream_reaches_the_caller() -> None:
    seen: list[str] = []
    with pytest.raises(ServiceError):
        synthesize("Who is Sibyl Vane?", QUOTES, Streaming(REPLY, fail_after=20), "en",
                   on_sentence=lambda k: seen.append(k.text))
    assert seen  # what was judged before the failure had already been passed on


def test_a_rambling_model_is_stopped_after_five_sentences() -> None:
    class Rambling(Streaming):
        closed = False

        def stream(self, messages: list[dict[str, str]]) -> Iterator[str]:
            try:
                while True:
                    yield "Lord Henry tells Dorian that all influence is immoral. [2] "
            finally:
                self.closed = True

    model = Rambling(REPLY)
    result = synthesize("What does Lord Henry say?", QUOTES, model, "en")
    assert model.closed and len(result.kept) + len(result.dropped) == 5
    assert result.raw.endswith("[2] ")  # no fragment of a sixth sentence judged


def test_the_prompt_stays_within_its_budget_and_the_check_reads_whole_quotes() -> None:
    from excerpt.compose.synthesis import MAX_PROMPT_TOKENS, build_messages
    from excerpt.tokens import count_tokens

    article = ("② 휴학 중인 학생은 장학금을 받을 수 없다. " * 60) + "다만 군 휴학은 예외로 한다."
    quotes = [Quote(f"reg:{i}", article, 0.9, i) for i in range(4)]
    messages = build_messages("휴학 중에 장학금을 받을 수 있나요?", quotes, "ko")
    assert sum(count_tokens(m["content"]) for m in messages) <= MAX_PROMPT_TOKENS + 20
    assert "다만 군 휴학은" not in messages[-1]["content"]  # cut, with "…"
    kept, _ = check_attribution("다만 군 휴학은 예외로 한다. [1]", quotes)
    assert len(kept) == 1  # what the cut left out still supports a sentence
