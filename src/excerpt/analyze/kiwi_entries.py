"""Which entries of Kiwi's proper-noun dictionaries could match in a text? (for the light
Kiwi, korean_kiwi.py)

Kiwi's multi-word dictionary (``multi.dict``: ~250,000 proper nouns with spaces inside, such as
``부트 캠프``) costs more than half of the ~2.5 s Kiwi takes to load, and its default
dictionary (``default.dict``: ~113,000 proper nouns of Wikipedia and Namuwiki, and a dozen
pre-analysed endings such as ``잖``) ~0.35 s more. An entry can only change the analysis of a
text it could match.

"Could match" is over-inclusive on purpose: an entry counts when its letters and digits, in
Hangul jamo (so that ``캠프`` still matches in ``캠픈``, 캠프 + ㄴ), lower-cased, occur in a
row in the text's, ignoring punctuation (:func:`key`), and spaces too for a multi-word entry
(``부트캠프`` is ``부트 캠프``): :func:`could_match`. An entry of the default dictionary has
no space and counts when it occurs within one word of the text (:func:`word_entries`): Kiwi,
as excerpt calls it (no space tolerance), matches no morpheme across a space (``징계 처분`` is
analysed alike with or without the entry ``징계처분``; tested on 6,000 regulation paragraphs).

Both answer in about a millisecond from an index of the entries' keys (one 64-bit hash per
key, sorted; for the default dictionary with each line's offset) kept in a file under
``$XDG_CACHE_HOME/excerpt`` (``~/.cache/excerpt``) named after the dictionaries it was built
from. The first process on a machine builds it (~2 s, once); when the directory is not writable
each process builds it for itself. (Reading the multi-word dictionary and matching it with a
regular expression instead costs ~0.15 s a process.) :func:`entries` lists the multi-word
lines themselves, slowly: for tests and explanations.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

MULTI, DEFAULT = "multi.dict", "default.dict"
"""The dictionaries the light Kiwi is built without."""

_FORMAT = "2"  # bump when the index's layout or the key changes
_HANGUL_FIRST, _HANGUL_LAST, _FINALS = 0xAC00, 0xD7A3, 28


def key(text: str) -> str:
    """Letters and digits only, lower-cased, Hangul as jamo (NFD)."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if c.isalnum())


def could_match(text: str) -> bool:
    """Whether an entry of the multi-word dictionary could match in ``text`` (see the
    module)."""
    index = _index()
    return len(_found(key(text), index.multi_longest, index.multi)) > 0


def word_entries(text: str) -> list[str]:
    """The lines of the default dictionary whose entry could match within a word of
    ``text``, in the dictionary's order."""
    index = _index()
    offsets: set[int] = set()
    for word in text.split():
        for at in _found(key(word), index.default_longest, index.default):
            start = int(index.default_end[at - 1]) if at else 0
            offsets.update(int(o) for o in index.offsets[start:int(index.default_end[at])])
    return [_line(_read(DEFAULT), o) for o in sorted(offsets)]


def _line(text: str, offset: int) -> str:
    end = text.find("\n", offset)
    return text[offset:] if end < 0 else text[offset:end]


def _found(target: str, longest: int, hashes: Any) -> list[int]:
    """Positions in ``hashes`` (sorted) of the hashes of ``target``'s runs of letters."""
    if not target:
        return []
    import numpy as np

    pieces = {target[i:i + n] for n in range(1, min(longest, len(target)) + 1)
              for i in range(len(target) - n + 1)}
    found = np.fromiter((_hash(p) for p in pieces), dtype=np.uint64, count=len(pieces))
    at = np.searchsorted(hashes, found).clip(max=len(hashes) - 1)
    return [int(i) for i in at[hashes[at] == found]]


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
    lines = re.findall(rf"^(?:[{allowed}_]|[^\w\t\n])+\t.*$", _read(MULTI), re.MULTILINE)
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


@dataclass(frozen=True)
class _Index:
    multi_longest: int
    multi: Any  # sorted unique hashes of the multi-word entries' keys
    default_longest: int
    default: Any  # sorted unique hashes of the default entries' keys
    default_end: Any  # where each key's lines end in ``offsets`` (the next key's start)
    offsets: Any  # the lines' offsets in default.dict, grouped by key


@cache
def _index() -> _Index:
    """The index, from the cache file or built (and then saved when the cache directory is
    writable). The file is one array: five counts (both longest keys, the number of
    multi-word hashes, of default hashes and of offsets), then the four arrays in order."""
    import numpy as np

    path = cache_path()
    try:
        stored = np.load(path, allow_pickle=False)
        if stored.dtype == np.uint64 and stored.ndim == 1 and len(stored) > 5:
            multi_longest, default_longest, n_multi, n_default, n_offsets = map(int, stored[:5])
            if len(stored) == 5 + n_multi + 2 * n_default + n_offsets:
                parts = np.split(stored[5:], np.cumsum([n_multi, n_default, n_default]))
                return _Index(multi_longest, parts[0], default_longest, *parts[1:])
    except (OSError, ValueError, EOFError):
        pass  # absent or damaged: built again below
    index = _build()
    counts = [index.multi_longest, index.default_longest, len(index.multi),
              len(index.default), len(index.offsets)]
    _save(path, np.concatenate([np.array(counts, dtype=np.uint64), index.multi, index.default,
                                index.default_end, index.offsets]))
    return index


def _build() -> _Index:
    import numpy as np

    multi = {key(line.split("\t", 1)[0]) for line in _read(MULTI).split("\n")
             if line and not line.startswith("#")} - {""}
    keyed: list[tuple[int, int]] = []  # (hash of the key, offset of the line)
    offset, longest = 0, 0
    for line in _read(DEFAULT).split("\n"):
        if line and not line.startswith("#") and (k := key(line.split("\t", 1)[0])):
            keyed.append((_hash(k), offset))
            longest = max(longest, len(k))
        offset += len(line) + 1
    keyed.sort()
    hashes = np.array([h for h, _ in keyed], dtype=np.uint64)
    default, starts = np.unique(hashes, return_index=True)
    ends = np.append(starts[1:], len(hashes)).astype(np.uint64)
    return _Index(max(map(len, multi)), np.unique(np.fromiter(map(_hash, multi), np.uint64)),
                  longest, default, ends, np.array([o for _, o in keyed], dtype=np.uint64))


def cache_path() -> Path:
    """Where the index of the installed dictionaries is kept."""
    import kiwipiepy_model  # type: ignore[import-untyped]

    folder = Path(kiwipiepy_model.get_model_path())
    signature = hashlib.blake2b(digest_size=8)
    signature.update(f"{_FORMAT} {getattr(kiwipiepy_model, '__version__', '')}".encode())
    for name in (MULTI, DEFAULT):
        stat = (folder / name).stat()
        signature.update(f" {name} {stat.st_size} {stat.st_mtime_ns}".encode())
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
def _read(name: str) -> str:
    import kiwipiepy_model

    return (Path(kiwipiepy_model.get_model_path()) / name).read_text(encoding="utf-8")
