"""Loading Kiwi: the whole of it for batches, a lighter one for a few single texts.

Kiwi spends about 2.5 s loading its model and dictionaries, most of it on two dictionaries of
proper nouns: the multi-word one (``multi.dict``: ~250,000 names with spaces inside, such as
``부트 캠프``) and the default one (``default.dict``: ~113,000 names, and a dozen
pre-analysed endings). An entry can only change the analysis of a text it could match
(:mod:`excerpt.analyze.kiwi_entries`). So a process that analyses a few single texts (a CLI
search analyses its query and the terms it adds) gets a *light* Kiwi, built without either
dictionary, for the texts no multi-word entry could match; the default entries that could
match such a text are added to it before its first analysis (all plain proper nouns:
``add_user_word``), with those of the terms the query lexicon may add (:func:`foresee`). Once
it has served a text it never changes (an addition would make Kiwi rebuild, ~0.4 s, under a
thread that may be analysing with it): a later text needing another entry, or one a
multi-word entry or a pre-analysed ending could match, is analysed by the full Kiwi. A light
Kiwi given matching *multi-word* entries analysed 6 of 300 texts differently from the full
one; given the default ones, none of 6,000 regulation paragraphs (tested in
``tests/unit/analyze/test_korean_kiwi.py``).

Batches (:func:`excerpt.analyze.korean.analyze_korean_many`: ingestion, the composer) load
the full Kiwi; from then on every text uses it and the light one is dropped. The light Kiwi
serves at most :data:`LIGHT_TEXTS` texts; after that the full Kiwi is loaded (a process
analysing more is long-lived).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from excerpt.analyze.kiwi_entries import could_match, word_entries

LIGHT_TEXTS = 16
"""Texts a process analyses with the light Kiwi before it loads the full one."""

_MODEL_TYPE = "cong"

_lock = threading.RLock()
_full: Any = None
_light: Any = None
_light_texts: set[str] = set()
_light_words: set[str] = set()  # the default entries added to the light Kiwi
_light_used = False  # once it has served a text, the light Kiwi is never changed
_foreseen: list[str] = []


def kiwi() -> Any:
    """The full Kiwi (every dictionary), loaded on first use and shared."""
    if _full is None:
        with _lock:
            return _load_full()
    return _full


def _load_full() -> Any:
    """The full Kiwi, loaded now if need be (the caller holds the module's lock)."""
    global _full, _light
    if _full is None:
        from kiwipiepy import Kiwi

        _full = Kiwi(model_type=_MODEL_TYPE)
        _light = None  # the full one serves every text from now on
    return _full


def kiwi_for(text: str) -> Any:
    """A Kiwi that analyses ``text`` exactly as :func:`kiwi` does: the light one for the
    first :data:`LIGHT_TEXTS` texts of the process that no entry of the dictionaries it
    lacks could match, else the full one."""
    if _full is not None:
        return _full
    global _light_used
    with _lock:
        if _full is None and (text in _light_texts or (
                len(_light_texts) < LIGHT_TEXTS and _take(text))):
            _light_used = True
            return _light
        return _load_full()


def unbuilt() -> bool:
    """Whether neither Kiwi is built yet (what :func:`foresee` can still prepare)."""
    return _full is None and _light is None


def foresee(texts: Sequence[str]) -> None:
    """Texts a process may analyse soon (the terms a query lexicon may add): the default
    entries they could match go into the light Kiwi when it is built, so that such a term,
    analysed after the query, does not make it rebuild (~0.4 s). Nothing once either Kiwi
    is built."""
    with _lock:
        if _full is None and _light is None:
            _foreseen[:] = texts


def _take(text: str) -> bool:
    """Make the light Kiwi serve ``text`` (built if need be, given the default entries it
    could match); False when a multi-word entry or a pre-analysed one could match it (the
    caller holds the module's lock)."""
    global _light, _light_words, _light_used
    if could_match(text):
        return False
    words = [_plain_noun(line) for line in word_entries(text)]
    if None in words:
        return False
    if _light is None:
        _light, _light_words, _light_used = _build_light(), set(), False
        words += [_plain_noun(line) for t in _foreseen for line in word_entries(t)]
    new = [w for w in dict.fromkeys(words) if w is not None and w[0] not in _light_words]
    if new and _light_used:
        return False  # Kiwi would rebuild while another thread may be analysing with it
    for form, score in new:
        _light.add_user_word(form, "NNP", score)
        _light_words.add(form)
    _light_texts.add(text)
    return True


def _plain_noun(line: str) -> tuple[str, float] | None:
    """(form, score) of a default dictionary line that adds a proper noun, else None."""
    fields = line.split("\t")
    if len(fields) == 3 and fields[1] == "NNP":
        return fields[0], float(fields[2])
    return None


def _build_light() -> Any:
    """Kiwi without the dictionaries of :mod:`excerpt.analyze.kiwi_entries`."""
    from kiwipiepy import Kiwi

    return Kiwi(model_type=_MODEL_TYPE, load_multi_dict=False, load_default_dict=False)
