"""Broken T-SQL that sqlglot accepts: misspelled statements and object types.

sqlglot keeps any ``CREATE`` / ``ALTER`` / ``DROP`` it does not model as raw text (an
``exp.Command``), so ``CREATE TABL dbo.X (…)`` or ``CREATE PROCEDUR dbo.p AS …`` parse
"fine" and would vanish without a word: no node, no issue.  This module reads the batch's tokens
for the two mistakes that give such text away:

* a ``CREATE`` / ``ALTER`` (or a ``DROP`` that starts a statement) followed by a word that is no
  T-SQL object type (``TABL``, ``PROCEDUR``, ``VEIW``);
* a statement after a ``;`` that starts with a word T-SQL has no statement for (``SELEC``).
  The batch's first statement is not checked this way: T-SQL runs ``dbo.MyProc 1, 2`` without
  ``EXEC`` there, so an unknown first word may be a procedure call.

Permission names (``GRANT ALTER ON …``, ``DENY CREATE TABLE``) are not statements and are
skipped.  Mistakes deep inside a procedure body that sqlglot reads as raw text are not found
here (T-SQL lets statements run on without ``;``, so their starts are unknown).
"""

from __future__ import annotations

from sqlglot.tokenizer_core import Token, TokenType

__all__ = ["misspelling", "names_a_permission"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# First words of the object types CREATE / ALTER / DROP take (SQL Server 2022 and Azure SQL),
# with what ALTER TABLE … ALTER / DROP and ALTER ROLE … DROP name.
_OBJECT_WORDS = _words("""
AGGREGATE APPLICATION ASSEMBLY ASYMMETRIC AUTHORIZATION AVAILABILITY BROKER CERTIFICATE COLUMN
COLUMNSTORE CONSTRAINT CONTRACT COUNTER CREDENTIAL CRYPTOGRAPHIC DATABASE DEFAULT ENDPOINT EVENT
EXTERNAL FEDERATION FILE FILEGROUP FULLTEXT FUNCTION INDEX JSON LOGIN MASTER MATERIALIZED MEMBER
MESSAGE PARTITION PERIOD PROC PROCEDURE QUEUE REMOTE RESOURCE ROLE ROUTE RULE SCHEMA SEARCH
SECURITY SELECTIVE SENSITIVITY SEQUENCE SERVER SERVICE SIGNATURE SPATIAL STATISTICS SYMMETRIC
SYNONYM SYSTEM TABLE TRIGGER TYPE USER VECTOR VIEW WORKLOAD XML
""")
_MODIFIERS = frozenset({"OR", "ALTER", "UNIQUE", "CLUSTERED", "NONCLUSTERED", "PRIMARY"})
# Statements whose first word sqlglot's tokenizer leaves a plain name (VAR); keyword tokens
# (SELECT, INSERT, BEGIN, …) are statements sqlglot knows.
_STATEMENT_WORDS = _words("""
ADD BACKUP BREAK BULK CATCH CHECKPOINT CLOSE CONTINUE DBCC DEALLOCATE DENY DISABLE ENABLE GET
GOTO IF MOVE OPEN PRINT RAISERROR READTEXT RECEIVE RECONFIGURE RESTORE RETURN REVERT SAVE SEND
SETUSER SHUTDOWN THROW TRY UPDATETEXT WAITFOR WHILE WRITETEXT
""")
_PERMISSION_CONTEXT = frozenset({"GRANT", "DENY", "REVOKE", "FOR", ","})
_DEFINING = (TokenType.CREATE, TokenType.ALTER, TokenType.DROP)


def misspelling(tokens: list[Token]) -> tuple[int, str] | None:
    """``(token index, reason)`` of the first misspelled statement or object type in a batch's
    tokens, or None."""
    depth = 0
    for i, tok in enumerate(tokens):
        tt = tok.token_type
        depth += (tt == TokenType.L_PAREN) - (tt == TokenType.R_PAREN)
        if depth > 0:
            continue
        after_semicolon = i > 0 and tokens[i - 1].token_type == TokenType.SEMICOLON
        if tt in _DEFINING and _defines(tokens, i, after_semicolon):
            word = _object_word(tokens, i)
            if word is not None and word not in _OBJECT_WORDS:
                return i, f"unknown object type {word!r} after {tok.text.upper()}"
        elif after_semicolon and not _statement_start(tokens, i):
            return i, f"unknown statement {tok.text!r}"
    return None


def names_a_permission(tokens: list[Token], i: int) -> bool:
    """Whether the CREATE / ALTER at ``i`` names a permission (``GRANT ALTER ON``, ``DENY
    CREATE TABLE TO``, ``GRANT SELECT, ALTER``) rather than starting a statement."""
    return i > 0 and tokens[i - 1].text.upper() in _PERMISSION_CONTEXT


def _defines(tokens: list[Token], i: int, after_semicolon: bool) -> bool:
    """Whether the CREATE / ALTER / DROP at ``i`` starts a statement (not a permission name,
    not ``CREATE OR ALTER``; a DROP only at a statement's start, as ``ALTER TABLE … DROP``
    names no object type)."""
    if names_a_permission(tokens, i) or (i > 0 and tokens[i - 1].token_type == TokenType.OR):
        return False
    return tokens[i].token_type != TokenType.DROP or i == 0 or after_semicolon


def _object_word(tokens: list[Token], i: int) -> str | None:
    """The first word after ``CREATE [OR ALTER] [UNIQUE] [CLUSTERED] …`` (None: nothing)."""
    for tok in tokens[i + 1 : i + 6]:
        for word in tok.text.upper().split():
            if word not in _MODIFIERS:
                return None if tok.token_type == TokenType.SEMICOLON else word
    return None


def _statement_start(tokens: list[Token], i: int) -> bool:
    tok = tokens[i]
    if tok.token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
        return True  # a keyword sqlglot knows, or punctuation it will judge itself
    if i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.COLON:
        return True  # a label: ``retry:``
    return tok.text.upper() in _STATEMENT_WORDS
