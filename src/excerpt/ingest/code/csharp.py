"""C# files: one node per type and per member (method, constructor, property, indexer,
operator, destructor, event with accessors), and one for a file's top-level statements, read
with tree-sitter (``tree_sitter_c_sharp``).

Ids are ``CS:<Namespace>.<Class>`` and ``CS:<Namespace>.<Class>.<Member>``: block and
file-scoped namespaces alike, nested namespaces and nested types joined with ``.``, a
constructor named after its class, no namespace part for the global namespace.  Members that
have no name in C# take their .NET metadata name: an indexer is ``Item``, an operator
``op_Addition`` …, a conversion ``op_Implicit`` / ``op_Explicit``, a destructor ``Finalize``.
The same id seen again (an overload, or a second ``partial`` part of a class) gets ``#2``,
``#3`` … in order of file and position, so ids are unique and stable while the code does not
move.

**Top-level statements** (a ``Program.cs`` without a class) are one node of kind ``Program``,
id ``CS:Program.<Main>$``: the compiler's own name for what they compile into (class
``Program``, method ``<Main>$``, as stack traces show it), the same whatever the file is
called, never equal to a declared name (``<`` and ``$`` are not allowed in C# identifiers), and
unique per project (only one file of a project may have top-level statements; a second project's
gets ``#2``).  Its local functions are its members (``CS:Program.<Main>$.Helper``), so calls
between them resolve like calls between the methods of a class.

**What a node holds.**  A member's node is the declaration's exact source text, with its
attributes and the comment lines right above it (``///`` docs say what the code is for):
``text == file[start:end]``.  A type's node is its *outline*: the type's own comments,
attributes, signature and base list, its fields, constants, events and comments, and each
member's signature with its body replaced by ``{ … }`` (``=> …`` for an expression body),
member doc comments left to the member nodes; a nested type shows only its signature.  The
Program node is its statements, local function bodies elided the same way.  So a type's or
Program's text is *not* a slice of the file: ``start``/``end`` are the span of the file it
outlines (the whole type, comments and attributes included), ``text`` the outline.

**Parts.**  No node has more than ``max_tokens`` tokens
(:data:`excerpt.ingest.code.text.MAX_NODE_TOKENS` by default).  A longer member is cut at
the top-level statements of its body, then at nested statements, then at lines; a longer
outline at member boundaries, then lines (:func:`excerpt.ingest.code.text.split_text`).  The
first part keeps the id, the next ones are ``<id>~2``, ``<id>~3`` …; each part of a member is
the slice ``file[start:end]``, each part of an outline a contiguous piece of the outline whose
``start``/``end`` are the file span it covers.  Parts carry metadata ``part`` and ``parts``.

A file is refused only when tree-sitter finds errors and no type declaration can be
recovered from it; declarations recovered from a partly broken file are kept.  The relations
between declarations are worked out by :mod:`excerpt.ingest.code.csharp_graph`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise

import tree_sitter_c_sharp
from tree_sitter import Language, Node, Parser

from excerpt.ingest.code.text import (
    MAX_NODE_TOKENS,
    CodeObject,
    Offsets,
    Pieces,
    leading_comment_start,
    line_start,
    part_id,
    split_text,
)
from excerpt.tokens import count_tokens

__all__ = ["CsDecl", "CsFile", "CsSyntaxError", "parse_csharp"]

TYPE_KINDS = {
    "class_declaration": "Class", "struct_declaration": "Struct",
    "interface_declaration": "Interface", "record_declaration": "Record",
    "record_struct_declaration": "Record", "enum_declaration": "Enum",
}
MEMBER_KINDS = {
    "method_declaration": "Method", "constructor_declaration": "Constructor",
    "property_declaration": "Property", "indexer_declaration": "Indexer",
    "operator_declaration": "Operator", "conversion_operator_declaration": "Operator",
    "destructor_declaration": "Destructor", "event_declaration": "Event",
}
PROGRAM_KEY = "Program.<Main>$"
_UNARY_OR_BINARY = {"+": ("op_UnaryPlus", "op_Addition"),
                    "-": ("op_UnaryNegation", "op_Subtraction")}
_OPERATORS = {
    "*": "op_Multiply", "/": "op_Division", "%": "op_Modulus", "&": "op_BitwiseAnd",
    "|": "op_BitwiseOr", "^": "op_ExclusiveOr", "<<": "op_LeftShift", ">>": "op_RightShift",
    ">>>": "op_UnsignedRightShift", "==": "op_Equality", "!=": "op_Inequality",
    "<": "op_LessThan", ">": "op_GreaterThan", "<=": "op_LessThanOrEqual",
    ">=": "op_GreaterThanOrEqual", "!": "op_LogicalNot", "~": "op_OnesComplement",
    "++": "op_Increment", "--": "op_Decrement", "true": "op_True", "false": "op_False",
}
_ELIDED_BLOCK, _ELIDED_ARROW = " { … }", " => …"
_PARSER = Parser(Language(tree_sitter_c_sharp.language()))


@dataclass
class CsDecl:
    """One type, member or top-level program; ``id`` is set once every file is read."""

    key: str  # the id without "CS:" and without an overload suffix
    kind: str
    namespace: str
    class_path: str  # Outer.Inner
    member: str  # "" for a type (and for the Program node)
    node: Node
    parent: CsDecl | None
    start: int
    end: int
    id: str = ""
    children: list[CsDecl] = field(default_factory=list)
    statements: list[Node] = field(default_factory=list)  # a Program's global statements

    @property
    def class_key(self) -> str:
        """The key of the type this declaration is (a type) or belongs to (a member)."""
        return self.key if not self.member else self.key.rsplit(".", 1)[0]

    @property
    def title(self) -> str:
        if self.kind == "Program":
            return "Program (top-level statements)"
        return self.class_path + (f".{self.member}" if self.member else "")


@dataclass
class CsFile:
    """A parsed file: its declarations in source order and the namespaces it imports."""

    text: str
    decls: list[CsDecl] = field(default_factory=list)
    usings: set[str] = field(default_factory=set)
    offsets: Offsets | None = None

    def objects(self, max_tokens: int = MAX_NODE_TOKENS) -> list[CodeObject]:
        """The nodes of this file's declarations (ids assigned), each within ``max_tokens``
        tokens: a long declaration becomes several parts (see the module docstring)."""
        offsets = self.offsets or Offsets(self.text)
        return [o for d in self.decls for o in _objects(d, self.text, offsets, max_tokens)]


class CsSyntaxError(Exception):
    """The file has syntax errors and no declaration could be recovered from it."""

    def __init__(self, line: int) -> None:
        super().__init__(f"C# does not parse: syntax error at line {line}, no declaration found")
        self.line = line


def parse_csharp(text: str) -> CsFile:
    """The declarations of ``text``; raises :class:`CsSyntaxError` when it has syntax errors
    and no type can be recovered from it.  (A file of usings or assembly attributes only is
    read, and has no declaration.)"""
    tree = _PARSER.parse(text.encode("utf-8"))
    out = CsFile(text=text, offsets=Offsets(text))
    assert out.offsets is not None
    _Walker(out, out.offsets).walk(tree.root_node, "", None)
    if tree.root_node.has_error and not any(d.kind in TYPE_KINDS.values() for d in out.decls):
        raise CsSyntaxError(_first_error_line(tree.root_node))
    return out


def _first_error_line(node: Node) -> int:
    if node.is_error or node.is_missing:
        return node.start_point[0] + 1
    for child in node.children:
        if child.has_error or child.is_missing:
            return _first_error_line(child)
    return node.start_point[0] + 1


def own_nodes(root: Node, stops: set[int]) -> Iterator[Node]:
    """``root`` and its named descendants, nested declarations (read on their own) left out."""
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in reversed(n.named_children) if c.id not in stops)


def node_text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


class _Walker:
    """Collects the declarations of one syntax tree, namespaces and nesting tracked."""

    def __init__(self, out: CsFile, offsets: Offsets) -> None:
        self.out = out
        self.offsets = offsets
        self.program: CsDecl | None = None
        self.declared = False  # a type or namespace seen: no top-level statement may follow

    def walk(self, node: Node, ns: str, parent: CsDecl | None) -> None:
        current = ns
        for child in node.named_children:
            kind = child.type
            if kind == "using_directive":
                self.out.usings.add(_using_name(child))
            elif kind == "namespace_declaration":
                inner = join(current, node_text(child.child_by_field_name("name")))
                body = child.child_by_field_name("body")
                if body is not None:
                    self.walk(body, inner, parent)
            elif kind == "file_scoped_namespace_declaration":
                current = join(ns, node_text(child.child_by_field_name("name")))
                self.walk(child, current, parent)  # grammars that nest what follows
            elif kind in TYPE_KINDS:
                decl = self._add(child, TYPE_KINDS[kind], current, parent)
                body = child.child_by_field_name("body")
                if body is not None and kind != "enum_declaration":
                    self.walk(body, current, decl)
            elif kind in MEMBER_KINDS and parent is not None:
                self._add(child, MEMBER_KINDS[kind], current, parent)
            elif kind == "global_statement" and node.type == "compilation_unit":
                self._statement(child, node)
            if kind in TYPE_KINDS or kind.endswith("namespace_declaration"):
                self.declared = True

    def _statement(self, statement: Node, root: Node) -> None:
        """A top-level statement: part of the file's Program node (a local function: one
        of its members)."""
        if self.declared or statement.has_error:
            return  # not C# (CS8803), or tree-sitter's reading of a broken file
        start, end = self._span(statement)
        if self.program is None:
            self.program = CsDecl(PROGRAM_KEY, "Program", "", "Program", "", root, None,
                                  start, end)
            self.out.decls.append(self.program)
        self.program.end = end
        self.program.statements.append(statement)
        inner = statement.named_children[0] if statement.named_children else None
        if inner is not None and inner.type == "local_function_statement":
            self._add(inner, "Method", "", self.program, span=(start, end))

    def _add(self, node: Node, kind: str, ns: str, parent: CsDecl | None,
             span: tuple[int, int] | None = None) -> CsDecl:
        is_member = node.type in MEMBER_KINDS or node.type == "local_function_statement"
        name = _member_name(node)
        if is_member:
            assert parent is not None
            class_path, member = parent.class_path, name
            key = join(parent.key, name)
        else:
            class_path = join(parent.class_path, name) if parent else name
            member, key = "", join(ns, class_path)
        start, end = span or self._span(node)
        decl = CsDecl(key, kind, ns, class_path, member, node, parent, start, end)
        self.out.decls.append(decl)
        if parent is not None:
            parent.children.append(decl)
        return decl

    def _span(self, node: Node) -> tuple[int, int]:
        """Character span of a declaration, the comment lines right above it included."""
        before = node.prev_named_sibling
        while before is not None and before.type == "comment":
            before = before.prev_named_sibling
        floor_node = before if before is not None else node.parent
        floor = 0
        if floor_node is not None:
            floor = self.offsets.char(
                floor_node.end_byte if before is not None else floor_node.start_byte
            )
        start = self.offsets.char(node.start_byte)
        return leading_comment_start(self.out.text, start, floor), self.offsets.char(node.end_byte)


def _member_name(node: Node) -> str:
    """A declaration's name; the .NET metadata name of a member C# leaves unnamed."""
    if node.type == "destructor_declaration":
        return "Finalize"
    named = node.child_by_field_name("name")
    if named is not None:
        return node_text(named)
    if node.type == "indexer_declaration":
        return "Item"
    if node.type == "conversion_operator_declaration":
        explicit = any(c.type == "explicit" for c in node.children)
        return "op_Explicit" if explicit else "op_Implicit"
    if node.type == "operator_declaration":
        symbol = node_text(node.child_by_field_name("operator"))
        if symbol in _UNARY_OR_BINARY:
            params = node.child_by_field_name("parameters")
            binary = params is not None and len(params.named_children) > 1
            return _UNARY_OR_BINARY[symbol][binary]
        return _OPERATORS.get(symbol, f"op_{symbol}")
    return ""


def _using_name(node: Node) -> str:
    """The namespace a ``using`` imports ('' for aliases and ``using static``)."""
    names = [c for c in node.named_children if c.type in ("identifier", "qualified_name")]
    if node.child_by_field_name("name") is not None or not names:
        return ""
    return node_text(names[-1])


# -- nodes: outlines and parts -------------------------------------------------------------------


def _objects(d: CsDecl, text: str, offsets: Offsets, max_tokens: int) -> list[CodeObject]:
    """The node(s) of one declaration: its text (see :func:`_pieces`) cut under the cap."""
    pieces = _pieces(d, text, offsets)
    full = pieces.text
    cuts: list[int] = []
    if count_tokens(full) > max_tokens:
        cuts = split_text(full, max_tokens, _cut_levels(d, text, offsets, pieces))
    bounds = [0, *cuts, len(full)]
    meta = {"namespace": d.namespace, "class": d.class_path, "member": d.member,
            "type": d.kind}
    out: list[CodeObject] = []
    for i, (a, b) in enumerate(pairwise(bounds)):
        start = d.start if a == 0 else pieces.file_offset(a)
        end = d.end if b == len(full) else pieces.file_offset(b)
        part = full[a:b]
        extra = {"part": str(i + 1), "parts": str(len(bounds) - 1)} if cuts else {}
        out.append(CodeObject(part_id(d.id, i), d.kind, d.title, start, end, meta | extra,
                              None if part == text[start:end] else part))
    return out


def _pieces(d: CsDecl, text: str, offsets: Offsets) -> Pieces:
    """What a declaration's node holds: a member its source; a type its outline; a Program
    its statements with local function bodies elided."""
    if d.kind in TYPE_KINDS.values() or d.kind == "Program":
        spans = [s for child in d.children for s in _elisions(child, text, offsets)]
        return Pieces.build(text, d.start, d.end, sorted(spans))
    return Pieces.build(text, d.start, d.end, [])


def _elisions(child: CsDecl, text: str, offsets: Offsets) -> list[tuple[int, int, str]]:
    """What an outline leaves out of a member or nested type: its leading comments and its
    bodies (a nested type's whole body)."""
    node_start = offsets.char(child.node.start_byte)
    out = [(child.start, node_start, "")] if child.start < node_start else []
    if child.kind in TYPE_KINDS.values():
        body = child.node.child_by_field_name("body")
        bodies = [body] if body is not None else []
    else:
        bodies = _bodies(child.node)
    for b in bodies:
        start = offsets.char(b.start_byte)
        while start > node_start and text[start - 1].isspace():
            start -= 1
        arrow = b.type == "arrow_expression_clause"
        out.append((start, offsets.char(b.end_byte), _ELIDED_ARROW if arrow else _ELIDED_BLOCK))
    return out


def _bodies(node: Node) -> list[Node]:
    """The code blocks of a member: its body, or its accessors' bodies."""
    out: list[Node] = []
    for c in node.children:
        if c.type in ("block", "arrow_expression_clause"):
            out.append(c)
        elif c.type == "accessor_list":
            out += [b for acc in c.named_children for b in acc.children
                    if b.type in ("block", "arrow_expression_clause")]
    return out


def _cut_levels(d: CsDecl, text: str, offsets: Offsets, pieces: Pieces) -> list[list[int]]:
    """Offsets in the node's text where a part may begin, best first: a type's members
    and fields; a member's top-level statements, then its nested ones; a Program's statements,
    then theirs."""
    if d.kind in TYPE_KINDS.values():
        body = d.node.child_by_field_name("body")
        first = list(body.named_children) if body is not None else []
        nested: list[Node] = []
    else:
        first = d.statements or [s for b in _bodies(d.node) if b.type == "block"
                                 for s in b.named_children]
        roots = d.statements or _bodies(d.node)
        nested = [n for r in roots for n in _descendants(r) if n.type.endswith("_statement")]
    return [_line_starts(first, text, offsets, pieces), _line_starts(nested, text, offsets,
                                                                      pieces)]


def _descendants(root: Node) -> list[Node]:
    out: list[Node] = []
    stack = list(reversed(root.named_children))
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.named_children))
    return out


def _line_starts(nodes: list[Node], text: str, offsets: Offsets, pieces: Pieces) -> list[int]:
    """Where in the node's text the lines of ``nodes`` (their comments included) begin."""
    out: list[int] = []
    for n in nodes:
        start = offsets.char(n.start_byte)
        top = line_start(text, leading_comment_start(text, start))
        at = pieces.text_offset(top) if top is not None else None
        if at is not None:
            out.append(at)
    return out
