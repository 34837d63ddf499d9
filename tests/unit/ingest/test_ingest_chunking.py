from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from excerpt.ingest.chunking import chunk_spans, chunk_text

PIECES = [
    "a", "b", "word", "Lord", "Henry", "가", "나라", " ", " ", "  ", "\t", "\n", "\n\n", "\n \n",
    "\r\n", "\r\n\r\n", ".", "!", "?", "。", "”", "’", "\u3000", "\u2028", "\x0c", "x" * 30,
]  # fmt: skip
texts = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=80).map("".join),
    st.text(max_size=300),
)


def _check(text: str, target: int, overlap: int) -> None:
    spans = chunk_spans(text, target, overlap)
    covered = bytearray(len(text))
    for start, end, core in spans:
        assert 0 <= start <= core < end <= len(text)
        assert end - core <= target, "a chunk's core never exceeds the target"
        assert not text[start].isspace() and not text[end - 1].isspace()
        covered[start:end] = b"\x01" * (end - start)
    for i, ch in enumerate(text):
        if not ch.isspace():
            assert covered[i], f"char {i} ({ch!r}) is in no chunk"
    for (s1, e1, _), (s2, e2, _) in itertools.pairwise(spans):
        assert s1 < s2 and e1 < e2, "spans strictly increase"
    cores = [(c, e) for _, e, c in spans]
    for (_, e1), (c2, _) in itertools.pairwise(cores):
        assert e1 <= c2, "cores do not overlap"
    assert chunk_text(text, target, overlap) == [(s, e) for s, e, _ in spans]


@settings(max_examples=300, deadline=None)
@given(texts, st.integers(1, 60), st.integers(0, 80))
def test_spans_cover_every_non_blank_char_and_are_well_formed(
    text: str, target: int, overlap: int
) -> None:
    _check(text, target, overlap)


@settings(max_examples=50, deadline=None)
@given(texts)
def test_default_sizes_and_determinism(text: str) -> None:
    _check(text, 800, 100)
    assert chunk_text(text) == chunk_text(text)


def test_blank_text_gives_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text(" \n\n\t \r\n") == []


@pytest.mark.parametrize(("target", "overlap"), [(0, 0), (-5, 0), (10, -1)])
def test_bad_sizes_are_refused(target: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        chunk_text("some text", target, overlap)


def test_whole_paragraphs_are_packed_together() -> None:
    paras = [f"Paragraph {i} " + "words " * 45 for i in range(6)]  # ~300 chars each
    text = "\n\n".join(p.strip() for p in paras)
    spans = chunk_text(text, 800, 0)
    assert len(spans) == 3
    for start, end in spans:
        piece = text[start:end]
        assert piece.startswith("Paragraph")
        assert piece.count("Paragraph") == 2
        assert end == len(text) or text[end : end + 2] == "\n\n"


def test_short_text_is_one_chunk() -> None:
    text = "First paragraph.\n\nSecond paragraph.\n\n  Third.  \n"
    assert chunk_text(text) == [(0, text.index("Third.") + len("Third."))]


def test_long_paragraph_is_cut_at_sentence_ends() -> None:
    sentences = [f"Sentence number {i} says something quite ordinary here." for i in range(40)]
    text = " ".join(sentences)
    spans = chunk_spans(text, 300, 0)
    assert len(spans) > 1
    for s in spans:
        piece = text[s.start : s.end]
        assert piece.startswith("Sentence") and piece.endswith("."), piece
        assert len(piece) <= 300


def test_paragraph_that_does_not_fit_starts_a_new_chunk() -> None:
    first = "Short opening paragraph that fills half. " * 5
    long = " ".join(f"Long paragraph sentence {i}." for i in range(60))
    text = first.strip() + "\n\n" + long
    spans = chunk_text(text, 400, 0)
    assert text[spans[0][0] : spans[0][1]] == first.strip()
    assert text[spans[1][0] :].startswith("Long paragraph sentence 0.")


def test_long_sentence_is_cut_at_whitespace_and_long_word_hard() -> None:
    text = " ".join(["alpha"] * 200)  # one sentence, 1199 chars
    for start, end in chunk_text(text, 100, 0):
        assert text[start:end].split(" ") == ["alpha"] * len(text[start:end].split(" "))
    word = "x" * 250
    assert chunk_text(word, 100, 0) == [(0, 100), (100, 200), (200, 250)]


def test_verse_is_cut_at_line_breaks_before_spaces() -> None:
    lines = [f"Line {i} of a long verse paragraph without full stops" for i in range(30)]
    text = "\n".join(lines)
    for start, end in chunk_text(text, 200, 0):
        assert start == 0 or text[start - 1] == "\n"
        assert end == len(text) or text[end] == "\n"


def test_overlap_starts_at_a_sentence_start_and_is_about_the_asked_size() -> None:
    text = " ".join(f"This is sentence {i:03d} of the text." for i in range(100))
    spans = chunk_spans(text, 300, 100)
    assert len(spans) > 3
    for s in spans[1:]:
        assert s.start < s.core_start
        assert 50 <= s.core_start - s.start <= 100
        assert text[s.start - 2 : s.start] == ". "


def test_overlap_falls_back_to_a_word_start() -> None:
    text = " ".join(["lorem", "ipsum", "dolor", "sit", "amet"] * 60)  # no sentence ends
    for s in chunk_spans(text, 200, 50)[1:]:
        assert 0 < s.core_start - s.start <= 50
        assert text[s.start - 1] == " " and text[s.start] != " "


def test_chunks_are_exact_slices() -> None:
    text = "Héllo wörld. 한국어 문장입니다.\n\n" * 50
    for start, end in chunk_text(text, 120, 30):
        assert text[start:end].strip() == text[start:end]
        assert re.search(r"\S", text[start:end])
