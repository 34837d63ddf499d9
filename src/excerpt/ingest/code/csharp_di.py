"""Interfaces and dependency injection: the edges that carry a call through an interface to
the code that runs.

* ``Implements``: a class, struct or record to each parsed interface its base list names
  (resolved as any type name, :class:`excerpt.ingest.code.csharp_index.CsIndex`).
* ``ImplementedBy``: an interface to each class that implements it (listed in its base list,
  directly or through a base class or an inherited interface), and each interface member to
  the implementing member of each such class: same name and number of parameters, found in
  the class or its nearest parsed base class; an explicit implementation (``void IFoo.Bar()``)
  of that very interface wins, and among overloads those whose parameter types are written the
  same way.  A property, indexer or event implements one of the same kind and name.
* ``Registers``: a dependency-injection registration, from the member that holds it (a
  method, a constructor, a top-level program, an extension method; inside an ``if`` as
  anywhere) to the implementation it registers; with an interface, also ``ImplementedBy``
  interface -> implementation (a factory registration binds what its lambda constructs).
  Forms read: ``AddScoped/AddTransient/AddSingleton`` and their ``TryAdd…`` forms,
  ``<I, T>()``, ``<T>()``, ``<I>(sp => new T(…))``, ``<I>(new T(…))``, ``(typeof(I),
  typeof(T))``, ``(typeof(T))``; also ``AddHostedService<T>``, ``AddHttpClient<I, T>`` and
  ``AddDbContext<T>`` (and ``…Pool``/``…Factory``), which register ``T``.

* ``Calls`` to an extension method (``services.AddShop()`` -> ``static AddShop(this
  IServiceCollection s)``), where registrations usually live: a parsed extension method of
  that name whose static class the caller sees (its namespace enclosing or imported), taking as
  many arguments (optional ones may be left out); when the receiver is a parameter, local or
  field whose declared type is written, that type must be the one of the ``this`` parameter (or
  the latter a type parameter); a receiver of unknown type needs a single candidate.

So a path controller method -Calls-> interface member -ImplementedBy-> implementation
member -> the SQL it runs exists in the graph, and one from a startup to each registration.
Names that do not resolve to a parsed type link nowhere (``IConfiguration``, ``ILogger``: the
framework's).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from tree_sitter import Node

from excerpt.ingest.code.csharp import CsDecl, CsFile, node_text, own_nodes
from excerpt.ingest.code.csharp_index import CsIndex, Scope, head_name, scope_of

__all__ = ["di_edges"]

Edge = tuple[str, str, str]

_REGISTER = re.compile(r"^(?:Try)?Add(?:Scoped|Transient|Singleton|HostedService|HttpClient"
                       r"|DbContext|DbContextPool|DbContextFactory|PooledDbContextFactory)$")
_LIFETIME = re.compile(r"(?:Scoped|Transient|Singleton)$")
_CLASS_KINDS = ("Class", "Struct", "Record")
_MEMBER_KINDS = ("Method", "Property", "Indexer", "Event")


def di_edges(files: list[CsFile], index: CsIndex) -> set[Edge]:
    """``Implements``, ``ImplementedBy`` and ``Registers`` among the declarations of ``files``
    (ids already assigned; ``index`` built over the same files)."""
    decls = [(f, d) for f in files for d in f.decls]
    types: dict[str, CsDecl] = {}
    for _, d in decls:
        if not d.member:
            types.setdefault(d.key, d)  # a partial type's first part holds the plain id
    members: dict[str, list[CsDecl]] = defaultdict(list)
    for _, d in decls:
        if d.member and d.kind in _MEMBER_KINDS:
            members[d.class_key].append(d)
    edges = _Implementations(index, types, members).edges()
    extensions = _extension_methods(decls)
    for f in files:
        stops = {d.node.id for d in f.decls}
        for d in f.decls:
            scope = scope_of(d, f)
            edges |= _registrations(index, d, scope, stops, types)
            if extensions:
                edges |= _extension_calls(index, d, scope, stops, extensions)
    return {e for e in edges if e[0] != e[2]}


class _Implementations:
    """``Implements`` and ``ImplementedBy`` for every parsed class."""

    def __init__(self, index: CsIndex, types: dict[str, CsDecl],
                 members: dict[str, list[CsDecl]]) -> None:
        self.g = index
        self.types = types
        self.members = members

    def edges(self) -> set[Edge]:
        out: set[Edge] = set()
        for key, decl in sorted(self.types.items()):
            if decl.kind not in _CLASS_KINDS:
                continue
            for iface in self._listed_interfaces(key):
                out.add((decl.id, "Implements", self.types[iface].id))
            for iface in sorted(self._all_interfaces(key)):
                out.add((self.types[iface].id, "ImplementedBy", decl.id))
                for member in self.members.get(iface, []):
                    out |= {(member.id, "ImplementedBy", m.id)
                            for m in self._implementing(key, iface, member)}
        return out

    def _is_interface(self, key: str) -> bool:
        return key in self.types and self.g.kinds.get(key) == "Interface"

    def _listed_interfaces(self, key: str) -> list[str]:
        return sorted({b for b in self.g.base_keys(key) if self._is_interface(b)})

    def _all_interfaces(self, key: str) -> set[str]:
        """Interfaces ``key`` implements: listed, inherited by them, or by its base classes."""
        out: set[str] = set()
        todo, seen = [key], set()
        while todo:
            cur = todo.pop()
            if cur in seen:
                continue
            seen.add(cur)
            for base in self.g.base_keys(cur):
                if self._is_interface(base):
                    out.add(base)
                todo.append(base)
        return out

    def _implementing(self, key: str, iface: str, member: CsDecl) -> list[CsDecl]:
        """The members of ``key`` (else of its nearest parsed base class) implementing
        ``member`` of ``iface``."""
        todo, seen = [key], set()
        while todo:
            cur = todo.pop(0)
            if cur in seen or cur not in self.types:
                continue
            seen.add(cur)
            found = _matching(self.members.get(cur, []), member, self.types[iface], self.g)
            if found:
                return found
            todo += [b for b in self.g.base_keys(cur) if not self._is_interface(b)]
        return []


def _matching(candidates: list[CsDecl], member: CsDecl, iface: CsDecl,
              index: CsIndex) -> list[CsDecl]:
    same = [c for c in candidates if c.member == member.member and c.kind == member.kind
            and _arity(c) == _arity(member)]
    explicit = [c for c in same if _explicit_for(c) is not None]
    named = [c for c in explicit if _names(_explicit_for(c), iface)]
    # an explicit implementation of this interface, else the public ones
    same = named or [c for c in same if c not in explicit] or same
    typed = [c for c in same if _param_types(c) == _param_types(member)]
    return typed or same


def _explicit_for(d: CsDecl) -> str | None:
    spec = next((c for c in d.node.named_children if c.type == "explicit_interface_specifier"),
                None)
    return head_name(spec.named_children[0]) if spec is not None and spec.named_children else None


def _names(written: str | None, iface: CsDecl) -> bool:
    return bool(written) and (iface.key == written or iface.key.endswith("." + str(written))
                              or iface.key.rsplit(".", 1)[-1] == str(written).rsplit(".", 1)[-1])


def _params(d: CsDecl) -> list[Node]:
    plist = d.node.child_by_field_name("parameters")
    return [p for p in plist.named_children if p.type == "parameter"] if plist is not None else []


def _arity(d: CsDecl) -> int:
    return len(_params(d))


def _param_types(d: CsDecl) -> list[str]:
    return ["".join(node_text(p.child_by_field_name("type")).split()) for p in _params(d)]


# -- registrations ---------------------------------------------------------------------------


def _registrations(index: CsIndex, d: CsDecl, scope: Scope, stops: set[int],
                   types: dict[str, CsDecl]) -> set[Edge]:
    out: set[Edge] = set()
    for call in own_nodes(d.node, stops):
        if call.type != "invocation_expression":
            continue
        bound = _registered(call)
        if bound is None:
            continue
        service, impl = (_resolve(index, n, scope, types) for n in bound)
        for t in impl:
            out.add((d.id, "Registers", types[t].id))
            out |= {(types[s].id, "ImplementedBy", types[t].id) for s in service if s != t}
    return out


def _registered(call: Node) -> tuple[Node | None, Node | None] | None:
    """(service type, implementation type) of a registration call, None if it is none."""
    fn = call.child_by_field_name("function")
    member = fn is not None and fn.type == "member_access_expression"
    name = fn.child_by_field_name("name") if fn is not None and member else fn
    if name is None or name.type not in ("identifier", "generic_name"):
        return None
    method = node_text(name.named_children[0]) if name.type == "generic_name" else node_text(name)
    if not _REGISTER.match(method):
        return None
    targs = [c for a in name.named_children if a.type == "type_argument_list"
             for c in a.named_children]
    arglist = call.child_by_field_name("arguments")
    args = [a.named_children[0] for a in (arglist.named_children if arglist is not None else [])
            if a.type == "argument" and a.named_children]
    typeofs = [a.child_by_field_name("type") for a in args if a.type == "typeof_expression"]
    if len(targs) >= 2:
        return targs[0], targs[1]
    if len(targs) == 1:
        if not args or not _LIFETIME.search(method):  # <T>(), AddDbContext<T>(options => …)
            return None, targs[0]
        made = next((n for a in args for n in _walk(a) if n.type == "object_creation_expression"),
                    None)
        return targs[0], made.child_by_field_name("type") if made is not None else None
    if len(typeofs) >= 2:
        return typeofs[0], typeofs[1]
    if len(typeofs) == 1 and len(args) == 1:
        return None, typeofs[0]
    return None


def _resolve(index: CsIndex, n: Node | None, scope: Scope, types: dict[str, CsDecl]) -> list[str]:
    return [k for k in index.type_of(n, scope) if k in types] if n is not None else []


def _walk(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


# -- extension methods -----------------------------------------------------------------------


def _extension_methods(decls: list[tuple[CsFile, CsDecl]]) -> dict[str, list[CsDecl]]:
    """Parsed extension methods (first parameter ``this``), by name."""
    out: dict[str, list[CsDecl]] = defaultdict(list)
    for _, d in decls:
        params = _params(d) if d.kind == "Method" else []
        if params and any(c.type == "modifier" and node_text(c) == "this"
                          for c in params[0].named_children):
            out[d.member].append(d)
    return out


def _extension_calls(index: CsIndex, d: CsDecl, scope: Scope, stops: set[int],
                     extensions: dict[str, list[CsDecl]]) -> set[Edge]:
    nodes = list(own_nodes(d.node, stops))
    out: set[Edge] = set()
    declared: dict[str, str] | None = None
    for call in nodes:
        fn = call.child_by_field_name("function") if call.type == "invocation_expression" else None
        if fn is None or fn.type != "member_access_expression":
            continue
        name_node = fn.child_by_field_name("name")
        name = (node_text(name_node.named_children[0]) if name_node is not None
                and name_node.type == "generic_name" else node_text(name_node))
        found = [m for m in extensions.get(name, ()) if _sees_class(index, m, scope)
                 and _takes(m, _arg_count(call))]
        if not found:
            continue
        if declared is None:
            declared = _declared_types(nodes, index, d)
        receiver = fn.child_by_field_name("expression")
        typed = declared.get(node_text(receiver)) if receiver is not None \
            and receiver.type == "identifier" else None
        if typed is not None:
            found = [m for m in found if _this_type(m) in (typed, "")]
        elif len(found) > 1:
            found = []
        out |= {(d.id, "Calls", m.id) for m in found}
    return out


def _sees_class(index: CsIndex, m: CsDecl, scope: Scope) -> bool:
    """The static class holding ``m`` is seen (project) and its namespace is in scope."""
    return m.namespace in scope.visible and m.class_key in index.resolve(m.class_key, scope)


def _takes(m: CsDecl, count: int) -> bool:
    """Can ``m`` be called with ``count`` arguments after its receiver?"""
    rest = _params(m)[1:]
    if any(node_text(c) == "params" for p in rest[-1:] for c in p.named_children):
        return count >= len(rest) - 1
    required = sum(1 for p in rest if not any(c.type == "=" for c in p.children))
    return required <= count <= len(rest)


def _arg_count(call: Node) -> int:
    args = call.child_by_field_name("arguments")
    return sum(1 for a in (args.named_children if args is not None else []) if a.type == "argument")


def _this_type(m: CsDecl) -> str:
    """The head name of the ``this`` parameter's type; '' for a type parameter of ``m``."""
    head = head_name(_params(m)[0].child_by_field_name("type")).rsplit(".", 1)[-1]
    tparams = m.node.child_by_field_name("type_parameters")
    generic = {node_text(t) for t in tparams.named_children} if tparams is not None else set()
    return "" if head in generic else head


def _declared_types(nodes: list[Node], index: CsIndex, d: CsDecl) -> dict[str, str]:
    """Head names of the declared types of the parameters, locals and fields ``d`` sees."""
    out: dict[str, str] = {}
    key = d.class_key
    for name, (type_node, _) in index.fields.get(key, {}).items():
        out[name] = head_name(type_node).rsplit(".", 1)[-1]
    for n in nodes:
        if n.type == "parameter":
            out[node_text(n.child_by_field_name("name"))] = _head(n.child_by_field_name("type"))
        elif n.type == "variable_declaration":
            typ = n.child_by_field_name("type")
            for v in n.named_children:
                if v.type == "variable_declarator" and typ is not None \
                        and typ.type != "implicit_type":
                    out[node_text(v.child_by_field_name("name"))] = _head(typ)
    return {k: v for k, v in out.items() if v}


def _head(n: Node | None) -> str:
    return head_name(n).rsplit(".", 1)[-1]
