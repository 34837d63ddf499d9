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
* ``Executes``, ``ReadsFrom``, ``WritesTo`` to ``SQL:<schema>.<name>``: from SQL the code sends
  to the database in a command context (EF ``FromSql…`` / ``ExecuteSql…`` / ``SqlQuery``,
  ADO.NET commands and ``CommandText``, Dapper), read as :mod:`excerpt.ingest.code.csharp_sql`
  explains; and from Entity Framework ``DbSet`` use (:mod:`excerpt.ingest.code.csharp_ef` maps
  entities to tables): ``ctx.Orders.Add/AddRange/Update/UpdateRange/Remove/RemoveRange(…)``,
  ``ExecuteUpdate/ExecuteDelete(…)`` and ``Attach`` in a member that calls ``SaveChanges``
  write the DbSet's tables, any other use (``Where``, ``Find``, ``ToListAsync``, ``from x in
  ctx.Orders``, ``foreach``) reads them; ``ctx.Set<Order>()`` likewise.  The context is the
  receiver's declared type (a local, field or parameter; ``var c = new Ctx()`` or ``var c =
  CreateContext()`` of a parsed method too); a receiver of unknown type counts when every
  context with a DbSet of that name maps it to the same tables.
* ``Mentions``: a string literal outside every command context that names a procedure
  (``"EXEC dbo.x"`` in it, or equal to a parsed procedure's name): never ``Executes``.
* ``MapsTo``: an entity class to its table (:mod:`excerpt.ingest.code.csharp_ef`).

Type names are resolved by :class:`excerpt.ingest.code.csharp_index.CsIndex`.
"""

from __future__ import annotations

from tree_sitter import Node

from excerpt.ingest.code.csharp import CsFile, node_text, own_nodes
from excerpt.ingest.code.csharp_ef import EfModel, Site, read_ef_model
from excerpt.ingest.code.csharp_index import CsIndex, scope_of, type_names
from excerpt.ingest.code.csharp_sql import (
    STRINGS,
    Texts,
    command_at,
    literal_value,
    mentioned_procedures,
    sql_relations,
)

__all__ = ["csharp_edges"]

Edge = tuple[str, str, str]
_WRITES = {"Add", "AddAsync", "AddRange", "AddRangeAsync", "Update", "UpdateRange", "Remove",
           "RemoveRange", "ExecuteUpdate", "ExecuteUpdateAsync", "ExecuteDelete",
           "ExecuteDeleteAsync"}


def csharp_edges(files: list[CsFile], procedures: set[str]) -> set[Edge]:
    """Every relation among the declarations of ``files`` (ids already assigned);
    ``procedures``: the lower-cased ids of the parsed stored procedures."""
    graph = CsIndex(files, procedures)
    sites = [site for f in files for site in _sites(f)]
    shared = _Shared(graph, read_ef_model(sites, graph), sites)
    edges: set[Edge] = shared.ef.maps_to(graph.class_ids)
    for site in sites:
        if site.decl.parent is not None:
            edges.add((site.decl.parent.id, "Contains", site.decl.id))
        edges |= _DeclReader(shared, site).edges()
    return {e for e in edges if e[0] != e[2]}


def _sites(f: CsFile) -> list[Site]:
    stops = {d.node.id for d in f.decls}
    return [Site(d, scope_of(d, f), list(own_nodes(d.node, stops)), f.usings) for d in f.decls]


class _Shared:
    """What every declaration's reader looks up: names, the EF model, member declarations by
    id, and the initialised fields of each type (constants that hold SQL)."""

    def __init__(self, graph: CsIndex, ef: EfModel, sites: list[Site]) -> None:
        self.g = graph
        self.ef = ef
        self.by_id = {s.decl.id: s for s in sites}
        self.fields: dict[str, dict[str, Node]] = {}
        for s in sites:
            if not s.decl.member:
                self.fields[s.decl.key] = _initialised_fields(s.decl.node)

    def returns(self, method_ids: list[str]) -> list[str] | None:
        """The parsed types the methods return (None: unknown, or they disagree)."""
        found: set[str] = set()
        for mid in method_ids:
            site = self.by_id.get(mid)
            kind = site.decl.node.child_by_field_name("returns") if site is not None else None
            if site is None or kind is None:
                return None
            found.update(self.g.type_of(_awaited(kind), site.scope))
        return sorted(found) if found else None


def _initialised_fields(type_node: Node) -> dict[str, Node]:
    body = type_node.child_by_field_name("body")
    out: dict[str, Node] = {}
    for member in body.named_children if body is not None else []:
        if member.type != "field_declaration":
            continue
        for var in (c for c in member.named_children if c.type == "variable_declaration"):
            for v in (c for c in var.named_children if c.type == "variable_declarator"):
                name = v.child_by_field_name("name")
                value = [c for c in v.named_children if c != name]
                if value:
                    out[node_text(name)] = value[-1]
    return out


def _awaited(kind: Node) -> Node:
    """``Task<Foo>`` / ``ValueTask<Foo>`` -> ``Foo``: what an awaited call gives."""
    if kind.type == "generic_name" and node_text(kind.named_children[0]) in ("Task", "ValueTask"):
        args = [c for c in kind.named_children if c.type == "type_argument_list"]
        if args and args[0].named_children:
            return args[0].named_children[0]
    return kind


class _DeclReader:
    """The relations that start at one declaration."""

    def __init__(self, shared: _Shared, site: Site) -> None:
        self.shared = shared
        self.g = shared.g
        self.d = site.decl
        self.scope = site.scope
        self.nodes = site.nodes
        self.locals = self._locals()
        self.sp_context = any(
            n.type == "member_access_expression"
            and node_text(n.child_by_field_name("name")) == "StoredProcedure"
            for n in self.nodes
        )
        self.saves = any(n.type == "invocation_expression" and _simple_call(n).startswith(
            "SaveChanges") for n in self.nodes)
        self.texts = Texts(self.nodes, self._field_value)
        # ``p => p.Orders``, ``from o in …``: entities, never a context of unknown type
        self.lambda_names = {node_text(n) for n in self.nodes if n.type == "implicit_parameter"}
        self.lambda_names |= {node_text(n.child_by_field_name("name")) for n in self.nodes
                              if n.type in ("from_clause", "join_clause", "let_clause")}
        self.out: set[Edge] = set()

    def edges(self) -> set[Edge]:
        for n in self.nodes:
            self._command(n)
        for n in self.nodes:
            self._types(n)
            if n.type == "invocation_expression":
                self._call(n)
                self._set_call(n)
            elif n.type == "member_access_expression":
                self._static_receiver(n)
                self._dbset(n)
            elif n.type == "identifier":
                self._own_dbset(n)
            elif n.type in STRINGS and n.id not in self.texts.used:
                self._link("Mentions", mentioned_procedures(literal_value(n), self.g.procedures))
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
            elif n.type == "variable_declaration" and (self.d.member or self.d.kind == "Program"):
                declared = n.child_by_field_name("type")
                for v in n.named_children:
                    if v.type == "variable_declarator":
                        out[node_text(v.child_by_field_name("name"))] = self._var_type(declared, v)
        return out

    def _var_type(self, declared: Node | None, v: Node | None) -> list[str] | None:
        """The parsed types of a variable ([]: not parsed); ``var x = new Foo()`` is a Foo,
        ``var x = Make()`` (``await Make()``) what the parsed method ``Make`` of this type
        returns, another ``var`` unknown (None)."""
        if declared is not None and declared.type != "implicit_type":
            return self.g.type_of(declared, self.scope)
        value = [c for c in v.named_children if c != v.child_by_field_name("name")] if v else []
        made = value[-1] if value else None
        if made is not None and made.type == "await_expression" and made.named_children:
            made = made.named_children[0]
        if made is not None and made.type == "object_creation_expression":
            return self.g.type_of(made.child_by_field_name("type"), self.scope)
        if made is not None and made.type == "invocation_expression":
            fn = made.child_by_field_name("function")
            if fn is not None and fn.type in ("identifier", "generic_name"):
                for key in self.scope.classes:
                    found = self.g.methods_in(key, _simple(fn))
                    if found:
                        return self.shared.returns(found)
        return None

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

    # -- SQL sent to the database ----------------------------------------------------------------

    def _command(self, n: Node) -> None:
        cmd = command_at(n)
        if cmd is None:
            return
        procedure = cmd.procedure or (cmd.certain and self.sp_context)
        for text in self.texts.of(cmd.arg):
            for relation, target in sql_relations(text, procedure, self.g.procedures,
                                                  cmd.certain):
                self._link(relation, [target])

    def _field_value(self, n: Node) -> Node | None:
        """The initialiser of the field ``n`` names (``Sql``, ``this.Sql``, ``Queries.Sql``)."""
        if n.type == "identifier":
            keys: list[str] = list(self.scope.classes)
            name = node_text(n)
        elif n.type == "member_access_expression":
            owner = n.child_by_field_name("expression")
            name = node_text(n.child_by_field_name("name"))
            dotted = _dotted(owner) if owner is not None else ""
            if owner is not None and owner.type == "this":
                keys = list(self.scope.classes[:1])
            elif dotted and dotted.split(".")[0] not in self.locals:
                keys = self.g.resolve(dotted, self.scope)
            else:
                return None
        else:
            return None
        for key in keys:
            found = self.shared.fields.get(key, {}).get(name)
            if found is not None:
                return found
        return None

    # -- Entity Framework DbSets -----------------------------------------------------------------

    def _dbset(self, n: Node) -> None:
        """``ctx.Orders`` (or ``this.Orders``) used: reads or writes the DbSet's tables."""
        receiver = n.child_by_field_name("expression")
        name = node_text(n.child_by_field_name("name"))
        if receiver is None or not name:
            return
        keys = self._receiver(receiver)
        if keys is not None:
            contexts = [k for k in keys if self.shared.ef.is_context(k)]
            if not contexts:
                return
            tables = self.shared.ef.dbset_tables(contexts, name)
        elif receiver.type == "identifier" and node_text(receiver) not in self.lambda_names:
            tables = self.shared.ef.dbset_tables(None, name)
        else:
            return
        self._link(self._access(n), sorted(tables))

    def _own_dbset(self, n: Node) -> None:
        """``Orders.Where(…)`` inside the context itself (not a local, not a member's name)."""
        parent = n.parent
        if parent is None or node_text(n) in self.locals:
            return
        used = (parent.type == "member_access_expression"
                and parent.child_by_field_name("expression") == n) or (
            parent.type in ("from_clause", "foreach_statement")
            and parent.child_by_field_name("name") != n
            and parent.child_by_field_name("left") != n)
        if not used:
            return
        contexts = [k for k in self.scope.classes if self.shared.ef.is_context(k)]
        if contexts:
            self._link(self._access(n), sorted(self.shared.ef.dbset_tables(contexts,
                                                                           node_text(n))))

    def _set_call(self, n: Node) -> None:
        """``ctx.Set<Order>()``: the entity's tables."""
        fn = n.child_by_field_name("function")
        name = fn.child_by_field_name("name") if fn is not None and \
            fn.type == "member_access_expression" else fn
        if name is None or name.type != "generic_name" or _simple(name) != "Set":
            return
        args = [c for c in name.named_children if c.type == "type_argument_list"]
        if not args or not args[0].named_children:
            return
        keys = self.g.type_of(args[0].named_children[0], self.scope)
        tables = {t for k in keys for t in self.shared.ef.entity_tables.get(k, set())}
        self._link(self._access(n), sorted(tables))

    def _access(self, n: Node) -> str:
        """``WritesTo`` when a write method is called on the DbSet ``n`` (or on a query over
        it, for ``ExecuteUpdate`` / ``ExecuteDelete``), else ``ReadsFrom``."""
        cur = n
        while cur.parent is not None and cur.parent.type == "member_access_expression" \
                and cur.parent.child_by_field_name("expression") == cur:
            method = _simple(cur.parent.child_by_field_name("name") or cur.parent)
            call = cur.parent.parent
            if call is None or call.type != "invocation_expression":
                break
            if method in _WRITES and (cur == n or method.startswith("Execute")):
                return "WritesTo"
            if method == "Attach" and cur == n and self.saves:
                return "WritesTo"
            cur = call
        return "ReadsFrom"


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


def _simple_call(call: Node) -> str:
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "member_access_expression":
        fn = fn.child_by_field_name("name")
    return _simple(fn) if fn is not None else ""
