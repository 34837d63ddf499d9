"""T-SQL control flow: a body cut into its statements, with the control-flow words taken out.

sqlglot parses single statements well but misreads T-SQL control flow: ``BEGIN TRY EXEC dbo.p;``
comes back as a ``BEGIN`` with the alias ``TRY`` and the EXEC is lost, and a body whose
statements are not ended by ``;`` (T-SQL does not require it) makes it raise.  So a body is cut
here, from sqlglot's own tokens, into the statements T-SQL would run, and each is handed to
sqlglot alone (:mod:`excerpt.ingest.code.tsql`).

What is taken out: ``BEGIN … END`` blocks, ``BEGIN TRY`` / ``END TRY`` / ``BEGIN CATCH`` /
``END CATCH``, ``ELSE``, statement labels (``retry:``) and ``;``.  ``IF`` and ``WHILE`` give their
condition as a statement of its own (``condition``: it may read tables, ``IF EXISTS (SELECT … FROM
dbo.T)``); the statement or block that follows is ``guarded`` (it may not run), as is anything
after ``ELSE``.  ``BEGIN TRAN`` is a statement, not a block.

Where a statement ends when no ``;`` says so: at the next word that starts a statement, outside
parentheses.  Keywords that also occur inside statements are read in context: ``SELECT`` after
``UNION`` / ``EXCEPT`` / ``INTERSECT`` / ``FOR`` (a cursor) or as the source of an ``INSERT`` or
the body of a CTE stays in its statement; ``SET`` after ``UPDATE t``; ``EXEC`` as ``INSERT … EXEC``;
``INSERT`` / ``UPDATE`` / ``DELETE`` after ``ON`` / ``FOR`` / ``THEN`` / ``,``; ``WITH`` only starts
a statement as ``WITH name [(cols)] AS (`` (a CTE), else it is a hint; ``MERGE`` runs to its ``;``
(T-SQL requires it); ``GRANT``, ``DENY`` and ``REVOKE`` keep the permission names they list; ``END``
closes a ``CASE`` before a block.  A ``CREATE`` / ``ALTER`` of a view, procedure, function or
trigger runs to the end of the range (T-SQL: such a statement is alone in its batch).

Blocks that do not close (an ``END`` too many, a ``BEGIN`` left open, ``END TRY`` closing a
``BEGIN CATCH``) are returned as problems ``(token index, reason)``; the statements are still cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot.tokenizer_core import Token, TokenType

__all__ = ["Statement", "body_start", "split"]

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# BEGIN followed by one of these is a statement (BEGIN TRAN), not a block.
_NOT_BLOCKS = frozenset({"TRAN", "TRANSACTION", "DISTRIBUTED", "DIALOG", "CONVERSATION"})
# Plain words (VAR tokens) that start a statement.
_VAR_STARTS = _words("""
IF WHILE RETURN THROW RAISERROR GOTO BREAK CONTINUE WAITFOR OPEN CLOSE DEALLOCATE SAVE DBCC BULK
RECONFIGURE REVERT ENABLE DISABLE CHECKPOINT KILL SETUSER RECEIVE SEND MOVE
""")
# Keyword tokens that always start a statement (outside GRANT lists and ALTER TABLE clauses).
_KEYWORD_STARTS = frozenset({
    TokenType.DECLARE, TokenType.COMMIT, TokenType.ROLLBACK, TokenType.TRUNCATE, TokenType.USE,
    TokenType.COMMAND,  # PRINT and other statements sqlglot keeps as text
})
_DML = frozenset({TokenType.INSERT, TokenType.UPDATE, TokenType.DELETE, TokenType.MERGE})
_SET_OPS = frozenset({TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT, TokenType.ALL,
                      TokenType.DISTINCT})
_NOT_AFTER_DML = frozenset({TokenType.ON, TokenType.FOR, TokenType.THEN, TokenType.COMMA})
_PERMISSIONS = frozenset({"GRANT", "DENY", "REVOKE"})
# An object type after ALTER / DROP inside an ALTER statement starts a new statement.
_OBJECT_TYPES = _words("""
TABLE VIEW PROC PROCEDURE FUNCTION TRIGGER INDEX SYNONYM SCHEMA TYPE DATABASE USER ROLE LOGIN
SEQUENCE STATISTICS
""")
_BODIED = frozenset({"VIEW", "PROC", "PROCEDURE", "FUNCTION", "TRIGGER"})
_CREATE_MODIFIERS = frozenset({"OR", "ALTER"})
# Tokens before a plain word that make it a name, not a statement (``t.Open``, ``@Close``).
_NAME_CONTEXT = frozenset({TokenType.DOT, TokenType.PARAMETER, TokenType.COMMA, TokenType.ALIAS,
                           TokenType.EQ, TokenType.NEQ, TokenType.PLUS, TokenType.DASH,
                           TokenType.STAR, TokenType.SLASH, TokenType.GT, TokenType.LT,
                           TokenType.GTE, TokenType.LTE, TokenType.SELECT, TokenType.DISTINCT,
                           TokenType.WHERE, TokenType.AND, TokenType.OR, TokenType.NOT,
                           TokenType.FROM, TokenType.JOIN, TokenType.INTO, TokenType.SET,
                           TokenType.HAVING, TokenType.WHEN, TokenType.THEN, TokenType.IN,
                           TokenType.IS, TokenType.LIKE, TokenType.BETWEEN, TokenType.CASE,
                           TokenType.UPDATE, TokenType.ORDER_BY, TokenType.GROUP_BY})


@dataclass(frozen=True)
class Statement:
    """Tokens ``first..last`` (inclusive) of one statement; ``kind`` is its first word."""

    first: int
    last: int
    kind: str
    guarded: bool = False
    condition: bool = False


@dataclass
class _Open:
    first: int
    kind: str
    guarded: bool
    condition: bool
    case: int = 0
    has_source: bool = False  # INSERT: its SELECT / VALUES / EXEC seen
    has_set: bool = False  # UPDATE: its SET seen


@dataclass
class _State:
    tokens: list[Token]
    statements: list[Statement] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    blocks: list[tuple[str, bool, int]] = field(default_factory=list)  # kind, guarded, token
    pending: bool = False  # the next statement or block is under IF / ELSE / WHILE
    cur: _Open | None = None
    last: int = -1  # last token of the current statement

    def guard(self) -> bool:
        return self.pending or (bool(self.blocks) and self.blocks[-1][1])

    def close(self) -> None:
        if self.cur is not None:
            c = self.cur
            self.statements.append(Statement(c.first, self.last, c.kind, c.guarded, c.condition))
            self.cur = None
            if c.condition:
                self.pending = True

    def open(self, i: int, kind: str, condition: bool = False) -> None:
        self.close()
        self.cur = _Open(i, kind, self.guard(), condition)
        self.pending = False
        self.last = i


def split(tokens: list[Token], lo: int = 0, hi: int | None = None
          ) -> tuple[list[Statement], list[tuple[int, str]]]:
    """The statements of ``tokens[lo:hi]`` and the block problems found (module docstring)."""
    hi = len(tokens) if hi is None else hi
    st = _State(tokens)
    depth = 0
    i = lo
    while i < hi:
        tok = tokens[i]
        tt = tok.token_type
        if depth > 0 or tt == TokenType.L_PAREN or tt == TokenType.R_PAREN:
            depth = max(depth + (tt == TokenType.L_PAREN) - (tt == TokenType.R_PAREN), 0)
            if st.cur is None:
                st.open(i, tok.text.upper())
            st.last = i
            i += 1
            continue
        i = _step(st, i, hi)
    st.close()
    for kind, _guarded, at in st.blocks:
        st.problems.append((at, f"BEGIN{'' if kind == 'BEGIN' else ' ' + kind} without END"))
    return st.statements, st.problems


def _step(st: _State, i: int, hi: int) -> int:
    """Read the token at ``i`` (outside parentheses); returns the next index."""
    tokens = st.tokens
    tok = tokens[i]
    tt = tok.token_type
    word = tok.text.upper()
    nxt = tokens[i + 1] if i + 1 < hi else None
    cur = st.cur
    if cur is not None and cur.kind == "MERGE" and tt != TokenType.SEMICOLON:
        st.last = i
        return i + 1
    if tt == TokenType.SEMICOLON:
        st.close()
        return i + 1
    if tt == TokenType.CASE and cur is not None:
        cur.case += 1
    elif tt == TokenType.END:
        if cur is not None and cur.case > 0:
            cur.case -= 1
        else:
            return _end_block(st, i, nxt)
    elif tt == TokenType.ELSE and (cur is None or cur.case == 0):
        st.close()
        st.pending = True
        return i + 1
    elif tt == TokenType.BEGIN and (nxt is None or nxt.text.upper() not in _NOT_BLOCKS):
        st.close()
        kind = nxt.text.upper() if nxt is not None and nxt.text.upper() in ("TRY", "CATCH") \
            else "BEGIN"
        st.blocks.append((kind, st.guard(), i))
        st.pending = False
        return i + (2 if kind != "BEGIN" else 1)
    elif (tt == TokenType.VAR and nxt is not None and nxt.token_type == TokenType.COLON
          and (i == 0 or tokens[i - 1].token_type not in _NAME_CONTEXT)):
        st.close()  # a label
        return i + 2
    elif cur is None or _starts(st, i, cur):
        if _is_bodied_create(tokens, i, hi):
            st.open(i, word)
            st.last = hi - 1
            return hi
        st.open(i, word, condition=word in ("IF", "WHILE") and tt == TokenType.VAR)
        _note(st.cur, tokens, i)
        if st.cur is not None and st.cur.condition:
            st.cur.first = i + 1  # the condition without its IF / WHILE
            if i + 1 >= hi:
                st.cur = None
        return i + 1
    else:
        _note(cur, tokens, i)
    st.last = i
    return i + 1


def _end_block(st: _State, i: int, nxt: Token | None) -> int:
    st.close()
    closing = nxt.text.upper() if nxt is not None and nxt.text.upper() in ("TRY", "CATCH") \
        else "BEGIN"
    if not st.blocks:
        st.problems.append((i, "END without BEGIN"))
    else:
        kind, _guarded, _at = st.blocks.pop()
        if kind != closing:
            got = "END" if closing == "BEGIN" else f"END {closing}"
            st.problems.append((i, f"{got} closes BEGIN{'' if kind == 'BEGIN' else ' ' + kind}"))
    return i + (2 if closing != "BEGIN" else 1)


def _note(cur: _Open | None, tokens: list[Token], i: int) -> None:
    """Remember what an INSERT, UPDATE or CTE statement has already taken in."""
    if cur is None:
        return
    tt = tokens[i].token_type
    if tt in (TokenType.SELECT, TokenType.VALUES, TokenType.EXECUTE, TokenType.DEFAULT) \
            and cur.kind == "INSERT" and i != cur.first:
        cur.has_source = True
    elif (tt in _DML or tt == TokenType.SELECT) and cur.kind == "WITH" and i != cur.first:
        cur.kind = tokens[i].text.upper()  # the CTE's statement: its rules apply from here
    if tt == TokenType.SET and cur.kind == "UPDATE":
        cur.has_set = True


def _starts(st: _State, i: int, cur: _Open) -> bool:
    """Whether the token at ``i`` (outside parentheses) starts a new statement."""
    tokens = st.tokens
    tok = tokens[i]
    tt = tok.token_type
    prev = tokens[i - 1].token_type if i else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if cur.kind in _PERMISSIONS and (prev in (TokenType.COMMA, None)
                                     or tokens[i - 1].text.upper() in _PERMISSIONS
                                     or (nxt is not None and nxt.token_type
                                         in (TokenType.ON, TokenType.COMMA))):
        return False
    if tt == TokenType.VAR:
        return tok.text.upper() in _VAR_STARTS and prev not in _NAME_CONTEXT and not (
            nxt is not None and nxt.token_type in (TokenType.DOT, TokenType.EQ))
    if tt in _KEYWORD_STARTS:
        return True
    if tt == TokenType.SELECT:
        return not (prev in _SET_OPS or prev in (TokenType.FOR, TokenType.ALIAS)
                    or _takes_source(cur))
    if tt in _DML:
        if nxt is not None and nxt.token_type == TokenType.L_PAREN and tt == TokenType.UPDATE:
            return False  # IF UPDATE(col) in a trigger
        if prev == TokenType.ON:  # ON DELETE CASCADE, but SET IDENTITY_INSERT t ON / INSERT
            return cur.kind not in ("ALTER", "CREATE")
        return not (prev in _NOT_AFTER_DML or _takes_source(cur, cte_only=True))
    if tt == TokenType.SET:
        return not (prev in (TokenType.DELETE, TokenType.UPDATE) or cur.kind in ("ALTER", "MERGE")
                    or (cur.kind == "UPDATE" and not cur.has_set))
    if tt == TokenType.EXECUTE:
        return not (prev in (TokenType.WITH, TokenType.COMMA) or _takes_source(cur))
    if tt == TokenType.WITH:
        return _is_cte(tokens, i)
    if tt in (TokenType.CREATE, TokenType.ALTER, TokenType.DROP):
        return _defining(tokens, i, cur)
    if tt == TokenType.FETCH:
        return prev not in (TokenType.ROWS, TokenType.ROW) and tokens[i - 1].text.upper() not in (
            "ROWS", "ROW")
    if tt == TokenType.BEGIN:
        return True  # BEGIN TRAN
    return tok.text.upper() in _PERMISSIONS


def _takes_source(cur: _Open, cte_only: bool = False) -> bool:
    """An INSERT still waiting for its SELECT / EXEC, or a CTE for its statement."""
    if cur.kind == "WITH":
        return True
    return not cte_only and cur.kind == "INSERT" and not cur.has_source


def _defining(tokens: list[Token], i: int, cur: _Open) -> bool:
    prev = tokens[i - 1].token_type if i else None
    if prev == TokenType.OR:
        return False  # CREATE OR ALTER
    if cur.kind == "ALTER" and tokens[i].token_type != TokenType.CREATE:
        nxt = tokens[i + 1].text.upper() if i + 1 < len(tokens) else ""
        return nxt in _OBJECT_TYPES  # ALTER TABLE t ALTER COLUMN / DROP CONSTRAINT
    return True


def _is_cte(tokens: list[Token], i: int) -> bool:
    """``WITH name [(cols)] AS (`` (a CTE) or ``WITH XMLNAMESPACES``, not a hint or option."""
    n = len(tokens)
    j = i + 1
    if j < n and tokens[j].text.upper() == "XMLNAMESPACES":
        return True
    if j >= n or tokens[j].token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
        return False
    j += 1
    if j < n and tokens[j].token_type == TokenType.L_PAREN:
        depth = 0
        while j < n:
            depth += (tokens[j].token_type == TokenType.L_PAREN) - (
                tokens[j].token_type == TokenType.R_PAREN)
            j += 1
            if depth == 0:
                break
    return (j + 1 < n and tokens[j].token_type == TokenType.ALIAS
            and tokens[j + 1].token_type == TokenType.L_PAREN)


def _is_bodied_create(tokens: list[Token], i: int, hi: int) -> bool:
    """A CREATE / ALTER of a view, procedure, function or trigger: it runs to the range's end."""
    if tokens[i].token_type not in (TokenType.CREATE, TokenType.ALTER):
        return False
    for j in range(i + 1, min(i + 4, hi)):
        word = tokens[j].text.upper()
        if word in _BODIED:
            return True
        if word not in _CREATE_MODIFIERS:
            return False
    return False


def body_start(tokens: list[Token], name_end: int, hi: int) -> int | None:
    """Index of the first token of a procedure's, function's or trigger's body: the one after
    the ``AS`` that ends its header (not ``@p AS int``, not ``EXECUTE AS``, not inside
    parentheses); None when there is no such ``AS``."""
    depth = 0
    for j in range(name_end, hi):
        tt = tokens[j].token_type
        depth += (tt == TokenType.L_PAREN) - (tt == TokenType.R_PAREN)
        if depth or tt != TokenType.ALIAS:
            continue
        prev = tokens[j - 1].token_type
        if prev == TokenType.EXECUTE:
            continue
        if prev in (TokenType.VAR, TokenType.IDENTIFIER) and j >= 2 \
                and tokens[j - 2].token_type == TokenType.PARAMETER:
            continue
        return j + 1
    return None
