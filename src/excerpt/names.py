"""The one rule for a name a caller gives that excerpt keeps or joins to a path: an upload's
file name, a synced folder's name, a conversation's name, an API key's name.

:func:`text_value` is a value at all: not blank, no control character (NUL, a line break, a
lone surrogate from an undecodable argument). :func:`plain_name` is also one name and no more:
not ``.`` or ``..``, no ``/`` or ``\\`` (a name joined to a folder or a key's prefix must not
reach another), within a length. Every refusal is an InputError naming the field.
"""

from __future__ import annotations

import unicodedata

from excerpt.errors import InputError

__all__ = ["MAX_NAME", "plain_name", "text_value"]

MAX_NAME = 200
"""Characters of a name a caller gives (a conversation, an API key)."""


def _shown(value: str) -> str:
    return repr(value[:80] + ("…" if len(value) > 80 else ""))


def text_value(value: str, field: str) -> str:
    """``value`` if it is not blank and holds no control character; InputError otherwise."""
    if not value.strip():
        raise InputError(f"{field} {_shown(value)} is empty")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in value):
        raise InputError(f"{field} {_shown(value)} holds a control character")
    return value


def plain_name(value: str, field: str, *, noun: str = "name", max_chars: int = MAX_NAME,
               max_bytes: int | None = None) -> str:
    """``value`` if it is one plain ``noun`` (see the module docstring) of at most
    ``max_chars`` characters and ``max_bytes`` UTF-8 bytes; InputError naming ``field``."""
    text_value(value, field)
    if value in (".", ".."):
        raise InputError(f"{field} {_shown(value)} is not a {noun}")
    if "/" in value or "\\" in value:
        raise InputError(f"{field} {_shown(value)} must be a plain {noun}, without folders "
                         "('/' or '\\')")
    if len(value) > max_chars:
        raise InputError(f"{field} {_shown(value)} is over {max_chars} characters")
    if max_bytes is not None and len(value.encode("utf-8", "surrogatepass")) > max_bytes:
        raise InputError(f"{field} {_shown(value)} is over {max_bytes} bytes")
    return value
