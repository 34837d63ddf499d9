"""Loading Kiwi: the whole of it for batches, a lighter one for a few single texts.

Kiwi spends about 2.5 s of CPU loading its model and dictionaries, and half of that on the
multi-word dictionary (``multi.dict``: ~250,000 proper nouns with spaces inside, such as
``부트 캠프`` or ``더글러스 애덤스``). A dictionary entry can only change the analysis of a text
it could match. So a process that analyses a few single texts (a CLI search analyses one
query) gets a *light* Kiwi: built without that dictionary, plus the entries of it that could
match the texts seen so far, which analyses those texts exactly as the full one does (tested
on the regulations in ``tests/unit/analyze/test_korean_kiwi.py``) in about half the load time.

"Could match" is over-inclusive on purpose: an entry is taken when its letters and digits, in
Hangul jamo (so that ``캠프`` still matches in ``캠픈``, 캠프 + ㄴ), lower-cased, occur in a
row in the text's, ignoring spaces and punctuation on both sides. Batches
(:func:`excerpt.analyze.korean.analyze_korean_many`: ingestion, the composer) load the full
Kiwi; from then on every text uses it and the light one is dropped. A text whose entries the
light Kiwi lacks rebuilds it with them, at most :data:`LIGHT_BUILDS` times per process, and
the light Kiwi serves at most :data:`LIGHT_TEXTS` texts; after that the full Kiwi is loaded.
"""

from __future__ import annotations

import re
import tempfile
import threading
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

LIGHT_BUILDS = 2
"""Light Kiwis a process builds before it loads the full one (each costs about half of it)."""
LIGHT_TEXTS = 16
"""Texts a process analyses with the light Kiwi before it loads the full one."""

_MODEL_TYPE = "cong"
_HANGUL_FIRST, _HANGUL_LAST, _FINALS = 0xAC00, 0xD7A3, 28

_lock = threading.RLock()
_full: Any = None
_light: Any = None
_light_entries: frozenset[str] = frozenset()
_light_builds = 0
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
    """A Kiwi that analyses ``text`` exactly as :func:`kiwi` does: the full one when it is
    loaded; else the light one, holding the multi-word entries that could match, for the
    first :data:`LIGHT_TEXTS` texts of the process (finding the entries costs ~50 ms a text:
    a process analysing more is long-lived, and loads the full Kiwi)."""
    global _light, _light_entries, _light_builds
    if _full is not None:
        return _full
    with _lock:
        if _full is None and _light is not None and text in _light_texts:
            return _light
        if _full is None and len(_light_texts) < LIGHT_TEXTS:
            needed = frozenset(multi_entries(text))
            if _light is None or not needed <= _light_entries:
                if _light_builds >= LIGHT_BUILDS:
                    return _load_full()
                _light_entries = _light_entries | needed
                _light, _light_builds = _build_light(_light_entries), _light_builds + 1
            _light_texts.add(text)
            return _light
        return _load_full()


def _build_light(entries: frozenset[str]) -> Any:
    from kiwipiepy import Kiwi

    light = Kiwi(model_type=_MODEL_TYPE, load_multi_dict=False)
    if entries:
        with tempfile.TemporaryDirectory(prefix="excerpt-kiwi-") as folder:
            path = Path(folder) / "multi.dict"
            # plain entries first: a pre-analysed one names one of them
            ordered = sorted(entries, key=lambda line: ("/" in line.split("\t")[1], line))
            path.write_text("".join(f"{line}\n" for line in ordered), encoding="utf-8")
            light.load_user_dictionary(str(path))
    return light


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
    found = [line for line in lines
             if not line.startswith("#") and _key(line.split("\t", 1)[0]) in target]
    return found + [line for name in _originals(found) for line in _entries_named(name)]


def _originals(lines: list[str]) -> set[str]:
    """The entries that pre-analysed lines (``더글라스 애덤스 → 더글러스 애덤스/NNP``) name:
    Kiwi refuses a pre-analysed entry whose original is not in the dictionary."""
    names: set[str] = set()
    for line in lines:
        analysis = line.split("\t")[1]
        if "/" in analysis:
            names.update(part.rpartition("/")[0].strip() for part in analysis.split(" + "))
    return names


def _entries_named(name: str) -> list[str]:
    return re.findall(rf"^{re.escape(name)}\t[A-Z-]+\t.*$", _multi_dict(), re.MULTILINE)


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
