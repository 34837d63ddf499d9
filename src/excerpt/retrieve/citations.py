"""Exact citations: a query that names a node by its id gets that node first.

People ask for ``교원인사규정 제15조`` or ``「학생상벌에관한규정」 제16조제2항``; BM25 spreads
such a query over every article of the regulation (short ones win on length), so the named
article may rank anywhere. Here the query's words, with brackets and quotes stripped, are
looked up as node ids: every single word and every pair of neighbouring words, the second cut
to its article (``제16조제2항`` -> ``제16조``). A visible node found this way is placed first, in
the order the query names them, with a score just above the best hit's (so every ordering by
score agrees); its own text need not match the query at all. Invisible nodes are never found.

Code is named differently (``OrderRepository.GetOrder`` is the end of
``CS:Contoso.Data.OrderRepository.GetOrder``): the engine's lookup adds the nodes
:mod:`excerpt.retrieve.identifiers` resolves by suffix, or for a question about a relation the
nodes :mod:`excerpt.retrieve.relations` finds in the graph, after the ids found here; they are
placed by the same :func:`pin_named`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from excerpt.retrieve.view import Candidate, View

_BRACKETS = re.compile(r"[「」『』\"'“”‘’()\[\]<>《》〈〉,.?!]")
_ARTICLE = re.compile(r"제\d+조(?:의\d+)?")
MAX_WORDS = 32


def candidate_ids(query: str) -> list[str]:
    """Ids the query may name, in the order they appear (pairs before the single words)."""
    words = _BRACKETS.sub(" ", query).split()[:MAX_WORDS]
    out: list[str] = []
    append = out.append
    for i, word in enumerate(words, 1):
        if i < len(words):
            after = words[i]
            append(f"{word} {after}")
            # "제" first: the article pattern is not tried on words that cannot match it
            if "제" in after and (article := _ARTICLE.match(after)) and article.group() != after:
                append(f"{word} {article.group()}")
        append(word)
    return list(dict.fromkeys(out))


def named_nodes(view: View, ids: Sequence[str]) -> list[Candidate]:
    """Visible nodes among ``ids`` in the order given, each once (score 0; the caller places
    them)."""
    if not any(part.segment.ordinal_of.keys() & ids for part in view.parts):
        return []  # the usual case, tested at C speed: the query names no node
    found: list[Candidate] = []
    seen: set[str] = set()
    for node_id in ids:
        for part_index, part in enumerate(view.parts):
            ordinal = part.row(node_id)
            if ordinal is not None and part.mask[ordinal] and node_id not in seen:
                seen.add(node_id)
                found.append(Candidate(part_index, ordinal, node_id, 0.0))
                break
    return found


def pin_named(query: str, ranked: list[Candidate],
              lookup: Callable[[Sequence[str]], list[Candidate]]
              ) -> tuple[list[Candidate], list[str]]:
    """``ranked`` with the nodes the query names moved (or added) to the front; ``lookup``
    gives the visible nodes among candidate ids, in the order asked."""
    named = lookup(candidate_ids(query))
    if not named:
        return ranked, []
    top = ranked[0].score if ranked else 0.0
    pinned_ids = {c.id for c in named}
    scores = np.nextafter(np.float32(top), np.float32(np.inf), dtype=np.float32)
    first = [c._replace(score=float(scores)) for c in named]
    rest = [c for c in ranked if c.id not in pinned_ids]
    return first + rest, [c.id for c in named]
