"""The ONNX cross-encoder backend against a tiny model whose scores are known by hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tiny_cross_encoder import expected_score

from excerpt.errors import InputError
from excerpt.rerank import get_reranker
from excerpt.rerank.cross_encoder import CrossEncoderReranker

QUERY = "apple"
DOCS = ["cherry", "fig fig", "banana date", "grape", "apple cherry cherry cherry", "kiwi"]


def test_scores_are_what_the_model_computes(make_cross_encoder: Callable[..., Path]) -> None:
    ce = CrossEncoderReranker(make_cross_encoder(), batch_size=4)
    assert ce.scores(QUERY, DOCS) == pytest.approx([expected_score(QUERY, d) for d in DOCS])


def test_order_follows_the_scores(make_cross_encoder: Callable[..., Path]) -> None:
    ce = CrossEncoderReranker(make_cross_encoder())
    expected = sorted(range(len(DOCS)), key=lambda i: (-expected_score(QUERY, DOCS[i]), i))
    results = ce.rerank(QUERY, DOCS, 3)
    assert [r.index for r in results] == expected[:3]
    assert [r.score for r in results] == pytest.approx(
        [expected_score(QUERY, DOCS[i]) for i in expected[:3]])


def test_batching_and_padding_do_not_change_scores(
        make_cross_encoder: Callable[..., Path]) -> None:
    path = make_cross_encoder()  # the pad token weighs 50: unmasked padding would show
    one = CrossEncoderReranker(path, batch_size=1).scores(QUERY, DOCS)
    many = CrossEncoderReranker(path, batch_size=3).scores(QUERY, DOCS)
    assert one == pytest.approx(many)


def test_long_pairs_are_truncated_longest_first(make_cross_encoder: Callable[..., Path]) -> None:
    long_doc = " ".join(["fig"] * 5 + ["banana"] * 20)
    ce = CrossEncoderReranker(make_cross_encoder(), max_length=8)
    assert ce.scores("apple banana", [long_doc]) == pytest.approx(
        [expected_score("apple banana", long_doc, max_tokens=8)])


def test_two_class_head_scores_the_positive_log_odds(
        make_cross_encoder: Callable[..., Path]) -> None:
    ce = CrossEncoderReranker(make_cross_encoder(two_class=True))
    assert ce.scores(QUERY, DOCS) == pytest.approx([2 * expected_score(QUERY, d) for d in DOCS])


def test_a_graph_without_token_types_is_fed_only_what_it_declares(
        make_cross_encoder: Callable[..., Path]) -> None:
    ce = CrossEncoderReranker(make_cross_encoder(with_token_types=False))
    # every real token counts once when segments are ignored
    assert ce.scores("apple", ["fig"]) == pytest.approx([1.0 + 3.0])


def test_factory_builds_it_by_path(make_cross_encoder: Callable[..., Path]) -> None:
    path = make_cross_encoder()
    reranker = get_reranker(f"cross-encoder:{path}")
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.name == f"cross-encoder:{path}"


def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is not a file"):
        CrossEncoderReranker(tmp_path / "nope.onnx")


def test_missing_tokenizer(make_cross_encoder: Callable[..., Path]) -> None:
    path = make_cross_encoder()
    (path.parent / "tokenizer.json").unlink()
    with pytest.raises(InputError, match=r"tokenizer\.json beside the model"):
        CrossEncoderReranker(path)


def test_invalid_model_file(make_cross_encoder: Callable[..., Path]) -> None:
    path = make_cross_encoder()
    path.write_bytes(b"this is not an onnx model")
    ce = CrossEncoderReranker(path)  # cheap: nothing read yet
    with pytest.raises(InputError, match="cannot be loaded by ONNX Runtime"):
        ce.rerank(QUERY, DOCS, 3)


def test_invalid_tokenizer_file(make_cross_encoder: Callable[..., Path]) -> None:
    path = make_cross_encoder()
    (path.parent / "tokenizer.json").write_text("{not json")
    with pytest.raises(InputError, match="cannot be read"):
        CrossEncoderReranker(path).rerank(QUERY, DOCS, 3)


def test_bad_settings_are_refused(make_cross_encoder: Callable[..., Path]) -> None:
    path = make_cross_encoder()
    for kwargs in ({"max_length": 2}, {"batch_size": 0}, {"threads": 0}):
        with pytest.raises(ValueError):
            CrossEncoderReranker(path, **kwargs)  # type: ignore[arg-type]
