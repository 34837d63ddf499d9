"""The light Kiwi (issue 20, item 4: cold start): without the multi-word dictionary but with the
entries that could match, it analyses a text exactly as the full Kiwi does, on the regulations
and on texts made to hit that dictionary (plain entries, pre-analysed ones, a noun contracted
with a particle, Latin letters in another case); and a process switches to the full Kiwi as the
module says."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.analyze import korean
from excerpt.analyze.korean_kiwi import _build_light, kiwi, multi_entries

HITS = [
    "첨단산업인재양성부트캠프반도체사업단규정 제3조",  # 부트 캠프, written without the space
    "더글라스 애덤스의 은하수를 여행하는 히치하이커를 읽었다.",  # pre-analysed: 더글러스 애덤스
    "데이터사이언스 전공과 부트캠픈 다르다.",  # 캠픈: 캠프 + ㄴ
    "잭 바우어가 나오는 드라마와 잭바우어의 대사",
    "한국과학기술원(KAIST)과 kaist 대학원 학칙 제15조의2",
]


def tokens(tokenizer: object, text: str) -> list[str]:
    """What analyze_korean gives for ``text`` when Kiwi is ``tokenizer``."""
    text = unicodedata.normalize("NFKC", text)
    morphs = tokenizer.tokenize(  # type: ignore[attr-defined]
        text, match_options=korean._NO_PATTERNS, pretokenized=korean._references(text))
    return korean._tokens(text, morphs)


def test_entries_that_could_match_are_found_with_or_without_spaces_and_contracted() -> None:
    assert any(line.startswith("부트 캠프\t") for line in multi_entries(HITS[0]))
    assert any(line.startswith("더글라스 애덤스\t") for line in multi_entries(HITS[1]))
    assert any(line.startswith("부트 캠프\t") for line in multi_entries(HITS[2]))
    assert any(line.startswith("잭 바우어\t") for line in multi_entries(HITS[3]))
    assert multi_entries("학생 징계 절차") == []
    assert multi_entries("") == [] and multi_entries("!!! ...") == []


@pytest.mark.slow
def test_a_light_kiwi_with_a_texts_entries_analyses_it_as_the_full_one() -> None:
    full = kiwi()
    for text in HITS:
        light = _build_light(frozenset(multi_entries(text)))
        assert tokens(light, text) == tokens(full, text), text
    bare = _build_light(frozenset())
    assert tokens(bare, HITS[0]) != tokens(full, HITS[0])  # the entries matter: 부트 캠프


@pytest.mark.slow
def test_the_regulations_analyse_alike_with_the_light_kiwi(
        shared_data: Callable[..., Path]) -> None:
    text = shared_data("regulations", "dongeui_regulations_9-340_20250702.txt").read_text(
        encoding="utf-8")
    paragraphs = [p for p in unicodedata.normalize("NFKC", text).split("\n") if p.strip()]
    sample = paragraphs[:4000] + paragraphs[-2000:]
    full, bare = kiwi(), _build_light(frozenset())
    expected = [tokens(full, p) for p in sample]
    # the paragraphs the multi-word dictionary changes, and every 40th (finding a text's
    # entries scans the whole dictionary: ~50 ms)
    hit = [p for p, want in zip(sample, expected, strict=True) if tokens(bare, p) != want]
    assert hit  # 부트캠프, 데이터사이언스 …
    entries = frozenset(e for p in hit + sample[::40] for e in multi_entries(p))
    light = _build_light(entries)
    assert [p for p, want in zip(sample, expected, strict=True) if tokens(light, p) != want] == []


PROCESS = """
import json
from excerpt.analyze import analyze, analyze_many, korean_kiwi as k
seen = {}
seen["query"] = analyze("부트캠프 학생 징계 절차")
seen["after_one"] = [k._full is None, k._light is not None, k._light_builds]
analyze("학생 징계 해제")  # nothing new to match: the same light Kiwi
seen["after_two"] = [k._full is None, k._light_builds]
for n in range(k.LIGHT_TEXTS):
    analyze(f"학생 {n}번")
seen["after_many"] = k._full is not None  # a long-lived process: the full Kiwi
print(json.dumps(seen, ensure_ascii=False))
"""
BATCH = """
import json
from excerpt.analyze import analyze, analyze_many, korean_kiwi as k
analyze("부트캠프 학생 징계 절차")
analyze_many(["교원인사규정 제3조", "부트캠프 학생 징계 절차"])
seen = [k._full is not None, k._light is None, k.kiwi_for("x") is k._full]
print(json.dumps([seen, analyze("부트캠프 학생 징계 절차")], ensure_ascii=False))
"""


@pytest.mark.slow
def test_a_process_uses_the_light_kiwi_for_a_few_texts_then_the_full_one() -> None:
    seen = json.loads(subprocess.run([sys.executable, "-c", PROCESS], capture_output=True,
                                     text=True, check=True).stdout)
    assert seen["after_one"] == [True, True, 1]
    assert seen["after_two"] == [True, 1]
    assert seen["after_many"] is True
    (state, query) = json.loads(subprocess.run([sys.executable, "-c", BATCH],
                                               capture_output=True, text=True,
                                               check=True).stdout)
    assert state == [True, True, True]  # a batch loads the full Kiwi; the light one is gone
    assert query == seen["query"] and "부트 캠프" in query
