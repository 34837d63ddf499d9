"""Evidence lines for code relation questions: "Which procedure writes the Venues table?" is
answered by the line that does the writing (``DELETE [dbo].[Venues] WHERE …`` in
``sp_DeleteVenue``), not by the table's own ``CREATE TABLE [dbo].[Venues]``, which shares more
words with the question.

Search already puts the related nodes first (:mod:`excerpt.retrieve.relations`: the writers of
the named table, the callers of the named method). Here a line of a code node is **evidence**
(1.0, else 0.0) when it names one of the question's objects (the last part of a dotted name,
brackets and case ignored) and carries the statement of one of the question's relations:
``INSERT``/``UPDATE``/``DELETE``/``MERGE`` or an EF ``Add``/``Update``/``Remove`` for writes;
``SELECT``/``FROM``/``JOIN`` or a LINQ read for reads; ``EXEC``/``sp_executesql``/
``ExecuteSql…`` for executions; a call ``Name(`` for calls; a base list ``: IName`` for
implementations. Relations without a statement of their own (``FK``, ``MapsTo``, ``Registers``)
take any line that names the object. English relation words only, as in
:mod:`excerpt.retrieve.relations`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from excerpt.retrieve.relations import read_question

_SQL = re.IGNORECASE
STATEMENTS: dict[str, re.Pattern[str]] = {
    "WritesTo": re.compile(r"\b(?:INSERT|UPDATE|DELETE|MERGE|TRUNCATE)\b|"
                           r"\.(?:Add|AddRange|Update|UpdateRange|Remove|RemoveRange|Attach)\(",
                           _SQL),
    "ReadsFrom": re.compile(r"\b(?:SELECT|FROM|JOIN)\b|\.(?:Where|Find|FindAsync|First\w*|"
                            r"Single\w*|ToList\w*|Any\w*|Count\w*|Include)\(", _SQL),
    "Executes": re.compile(r"\bEXEC(?:UTE)?\b|sp_executesql|ExecuteSql\w*|StoredProcedure",
                           _SQL),
}


def code_evidence(question: str) -> Callable[[str], float] | None:
    """A scorer of code lines for ``question`` (module docstring), or None when it is not a
    relation question naming an object."""
    asked = read_question(question)
    if asked is None:
        return None
    names = [n.text.replace("[", "").replace("]", "").rsplit(".", 1)[-1].lower()
             for n in asked.names]
    names = [n for n in names if n]
    relations = {relation for relation, _ in asked.relations}
    if not names:
        return None

    def statement(relation: str, line: str, name: str) -> bool:
        if relation in STATEMENTS:
            return STATEMENTS[relation].search(line) is not None
        if relation == "Calls":
            return re.search(rf"\b{re.escape(name)}\s*(?:<[^>]*>)?\(", line, _SQL) is not None
        if relation in ("Implements", "ImplementedBy"):
            return re.search(rf":\s*(?:[\w.<>, ]*,\s*)?{re.escape(name)}\b", line, _SQL) is not None
        return True

    def score(line: str) -> float:
        low = line.lower()
        return 1.0 if any(name in low and statement(rel, line, name)
                          for name in names for rel in relations) else 0.0

    return score
