"""SQL that C# code sends to the database: where it is sent (command contexts), what text it
is, and what that text reads, writes and executes.

A string is SQL only where an API sends it to the server, a *command context*:

* Entity Framework (Core and EF6): the SQL argument of ``FromSqlRaw``, ``FromSqlInterpolated``,
  ``FromSql``, ``ExecuteSqlRaw``, ``ExecuteSqlInterpolated``, ``ExecuteSql``,
  ``ExecuteSqlCommand`` (each also ``…Async``), ``SqlQuery`` and ``SqlQueryRaw``: the first
  argument, or ``sql:``; EF6's leading ``TransactionalBehavior.…`` argument is skipped.
* ADO.NET: the first argument of ``new …Command(…)`` (``SqlCommand``, ``NpgsqlCommand`` …) and
  of ``new …DataAdapter(…)``, and what is assigned to ``CommandText`` (``cmd.CommandText = …``
  or in an object initializer).
* Dapper: the first argument of ``new CommandDefinition(…)`` and of a ``Query…`` /
  ``Execute…`` method called on something (``conn.QueryFirstOrDefaultAsync<T>(sql, …)``).

The argument is read as the text it makes (:class:`Texts`): literals (regular, verbatim, raw),
interpolated strings (each hole becomes a parameter ``@p``), ``+``, ``string.Format`` /
``string.Concat``, ``b.ToString()`` of a local ``StringBuilder`` (its ``Append…`` arguments in
order), a conditional ``c ? x : y`` (both), and names: a local assigned in the same member
(every assignment is one possible text, ``+=`` appends) or a constant / initialised field of an
enclosing type.  A parameter or a method's result is unknown: it becomes ``@p`` inside a
concatenation, and a text with no known part adds nothing.

The text is then read as SQL Server would run it (:func:`sql_relations`): a bare procedure name,
with or without arguments (``"dbo.proc_X"``, ``"proc_X @a, @b"``), executes it, as the first
statement of a batch does in T-SQL, and so does any name in a ``CommandType.StoredProcedure``
context; any other text is read by the T-SQL reader (:func:`excerpt.ingest.code.tsql.read_sql`, as
the body of a procedure, so control flow and dynamic SQL are read as in ``.sql`` files) for
``ReadsFrom``, ``WritesTo`` and ``Executes``.  System catalog objects (``sys.*``,
``INFORMATION_SCHEMA.*``) are left out, as they are no table of the application.

A ``Query…`` / ``Execute…`` call may not be Dapper (a command bus has ``Execute`` too): a bare
name there executes a procedure only with ``commandType: CommandType.StoredProcedure`` or when
it is a parsed procedure's name.  A literal outside every command context executes nothing: if
it names a procedure (``EXEC dbo.x`` in it, or equal to a parsed procedure's name), its
declaration only ``Mentions`` the procedure (:func:`mentioned_procedures`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import TokenType
from tree_sitter import Node

from excerpt.ingest.code.csharp import node_text
from excerpt.ingest.code.csharp_index import head_name
from excerpt.ingest.code.text import split_sql_name, sql_id
from excerpt.ingest.code.tsql import read_sql
from excerpt.ingest.code.tsql_scan import tokenize

__all__ = ["Command", "Texts", "command_at", "literal_value", "mentioned_procedures",
           "sql_relations"]

STRINGS = ("string_literal", "verbatim_string_literal", "raw_string_literal",
           "interpolated_string_expression")
_EF_SQL = re.compile(r"^(?:FromSql(?:Raw|Interpolated)?|ExecuteSql(?:Raw|Interpolated|Command)?"
                     r"(?:Async)?|SqlQuery(?:Raw)?)$")
_DAPPER = re.compile(r"^(?:Query|Execute)(?:First|Single|Multiple|Scalar|Reader|Unbuffered)?"
                     r"(?:OrDefault)?(?:Async)?$")
_PART = r"(?:\[[^\]]+\]|\w+)"
_EXEC = re.compile(rf"\b(EXEC(?:UTE)?)\s+(?:@\w+\s*=\s*)?({_PART}(?:\.{_PART}){{0,3}})",
                   re.IGNORECASE)
_PROC_NAME = re.compile(rf"^(?:{_PART}\.){{0,2}}{_PART}$")
_HOLE = re.compile(r"\{\d+(?:,[^}]*)?(?::[^}]*)?\}")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "", "\\": "\\", '"': '"', "'": "'"}
_SYSTEM_SCHEMAS = {"sys", "information_schema"}
# Words the tokenizer reads as names that still begin a statement, not a procedure call.
_STATEMENT_WORDS = {"if", "while", "raiserror", "throw", "waitfor", "return", "break",
                    "continue", "goto", "open", "close", "fetch", "deallocate", "checkpoint"}
_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER)
_ARG_TOKENS = (TokenType.PARAMETER, TokenType.NUMBER, TokenType.STRING, TokenType.NATIONAL_STRING,
               TokenType.NULL, TokenType.SEMICOLON, TokenType.DEFAULT)
_MAX_TEXTS = 8  # alternatives kept per expression (branches multiply them)
_UNKNOWN = "@p"
_WRAPPER = "CREATE PROCEDURE [excerpt].[csharp_command] AS\n"
_WRAPPER_ID = "sql:excerpt.csharp_command"


@dataclass(frozen=True)
class Command:
    """A command context: ``arg`` is the expression holding the SQL text; ``procedure``: the
    call says ``CommandType.StoredProcedure``; ``certain``: a SQL API for sure (EF, ADO.NET),
    not a ``Query…`` / ``Execute…`` method that may be something else than Dapper."""

    arg: Node
    procedure: bool
    certain: bool


def command_at(n: Node) -> Command | None:
    """The command context ``n`` is (an invocation, ``new``, or ``CommandText =``), if any."""
    if n.type == "assignment_expression":
        left = node_text(n.child_by_field_name("left"))
        right = n.child_by_field_name("right")
        if right is not None and (left == "CommandText" or left.endswith(".CommandText")):
            return Command(right, False, True)
        return None
    if n.type == "object_creation_expression":
        kind = head_name(n.child_by_field_name("type")).rsplit(".", 1)[-1]
        if kind.endswith(("Command", "DataAdapter")) or kind == "CommandDefinition":
            arg = _sql_argument(n)
            return Command(arg, _says_procedure(n), True) if arg is not None else None
        return None
    if n.type != "invocation_expression":
        return None
    fn = n.child_by_field_name("function")
    name = _method_name(fn)
    if _EF_SQL.match(name):
        arg = _sql_argument(n)
        return Command(arg, False, True) if arg is not None else None
    if _DAPPER.match(name) and fn is not None and fn.type == "member_access_expression":
        arg = _sql_argument(n)
        return Command(arg, _says_procedure(n), False) if arg is not None else None
    return None


def _method_name(fn: Node | None) -> str:
    if fn is not None and fn.type == "member_access_expression":
        fn = fn.child_by_field_name("name")
    if fn is not None and fn.type == "generic_name" and fn.named_children:
        fn = fn.named_children[0]
    return node_text(fn) if fn is not None and fn.type == "identifier" else ""


def _arguments(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type == "argument"] if args is not None else []


def _value(arg: Node) -> Node | None:
    name = arg.child_by_field_name("name")
    values = [c for c in arg.named_children if c != name]
    return values[-1] if values else None


def _sql_argument(call: Node) -> Node | None:
    """``sql:`` if named, else the first positional argument (EF6's ``TransactionalBehavior``
    first argument skipped)."""
    args = _arguments(call)
    for a in args:
        if node_text(a.child_by_field_name("name")).lower() in ("sql", "commandtext"):
            return _value(a)
    positional = [_value(a) for a in args if a.child_by_field_name("name") is None]
    if positional and node_text(positional[0]).startswith("TransactionalBehavior."):
        positional = positional[1:]
    return positional[0] if positional else None


def _says_procedure(call: Node) -> bool:
    return any(node_text(_value(a)).endswith("CommandType.StoredProcedure")
               for a in _arguments(call))


# -- the text an expression makes ------------------------------------------------------------------


class Texts:
    """The texts C# expressions of one declaration make (see the module docstring); ``used``:
    the ids of the literal nodes read so far."""

    def __init__(self, nodes: list[Node], field: Callable[[Node], Node | None]) -> None:
        self.field = field  # the initialiser of a field a name or member access stands for
        self.assigned: dict[str, list[tuple[str, Node]]] = {}
        self.appended: dict[str, list[Node]] = {}
        self.used: set[int] = set()
        for n in sorted(nodes, key=lambda x: x.start_byte):
            self._note(n)

    def _note(self, n: Node) -> None:
        if n.type == "variable_declarator":
            name = n.child_by_field_name("name")
            value = [c for c in n.named_children if c != name]
            if value:
                self.assigned.setdefault(node_text(name), []).append(("=", value[-1]))
        elif n.type == "assignment_expression":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            op = node_text(n.child_by_field_name("operator"))
            if left is not None and left.type == "identifier" and right is not None:
                self.assigned.setdefault(node_text(left), []).append((op, right))
        elif n.type == "invocation_expression":
            fn = n.child_by_field_name("function")
            if fn is not None and fn.type == "member_access_expression":
                target = fn.child_by_field_name("expression")
                args = _arguments(n)
                if (_method_name(fn).startswith("Append") and target is not None
                        and target.type == "identifier" and args):
                    self.appended.setdefault(node_text(target), []).append(n)

    def of(self, n: Node | None, seen: frozenset[str] = frozenset()) -> list[str]:
        """Every text ``n`` may make ([]: unknown)."""
        if n is None:
            return []
        kind = n.type
        if kind in STRINGS:
            self.used.add(n.id)
            return [literal_value(n)]
        if kind == "parenthesized_expression" and n.named_children:
            return self.of(n.named_children[0], seen)
        if kind == "binary_expression" and node_text(n.child_by_field_name("operator")) == "+":
            return _concat([self._part(n.child_by_field_name("left"), seen),
                            self._part(n.child_by_field_name("right"), seen)])
        if kind == "conditional_expression":
            found = self.of(n.child_by_field_name("consequence"), seen)
            return _capped(found + self.of(n.child_by_field_name("alternative"), seen))
        if kind == "identifier":
            return self._name(n, seen)
        if kind == "member_access_expression":
            return self.of(self.field(n), seen)
        if kind == "invocation_expression":
            return self._call(n, seen)
        return []

    def _part(self, n: Node | None, seen: frozenset[str]) -> list[str]:
        return self.of(n, seen) or [_UNKNOWN]

    def _name(self, n: Node, seen: frozenset[str]) -> list[str]:
        name = node_text(n)
        if name in seen:
            return []
        steps = self.assigned.get(name)
        if not steps:
            return self.of(self.field(n), seen | {name})
        found: list[str] = []
        current: list[str] = []
        for op, value in steps:
            texts = self.of(value, seen | {name})
            if op == "+=":
                current = _concat([current or [_UNKNOWN], texts or [_UNKNOWN]])
            elif op == "=":
                current = texts
            else:
                continue
            found.extend(current)
        return _capped(list(dict.fromkeys(t for t in found if _known(t))))

    def _call(self, n: Node, seen: frozenset[str]) -> list[str]:
        fn = n.child_by_field_name("function")
        name = _method_name(fn)
        owner = fn.child_by_field_name("expression") if fn is not None and \
            fn.type == "member_access_expression" else None
        args = [_value(a) for a in _arguments(n)]
        if owner is not None and node_text(owner) in ("string", "String"):
            if name == "Format" and args:
                return [_HOLE.sub(_UNKNOWN, t) for t in self.of(args[0], seen)]
            if name == "Concat":
                return _concat([self._part(a, seen) for a in args])
        if name == "ToString" and owner is not None and owner.type == "identifier":
            calls = self.appended.get(node_text(owner), [])
            parts = [self._appended(c, seen) for c in calls]
            return _concat(parts) if parts else []
        return []

    def _appended(self, call: Node, seen: frozenset[str]) -> list[str]:
        args = [_value(a) for a in _arguments(call)]
        texts = self._part(args[0], seen)
        name = _method_name(call.child_by_field_name("function"))
        if name == "AppendFormat":
            texts = [_HOLE.sub(_UNKNOWN, t) for t in texts]
        return [t + "\n" for t in texts] if name == "AppendLine" else texts


def _concat(parts: list[list[str]]) -> list[str]:
    out = [""]
    for options in parts:
        out = _capped([a + b for a in out for b in options])
    return out if any(_known(t) for t in out) else []


def _known(text: str) -> bool:
    return bool(text.replace(_UNKNOWN, "").strip())


def _capped(texts: list[str]) -> list[str]:
    return texts[:_MAX_TEXTS]


def literal_value(n: Node) -> str:
    """The text a C# string literal stands for (escapes read, interpolation holes as ``@p``)."""
    if n.type == "verbatim_string_literal":
        return node_text(n)[2:-1].replace('""', '"')
    verbatim = n.type == "interpolated_string_expression" and "@" in node_text(n)[:3]
    out: list[str] = []
    for c in n.children:
        if c.type in ("string_literal_content", "string_content", "raw_string_content"):
            text = node_text(c)
            if n.type == "interpolated_string_expression":
                text = text.replace("{{", "{").replace("}}", "}")
                text = text.replace('""', '"') if verbatim else text
            out.append(text)
        elif c.type == "escape_sequence":
            seq = node_text(c)
            out.append(_ESCAPES.get(seq[1:], seq[1:]) if len(seq) == 2 else "")
        elif c.type == "interpolation":
            out.append(_UNKNOWN)
    return "".join(out)


# -- what the text does --------------------------------------------------------------------------


def sql_relations(text: str, procedure: bool, procedures: set[str],
                  certain: bool = True) -> set[tuple[str, str]]:
    """``(relation, SQL id)`` of what running ``text`` does; ``procedure``: the text is a
    procedure's name (``CommandType.StoredProcedure``); ``procedures``: lower-cased ids of the
    parsed procedures; ``certain``: see :class:`Command`."""
    bare = _bare_name(text)
    if bare is not None:
        pid = sql_id(split_sql_name(bare))[0]
        if certain or procedure or pid.lower() in procedures:
            return {("Executes", pid)} if _user_object(pid) else set()
        return set()
    if procedure and _PROC_NAME.match(text.strip()):
        return {("Executes", sql_id(split_sql_name(text.strip()))[0])}
    found: set[tuple[str, str]] = set()
    for _, edges in read_sql(_WRAPPER + text).objects:
        found |= {(rel, to) for rel, to in edges
                  if rel in ("ReadsFrom", "WritesTo", "Executes") and _user_object(to)}
    return found


def _bare_name(text: str) -> str | None:
    """``"dbo.proc_X @a, 1"`` -> ``dbo.proc_X``: a batch that is one procedure call without
    ``EXEC`` (T-SQL runs a name first in a batch as a procedure), else None."""
    try:
        tokens = tokenize(text)
    except TokenError:
        return None
    if not tokens or tokens[0].token_type not in _NAME_TOKENS:
        return None
    if tokens[0].text.lower() in _STATEMENT_WORDS:
        return None
    parts = [tokens[0].text]
    i = 1
    while i + 1 < len(tokens) and tokens[i].token_type == TokenType.DOT \
            and tokens[i + 1].token_type in _NAME_TOKENS:
        parts.append(tokens[i + 1].text)
        i += 2
    if i < len(tokens) and tokens[i].token_type not in _ARG_TOKENS:
        return None
    return ".".join(f"[{p}]" for p in parts) if len(parts) <= 4 else None


def _user_object(oid: str) -> bool:
    schema = oid[4:].split(".", 1)[0].lower()
    return schema not in _SYSTEM_SCHEMAS and oid.lower() != _WRAPPER_ID \
        and not oid.lower().endswith(".sp_executesql")


def mentioned_procedures(value: str, procedures: set[str]) -> list[str]:
    """Ids of the procedures a literal outside any command context names: ``EXEC x`` in it, or
    the whole literal equal to a parsed procedure's name."""
    targets = [m.group(2) for m in _EXEC.finditer(value) if _sql_like(m, procedures)]
    if _PROC_NAME.match(value.strip()):
        name = value.strip()
        if sql_id(split_sql_name(name))[0].lower() in procedures:
            targets.append(name)
    ids = [sql_id(split_sql_name(t))[0] for t in targets]
    return [i for i in ids if _user_object(i)]


def _sql_like(m: re.Match[str], procedures: set[str]) -> bool:
    """``EXEC x`` / ``exec x`` is SQL; "Execute orders" in prose only when the name is
    qualified (``dbo.x``, ``[x]``), a parsed procedure, or ``EXECUTE`` is upper case."""
    word, name = m.group(1), m.group(2)
    if len(word) == 4 or word.isupper() or "." in name or "[" in name:
        return True
    return sql_id(split_sql_name(name))[0].lower() in procedures
