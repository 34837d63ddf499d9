"""C# files: one declaration per type and per method / constructor / property, read with
tree-sitter (``tree_sitter_c_sharp``).

Ids are ``CS:<Namespace>.<Class>`` and ``CS:<Namespace>.<Class>.<Member>``: block and
file-scoped namespaces alike, nested namespaces and nested types joined with ``.``, a
constructor named after its class, no namespace part for the global namespace.  The same id
seen again (an overload, or a second ``partial`` part of a class) gets ``#2``, ``#3`` … in
order of file and position, so ids are unique and stable while the code does not move.

A node's text is the declaration's exact source text, with its attributes and the comment
lines right above it (``///`` docs say what the code is for).  A type's node holds the whole
type, members included: the text stays one contiguous slice of the file (``text ==
file[start:end]``), and the member nodes carry the finer pieces.

A file is refused only when tree-sitter finds errors and no type declaration can be
recovered from it; declarations recovered from a partly broken file are kept.  The relations
between declarations are worked out by :mod:`excerpt.ingest.csharp_graph`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tree_sitter_c_sharp
from tree_sitter import Language, Node, Parser

from excerpt.ingest._code_text import CodeObject, Offsets, leading_comment_start

__all__ = ["CsDecl", "CsFile", "CsSyntaxError", "parse_csharp"]

TYPE_KINDS = {
    "class_declaration": "Class", "struct_declaration": "Struct",
    "interface_declaration": "Interface", "record_declaration": "Record",
    "record_struct_declaration": "Record", "enum_declaration": "Enum",
}
MEMBER_KINDS = {
    "method_declaration": "Method", "constructor_declaration": "Constructor",
    "property_declaration": "Property",
}
_PARSER = Parser(Language(tree_sitter_c_sharp.language()))


@dataclass
class CsDecl:
    """One type or member declaration; ``id`` is set once every file is read (overloads)."""

    key: str  # the id without "CS:" and without an overload suffix
    kind: str
    namespace: str
    class_path: str  # Outer.Inner
    member: str  # "" for a type
    node: Node
    parent: CsDecl | None
    start: int
    end: int
    id: str = ""

    @property
    def class_key(self) -> str:
        """The key of the type this declaration is (a type) or belongs to (a member)."""
        return self.key if not self.member else self.key.rsplit(".", 1)[0]

    def to_object(self) -> CodeObject:
        title = self.class_path + (f".{self.member}" if self.member else "")
        meta = {"namespace": self.namespace, "class": self.class_path,
                "member": self.member, "type": self.kind}
        return CodeObject(self.id, self.kind, title, self.start, self.end, meta)


@dataclass
class CsFile:
    """A parsed file: its declarations in source order and the namespaces it imports."""

    text: str
    decls: list[CsDecl] = field(default_factory=list)
    usings: set[str] = field(default_factory=set)


class CsSyntaxError(Exception):
    """The file has syntax errors and no declaration could be recovered from it."""

    def __init__(self, line: int) -> None:
        super().__init__(f"C# does not parse: syntax error at line {line}, no declaration found")
        self.line = line


def parse_csharp(text: str) -> CsFile:
    """The declarations of ``text``; raises :class:`CsSyntaxError` when it has syntax errors
    and no declaration can be recovered from it.  (A file of usings or assembly attributes
    only is read, and has no declaration.)"""
    tree = _PARSER.parse(text.encode("utf-8"))
    out = CsFile(text=text)
    _Walker(out, Offsets(text)).walk(tree.root_node, "", None)
    if tree.root_node.has_error and not out.decls:
        raise CsSyntaxError(_first_error_line(tree.root_node))
    return out


def _first_error_line(node: Node) -> int:
    if node.is_error or node.is_missing:
        return node.start_point[0] + 1
    for child in node.children:
        if child.has_error or child.is_missing:
            return _first_error_line(child)
    return node.start_point[0] + 1


def node_text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


class _Walker:
    """Collects the declarations of one syntax tree, namespaces and nesting tracked."""

    def __init__(self, out: CsFile, offsets: Offsets) -> None:
        self.out = out
        self.offsets = offsets

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

    def _add(self, node: Node, kind: str, ns: str, parent: CsDecl | None) -> CsDecl:
        name = node_text(node.child_by_field_name("name"))
        if kind in MEMBER_KINDS.values():
            assert parent is not None
            class_path, member = parent.class_path, name
            key = join(parent.key, name)
        else:
            class_path = join(parent.class_path, name) if parent else name
            member, key = "", join(ns, class_path)
        start, end = self._span(node)
        decl = CsDecl(key, kind, ns, class_path, member, node, parent, start, end)
        self.out.decls.append(decl)
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


def _using_name(node: Node) -> str:
    """The namespace a ``using`` imports ('' for aliases and ``using static``)."""
    names = [c for c in node.named_children if c.type in ("identifier", "qualified_name")]
    if node.child_by_field_name("name") is not None or not names:
        return ""
    return node_text(names[-1])
