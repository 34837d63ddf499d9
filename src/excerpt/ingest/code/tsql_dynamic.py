"""Dynamic SQL in a T-SQL body: the SQL text an ``EXEC`` runs, when the body itself spells it out.

A procedure that runs ``EXEC sp_executesql N'UPDATE dbo.T …'`` writes ``dbo.T`` as surely as one
that says ``UPDATE dbo.T``; the string is SQL and is read as SQL (:mod:`excerpt.ingest.code.tsql`).
This module finds, in a body's statements (:mod:`excerpt.ingest.code.tsql_flow`), what each dynamic
``EXEC`` runs:

* ``EXEC sp_executesql N'…'`` (also ``sys.sp_executesql``, ``@stmt = N'…'``) and ``EXEC ('…')``,
  ``EXEC (N'…' + N'…')``: the literal text;
* ``EXEC (@sql)``, ``EXEC sp_executesql @sql`` and concatenations of such variables and literals,
  when every assignment of each variable in the body (``DECLARE @sql … = …``, ``SET @sql = …``,
  ``SELECT @sql = …`` without ``FROM``) is a literal or a concatenation of literals: each value.

Anything else is *unresolved* and reported as such, never guessed: a variable assigned from a
query, from another variable or from itself (``SET @sql = @sql + …``), a parameter (assigned
outside the body), a compound assignment (``+=``), ``EXEC @procedure_name``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot.tokenizer_core import Token, TokenType

from excerpt.ingest.code.tsql_flow import Statement

__all__ = ["Dynamic", "dynamic_sql"]

_STRINGS = (TokenType.STRING, TokenType.NATIONAL_STRING)
_EXECUTESQL = "sp_executesql"
# None: the variable has an assignment that is not a literal, so its value is unknowable.
Values = dict[str, list[str] | None]


@dataclass
class Dynamic:
    """What the dynamic ``EXEC`` statements of a body run: ``(token index of the EXEC, SQL
    text)``, and the token indexes of those whose text cannot be known from the body."""

    texts: list[tuple[int, str]] = field(default_factory=list)
    unresolved: list[int] = field(default_factory=list)


def dynamic_sql(tokens: list[Token], statements: Sequence[Statement]) -> Dynamic:
    """The dynamic SQL of a body (see the module docstring)."""
    values = _assignments(tokens, statements)
    out = Dynamic()
    for s in statements:
        for i in range(s.first, s.last + 1):
            if tokens[i].token_type == TokenType.EXECUTE and _depth_zero(tokens, s.first, i):
                _read_exec(tokens, i, s.last + 1, values, out)
    return out


def _depth_zero(tokens: list[Token], lo: int, i: int) -> bool:
    depth = 0
    for tok in tokens[lo:i]:
        depth += (tok.token_type == TokenType.L_PAREN) - (tok.token_type == TokenType.R_PAREN)
    return depth == 0


def _read_exec(tokens: list[Token], i: int, hi: int, values: Values, out: Dynamic) -> None:
    j = i + 1
    if j >= hi:
        return
    tok = tokens[j]
    if tok.token_type == TokenType.L_PAREN:  # EXEC ('…' + @sql)
        end = _close(tokens, j, hi)
        _record(i, _evaluate(tokens, j + 1, end, values), out)
        return
    if tok.token_type == TokenType.PARAMETER:
        if not (j + 2 < hi and tokens[j + 2].token_type == TokenType.EQ):
            out.unresolved.append(i)  # EXEC @procedure_name: a name known only at run time
        return
    k = _after_executesql(tokens, j, hi)
    if k is None:
        return  # EXEC dbo.proc: a plain call, read elsewhere
    if (k + 3 < hi and tokens[k].token_type == TokenType.PARAMETER
            and tokens[k + 1].text.lower() == "stmt" and tokens[k + 2].token_type == TokenType.EQ):
        k += 3
    end = _arg_end(tokens, k, hi)
    _record(i, _evaluate(tokens, k, end, values), out)


def _record(i: int, texts: list[str] | None, out: Dynamic) -> None:
    if texts is None:
        out.unresolved.append(i)
    else:
        out.texts.extend((i, t) for t in texts if t.strip())


def _after_executesql(tokens: list[Token], j: int, hi: int) -> int | None:
    """Index after ``[master.][sys.]sp_executesql`` at ``j``, or None if the name is another."""
    k = j
    while k + 1 < hi and tokens[k + 1].token_type == TokenType.DOT:
        k += 2
        while k < hi and tokens[k].token_type == TokenType.DOT:  # master..sp_executesql
            k += 1
    if k < hi and tokens[k].text.lower() == _EXECUTESQL:
        return k + 1
    return None


def _close(tokens: list[Token], j: int, hi: int) -> int:
    depth = 0
    for k in range(j, hi):
        depth += (tokens[k].token_type == TokenType.L_PAREN) - (
            tokens[k].token_type == TokenType.R_PAREN)
        if depth == 0:
            return k
    return hi


def _arg_end(tokens: list[Token], k: int, hi: int) -> int:
    """End (exclusive) of the argument at ``k``: the next comma outside parentheses."""
    depth = 0
    for m in range(k, hi):
        tt = tokens[m].token_type
        depth += (tt == TokenType.L_PAREN) - (tt == TokenType.R_PAREN)
        if depth == 0 and tt == TokenType.COMMA:
            return m
    return hi


def _evaluate(tokens: list[Token], lo: int, hi: int, values: Values) -> list[str] | None:
    """The text(s) of ``tokens[lo:hi]`` if it is literals and known variables joined by ``+``
    (a lone variable may have several values); None if it cannot be known."""
    terms = [t for t in tokens[lo:hi] if t.token_type not in (TokenType.L_PAREN, TokenType.R_PAREN)]
    if not terms:
        return None
    parts: list[list[str]] = []
    k = 0
    while k < len(terms):
        tok = terms[k]
        if tok.token_type in _STRINGS:
            parts.append([tok.text])
            k += 1
        elif tok.token_type == TokenType.PARAMETER and k + 1 < len(terms):
            known = values.get(terms[k + 1].text.lower())
            if not known:
                return None
            parts.append(known)
            k += 2
        else:
            return None
        if k < len(terms):
            if terms[k].token_type != TokenType.PLUS:
                return None
            k += 1
    if len(parts) == 1:
        return list(parts[0])
    if any(len(p) != 1 for p in parts):
        return None  # several values joined with others: too many texts to be sure of
    return ["".join(p[0] for p in parts)]


def _literal(tokens: list[Token], lo: int, hi: int) -> str | None:
    """The value of literals joined by ``+`` in ``tokens[lo:hi]``, or None."""
    texts = _evaluate(tokens, lo, hi, {})
    return texts[0] if texts else None


def _assignments(tokens: list[Token], statements: Sequence[Statement]) -> Values:
    """Every variable the body assigns, with its literal values (None: not all literal)."""
    values: Values = {}
    for s in statements:
        kind = s.kind.upper()
        if kind in ("FETCH", "EXEC", "EXECUTE", "UPDATE"):
            _run_time(tokens, s, values)  # FETCH … INTO @v, EXEC @v = p, UPDATE … SET @v = c
            continue
        if kind not in ("DECLARE", "SET", "SELECT"):
            continue
        has_from = any(tokens[k].token_type == TokenType.FROM for k in range(s.first, s.last + 1)
                       if _depth_zero(tokens, s.first, k))
        k = s.first + 1
        while k < s.last:
            if (tokens[k].token_type == TokenType.PARAMETER
                    and tokens[k - 1].token_type in (TokenType.DECLARE, TokenType.SET,
                                                     TokenType.SELECT, TokenType.COMMA)):
                k = _assignment(tokens, k, s.last + 1, values, has_from)
            else:
                k += 1
    return values


def _assignment(tokens: list[Token], k: int, hi: int, values: Values, has_from: bool) -> int:
    """Read ``@v [type] = expr`` at ``k``; returns the index after it."""
    name = tokens[k + 1].text.lower()
    end = _arg_end(tokens, k, hi)
    eq = next((m for m in range(k + 2, end) if tokens[m].token_type == TokenType.EQ), None)
    if eq is None:
        return end + 1  # DECLARE @v type: no value yet
    compound = tokens[eq - 1].token_type in (TokenType.PLUS, TokenType.DASH, TokenType.STAR,
                                             TokenType.SLASH, TokenType.PIPE, TokenType.AMP)
    value = None if has_from or compound else _literal(tokens, eq + 1, end)
    known = values.setdefault(name, [])
    if value is None:
        values[name] = None
    elif known is not None:
        known.append(value)
    return end + 1


def _run_time(tokens: list[Token], s: Statement, values: Values) -> None:
    """Variables a FETCH, EXEC or UPDATE statement assigns: their values are the data's."""
    after_into = False
    for k in range(s.first, s.last):
        tt = tokens[k].token_type
        after_into = after_into or tt == TokenType.INTO
        if tt != TokenType.PARAMETER:
            continue
        assigned = tokens[k + 2].token_type == TokenType.EQ if k + 2 <= s.last else False
        setters = (TokenType.SET, TokenType.COMMA) if s.kind.upper() == "UPDATE" \
            else (TokenType.EXECUTE,)
        if after_into or (assigned and tokens[k - 1].token_type in setters):
            values[tokens[k + 1].text.lower()] = None
