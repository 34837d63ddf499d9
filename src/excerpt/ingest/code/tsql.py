"""T-SQL files: one object per CREATE TABLE / VIEW / PROCEDURE / FUNCTION / TRIGGER / INDEX /
SYNONYM, and the relations between objects, read with sqlglot (dialect ``tsql``).

A file is cut into batches on lines that hold only ``GO``.  The statement headers of a batch
are found in sqlglot's token stream (``CREATE [OR ALTER] PROCEDURE [dbo].[x]``, also ``ALTER
PROCEDURE`` / ``VIEW`` / ``FUNCTION`` / ``TRIGGER``, which define the object as much as CREATE
does).  A view, procedure, function or trigger runs to the end of its batch (T-SQL's own rule);
a table, index or synonym to its ``;`` or the next CREATE / ALTER.  A node's text is that slice
of the file as written (with the comment lines right above it), never SQL regenerated from the
tree; its id is ``SQL:<schema>.<name>`` (brackets dropped, schema ``dbo`` when none is given;
an index, whose name is only unique on its table: ``SQL:<schema>.<table>.<index>``).

Relations come from sqlglot's trees (``sqlglot.parse(..., read="tsql")`` of each object's
text): ``ReadsFrom`` (tables, views and table-valued functions read), ``WritesTo`` (INSERT /
UPDATE / DELETE / MERGE / SELECT INTO / TRUNCATE targets), ``Executes`` (EXEC), ``FK``
(REFERENCES, also in ``ALTER TABLE … ADD … FOREIGN KEY``), ``On`` (a trigger's or index's
table), ``SynonymFor``.  Temp tables (``#x``), table variables (``@x``), CTE names, cursors
and the trigger tables ``inserted`` / ``deleted`` are never targets.

A procedure's, function's or trigger's body (after its header's ``AS``) is not handed to sqlglot
whole: T-SQL control flow fools it (``BEGIN TRY EXEC dbo.p;`` parses as a BEGIN aliased TRY,
and the EXEC is lost).  :mod:`excerpt.ingest.code.tsql_flow` cuts the body into its statements with
the control-flow words taken out, each statement is parsed alone, and the dynamic SQL the body
spells out (:mod:`excerpt.ingest.code.tsql_dynamic`) is read as SQL too; dynamic SQL built at run
time is counted in the node's metadata ``unresolved_dynamic_sql`` and listed in
``SqlFile.unresolved``, never guessed.  A table, index or synonym statement ends where the
script's statement ends (``IF … BEGIN CREATE TABLE … END``: before the END), and one created
under ``IF`` / ``WHILE`` is marked in ``SqlFile.guarded``
(:mod:`excerpt.ingest.code.tsql_merge` keeps
one node per object).  SQL Server's own objects (``sys``, ``INFORMATION_SCHEMA``, built-in table
functions, system procedures: :func:`excerpt.ingest.code.tsql_scan.is_builtin`) are no targets.

sqlglot does not model all of T-SQL.  A statement it does not know comes back as an
``exp.Command`` of raw text (procedure bodies without ``;``, TRY/CATCH, cursors, CREATE
TRIGGER); that text is read by :mod:`excerpt.ingest.code.tsql_scan` from its tokens.  Some valid
batches make it raise :class:`ParseError` instead (``INSERT … EXEC``, ``IF … RAISERROR``
without ``;``): when the batch's parentheses and BEGIN / CASE … END blocks balance, it is read
from its tokens the same way.  A batch that raises and does not balance, cannot be tokenized,
or holds a misspelled statement or object type that sqlglot would keep as raw text
(``CREATE TABL``, :mod:`excerpt.ingest.code.tsql_check`) is reported with its line and skipped; the
file's other batches are still read.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokenizer_core import Token, TokenType

from excerpt.ingest.code.text import CodeObject, leading_comment_start, sql_id
from excerpt.ingest.code.tsql_check import misspelling, names_a_permission
from excerpt.ingest.code.tsql_dynamic import dynamic_sql
from excerpt.ingest.code.tsql_flow import Statement, body_start, split
from excerpt.ingest.code.tsql_scan import (
    PSEUDO_TABLES,
    balanced,
    is_builtin,
    name_at,
    scan,
    tokenize,
)

__all__ = ["SqlFile", "read_sql"]

_GO = re.compile(r"^[ \t]*GO(?:[ \t]+\d+)?[ \t]*(?:--[^\n]*)?$", re.IGNORECASE | re.MULTILINE)
_KINDS = {"TABLE": "Table", "VIEW": "View", "PROC": "Procedure", "PROCEDURE": "Procedure",
          "FUNCTION": "Function", "TRIGGER": "Trigger", "INDEX": "Index", "SYNONYM": "Synonym"}
# Objects with a body: it runs to the end of the batch, and ALTER defines them as CREATE does.
_BODIED = ("View", "Procedure", "Function", "Trigger")
_KEEP = {"Table": ("FK",), "Index": ("On",), "Synonym": ("SynonymFor",), "AlterTable": ("FK",)}
_MODIFIERS = ("OR", "ALTER", "UNIQUE", "CLUSTERED", "NONCLUSTERED", "COLUMNSTORE")

Parts = tuple[str, ...]


@dataclass
class SqlFile:
    """What one ``.sql`` file holds: its objects (each with its outgoing edges as
    ``(relation, target id)``), edges of ALTER TABLE statements, and ``(line, reason)`` issues."""

    objects: list[tuple[CodeObject, set[tuple[str, str]]]] = field(default_factory=list)
    loose_edges: set[tuple[str, str, str]] = field(default_factory=set)
    issues: list[tuple[int, str]] = field(default_factory=list)
    guarded: set[int] = field(default_factory=set)  # indexes of objects created under IF / WHILE
    unresolved: list[tuple[int, str]] = field(default_factory=list)  # (line, dynamic SQL)


@dataclass(frozen=True)
class _Header:
    kind: str  # Table, View, …, or AlterTable (edges only, no node)
    name: Parts
    target: Parts | None  # a trigger's or index's table, a synonym's object
    first: int  # token index of CREATE / ALTER
    last: int  # token index of the statement's last token


def read_sql(text: str) -> SqlFile:
    """Objects, edges and issues of one T-SQL file (see the module docstring)."""
    out = SqlFile()
    for start, end in batches(text):
        _read_batch(text, start, end, out)
    return out


def batches(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each non-blank batch: the text between ``GO`` lines."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _GO.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _read_batch(text: str, start: int, end: int, out: SqlFile) -> None:
    sql = text[start:end]
    try:
        tokens = tokenize(sql)
    except TokenError as exc:
        first = start + len(sql) - len(sql.lstrip())
        out.issues.append((_line(text, first), f"T-SQL batch does not tokenize: {exc}"))
        return
    broken = misspelling(tokens)
    if broken is not None:
        index, why = broken
        line = _line(text, start + tokens[index].start)
        out.issues.append((line, f"T-SQL does not parse: {why} (line {line}; batch skipped)"))
        return
    headers = _headers(tokens)
    if not headers:
        _parse(sql, text, start, out)  # nothing to load, but a broken batch is still reported
        return
    statements, _problems = split(tokens)  # the script around the objects: where each ends
    for h in headers:
        where = next((st for st in statements if st.first <= h.first <= st.last), None)
        if h.kind not in _BODIED and where is not None:  # IF … BEGIN CREATE TABLE … END
            semicolon = where.last + 1 < len(tokens) and \
                tokens[where.last + 1].token_type == TokenType.SEMICOLON
            h = _with_last(h, where.last + semicolon)
        lo, hi = tokens[h.first].start, tokens[h.last].end + 1
        body = _body(h, tokens)
        unresolved: list[int] = []
        if body is None:
            trees = _parse(sql[lo:hi], text, start + lo, out)
            if trees is None:
                continue
            parts = _edges(h, trees)
        else:
            reported = len(out.issues)
            found, unresolved = _read_body(sql, tokens, body, h.last + 1, _At(text, start, out))
            if len(out.issues) > reported:
                continue  # a broken statement: the object is skipped, as a broken batch is
            parts = _edges(h, [], found)
        edges = {(rel, sql_id(list(p))[0]) for rel, p in parts}
        if h.kind == "AlterTable":
            src = sql_id(list(h.name))[0]
            out.loose_edges.update((src, rel, to) for rel, to in edges if to != src)
            continue
        floor = start + (tokens[h.first - 1].end + 1 if h.first else 0)
        obj = _object(h, text, start + lo, start + hi, floor, len(unresolved))
        if where is not None and where.guarded:
            out.guarded.add(len(out.objects))
        out.objects.append((obj, edges))
        out.unresolved.extend((_line(text, start + tokens[k].start), f"{obj.title}: dynamic SQL "
                               "built at run time") for k in unresolved)


@dataclass(frozen=True)
class _At:
    """Where a batch sits in its file, and where its issues go."""

    text: str
    start: int
    out: SqlFile


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Statements that name no table, view or procedure (or only a cursor: FETCH, OPEN, CLOSE).
_NO_RELATIONS = _words("""
THROW RAISERROR PRINT BREAK CONTINUE GOTO OPEN CLOSE DEALLOCATE FETCH WAITFOR BEGIN COMMIT
ROLLBACK SAVE USE
""")
_MAX_NESTING = 3  # dynamic SQL inside dynamic SQL: read this deep, no deeper


def _body(h: _Header, tokens: list[Token]) -> int | None:
    """First token of a procedure's, function's or trigger's body (views are one statement
    and parse whole)."""
    if h.kind not in ("Procedure", "Function", "Trigger"):
        return None
    return body_start(tokens, h.first + 1, h.last + 1)  # the name holds no AS


def _read_body(sql: str, tokens: list[Token], lo: int, hi: int, at: _At, nesting: int = 0
               ) -> tuple[set[tuple[str, Parts]], list[int]]:
    """Relations of the statements of ``tokens[lo:hi]`` (see :mod:`excerpt.ingest.code.tsql_flow`),
    each parsed alone, with those of the dynamic SQL they run; and the token indexes of the
    dynamic ``EXEC`` whose text cannot be known."""
    statements, problems = split(tokens, lo, hi)
    found: set[tuple[str, Parts]] = set()
    reported = len(at.out.issues)
    for st in statements:
        found |= _statement_edges(sql, tokens, st, at)
    for k, why in problems[:1] if len(at.out.issues) == reported else []:
        line = _line(at.text, at.start + tokens[k].start)
        at.out.issues.append((line, f"T-SQL does not parse: {why} (line {line}; batch skipped)"))
    dynamic = dynamic_sql(tokens, statements)
    unresolved = list(dynamic.unresolved)
    for k, literal in dynamic.texts:
        inner = _read_literal(literal, nesting)
        if inner is None:
            unresolved.append(k)
        else:
            found |= inner
    return found, unresolved


def _read_literal(literal: str, nesting: int) -> set[tuple[str, Parts]] | None:
    """Relations of the SQL in a string a body executes; None if it is not readable SQL."""
    if nesting >= _MAX_NESTING:
        return None
    try:
        tokens = tokenize(literal)
    except TokenError:
        return None
    scratch = SqlFile()
    found, unresolved = _read_body(literal, tokens, 0, len(tokens), _At(literal, 0, scratch),
                                   nesting + 1)
    return None if scratch.issues or unresolved else found


def _statement_edges(sql: str, tokens: list[Token], st: Statement, at: _At
                     ) -> set[tuple[str, Parts]]:
    kind = st.kind.upper()
    first = st.first + 1 if kind == "RETURN" else st.first  # RETURN (SELECT …): the query
    if kind in _NO_RELATIONS or first > st.last:
        return set()
    lo, hi = tokens[first].start, tokens[st.last].end + 1
    text = sql[lo:hi]
    if st.condition:  # IF EXISTS (SELECT … FROM t): an expression, read as a query's filter
        text = f"SELECT 1 WHERE {text}"
        lo -= len("SELECT 1 WHERE ")
    trees = _parse(text, at.text, at.start + max(lo, 0), at.out)
    found: set[tuple[str, Parts]] = set()
    for tree in trees or []:
        found |= _tree_edges(tree)
    return found


class _MuteFallback(logging.Filter):
    """Drops sqlglot's "Falling back to parsing as a 'Command'" warnings while this thread
    reads T-SQL: that raw text is read from its tokens here, so the warning would only alarm
    the person ingesting.  Other threads and other sqlglot messages are untouched."""

    def __init__(self) -> None:
        super().__init__()
        self.active = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        muted = getattr(self.active, "on", False)
        return not (muted and "Falling back to parsing as a 'Command'" in record.getMessage())


_MUTE = _MuteFallback()
logging.getLogger("sqlglot").addFilter(_MUTE)


@contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    _MUTE.active.on = True
    try:
        yield
    finally:
        _MUTE.active.on = False


def _parse(sql: str, text: str, offset: int, out: SqlFile) -> list[exp.Expr] | None:
    """sqlglot's trees of ``sql`` (found at ``offset`` in the file), or None after reporting
    why it does not parse.

    sqlglot does not know all of T-SQL (``INSERT … EXEC``, ``IF … RAISERROR`` without ``;``)
    and raises on some valid batches; when the tokens still balance (parentheses, BEGIN /
    CASE … END) the text is handed on as one raw ``exp.Command``, read from its tokens like
    any statement sqlglot keeps as text.  Only unbalanced (broken) text is reported."""
    try:
        with _quiet_sqlglot():
            trees = sqlglot.parse(sql, read="tsql")
    except ParseError as exc:
        if balanced(sql):
            return [exp.Command(this="", expression=sql)]
        first = exc.errors[0] if exc.errors else {}
        line = _line(text, offset) + max(int(first.get("line") or 1), 1) - 1
        why = str(first.get("description") or exc).splitlines()[0]
        out.issues.append((line, f"T-SQL does not parse: {why} (line {line}; batch skipped)"))
        return None
    except TokenError as exc:
        out.issues.append((_line(text, offset), f"T-SQL batch does not tokenize: {exc}"))
        return None
    return [t for t in trees if t is not None]


def _object(h: _Header, text: str, start: int, end: int, floor: int, unresolved: int = 0
            ) -> CodeObject:
    if h.kind == "Index" and h.target is not None:
        oid, schema, table = sql_id(list(h.target))
        name = h.name[-1]
        oid, title = f"{oid}.{name}", f"{schema}.{table}.{name}"
    else:
        oid, schema, name = sql_id(list(h.name))
        title = f"{schema}.{name}"
    start = leading_comment_start(text, start, floor)
    meta = {"schema": schema, "name": name, "type": h.kind}
    if unresolved:
        meta["unresolved_dynamic_sql"] = str(unresolved)
    return CodeObject(id=oid, kind=h.kind, title=title, start=start, end=end, metadata=meta)


# --- statement headers -------------------------------------------------------------------------


def _headers(tokens: list[Token]) -> list[_Header]:
    """The CREATE / ALTER statements of a batch that define an object (or add foreign keys),
    in order; the last one that runs to the end of the batch ends the search."""
    found: list[_Header] = []
    starts = _statement_starts(tokens)
    for k, first in enumerate(starts):
        nxt = starts[k + 1] if k + 1 < len(starts) else len(tokens)
        head = _header_at(tokens, first, nxt)
        if head is not None:
            found.append(head)
            if head.kind in _BODIED:
                found[-1] = _with_last(head, len(tokens) - 1)
                break
    return found


def _statement_starts(tokens: list[Token]) -> list[int]:
    """Indexes of CREATE / ALTER tokens outside parentheses (``OR ALTER`` and permission names
    such as ``DENY CREATE TABLE TO u`` excluded)."""
    depth, out = 0, []
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth = max(depth - 1, 0)
        elif (depth == 0 and tok.token_type in (TokenType.CREATE, TokenType.ALTER)
              and not (i and tokens[i - 1].token_type == TokenType.OR)
              and not names_a_permission(tokens, i)):
            out.append(i)
    return out


def _with_last(h: _Header, last: int) -> _Header:
    return _Header(h.kind, h.name, h.target, h.first, last)


def _header_at(tokens: list[Token], first: int, nxt: int) -> _Header | None:
    kind, i = _kind_at(tokens, first)
    if kind is None:
        return None
    named = name_at(tokens, i + 1)
    if named is None:
        return None
    name, j, _alias = named
    if name[-1].startswith(("#", "@")):
        return None  # CREATE TABLE #work: a temp table is no object of the database
    target = _target(tokens, kind, j)
    last = _statement_end(tokens, first, nxt)
    return _Header(kind, name, target, first, last)


def _kind_at(tokens: list[Token], first: int) -> tuple[str | None, int]:
    """The kind of object a CREATE / ALTER at ``first`` is about, and its keyword's index."""
    is_alter = tokens[first].token_type == TokenType.ALTER
    for i in range(first + 1, len(tokens)):
        words = tokens[i].text.upper().split() or [""]
        kind = _KINDS.get(words[-1])
        if kind is not None and all(w in _MODIFIERS for w in words[:-1]):
            if is_alter and kind == "Table":
                return "AlterTable", i
            return (kind if not is_alter or kind in _BODIED else None), i
        if not all(w in _MODIFIERS for w in words):
            break
    return None, first


def _target(tokens: list[Token], kind: str, j: int) -> Parts | None:
    """The table after ``ON`` (trigger, index) or the object after ``FOR`` (synonym)."""
    keyword = {"Trigger": TokenType.ON, "Index": TokenType.ON, "Synonym": TokenType.FOR}.get(kind)
    if keyword is None or j >= len(tokens) or tokens[j].token_type != keyword:
        return None
    if j + 1 < len(tokens) and tokens[j + 1].text.upper() in ("DATABASE", "ALL"):
        return None  # a DDL trigger: on the database or server, not on a table
    named = name_at(tokens, j + 1)
    return named[0] if named else None


def _statement_end(tokens: list[Token], first: int, nxt: int) -> int:
    """Last token of a table / index / synonym statement: its ``;`` at depth 0, else the token
    before the next CREATE / ALTER."""
    depth = 0
    for i in range(first, nxt):
        tt = tokens[i].token_type
        depth += tt == TokenType.L_PAREN
        depth -= tt == TokenType.R_PAREN
        if depth <= 0 and tt == TokenType.SEMICOLON:
            return i
    return nxt - 1


# --- relations ---------------------------------------------------------------------------------


def _edges(h: _Header, trees: list[exp.Expr], found: set[tuple[str, Parts]] | None = None
           ) -> set[tuple[str, Parts]]:
    """``(relation, target name parts)`` of one object (from its trees, or ``found`` already),
    self references and built-ins dropped."""
    found = set(found or ())
    for tree in trees:
        found |= _tree_edges(tree)
    if h.kind in ("Trigger", "Index") and h.target is not None:
        found.add(("On", h.target))
    if h.kind == "Synonym" and h.target is not None:
        found.add(("SynonymFor", h.target))
    keep = _KEEP.get(h.kind)
    own = sql_id(list(h.name))[0].lower()
    return {
        (rel, parts) for rel, parts in found
        if (keep is None or rel in keep) and sql_id(list(parts))[0].lower() != own
        and not is_builtin(rel, parts)
    }


def _tree_edges(tree: exp.Expr) -> set[tuple[str, Parts]]:
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    overrides = _alias_targets(tree)
    found: set[tuple[str, Parts]] = set()
    for node in tree.walk():
        if isinstance(node, exp.Command):
            found |= scan(_command_text(node))
        elif isinstance(node, exp.Table):
            role = overrides.get(id(node), _role(node))
            parts = _parts(node, ctes)
            if role and parts:
                found.add((role, parts))
    return found


def _command_text(node: exp.Command) -> str:
    rest = node.args.get("expression")
    if isinstance(rest, exp.Literal):
        rest = rest.this
    elif isinstance(rest, exp.Expr):
        rest = rest.sql(dialect="tsql")
    return f"{node.this} {rest or ''}"


def _role(t: exp.Table) -> str | None:
    """What a table reference does in the statement around it (None: not a relation)."""
    holder, key = t.parent, t.arg_key
    if isinstance(holder, exp.Schema):
        key = holder.arg_key
        holder = holder.parent
    if isinstance(holder, exp.Reference):
        return "FK"
    if isinstance(holder, (exp.Create, exp.StoredProcedure, exp.UserDefinedFunction, exp.Index)):
        return None  # the object being created, or the table an index is on (see ``On``)
    if isinstance(holder, exp.ExecuteSql):
        return None  # dynamic SQL (sp_executesql)
    if isinstance(holder, exp.Execute):
        return "Executes" if key == "this" else None
    if t.find_ancestor(exp.Execute) is not None:
        return None  # EXEC('…'): a string, not a table
    if isinstance(holder, (exp.Insert, exp.Update, exp.Merge)) and key == "this":
        return "WritesTo"
    if isinstance(holder, exp.Delete) and key in ("this", "tables"):
        return "WritesTo"
    if isinstance(holder, (exp.Into, exp.TruncateTable)):
        return "WritesTo"
    return "ReadsFrom"


def _alias_targets(tree: exp.Expr) -> dict[int, str | None]:
    """``UPDATE o … FROM dbo.Orders AS o``: the write goes to the aliased table, and the
    alias itself is no table.  Returns role overrides by node id."""
    out: dict[int, str | None] = {}
    for stmt in tree.find_all(exp.Update, exp.Delete):
        aliases = {t.alias.lower(): t for t in stmt.find_all(exp.Table) if t.alias}
        targets = [stmt.this, *(stmt.args.get("tables") or [])]
        for target in targets:
            if isinstance(target, exp.Table) and not target.db and not target.alias:
                real = aliases.get(target.name.lower())
                if real is not None and real is not target:
                    out[id(target)] = None
                    out[id(real)] = "WritesTo"
    return out


def _parts(t: exp.Table, ctes: set[str]) -> Parts | None:
    """A table's name parts, or None for temp tables, table variables, CTEs, built-in table
    functions and the trigger tables."""
    ident = t.this
    if isinstance(ident, exp.Anonymous):  # FROM dbo.fn_Rates(@x): a table-valued function
        name = ident.name
    elif isinstance(ident, exp.Identifier):
        if ident.args.get("temporary") or ident.args.get("global_"):
            return None
        name = ident.name
    else:
        return None  # @table variable, OPENJSON(…) and other built-ins
    if not name or name.startswith(("#", "@")):
        return None
    if not t.db and (name.lower() in ctes or name.lower() in PSEUDO_TABLES):
        return None
    return (t.catalog, t.db, name)
