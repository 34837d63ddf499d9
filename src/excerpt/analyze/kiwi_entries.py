"""Could an entry of Kiwi's multi-word dictionary match in a text? (for the light Kiwi,
korean_kiwi.py)

Kiwi's multi-word dictionary (``multi.dict``: ~250,000 proper nouns with spaces inside, such as
``부트 캠프`` or ``더글러스 애덤스``) costs more than half of the ~2.5 s Kiwi takes to load. An
entry can only change the analysis of a text it could match, so a text no entry could match is
analysed alike without it.

"Could match" is over-inclusive on purpose: an entry counts when its letters and digits, in
Hangul jamo (so that ``캠프`` still matches in ``캠픈``, 캠프 + ㄴ), lower-cased, occur in a
row in the text's, ignoring spaces and punctuation on both sides (:func:`key`).

:func:`could_match` answers in about a millisecond from an index of the entries' keys: one
64-bit hash per key, sorted, in a file under ``$XDG_CACHE_HOME/excerpt`` (``~/.cache/excerpt``)
named after the dictionary it was built from. The first process on a machine builds it
(~1.5 s, once); when the directory is not writable each process builds it for itself. (Reading the
dictionary and matching it with a regular expression instead costs ~0.15 s a process.)
:func:`entries` lists the matching lines themselves, slowly (a pass over the dictionary): for
tests and explanations.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

DICTIONARY = "multi.dict"
"""The dictionary the light Kiwi leaves out."""

_FORMAT = "1"  # bump when the index's layout or the key changes
_HANGUL_FIRST, _HANGUL_LAST, _FINALS = 0xAC00, 0xD7A3, 28


def key(text: str) -> str:
    """Letters and digits only, lower-cased, Hangul as jamo (NFD)."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if c.isalnum())


def could_match(text: str) -> bool:
    """Whether an entry of the multi-word dictionary could match in ``text`` (see the
    module)."""
    target = key(text)
    if not target:
        return False
    import numpy as np

    longest, hashes = _index()
    pieces = {target[i:i + n] for n in range(1, min(longest, len(target)) + 1)
              for i in range(len(target) - n + 1)}
    found = np.fromiter((_hash(p) for p in pieces), dtype=np.uint64, count=len(pieces))
    at = np.searchsorted(hashes, found).clip(max=len(hashes) - 1)
    return bool((hashes[at] == found).any())


def entries(text: str) -> list[str]:
    """The lines of the multi-word dictionary whose entry could match in ``text`` (slow)."""
    chars: set[str] = set()
    for ch in text:
        if ch.isalnum():
            chars.update((ch, ch.lower(), ch.upper(), _without_final(ch)))
    if not chars:
        return []
    allowed = "".join(sorted(chars)).replace("\\", "\\\\").replace("]", "\\]")
    allowed = allowed.replace("^", "\\^").replace("-", "\\-").replace("[", "\\[")
    # A first cut in C: lines whose form uses only the text's characters (or punctuation).
    lines = re.findall(rf"^(?:[{allowed}_]|[^\w\t\n])+\t.*$", _read(), re.MULTILINE)
    target = key(text)
    return [line for line in lines
            if not line.startswith("#") and key(line.split("\t", 1)[0]) in target]


def _without_final(ch: str) -> str:
    """The Hangul syllable without its final consonant (캠 for 캠, 프 for 픈)."""
    code = ord(ch)
    if _HANGUL_FIRST <= code <= _HANGUL_LAST and (code - _HANGUL_FIRST) % _FINALS:
        return chr(code - (code - _HANGUL_FIRST) % _FINALS)
    return ch


def _hash(piece: str) -> int:
    return int.from_bytes(hashlib.blake2b(piece.encode(), digest_size=8).digest(), "little")


@cache
def _index() -> tuple[int, Any]:
    """(the longest key's length, the sorted hashes of every key), from the cache file (the
    length first) or built, and then saved when the cache directory is writable."""
    import numpy as np

    path = cache_path()
    try:
        stored = np.load(path, allow_pickle=False)
        if stored.dtype == np.uint64 and stored.ndim == 1 and len(stored) > 1:
            return int(stored[0]), stored[1:]
    except (OSError, ValueError, EOFError):
        pass  # absent or damaged: built again below
    keys = {key(line.split("\t", 1)[0]) for line in _read().split("\n")
            if line and not line.startswith("#")}
    keys.discard("")
    hashes = np.unique(np.fromiter((_hash(k) for k in keys), dtype=np.uint64, count=len(keys)))
    longest = max(map(len, keys))
    _save(path, np.concatenate([np.array([longest], dtype=np.uint64), hashes]))
    return longest, hashes


def cache_path() -> Path:
    """Where the index of the installed dictionaries is kept."""
    import kiwipiepy_model  # type: ignore[import-untyped]

    folder = Path(kiwipiepy_model.get_model_path())
    signature = hashlib.blake2b(digest_size=8)
    signature.update(f"{_FORMAT} {getattr(kiwipiepy_model, '__version__', '')}".encode())
    stat = (folder / DICTIONARY).stat()
    signature.update(f" {DICTIONARY} {stat.st_size} {stat.st_mtime_ns}".encode())
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "excerpt" / f"kiwi-entries-{signature.hexdigest()}.npy"


def _save(path: Path, array: Any) -> None:
    """Write ``array`` to ``path`` whole or not at all; a read-only cache is no error."""
    import numpy as np

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                np.save(out, array, allow_pickle=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


@cache
def _read() -> str:
    import kiwipiepy_model

    return (Path(kiwipiepy_model.get_model_path()) / DICTIONARY).read_text(encoding="utf-8")
