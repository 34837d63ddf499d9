"""Loading Kiwi: the whole of it for batches, a lighter one for a few single texts.

Kiwi spends about 2.5 s of CPU loading its model and dictionaries, and half of that on the
multi-word dictionary (``multi.dict``: ~250,000 proper nouns with spaces inside, such as
``부트 캠프`` or ``더글러스 애덤스``). A multi-word entry can only change the analysis of a text
it could match. So a process that analyses a few single texts (a CLI search analyses its query
and the terms it adds) gets a *light* Kiwi, built without that dictionary, for the texts no
entry of it could match; a text one could match is analysed by the full Kiwi. Those texts went
to a light Kiwi given the entries before, but on 300 texts made of random entries of the
dictionaries it analysed 6 differently from the full one (whatever order the entries were
loaded in): only texts without any are exact, and they are the usual query (tested on the
regulations in ``tests/unit/analyze/test_korean_kiwi.py``).

"Could match" is over-inclusive on purpose: an entry counts when its letters and digits, in
Hangul jamo (so that ``캠프`` still matches in ``캠픈``, 캠프 + ㄴ), lower-cased, occur in a
row in the text's, ignoring spaces and punctuation on both sides. Looking costs ~50 ms a text
(a pass over the dictionary): texts known to come together (a query's added terms) are looked
up in one pass (:func:`expect`). Batches (:func:`excerpt.analyze.korean.analyze_korean_many`:
ingestion, the composer) load the full Kiwi; from then on every text uses it and the light one
is dropped. The light Kiwi serves at most :data:`LIGHT_TEXTS` texts; after that the full Kiwi
is loaded (a process analysing more is long-lived).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

LIGHT_TEXTS = 16
"""Texts a process analyses with the light Kiwi before it loads the full one."""

_MODEL_TYPE = "cong"
_HANGUL_FIRST, _HANGUL_LAST, _FINALS = 0xAC00, 0xD7A3, 28

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
    first :data:`LIGHT_TEXTS` texts of the process that no multi-word entry could match,
    else the full one."""
    if _full is not None:
        return _full
    with _lock:
        if _full is None and _light is not None and text in _light_texts:
            return _light
        if _full is None and len(_light_texts) < LIGHT_TEXTS and _take([text]):
            return _light
        return _load_full()


def expect(texts: Sequence[str]) -> None:
    """Texts about to be analysed one by one (a query's added terms): looked up in the
    multi-word dictionary in one pass, so that :func:`kiwi_for` finds them ready. Nothing
    when the full Kiwi is loaded, the light one would serve too many texts or an entry
    could match (each text is then looked up alone)."""
    if _full is not None:
        return
    with _lock:
        new = [t for t in dict.fromkeys(texts) if t not in _light_texts]
        if new and _full is None and len(_light_texts) + len(new) <= LIGHT_TEXTS:
            _take(new)


def _take(texts: Sequence[str]) -> bool:
    """Make the light Kiwi serve ``texts`` (built if need be); False when a multi-word entry
    could match one of them (the caller holds the module's lock)."""
    global _light
    if multi_entries("\n".join(texts)):
        return False
    if _light is None:
        _light = _build_light()
    _light_texts.update(texts)
    return True


def _build_light() -> Any:
    """Kiwi without the multi-word dictionary."""
    from kiwipiepy import Kiwi

    return Kiwi(model_type=_MODEL_TYPE, load_multi_dict=False)


def multi_entries(text: str) -> list[str]:
    """The lines of Kiwi's multi-word dictionary whose entry could match in ``text``."""
    chars: set[str] = set()
    for ch in text:
        if ch.isalnum():
            chars.update((ch, ch.lower(), ch.upper(), _without_final(ch)))
    if not chars:
        return []
    allowed = "".join(sorted(chars)).replace("\\", "\\\\").replace("]", "\\]")
    allowed = allowed.replace("^", "\\^").replace("-", "\\-").replace("[", "\\[")
    # A first cut in C: lines whose form uses only the text's characters (or punctuation).
    lines = re.findall(rf"^(?:[{allowed}_]|[^\w\t\n])+\t.*$", _multi_dict(), re.MULTILINE)
    target = _key(text)
    return [line for line in lines
            if not line.startswith("#") and _key(line.split("\t", 1)[0]) in target]


def _without_final(ch: str) -> str:
    """The Hangul syllable without its final consonant (캠 for 캠, 프 for 픈)."""
    code = ord(ch)
    if _HANGUL_FIRST <= code <= _HANGUL_LAST and (code - _HANGUL_FIRST) % _FINALS:
        return chr(code - (code - _HANGUL_FIRST) % _FINALS)
    return ch


def _key(text: str) -> str:
    """Letters and digits only, lower-cased, Hangul as jamo (NFD)."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if c.isalnum())


@cache
def _multi_dict() -> str:
    import kiwipiepy_model  # type: ignore[import-untyped]

    return (Path(kiwipiepy_model.get_model_path()) / "multi.dict").read_text(encoding="utf-8")
