"""Code identifiers: ``proc_SearchShipments_BM25`` and ``SearchFacade`` are also split into words.

A token counts as an identifier when it has an underscore between two letters or digits, or a
lowercase letter followed by a capitalised word: ``hFa`` in ``SearchFacade``, ``tHTTPRes`` in
``getHTTPResponse`` (an acronym then a word of two or more letters).  Requiring lowercase letters
after the capital keeps scientific names such as ``mRNA``, ``miRNAs``, ``mTOR``, ``cAMP`` or
``TNFalpha`` ordinary words (splitting them would only add ``rna`` to every ``mRNA``); the price
is that ``getX`` or ``toJSON`` are not split either."""

from __future__ import annotations

import re

# Letters that are not ASCII capitals: camelCase is an ASCII convention, so every other letter
# (accented, Greek, ...) counts as lowercase and stays inside its word.
_LOWER = r"[^\W\dA-Z_]"

IDENTIFIER_HINT = re.compile(rf"[^\W_]_[^\W_]|[a-z][A-Z]{_LOWER}|[a-z][A-Z]{{2,}}{_LOWER}{{2}}")

# One word of a camelCase chunk: an acronym before a capitalised word (``HTTP`` in
# ``HTTPServer``), a (capitalised) word, an all-caps run; trailing digits stay attached
# (``BM25``, ``Sha256``) because they are usually part of the name.
_PART = re.compile(rf"[A-Z]+(?=[A-Z]{_LOWER})|[A-Z]?{_LOWER}+\d*|[A-Z]+\d*|\d+")


def is_identifier(token: str) -> bool:
    """Whether ``token`` (one ``\\w+`` word, original case) should also be split into words."""
    if "_" not in token and (token.islower() or token.isupper() or token.istitle()):
        return False  # cheap tests that rule out most words before the regex
    return IDENTIFIER_HINT.search(token) is not None


def split_identifier(token: str) -> list[str]:
    """The lowercased words of an identifier, in order; parts shorter than 2 are dropped."""
    parts: list[str] = []
    for chunk in token.split("_"):
        parts.extend(p.lower() for p in _PART.findall(chunk) if len(p) > 1)
    return parts
