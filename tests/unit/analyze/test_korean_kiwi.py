"""The light Kiwi (issue 20, item 4: cold start): built without the multi-word and default
dictionaries and given the default entries a text could match, it analyses exactly as the
full Kiwi does every text no multi-word or pre-analysed entry could match, on the regulations
and on texts made of the default dictionary's proper nouns; texts such an entry could match
(plain entries, pre-analysed ones, a noun contracted with a particle, Latin letters in another
case) go to the full Kiwi; and a process switches to the full Kiwi as the module says, the
lexicon's terms foreseen before the first analysis."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from excerpt.analyze import korean
from excerpt.analyze.kiwi_entries import could_match, entries, word_entries
from excerpt.analyze.korean_kiwi import _build_light, _plain_noun, kiwi

HITS = [
    "첨단산업인재양성부트캠프반도체사업단규정 제3조",  # 부트 캠프, written without the space
    "더글라스 애덤스의 은하수를 여행하는 히치하이커를 읽었다.",  # pre-analysed: 더글러스 애덤스
    "데이터사이언스 전공과 부트캠픈 다르다.",  # 캠픈: 캠프 + ㄴ
    "잭 바우어가 나오는 드라마와 잭바우어의 대사",
]
"""Texts a multi-word entry could match: the full Kiwi analyses them."""
LATIN = "한국과학기술원(KAIST)과 kaist 대학원 학칙 제15조의2"  # no entry could match


def tokens(tokenizer: object, text: str) -> list[str]:
    """What analyze_korean gives for ``text`` when Kiwi is ``tokenizer``."""
    text = unicodedata.normalize("NFKC", text)
    morphs = tokenizer.tokenize(  # type: ignore[attr-defined]
        text, match_options=korean._NO_PATTERNS, pretokenized=korean._references(text))
    return korean._tokens(text, morphs)


def test_entries_that_could_match_are_found_with_or_without_spaces_and_contracted() -> None:
    assert any(line.startswith("부트 캠프\t") for line in entries(HITS[0]))
    assert any(line.startswith("더글라스 애덤스\t") for line in entries(HITS[1]))
    assert any(line.startswith("부트 캠프\t") for line in entries(HITS[2]))
    assert any(line.startswith("잭 바우어\t") for line in entries(HITS[3]))
    assert all(entries(text) for text in HITS)
    assert entries("학생 징계 절차") == []
    assert entries("") == [] and entries("!!! ...") == []
    assert all(could_match(text) for text in HITS)  # the index agrees
    assert not any(could_match(t) for t in ("학생 징계 절차", "", "!!! ...", LATIN))


def light_given(texts: list[str]) -> tuple[Any, list[str]]:
    """A light Kiwi given the default entries ``texts`` could match, and the texts it may
    serve (no multi-word entry and no pre-analysed one could match them), as the module
    builds it for a process that analyses them."""
    light, served = _build_light(), []
    for text in texts:
        words = [_plain_noun(line) for line in word_entries(text)]
        if could_match(text) or None in words:
            continue
        served.append(text)
        for word in words:
            if word is not None:
                light.add_user_word(word[0], "NNP", word[1])
    return light, served


@pytest.mark.slow
def test_the_regulations_analyse_alike_with_the_light_kiwi(
        shared_data: Callable[..., Path]) -> None:
    text = shared_data("regulations", "dongeui_regulations_9-340_20250702.txt").read_text(
        encoding="utf-8")
    paragraphs = [p for p in unicodedata.normalize("NFKC", text).split("\n") if p.strip()]
    sample = paragraphs[:4000] + paragraphs[-2000:]
    full, bare = kiwi(), _build_light()
    differ = [p for p in sample if tokens(bare, p) != tokens(full, p)]
    assert len(differ) > 100  # 부트캠프, 징계처분 …: the dictionaries matter
    # and only where one of their entries could match
    assert all(could_match(p) or word_entries(p) for p in differ)
    assert all(could_match(p) for p in sample[:300] if entries(p))  # the index finds as many
    served = 0
    for start in range(0, len(sample), 1500):  # one light Kiwi per 1,500 paragraphs
        light, texts = light_given(sample[start:start + 1500])
        assert [t for t in texts if tokens(light, t) != tokens(full, t)] == []
        served += len(texts)
    assert served > 2500  # most paragraphs were served, many with entries added
    assert tokens(bare, "징계처분") != tokens(full, "징계처분")


@pytest.mark.slow
def test_texts_made_of_default_entries_analyse_alike() -> None:
    """Three random proper nouns of Kiwi's default dictionary in a sentence, 300 texts: one
    light Kiwi given the entries of all of them analyses each as the full Kiwi does."""
    import kiwipiepy_model  # type: ignore[import-untyped]

    dictionary = Path(kiwipiepy_model.get_model_path()) / "default.dict"
    forms = [line.split("\t")[0] for line in dictionary.read_text("utf-8").split("\n")
             if "\tNNP" in line and not line.startswith("#")]
    rng = random.Random(7)
    texts = []
    for _ in range(300):
        a, b, c = rng.choice(forms), rng.choice(forms), rng.choice(forms)
        text = f"{a}에 관한 규정 제3조와 {b}의 학생은 {c}를 했다"
        texts.append(unicodedata.normalize("NFKC", text))
    light, served = light_given(texts)
    assert len(served) > 250
    full = kiwi()
    assert [t for t in served if tokens(light, t) != tokens(full, t)] == []


PROCESS = """
import json, sys
from excerpt.analyze import analyze, foresee, korean_kiwi as k
if sys.argv[1] == "full":
    k.kiwi()
TERMS = ["징계 처분", "신청서", "해양초등학교"]
foresee(TERMS, "ko")  # as the engine does with the lexicon's terms
seen = {}
seen["query"] = analyze("오므라이스 학생 징계 절차")
seen["after_one"] = [k._full is None, k._light is not None, sorted(k._light_texts)]
light = k._light
seen["terms"] = [analyze(t) for t in TERMS]
seen["served"] = sorted(k._light_texts)
seen["after_terms"] = [k._full is None, k._light is light]
for n in range(k.LIGHT_TEXTS):
    analyze(f"학생 {n}번")
seen["after_many"] = k._full is not None  # a long-lived process: the full Kiwi
print(json.dumps(seen, ensure_ascii=False))
"""
UNFORESEEN = """
import json
from excerpt.analyze import analyze, korean_kiwi as k
analyze("학생 징계 절차")
tokens = analyze("신청서")  # needs the entry 청서: the light Kiwi, used, is not changed
print(json.dumps([k._full is not None, "청서" in k._light_words, tokens], ensure_ascii=False))
"""
FORESEE = """
import json
from excerpt.analyze import analyze, foresee, korean_kiwi as k
foresee(["신청서", "학위수여식"], "ko")  # entries 청서, 위수여 …: added before the first analysis
analyze("학생 징계 절차")
words = sorted(k._light_words)
analyze("신청서")
print(json.dumps([words, sorted(k._light_words) == words, k._full is None],
                 ensure_ascii=False))
"""
BATCH = """
import json
from excerpt.analyze import analyze, analyze_many, korean_kiwi as k
analyze("교원 징계 절차")
analyze_many(["교원인사규정 제3조", "부트캠프 학생 징계 절차"])
print(json.dumps([k._full is not None, k._light is None, k.kiwi_for("x") is k._full]))
"""
MULTI = """
import json, sys
from excerpt.analyze import analyze, korean_kiwi as k
tokens = analyze(sys.argv[1])
print(json.dumps([k._full is not None, k._light is None, tokens], ensure_ascii=False))
"""


def run(code: str, *args: str) -> Any:
    return json.loads(subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                                     text=True, check=True).stdout)


@pytest.mark.slow
def test_a_process_uses_the_light_kiwi_for_a_few_texts_then_the_full_one() -> None:
    seen, full = run(PROCESS, "light"), run(PROCESS, "full")
    assert seen["after_one"] == [True, True, ["오므라이스 학생 징계 절차"]]
    assert seen["served"] == ["신청서", "오므라이스 학생 징계 절차", "징계 처분", "해양초등학교"]
    assert seen["after_terms"] == [True, True]
    assert seen["after_many"] is True
    assert (seen["query"], seen["terms"]) == (full["query"], full["terms"])
    words, unchanged, light = run(FORESEE)
    assert {"청서", "위수여"} <= set(words) and unchanged and light  # no addition, no rebuild
    assert run(UNFORESEEN) == [True, False, full["terms"][1]]
    assert run(BATCH) == [True, True, True]  # a batch loads the full Kiwi; the light one goes
    # 부트 캠프 (multi-word) or 잖 (pre-analysed) could match: the full Kiwi
    bootcamp = ["부트 캠프", "학생", "징계", "절차"]
    assert run(MULTI, "부트캠프 학생 징계 절차") == [True, True, bootcamp]
    assert run(MULTI, "징계 절차를 밟았잖아")[:2] == [True, True]
    # a default entry (징계처분) could match: the light Kiwi, given it (the full one's tokens)
    assert run(MULTI, "학생 징계처분 절차") == [False, False, ["학생", "징계", "처분", "절차"]]
