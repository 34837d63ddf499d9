"""What the C# declarations of a folder declare, by name: types, their methods, fields and
base types, and how a type name written somewhere resolves to parsed types.

Resolution follows the compiler's lookup roughly: a type name is looked for among the
enclosing types, the namespace and its parents and the ``using`` imports of the file; a
qualified name (``Models.Order``) matches by suffix; a name found only outside that scope is
taken if it is unique, else it resolves to nothing (a guess would be a wrong edge).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from tree_sitter import Node

from excerpt.ingest.csharp import CsDecl, CsFile, join, node_text

__all__ = ["CsIndex", "Scope", "head_name", "scope_of", "type_names"]


@dataclass(frozen=True)
class Scope:
    visible: frozenset[str]  # containers whose types are visible: namespaces, usings, types
    classes: tuple[str, ...]  # enclosing type keys, innermost first


class CsIndex:
    """Types, methods, fields and base types of every parsed declaration, by name."""

    def __init__(self, files: list[CsFile], procedures: set[str]) -> None:
        self.procedures = procedures
        self.class_ids: dict[str, list[str]] = defaultdict(list)
        self.by_simple: dict[str, set[str]] = defaultdict(set)
        self.methods: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.methods_by_name: dict[str, list[str]] = defaultdict(list)
        self.fields: dict[str, dict[str, tuple[Node | None, Scope]]] = defaultdict(dict)
        self.bases: dict[str, list[tuple[Node, Scope]]] = defaultdict(list)
        for f in files:
            for d in f.decls:
                self._add(d, scope_of(d, f))

    def _add(self, d: CsDecl, scope: Scope) -> None:
        if not d.member:
            self.class_ids[d.key].append(d.id)
            self.by_simple[d.key.rsplit(".", 1)[-1]].add(d.key)
            self._add_type_parts(d, scope)
        elif d.kind == "Method":
            self.methods[d.class_key][d.member].append(d.id)
            self.methods_by_name[d.member].append(d.id)
        elif d.kind == "Property":
            self.fields[d.class_key][d.member] = (d.node.child_by_field_name("type"), scope)

    def _add_type_parts(self, d: CsDecl, scope: Scope) -> None:
        """Base types, fields and a record's positional properties of a type."""
        for child in d.node.named_children:
            if child.type == "base_list":
                self.bases[d.key] += [(b, scope) for b in child.named_children
                                      if b.type != "argument_list"]
            elif child.type == "parameter_list":  # record Point(int X, int Y)
                for p in child.named_children:
                    name = node_text(p.child_by_field_name("name"))
                    self.fields[d.key][name] = (p.child_by_field_name("type"), scope)
        body = d.node.child_by_field_name("body")
        for member in body.named_children if body is not None else []:
            if member.type in ("field_declaration", "event_field_declaration"):
                var = next((c for c in member.named_children
                            if c.type == "variable_declaration"), None)
                if var is None:
                    continue
                for decl in var.named_children:
                    if decl.type == "variable_declarator":
                        name = node_text(decl.child_by_field_name("name"))
                        self.fields[d.key][name] = (var.child_by_field_name("type"), scope)

    # -- lookups ---------------------------------------------------------------------------------

    def resolve(self, name: str, scope: Scope) -> list[str]:
        """Keys of the parsed types ``name`` (simple or qualified) may mean in ``scope``."""
        simple = name.rsplit(".", 1)[-1]
        found = sorted(self.by_simple.get(simple, ()))
        if "." in name:
            exact = [k for k in found if k == name or k.endswith("." + name)]
            if exact:
                return exact
        visible = [k for k in found if _container(k) in scope.visible]
        if visible:
            return visible
        return found if len(found) == 1 else []

    def type_of(self, type_node: Node | None, scope: Scope) -> list[str]:
        """Parsed types a declared type stands for ([] for built-in, arrays, unparsed)."""
        head = head_name(type_node)
        return self.resolve(head, scope) if head else []

    def base_keys(self, key: str) -> list[str]:
        return [k for node, scope in self.bases.get(key, []) for k in self.type_of(node, scope)]

    def methods_in(self, key: str, name: str, seen: set[str] | None = None) -> list[str]:
        """Methods ``name`` of type ``key``, else of its nearest parsed base types."""
        seen = seen if seen is not None else set()
        if key in seen:
            return []
        seen.add(key)
        own = self.methods.get(key, {}).get(name)
        if own:
            return list(own)
        return [m for base in self.base_keys(key) for m in self.methods_in(base, name, seen)]

    def field(self, key: str, name: str, seen: set[str] | None = None) -> list[str] | None:
        """Types of field / property ``name`` of ``key`` or a base (None: no such field)."""
        seen = seen if seen is not None else set()
        if key in seen:
            return None
        seen.add(key)
        if name in self.fields.get(key, {}):
            type_node, scope = self.fields[key][name]
            return self.type_of(type_node, scope)
        for base in self.base_keys(key):
            found = self.field(base, name, seen)
            if found is not None:
                return found
        return None


def scope_of(d: CsDecl, f: CsFile) -> Scope:
    """Where ``d`` stands: the namespaces, imports and enclosing types its code sees."""
    parts = d.namespace.split(".") if d.namespace else []
    spaces = {".".join(parts[:i]) for i in range(len(parts) + 1)}
    classes: list[str] = []
    cur: CsDecl | None = d if not d.member else d.parent
    while cur is not None:
        classes.append(cur.key)
        cur = cur.parent
    return Scope(frozenset(spaces | f.usings | set(classes)), tuple(classes))


def _container(key: str) -> str:
    return key.rsplit(".", 1)[0] if "." in key else ""


def head_name(node: Node | None) -> str:
    """The type a declared type is (``List<Order>`` is a List, ``Order?`` an Order)."""
    if node is None:
        return ""
    if node.type == "identifier":
        return node_text(node)
    if node.type == "generic_name":
        return head_name(node.named_children[0]) if node.named_children else ""
    if node.type == "qualified_name":
        right = head_name(node.child_by_field_name("name"))
        return join(node_text(node.child_by_field_name("qualifier")), right)
    if node.type == "nullable_type":
        return head_name(node.child_by_field_name("type"))
    return ""


def type_names(node: Node | None) -> list[str]:
    """Every type name in a type (``Dictionary<string, Order[]>`` -> Dictionary, Order)."""
    if node is None:
        return []
    if node.type in ("identifier", "generic_name", "qualified_name"):
        right = node.child_by_field_name("name") if node.type == "qualified_name" else node
        args = [c for c in (right.named_children if right is not None else [])
                if c.type == "type_argument_list"]
        inner = [n for a in args for c in a.named_children for n in type_names(c)]
        return [head_name(node), *inner]
    if node.type == "tuple_element":
        return type_names(node.child_by_field_name("type"))
    return [n for c in node.named_children for n in type_names(c)]
