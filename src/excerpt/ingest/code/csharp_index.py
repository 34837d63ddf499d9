"""What the C# declarations of a folder declare, by name: types, their methods, fields and
base types, and how a type name written somewhere resolves to parsed types.

Resolution follows the compiler's lookup roughly: a type name is looked for among the
enclosing types, the namespace and its parents and the ``using`` imports of the file (its
project's global and implicit usings included); the nearest of those wins, as in C# (a nested
type before the namespace's, the innermost namespace before its parents, those before the
imports).  A qualified name (``Models.Order``) matches by suffix; a name found only outside that
scope is taken if it is unique, else it resolves to nothing (a guess would be a wrong edge).

Projects (:mod:`excerpt.ingest.code.csharp_projects`): a file read as a
:class:`ProjectFile` knows its
project and the projects it sees.  A type declared only in projects the file does not see is
no candidate at all; among candidates, those of the file's own project come first.  A plain
:class:`CsFile` (no project) sees every type, and its types are seen by every file.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, fields

from tree_sitter import Node

from excerpt.ingest.code.csharp import CsDecl, CsFile, join, node_text

__all__ = ["CsIndex", "ProjectFile", "Scope", "head_name", "in_project", "scope_of",
           "type_names"]


@dataclass(frozen=True)
class Scope:
    visible: frozenset[str]  # containers whose types are visible: namespaces, usings, types
    classes: tuple[str, ...]  # enclosing type keys, innermost first
    spaces: tuple[str, ...] = ()  # enclosing namespaces, innermost first ('' last)
    project: str | None = None  # the file's project (None: outside every project)
    sees: frozenset[str] | None = None  # projects whose types it sees (None: every one)


@dataclass
class ProjectFile(CsFile):
    """A parsed file with the project it belongs to and the projects it sees."""

    project: str | None = None
    sees: frozenset[str] | None = None


def in_project(cs: CsFile, project: str | None, sees: frozenset[str] | None,
               usings: set[str]) -> ProjectFile:
    """``cs`` as a file of ``project`` that also imports ``usings`` (global, implicit)."""
    values = {f.name: getattr(cs, f.name) for f in fields(cs) if f.init}
    values["usings"] = set(cs.usings) | usings
    return ProjectFile(**values, project=project, sees=sees)


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
        self.kinds: dict[str, str] = {}
        self.projects: dict[str, set[str | None]] = defaultdict(set)
        for f in files:
            for d in f.decls:
                self._add(d, scope_of(d, f))

    def _add(self, d: CsDecl, scope: Scope) -> None:
        if not d.member:
            self.class_ids[d.key].append(d.id)
            self.by_simple[d.key.rsplit(".", 1)[-1]].add(d.key)
            self.kinds.setdefault(d.key, d.kind)
            self.projects[d.key].add(scope.project)
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
        found = [k for k in sorted(self.by_simple.get(simple, ())) if self._seen(k, scope)]
        if "." in name:
            exact = [k for k in found if k == name or k.endswith("." + name)]
            if exact:
                return self._own_first(exact, scope)
        visible = [k for k in found if _container(k) in scope.visible]
        if visible:
            return self._own_first(_nearest(visible, scope), scope)
        found = self._own_first(found, scope)
        return found if len(found) == 1 else []

    def _seen(self, key: str, scope: Scope) -> bool:
        """Is a type declared in a project ``scope`` sees (or outside every project)?"""
        if scope.sees is None:
            return True
        return any(p is None or p in scope.sees for p in self.projects.get(key, {None}))

    def _own_first(self, keys: list[str], scope: Scope) -> list[str]:
        """The keys declared in the scope's own project if any, else all of them."""
        if scope.project is None:
            return keys
        own = [k for k in keys if scope.project in self.projects.get(k, ())]
        return own or keys

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
    inner_first = tuple(".".join(parts[:i]) for i in range(len(parts), -1, -1))
    project = f.project if isinstance(f, ProjectFile) else None
    sees = f.sees if isinstance(f, ProjectFile) else None
    return Scope(frozenset(spaces | f.usings | set(classes)), tuple(classes), inner_first,
                 project, sees)


def _container(key: str) -> str:
    return key.rsplit(".", 1)[0] if "." in key else ""


def _nearest(keys: list[str], scope: Scope) -> list[str]:
    """The keys whose container is nearest, as C# looks names up: enclosing types innermost
    first, then enclosing namespaces innermost first, then the imported namespaces (keys in
    several imports stay together: the compiler calls that ambiguous)."""
    order = {c: i for i, c in enumerate((*scope.classes, *scope.spaces))}
    imported = len(order)
    best = min(order.get(_container(k), imported) for k in keys)
    return [k for k in keys if order.get(_container(k), imported) == best]


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
