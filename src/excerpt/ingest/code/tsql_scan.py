"""Relations in T-SQL that sqlglot keeps as raw text (``exp.Command``), read from its tokens.

sqlglot models most statements, but gives up on some that are common in real procedures:
bodies whose statements are not ended by ``;``, TRY/CATCH, cursors, CREATE TRIGGER.  It then
returns the text unparsed.  Rather than lose those relations, this module walks sqlglot's own
token stream (strings, comments and ``[quoted]`` names already handled by its tokenizer) and
reads the object name after the keywords that name one: FROM / JOIN / USING (read), INSERT /
INTO / UPDATE / DELETE / MERGE / TRUNCATE TABLE (write), EXEC (execute), REFERENCES (foreign
key).  ``UPDATE o … FROM dbo.Orders o`` writes ``dbo.Orders``; temp tables, table variables,
CTE names, cursors and ``inserted`` / ``deleted`` are skipped, as in the tree-based reading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from sqlglot.dialects.tsql import TSQL
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import Token, TokenType

__all__ = ["PSEUDO_TABLES", "balanced", "is_builtin", "name_at", "scan", "tokenize"]

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PSEUDO_TABLES = frozenset({"inserted", "deleted"})
# Table-valued functions SQL Server itself provides: reading them reads no table of the app.
BUILTIN_TABLE_FUNCTIONS = _words("""
string_split openjson openxml openrowset openquery opendatasource generate_series changetable
containstable freetexttable predict semantickeyphrasetable semanticsimilaritytable
semanticsimilaritydetailstable
""")
# System procedures called without a schema (SQL Server finds them in master / sys).
BUILTIN_PROCEDURES = _words("""
sp_executesql sp_rename sp_addextendedproperty sp_updateextendedproperty sp_dropextendedproperty
sp_getapplock sp_releaseapplock sp_set_session_context sp_describe_first_result_set
sp_refreshview sp_refreshsqlmodule sp_recompile sp_helptext sp_help sp_who sp_who2 sp_configure
sp_msforeachtable sp_msforeachdb sp_send_dbmail sp_start_job sp_addrolemember sp_droprolemember
sp_spaceused sp_lock xp_cmdshell
""")
SYSTEM_SCHEMAS = frozenset({"sys", "information_schema"})
_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)
_WORD = re.compile(r"^[\w$#@]+$")


class _Tokenizer(TSQL.Tokenizer):
    """sqlglot's T-SQL tokenizer, except that no keyword (END, FETCH…) turns the rest of its
    statement into one string token: every name stays visible to the rules below."""

    COMMANDS: ClassVar[set[TokenType]] = set()


_TOKENIZER = _Tokenizer()
_NOT_BLOCKS = ("TRAN", "TRANSACTION", "DISTRIBUTED", "DIALOG", "CONVERSATION")

Parts = tuple[str, ...]


@dataclass(frozen=True)
class _Ref:
    relation: str
    parts: Parts
    alias: str | None


def tokenize(sql: str) -> list[Token]:
    """The T-SQL tokens of ``sql`` (raises :class:`TokenError`, e.g. an open string)."""
    return list(_TOKENIZER.tokenize(sql))


def balanced(sql: str) -> bool:
    """Whether ``sql`` tokenizes and its parentheses and BEGIN / CASE … END blocks close: a
    statement sqlglot does not know, rather than a broken one."""
    try:
        tokens = tokenize(sql)
    except TokenError:
        return False
    parens = blocks = 0
    for i, tok in enumerate(tokens):
        tt = tok.token_type
        parens += (tt == TokenType.L_PAREN) - (tt == TokenType.R_PAREN)
        nxt = tokens[i + 1].text.upper() if i + 1 < len(tokens) else ""
        blocks += (tt == TokenType.BEGIN and nxt not in _NOT_BLOCKS) + (tt == TokenType.CASE)
        blocks -= tt == TokenType.END
        if parens < 0 or blocks < 0:
            return False
    return parens == 0 and blocks == 0


def is_builtin(relation: str, parts: Parts) -> bool:
    """Whether a name (``(…, schema, name)``) is SQL Server's own rather than the app's: the
    catalog views and functions of ``sys`` and ``INFORMATION_SCHEMA``, built-in table-valued
    functions (``STRING_SPLIT``, ``OPENJSON``…) and system procedures, so no edge points at an
    object no file could define."""
    name = parts[-1].lower() if parts else ""
    schema = parts[-2].lower() if len(parts) > 1 else ""
    if schema in SYSTEM_SCHEMAS:
        return True
    if relation == "Executes":
        return name in BUILTIN_PROCEDURES and schema in ("", "dbo")
    return name in BUILTIN_TABLE_FUNCTIONS and schema == ""


def name_at(tokens: list[Token], i: int) -> tuple[Parts, int, str | None] | None:
    """The dotted name that starts at token ``i``: ``(parts, index after it and its alias,
    alias)``.  ``#temp`` and ``@variable`` names keep their sigil, so callers can skip them."""
    n = len(tokens)
    sigil = ""
    if i < n and tokens[i].token_type in (TokenType.HASH, TokenType.PARAMETER):
        sigil, i = tokens[i].text, i + 1
    if i >= n or tokens[i].token_type not in _NAMES:
        return None
    parts, j = [sigil + tokens[i].text], i + 1
    while j + 1 < n and tokens[j].token_type == TokenType.DOT:
        nxt = tokens[j + 1]
        if nxt.token_type == TokenType.DOT:  # db..table: the default schema
            parts.append("")
            j += 1
        elif nxt.token_type in _NAMES or _WORD.match(nxt.text):
            parts.append(nxt.text)
            j += 2
        else:
            break
    alias: str | None = None
    if j + 1 < n and tokens[j].token_type == TokenType.ALIAS and tokens[j + 1].token_type in _NAMES:
        alias, j = tokens[j + 1].text, j + 2
    elif j < n and tokens[j].token_type == TokenType.VAR:
        alias, j = tokens[j].text, j + 1
    return tuple(parts), j, alias


def scan(sql: str) -> set[tuple[str, Parts]]:
    """``(relation, name parts)`` of the objects ``sql`` reads, writes, executes or references."""
    try:
        tokens = tokenize(sql)
    except TokenError:
        return set()
    refs: list[_Ref] = []
    for i in range(len(tokens)):
        rule = _rule(tokens, i)
        if rule is not None:
            _collect(tokens, rule[1], rule[0], refs, tokens[i].token_type == TokenType.FROM)
    skip = _cte_names(tokens) | _cursor_names(tokens) | PSEUDO_TABLES
    return _resolve(refs, skip)


def _rule(tokens: list[Token], i: int) -> tuple[str, int] | None:
    """The relation a keyword at ``i`` gives the name after it, and where that name starts."""
    tt = tokens[i].token_type
    nxt = tokens[i + 1].token_type if i + 1 < len(tokens) else None
    prev = tokens[i - 1].token_type if i else None
    if tt == TokenType.FROM:
        return ("WritesTo" if prev == TokenType.DELETE else "ReadsFrom"), i + 1
    if tt in (TokenType.JOIN, TokenType.USING):
        return "ReadsFrom", i + 1
    if tt == TokenType.INTO or tt == TokenType.UPDATE:
        return "WritesTo", i + 1
    if tt in (TokenType.INSERT, TokenType.MERGE) and nxt != TokenType.INTO:
        return "WritesTo", i + 1
    if tt == TokenType.DELETE and nxt != TokenType.FROM:
        return "WritesTo", i + 1
    if tt == TokenType.TRUNCATE and nxt == TokenType.TABLE:
        return "WritesTo", i + 2
    if tt == TokenType.REFERENCES:
        return "FK", i + 1
    if tt == TokenType.EXECUTE:
        j = i + 1
        if (j + 2 < len(tokens) and tokens[j].token_type == TokenType.PARAMETER
                and tokens[j + 2].token_type == TokenType.EQ):
            j += 3  # EXEC @rc = dbo.proc
        return "Executes", j
    return None


def _collect(tokens: list[Token], j: int, relation: str, refs: list[_Ref], many: bool) -> None:
    """The name at ``j``; after FROM also the comma-separated ones (``FROM a x, b y``)."""
    while True:
        named = name_at(tokens, j)
        if named is None:
            return
        parts, j, alias = named
        refs.append(_Ref(relation, parts, alias))
        if not (many and j < len(tokens) and tokens[j].token_type == TokenType.COMMA):
            return
        j += 1


def _resolve(refs: list[_Ref], skip: frozenset[str] | set[str]) -> set[tuple[str, Parts]]:
    aliases = {r.alias.lower(): k for k, r in enumerate(refs) if r.alias}
    dropped: set[int] = set()
    out: list[_Ref] = []
    for k, r in enumerate(refs):
        real = aliases.get(r.parts[0].lower()) if len(r.parts) == 1 else None
        if r.relation == "WritesTo" and real is not None and real != k:
            out.append(_Ref("WritesTo", refs[real].parts, None))  # UPDATE alias … FROM t alias
            dropped.update((k, real))
    out.extend(r for k, r in enumerate(refs) if k not in dropped)
    return {(r.relation, r.parts) for r in out if _is_object(r, skip)}


def _is_object(r: _Ref, skip: frozenset[str] | set[str]) -> bool:
    name = r.parts[-1]
    if not name or name.startswith(("#", "@")):
        return False
    if r.relation == "Executes" and name.lower() == "sp_executesql":
        return False
    return not (len(r.parts) == 1 and name.lower() in skip)


def _close(tokens: list[Token], k: int) -> int:
    """Index of the parenthesis that closes the one at ``k`` (the last token if none does)."""
    depth = 0
    for i in range(k, len(tokens)):
        depth += tokens[i].token_type == TokenType.L_PAREN
        depth -= tokens[i].token_type == TokenType.R_PAREN
        if depth == 0:
            return i
    return len(tokens) - 1


def _cte_names(tokens: list[Token]) -> set[str]:
    """Names defined by ``WITH name [(cols)] AS (…) [, name AS (…)]``."""
    names: set[str] = set()
    n = len(tokens)
    for i, tok in enumerate(tokens):
        if tok.token_type != TokenType.WITH:
            continue
        j = i + 1
        while j < n and tokens[j].token_type in _NAMES:
            k = j + 1
            if k < n and tokens[k].token_type == TokenType.L_PAREN:
                k = _close(tokens, k) + 1
            if not (k + 1 < n and tokens[k].token_type == TokenType.ALIAS
                    and tokens[k + 1].token_type == TokenType.L_PAREN):
                break
            names.add(tokens[j].text.lower())
            k = _close(tokens, k + 1) + 1
            if k >= n or tokens[k].token_type != TokenType.COMMA:
                break
            j = k + 1
    return names


def _cursor_names(tokens: list[Token]) -> set[str]:
    """Names declared by ``DECLARE name CURSOR`` (``FETCH … FROM name`` reads no table)."""
    return {
        tokens[i + 1].text.lower()
        for i in range(len(tokens) - 2)
        if tokens[i].token_type == TokenType.DECLARE and tokens[i + 2].text.upper() == "CURSOR"
    }
