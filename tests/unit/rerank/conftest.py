"""Fixtures of the rerank tests: a tiny cross-encoder on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tiny_cross_encoder import tiny_model, tiny_tokenizer_json


@pytest.fixture
def make_cross_encoder(tmp_path: Path) -> Callable[..., Path]:
    """``make_cross_encoder(**tiny_model_kwargs)``: path of model.onnx with tokenizer.json."""

    def make(**kwargs: object) -> Path:
        folder = tmp_path / f"model{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        (folder / "model.onnx").write_bytes(tiny_model(**kwargs))  # type: ignore[arg-type]
        tiny_tokenizer_json(folder / "tokenizer.json")
        return folder / "model.onnx"

    return make
