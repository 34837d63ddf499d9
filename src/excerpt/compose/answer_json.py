"""What an ask's JSON says of the passages it read, so that a reader can follow it without a
second request: each passage considered (``documents``) with its title, source, metadata and the
start of its text, and each quote with a few words of its passage around it (``context``).

Every passage here reached the answer through the caller's own search, so nothing is shown that
the caller may not read; the text is bounded (a provenance list of ten passages stays small) and
says so: ``text_start`` is the first :data:`TEXT_START` characters, ``chars`` the whole length,
never a silently cut text.
"""

from __future__ import annotations

import re
from typing import Any

from excerpt.types import Hit

TEXT_START = 200
"""Characters of a considered passage's text in ``documents`` (the start: where it begins)."""
CONTEXT_CHARS = 120
"""At most this many characters of a quote's passage on each side of it (cut at a word)."""
_SPACE = re.compile(r"\s")


def document_json(hit: Hit) -> dict[str, Any]:
    """One passage considered: its id, score, title, source, metadata and text start."""
    node = hit.node
    return {"id": node.id, "score": round(hit.score, 6), "title": node.title,
            "source": node.source, "metadata": dict(node.metadata),
            "text_start": node.text[:TEXT_START], "chars": len(node.text)}


def quote_context(text: str, quote: str) -> dict[str, Any] | None:
    """The words of ``text`` just before and after ``quote`` (an exact substring of it, as
    every quote is), each side at most :data:`CONTEXT_CHARS` and cut at a space, and whether
    more of the passage lies beyond (``more_before``, ``more_after``); None when ``quote`` is
    not in ``text``."""
    at = text.find(quote)
    if at < 0:
        return None
    end = at + len(quote)
    start, stop = max(0, at - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    if start > 0:  # begin after a space: a whole first word
        space = _SPACE.search(text, start, at)
        start = space.end() if space else at
    if stop < len(text):  # end before a space: a whole last word
        spaces = [m.start() for m in _SPACE.finditer(text, end, stop + 1)]
        stop = spaces[-1] if spaces else end
    return {"before": text[start:at], "after": text[end:stop],
            "more_before": start > 0, "more_after": stop < len(text)}


def quotes_with_context(quotes: list[dict[str, Any]],
                        documents: list[Hit]) -> list[dict[str, Any]]:
    """The quotes' JSON, each with its ``context`` in the passage it was taken from."""
    texts = {h.node.id: h.node.text for h in documents}
    out = []
    for quote in quotes:
        around = quote_context(texts[quote["id"]], quote["text"]) \
            if quote["id"] in texts else None
        out.append({**quote, "context": around} if around is not None else quote)
    return out
