"""Relations between the C# declarations of a folder (and from C# to stored procedures).

Every relation starts at the innermost declaration node that holds the code (a method for
the code in its body, a type for its base list and fields) and ends at a parsed declaration:

* ``Contains``: a type to its members and nested types.
* ``References``: to a parsed type named as a type (fields, parameters, return and local
  types, ``new X()``, casts, ``typeof``, generic arguments, base types) or as the receiver of a
  static member (``PaymentStatus.Paid``); a name that stays ambiguous links nowhere.
* ``Calls``: ``Bar()`` (this type, then enclosing and base types), ``this.Bar()``,
  ``base.Bar()``, ``Foo.Bar()`` (a type), ``x.Bar()`` where ``x`` is a parameter, local or
  field whose declared type is parsed (``var x = new Foo()`` too).  Every overload with that
  name is linked.  When the receiver's type is not known at all, the call links to the only
  parsed method of that name, if there is exactly one; a receiver of a known type that was
  not parsed (``SqlCommand cmd``) links nowhere.
* ``Executes``: to ``SQL:<schema>.<name>`` when a string literal runs a stored procedure:
  ``"EXEC dbo.proc_X …"`` anywhere; a procedure name, in a declaration that uses
  ``CommandType.StoredProcedure``, passed first to ``new …Command(…)`` (ADO.NET) or to an
  ``Execute…`` / ``Query…`` call (Dapper), or assigned to ``CommandText``; or any literal equal
  to a parsed procedure's name.

Type names are resolved by :class:`excerpt.ingest.csharp_index.CsIndex`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from excerpt.ingest._code_text import split_sql_name, sql_id
from excerpt.ingest.csharp import CsDecl, CsFile, node_text
from excerpt.ingest.csharp_index import CsIndex, head_name, scope_of, type_names

__all__ = ["csharp_edges"]

_STRINGS = ("string_literal", "verbatim_string_literal", "raw_string_literal",
            "interpolated_string_expression")
_CONTENT = ("string_literal_content", "escape_sequence", "string_content", "raw_string_content")
_PART = r"(?:\[[^\]]+\]|\w+)"
_EXEC = re.compile(rf"\bEXEC(?:UTE)?\s+(?:@\w+\s*=\s*)?({_PART}(?:\.{_PART}){{0,3}})",
                   re.IGNORECASE)
_PROC_NAME = re.compile(rf"^(?:{_PART}\.){{0,2}}{_PART}$")

Edge = tuple[str, str, str]


def csharp_edges(files: list[CsFile], procedures: set[str]) -> set[Edge]:
    """Every relation among the declarations of ``files`` (ids already assigned);
    ``procedures``: the lower-cased ids of the parsed stored procedures."""
    graph = CsIndex(files, procedures)
    edges: set[Edge] = set()
    for f in files:
        stops = {d.node.id for d in f.decls}
        for d in f.decls:
            if d.parent is not None:
                edges.add((d.parent.id, "Contains", d.id))
            edges |= _DeclReader(graph, d, f, stops).edges()
    return {e for e in edges if e[0] != e[2]}


class _DeclReader:
    """The relations that start at one declaration."""

    def __init__(self, graph: CsIndex, decl: CsDecl, f: CsFile, stops: set[int]) -> None:
        self.g = graph
        self.d = decl
        self.scope = scope_of(decl, f)
        self.nodes = list(_own_nodes(decl.node, stops))
        self.locals = self._locals()
        self.sp_context = any(
            n.type == "member_access_expression"
            and node_text(n.child_by_field_name("name")) == "StoredProcedure"
            for n in self.nodes
        )
        self.out: set[Edge] = set()

    def edges(self) -> set[Edge]:
        for n in self.nodes:
            self._types(n)
            if n.type == "invocation_expression":
                self._call(n)
            elif n.type == "member_access_expression":
                self._static_receiver(n)
            elif n.type in _STRINGS:
                self._literal(n)
        return self.out

    def _link(self, relation: str, ids: list[str]) -> None:
        self.out.update((self.d.id, relation, i) for i in ids)

    def _refer(self, names: list[str]) -> None:
        for name in names:
            keys = self.g.resolve(name, self.scope)
            self._link("References", [self.g.class_ids[k][0] for k in keys])

    # -- types -----------------------------------------------------------------------------------

    def _types(self, n: Node) -> None:
        for fieldname in ("type", "returns"):
            sub = n.child_by_field_name(fieldname)
            if sub is not None:
                self._refer(type_names(sub))
        if n.type == "base_list":
            for b in n.named_children:
                self._refer(type_names(b))
        elif n.type == "type_argument_list":  # also Get<Order>(), in an expression
            for c in n.named_children:
                self._refer(type_names(c))

    def _locals(self) -> dict[str, list[str] | None]:
        """Parameters and locals of the declaration: their parsed types (None: unknown)."""
        out: dict[str, list[str] | None] = {}
        for n in self.nodes:
            if n.type in ("parameter", "declaration_pattern", "foreach_statement"):
                name = n.child_by_field_name("name") or n.child_by_field_name("left")
                out[node_text(name)] = self._var_type(n.child_by_field_name("type"), None)
            elif n.type == "variable_declaration" and self.d.member:
                declared = n.child_by_field_name("type")
                for v in n.named_children:
                    if v.type == "variable_declarator":
                        out[node_text(v.child_by_field_name("name"))] = self._var_type(declared, v)
        return out

    def _var_type(self, declared: Node | None, v: Node | None) -> list[str] | None:
        """The parsed types of a variable ([]: not parsed); ``var x = new Foo()`` is a Foo,
        another ``var`` unknown (None)."""
        if declared is not None and declared.type != "implicit_type":
            return self.g.type_of(declared, self.scope)
        made = [c for c in v.named_children if c.type == "object_creation_expression"] if v else []
        return self.g.type_of(made[0].child_by_field_name("type"), self.scope) if made else None

    # -- calls -----------------------------------------------------------------------------------

    def _call(self, n: Node) -> None:
        fn = n.child_by_field_name("function")
        if fn is None:
            return
        if fn.type in ("identifier", "generic_name"):
            name = _simple(fn)
            for key in self.scope.classes:
                found = self.g.methods_in(key, name)
                if found:
                    self._link("Calls", found)
                    return
            return
        if fn.type == "member_access_expression":
            receiver = fn.child_by_field_name("expression")
            name_node = fn.child_by_field_name("name")
        elif fn.type == "conditional_access_expression":
            receiver = fn.child_by_field_name("condition")
            binding = next((c for c in fn.named_children if c.type == "member_binding_expression"),
                           None)
            name_node = binding.child_by_field_name("name") if binding is not None else None
        else:
            return
        if receiver is None or name_node is None:
            return
        name = _simple(name_node)
        keys = self._receiver(receiver)
        if keys is None:
            unique = self.g.methods_by_name.get(name, [])
            self._link("Calls", unique if len(unique) == 1 else [])
            return
        self._link("Calls", [m for k in keys for m in self.g.methods_in(k, name)])

    def _receiver(self, r: Node) -> list[str] | None:
        """Parsed types the receiver of a call may be ([]: known but not parsed; None:
        unknown)."""
        own = self.d.class_key
        if r.type == "this":
            return [own]
        if r.type == "base":
            return self.g.base_keys(own)
        if r.type == "identifier":
            return self._named(node_text(r))
        if r.type == "generic_name":
            return self.g.resolve(_simple(r), self.scope) or None
        if r.type == "member_access_expression":
            inner = r.child_by_field_name("expression")
            name = node_text(r.child_by_field_name("name"))
            if inner is not None and inner.type == "this":
                return self._field_of_classes(name)
            dotted = _dotted(r)
            if dotted and dotted.split(".")[0] not in self.locals:
                return self.g.resolve(dotted, self.scope) or None
        return None

    def _named(self, name: str) -> list[str] | None:
        if name in self.locals:
            return self.locals[name]
        found = self._field_of_classes(name)
        if found is not None:
            return found
        return self.g.resolve(name, self.scope) or None

    def _field_of_classes(self, name: str) -> list[str] | None:
        for key in self.scope.classes:
            found = self.g.field(key, name)
            if found is not None:
                return found
        return None

    def _static_receiver(self, n: Node) -> None:
        """``PaymentStatus.Paid``, ``Helpers.Format(x)``: the member access names a type."""
        r = n.child_by_field_name("expression")
        if r is None or r.type != "identifier":
            return
        name = node_text(r)
        if name in self.locals or self._field_of_classes(name) is not None:
            return
        self._refer([name])

    # -- stored procedures -----------------------------------------------------------------------

    def _literal(self, n: Node) -> None:
        value = _literal_value(n)
        targets = [m.group(1) for m in _EXEC.finditer(value)]
        if _PROC_NAME.match(value.strip()):
            name = value.strip()
            known = sql_id(split_sql_name(name))[0].lower() in self.g.procedures
            if known or (self.sp_context and _names_command(n)):
                targets.append(name)
        ids = [sql_id(split_sql_name(t))[0] for t in targets]
        self._link("Executes", [i for i in ids if not i.lower().endswith(".sp_executesql")])


def _own_nodes(root: Node, stops: set[int]) -> Iterator[Node]:
    """``root`` and its named descendants, nested declarations (read on their own) left out."""
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in reversed(n.named_children) if c.id not in stops)


def _simple(n: Node) -> str:
    if n.type == "generic_name" and n.named_children:
        return node_text(n.named_children[0])
    return node_text(n)


def _dotted(n: Node) -> str:
    """``A.B.C`` for a member access made of plain names only, else ''."""
    if n.type == "identifier":
        return node_text(n)
    if n.type != "member_access_expression":
        return ""
    left = _dotted(n.child_by_field_name("expression") or n)
    name = n.child_by_field_name("name")
    return f"{left}.{node_text(name)}" if left and name is not None else ""


def _literal_value(n: Node) -> str:
    if n.type == "verbatim_string_literal":
        return node_text(n)[2:-1].replace('""', '"')
    return "".join(node_text(c) for c in n.children if c.type in _CONTENT)


def _names_command(n: Node) -> bool:
    """The literal is where ADO.NET and Dapper take a procedure name: assigned to
    ``CommandText``, or first argument of ``new …Command(…)`` or of ``Execute…`` / ``Query…``."""
    parent = n.parent
    if parent is not None and parent.type == "assignment_expression":
        return node_text(parent.child_by_field_name("left")).endswith("CommandText")
    args = parent.parent if parent is not None and parent.type == "argument" else None
    if args is None or args.type != "argument_list" or args.named_children[0] != parent:
        return False
    call = args.parent
    if call is not None and call.type == "object_creation_expression":
        return head_name(call.child_by_field_name("type")).endswith("Command")
    if call is not None and call.type == "invocation_expression":
        fn = call.child_by_field_name("function")
        name = fn.child_by_field_name("name") if fn is not None and fn.type != "identifier" else fn
        return _simple(name).startswith(("Execute", "Query")) if name is not None else False
    return False
