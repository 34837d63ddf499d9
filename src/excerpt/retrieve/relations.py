"""Edge-aware code questions: "which procedure writes the Tenants table", "what calls GetVenues".

Such a question names an object and a relation; the answer is in the dependency graph, not in
any one node's words (a procedure that writes ``dbo.Tenants`` need not say "Tenants table").
Here, for a search or an ask over code:

1. the question's **relation words** are looked up in :data:`RELATION_WORDS` (English only;
   a word maps to one or more ``(relation, way)`` pairs, ``in`` for the sources of edges into
   the object, ``out`` for the targets of edges leaving it);
2. its other words that look like identifiers are resolved as names
   (:mod:`excerpt.retrieve.identifiers`: suffix match, visible nodes only);
3. the **related nodes** are the visible nodes at the other end of an edge of those relations
   into (or out of) a named object, sorted by id (the graph's order); they go first, then the
   named objects that have such a neighbour (all named objects when none has one).

"What calls X" asks for X's callers; "what does X call" for its callees: a ``does``/``do``/
``did`` before the relation word turns every way round.

Relations are data: a relation ingest adds later (``Registers``, ``MapsTo``, ``Mentions``…)
takes one line in the table, no code. A question with no relation word, or naming nothing,
pins nothing here. Hidden nodes are never named, resolved or returned: names resolve among
visible nodes, and the graph hands out visible edges between visible nodes only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from excerpt.graph.expand import NodeStatus
from excerpt.retrieve.identifiers import (
    CODE_PREFIXES,
    CS_KINDS,
    SQL_KINDS,
    Name,
    is_name,
    query_name,
    words,
)
from excerpt.types import Edge

Way = Literal["in", "out"]


def _forms(relations: tuple[tuple[str, Way], ...], *forms: str
           ) -> dict[str, tuple[tuple[str, Way], ...]]:
    return dict.fromkeys(forms, relations)


RELATION_WORDS: Mapping[str, tuple[tuple[str, Way], ...]] = {
    **_forms((("WritesTo", "in"),), "writes", "write", "writing", "written", "inserts", "insert",
             "inserted", "updates", "update", "updated", "deletes", "delete", "deleted",
             "modifies", "modify", "modified", "truncates", "merges"),
    **_forms((("ReadsFrom", "in"),), "reads", "read", "reading", "selects", "select",
             "selected", "queries", "queried"),
    **_forms((("Calls", "in"),), "calls", "call", "called", "calling", "invokes", "invoke",
             "invoked", "callers"),
    **_forms((("Executes", "in"),), "executes", "execute", "executed", "executing", "runs",
             "run", "exec"),
    **_forms((("Implements", "in"), ("ImplementedBy", "out")), "implements", "implement",
             "implemented", "implementing", "implementations", "implementation"),
    **_forms((("Registers", "in"),), "registers", "register", "registered"),
    **_forms((("MapsTo", "in"),), "maps", "mapped", "map"),
    **_forms((("Mentions", "in"),), "mentions", "mentioned"),
}
"""Relation word -> (edge relation, way to walk from the named object)."""

_STOP = (
    "a an the which what who whom whose where how that this these those is are was were be "
    "been do does did to into from of in on at by for with and or not all any every there "
    "me show list find give tell table tables view views procedure procedures proc stored "
    "class classes method methods function functions code object objects column columns "
    "interface interfaces type types it its")
STOPWORDS = frozenset(_STOP.split()) | SQL_KINDS | CS_KINDS
"""Words of a question not taken for a name (English function words and kind words) when
written in lower case or first: ``what calls Index`` names the method ``Index``."""


AUXILIARIES = frozenset({"does", "do", "did"})
"""Before the relation word, they ask what the named object does: the way turns round."""


def _turn(way: Way) -> Way:
    return "out" if way == "in" else "in"


class Graph(Protocol):
    def status(self, node_id: str) -> NodeStatus: ...

    def outgoing(self, node_id: str) -> list[Edge]: ...

    def incoming(self, node_id: str) -> list[Edge]: ...


@dataclass(frozen=True)
class Question:
    """What a code question asks: relations (with their way) and the names it gives."""

    relations: tuple[tuple[str, Way], ...]
    names: tuple[Name, ...]


def read_question(text: str) -> Question | None:
    """The relations and names of a question, or None when it has no relation word or names
    nothing that looks like an identifier."""
    found = words(text)
    lowered = [w.lower() for w in found]
    at = next((i for i, w in enumerate(lowered) if w in RELATION_WORDS), None)
    if at is None:
        return None
    turned = bool(AUXILIARIES & set(lowered[:at]))
    relations = tuple(dict.fromkeys(
        (relation, _turn(way) if turned else way)
        for w in lowered for relation, way in RELATION_WORDS.get(w, ())))
    names = tuple(Name(w, CODE_PREFIXES) for i, w in enumerate(found)
                  if w.lower() not in RELATION_WORDS and is_name(w)
                  and not (w.lower() in STOPWORDS and (i == 0 or w.islower())))
    return Question(tuple(relations), tuple(dict.fromkeys(names))) if names else None


def related_first(question: Question, resolve: Callable[[Sequence[Name]], list[str]],
                  graph: Graph) -> tuple[list[str], list[str]]:
    """(related node ids, named object ids) in the order they are pinned (see the module
    docstring); both empty when the names resolve to nothing visible."""
    targets = [t for t in resolve(question.names) if graph.status(t) == "visible"]
    related: set[str] = set()
    linked: list[str] = []
    for target in targets:
        found = _neighbours(target, question.relations, graph)
        related |= found
        if found:
            linked.append(target)
    objects = linked or targets
    return sorted(related - set(objects)), objects


def _neighbours(target: str, relations: Sequence[tuple[str, Way]], graph: Graph) -> set[str]:
    """Visible nodes at the other end of the asked relations from ``target``."""
    found: set[str] = set()
    wanted_in = {r for r, way in relations if way == "in"}
    wanted_out = {r for r, way in relations if way == "out"}
    if wanted_in:
        found |= {e.from_id for e in graph.incoming(target) if e.relation in wanted_in}
    if wanted_out:
        found |= {e.to_id for e in graph.outgoing(target) if e.relation in wanted_out}
    return {n for n in found if graph.status(n) == "visible"}


def code_pins(query: str, resolve: Callable[[Sequence[Name]], list[str]],
              graph: Callable[[], Graph]) -> list[str]:
    """Ids a search pins for ``query`` over code, in order: the nodes a one-identifier query
    names (identifiers.py), else for a relation question the related nodes then the named
    objects (this module); empty for anything else. ``graph`` is called only when needed."""
    name = query_name(query)
    if name is not None:
        return resolve([name])
    question = read_question(query)
    if question is None:
        return []
    related, objects = related_first(question, resolve, graph())
    return related + objects
