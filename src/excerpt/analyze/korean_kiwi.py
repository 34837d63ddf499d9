"""Loading Kiwi: the whole of it for batches, a lighter one for a few single texts.

Kiwi spends about 1.2 s loading its model and dictionaries, and more than half of that on two
dictionaries of proper nouns: the multi-word one (``multi.dict``: ~250,000 names with spaces
inside, such as ``부트 캠프``) and the default one (``default.dict``: ~113,000 names and a few
pre-analysed endings). An entry can only change the analysis of a text it could match. So a
process that analyses a few single texts (a CLI search analyses its query and the terms it
adds) gets a *light* Kiwi, built without those dictionaries, for the texts no entry of them
could match (:func:`excerpt.analyze.kiwi_entries.could_match`, over-inclusive on purpose); a
text one could match is analysed by the full Kiwi. Only texts without any entry are exact:
a light Kiwi given the matching multi-word entries analysed 6 of 300 texts differently from
the full one (tested on the regulations in ``tests/unit/analyze/test_korean_kiwi.py``).

Batches (:func:`excerpt.analyze.korean.analyze_korean_many`: ingestion, the composer) load
the full Kiwi; from then on every text uses it and the light one is dropped. The light Kiwi
serves at most :data:`LIGHT_TEXTS` texts; after that the full Kiwi is loaded (a process
analysing more is long-lived). :func:`expect` takes texts known to come together (a query's
added terms) in one go.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from excerpt.analyze.kiwi_entries import could_match

LIGHT_TEXTS = 16
"""Texts a process analyses with the light Kiwi before it loads the full one."""

_MODEL_TYPE = "cong"

_lock = threading.RLock()
_full: Any = None
_light: Any = None
_light_texts: set[str] = set()


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
    with _lock:
        if _full is None and _light is not None and text in _light_texts:
            return _light
        if _full is None and len(_light_texts) < LIGHT_TEXTS and _take([text]):
            return _light
        return _load_full()


def expect(texts: Sequence[str]) -> None:
    """Texts about to be analysed one by one (a query's added terms): looked up together,
    so that :func:`kiwi_for` finds them ready. Nothing when the full Kiwi is loaded, the
    light one would serve too many texts or an entry could match one of them (the full Kiwi
    is then loaded when that one is analysed)."""
    if _full is not None:
        return
    with _lock:
        new = [t for t in dict.fromkeys(texts) if t not in _light_texts]
        if new and _full is None and len(_light_texts) + len(new) <= LIGHT_TEXTS:
            _take(new)


def _take(texts: Sequence[str]) -> bool:
    """Make the light Kiwi serve ``texts`` (built if need be); False when an entry of the
    dictionaries it lacks could match one of them (the caller holds the module's lock)."""
    global _light
    if any(could_match(t) for t in texts):
        return False
    if _light is None:
        _light = _build_light()
    _light_texts.update(texts)
    return True


def _build_light() -> Any:
    """Kiwi without the dictionaries of :mod:`excerpt.analyze.kiwi_entries`."""
    from kiwipiepy import Kiwi

    return Kiwi(model_type=_MODEL_TYPE, load_multi_dict=False)
