from __future__ import annotations

from excerpt.memory import Utterance, entity_retention, key_entities
from excerpt.memory.summary import merge, read_summary, split_sentences, trim
from excerpt.tokens import count_tokens


def utt(i: int, text: str, speaker: str = "user") -> Utterance:
    return Utterance(i, speaker, 1, "2026-01-01T00:00:00.000000+00:00", text, count_tokens(text))


def test_split_sentences() -> None:
    assert split_sentences("One. Two!  Three?\nFour 。 Five") == [
        "One.", "Two!", "Three?", "Four 。", "Five"]
    assert split_sentences("  ") == []


def test_key_entities_english() -> None:
    found = key_entities("Alice flew to Paris with Bob on 12 June. She liked it.")
    assert {"alice", "paris", "bob", "12", "june"} <= found
    assert "she" not in found  # a stopword, however capitalised


def test_key_entities_korean() -> None:
    found = key_entities("김민수 씨가 다음 주에 부산 해운대 호텔을 예약했어요. KTX 표도 샀어요.")
    assert {"김민수", "부산", "해운대", "호텔", "예약", "ktx"} <= found


def test_speaker_prefix_is_not_an_entity() -> None:
    assert key_entities("user: hello there") == set()


def test_merge_is_incremental_and_deterministic() -> None:
    first = merge("", [utt(0, "Alice booked Hotel Lux. It was cheap.")], 500)
    assert first == "user: Alice booked Hotel Lux.\nuser: It was cheap."
    second = merge(first, [utt(1, "Bob paid in Zurich.", "assistant")], 500)
    assert second == first + "\nassistant: Bob paid in Zurich."
    assert merge(first, [utt(1, "Bob paid in Zurich.", "assistant")], 500) == second


def test_trim_keeps_whole_sentences_and_prefers_unique_entities() -> None:
    lines = ["user: Alice met Bob in Paris.", "user: it was a long and quiet afternoon, really.",
             "user: Alice and Bob liked Paris.", "user: Carol arrived from Lisbon."]
    kept = trim(lines, 20)
    assert all(line in lines for line in kept)
    assert count_tokens("\n".join(kept)) <= 20
    assert "user: Carol arrived from Lisbon." in kept
    assert "user: it was a long and quiet afternoon, really." not in kept
    assert kept == [line for line in lines if line in kept]  # order kept


def test_trim_cuts_only_a_lone_sentence_over_the_limit() -> None:
    long = "user: " + " ".join(f"Word{n}" for n in range(200)) + "."
    kept = trim([long], 30)
    assert len(kept) == 1 and long.startswith(kept[0]) and count_tokens(kept[0]) <= 30
    assert trim([long], 0) == []


def test_read_summary() -> None:
    stored = "user: Alice met Bob in Paris.\nuser: Carol arrived from Lisbon."
    assert read_summary("") == ("", 0)
    assert read_summary(stored) == (stored, count_tokens(stored))
    text, tokens = read_summary(stored, 9)
    assert tokens <= 9 and text in stored.split("\n")


def test_entity_retention() -> None:
    assert entity_retention("no names here", "") == 1.0
    assert entity_retention("Alice met Bob.", "user: Alice met someone.") == 0.5
