"""Entity Framework mapping: which table each entity class is (``MapsTo``), and which tables a
``DbSet`` stands for, so that code using a ``DbSet`` reads or writes them.

A *context* is a parsed class with ``DbSet<T>`` / ``IDbSet<T>`` properties, or whose base type
is ``DbContext`` / ``…DbContext`` / ``ObjectContext`` or a parsed context (EF Core and EF6
alike; a file importing ``System.Data.Entity`` is EF6).  An entity's table, in EF's own order of
precedence:

1. fluent configuration: ``ToTable("X")``, ``ToTable("X", "schema")``, ``ToTable("X", schema:
   "s")`` or ``ToView(…)`` on ``modelBuilder.Entity<T>()`` (chained, or inside the lambda
   ``Entity<T>(e => …)``), on an ``EntityTypeBuilder<T>`` parameter, or in a class that is an
   ``IEntityTypeConfiguration<T>`` (EF Core) or ``EntityTypeConfiguration<T>`` (EF6); a call
   under ``OwnsOne`` / ``OwnsMany`` configures an owned type and is skipped;
2. the ``[Table("X", Schema = "s")]`` attribute;
3. convention, for each ``DbSet`` property of a context: EF Core names the table after the
   property (``DbSet<Order> Orders`` -> ``Orders``); EF6 after the entity class, pluralised by
   simple English rules (``Order`` -> ``Orders``, ``Category`` -> ``Categories``) unless the
   context removes ``PluralizingTableNameConvention``.  An entity configured with
   ``modelBuilder.Entity<T>()`` but without a ``DbSet`` is named after its class.

A name with a dot and no schema (``[Table("sys.database_firewall_rules")]``, EF6's
``ToTable("sales.Orders")``) is read as ``schema.name``.  Without a schema the context's
``HasDefaultSchema("s")`` applies, else ``dbo``.  Table ids are ``SQL:<schema>.<name>``, as the
T-SQL side spells them (names match without regard to case).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from tree_sitter import Node

from excerpt.ingest.code.csharp import CsDecl, node_text
from excerpt.ingest.code.csharp_index import CsIndex, Scope, head_name
from excerpt.ingest.code.csharp_sql import STRINGS, literal_value
from excerpt.ingest.code.text import split_sql_name, sql_id

__all__ = ["EfModel", "Site", "read_ef_model"]

_DBSETS = ("DbSet", "IDbSet")
_CONTEXT_BASES = re.compile(r"(?:^|\.)(?:\w*DbContext|ObjectContext)$")
_CONFIG_BASES = ("IEntityTypeConfiguration", "EntityTypeConfiguration")
_OWNED = ("OwnsOne", "OwnsMany")


@dataclass
class Site:
    """One declaration as the graph reads it: where it stands and its own syntax nodes."""

    decl: CsDecl
    scope: Scope
    nodes: list[Node]
    usings: set[str]


@dataclass
class EfModel:
    """Contexts, their ``DbSet`` properties and the tables of every mapped entity."""

    dbsets: dict[str, dict[str, set[str]]] = field(default_factory=dict)  # context -> prop -> ids
    entity_tables: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def is_context(self, key: str) -> bool:
        return key in self.dbsets

    def dbset_tables(self, contexts: list[str] | None, name: str) -> set[str]:
        """Tables of DbSet ``name`` of ``contexts`` (None: the context is not known, so every
        context with such a DbSet, when they agree on its tables)."""
        if contexts is not None:
            return {t for c in contexts for t in self.dbsets.get(c, {}).get(name, set())}
        found = [frozenset(sets[name]) for sets in self.dbsets.values() if name in sets]
        return set(found[0]) if found and len(set(found)) == 1 else set()

    def maps_to(self, class_ids: dict[str, list[str]]) -> set[tuple[str, str, str]]:
        return {(class_ids[k][0], "MapsTo", t) for k, tables in self.entity_tables.items()
                for t in tables if class_ids.get(k)}


_Fluent = tuple[str, str, str]  # ToTable's table and schema, the configuring context ('')


@dataclass
class _Context:
    props: dict[str, list[str]] = field(default_factory=dict)  # DbSet property -> entity keys
    ef6: bool = False
    schema: str = ""
    pluralize: bool = True
    declared: set[str] = field(default_factory=set)  # entities named in Entity<T>()


def read_ef_model(sites: list[Site], graph: CsIndex) -> EfModel:
    """The EF mapping of the parsed code (see the module docstring)."""
    contexts: dict[str, _Context] = defaultdict(_Context)
    attributes: dict[str, str] = {}
    for s in sites:
        if not s.decl.member:
            _read_type(s, graph, contexts, attributes)
    for key in graph.class_ids:
        if key not in contexts and _derives_from_context(key, graph, set(contexts)):
            contexts[key].ef6 = False
    fluent: dict[str, set[_Fluent]] = defaultdict(set)
    for s in sites:
        _read_fluent(s, graph, contexts, fluent)
    return _model(contexts, attributes, fluent, graph)


def _read_type(s: Site, graph: CsIndex, contexts: dict[str, _Context],
               attributes: dict[str, str]) -> None:
    table = _table_attribute(s.decl.node)
    if table:
        attributes[s.decl.key] = table
    body = s.decl.node.child_by_field_name("body")
    props: dict[str, list[str]] = {}
    for member in body.named_children if body is not None else []:
        if member.type != "property_declaration":
            continue
        kind = member.child_by_field_name("type")
        if kind is not None and kind.type == "generic_name" and head_name(kind) in _DBSETS:
            entity = _type_argument(kind)
            props[node_text(member.child_by_field_name("name"))] = graph.type_of(entity, s.scope)
    bases = [head_name(b) for c in s.decl.node.named_children if c.type == "base_list"
             for b in c.named_children]
    if props or any(_CONTEXT_BASES.search(b) for b in bases):
        ctx = contexts[s.decl.key]
        ctx.props.update(props)
        ctx.ef6 = ctx.ef6 or "System.Data.Entity" in s.usings


def _derives_from_context(key: str, graph: CsIndex, known: set[str],
                          seen: set[str] | None = None) -> bool:
    seen = seen if seen is not None else set()
    if key in seen:
        return False
    seen.add(key)
    return any(b in known or _derives_from_context(b, graph, known, seen)
               for b in graph.base_keys(key))


def _type_argument(generic: Node) -> Node | None:
    args = [c for c in generic.named_children if c.type == "type_argument_list"]
    return args[0].named_children[0] if args and args[0].named_children else None


def _table_attribute(decl: Node) -> str:
    """``[Table("X", Schema = "s")]`` -> the table id, or ''."""
    for attr_list in (c for c in decl.named_children if c.type == "attribute_list"):
        for attr in attr_list.named_children:
            name = node_text(attr.child_by_field_name("name")).rsplit(".", 1)[-1]
            if name not in ("Table", "TableAttribute"):
                continue
            args = next((c for c in attr.named_children if c.type == "attribute_argument_list"),
                        None)
            table, schema = "", ""
            for arg in args.named_children if args is not None else []:
                value = _string(arg.named_children[-1] if arg.named_children else None)
                label = node_text(arg.child_by_field_name("name"))
                if label == "Schema":
                    schema = value
                elif not label:
                    table = value
            if table:
                return _table_id(table, schema, "")
    return ""


def _string(n: Node | None) -> str:
    return literal_value(n) if n is not None and n.type in STRINGS else ""


def _table_id(name: str, schema: str, default: str) -> str:
    parts = split_sql_name(name)
    if not schema and len(parts) > 1:
        return sql_id(parts)[0]
    return sql_id([schema or default or "dbo", parts[-1] if parts else name])[0]


# -- fluent configuration ------------------------------------------------------------------------


def _read_fluent(s: Site, graph: CsIndex, contexts: dict[str, _Context],
                 fluent: dict[str, set[_Fluent]]) -> None:
    own = contexts.get(s.decl.class_key)
    for n in s.nodes:
        if n.type != "invocation_expression":
            continue
        name = _called(n)
        if own is not None and name == "HasDefaultSchema":
            own.schema = _string(_first_argument(n)) or own.schema
        elif own is not None and name == "Remove" and "PluralizingTableNameConvention" in \
                node_text(n.child_by_field_name("function")):
            own.pluralize = False
        elif own is not None and name == "Entity":
            entity = _generic_argument(n)
            own.declared.update(graph.type_of(entity, s.scope) if entity is not None else [])
        elif name in ("ToTable", "ToView"):
            entity = _configured_entity(n, s)
            if entity is None:
                continue
            table, schema = _table_arguments(n)
            if table:
                context = s.decl.class_key if own is not None else ""
                for key in graph.type_of(entity, s.scope):
                    fluent[key].add((table, schema, context))


def _called(call: Node) -> str:
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "member_access_expression":
        fn = fn.child_by_field_name("name")
    if fn is not None and fn.type == "generic_name":
        fn = fn.named_children[0] if fn.named_children else None
    return node_text(fn) if fn is not None else ""


def _generic_argument(call: Node) -> Node | None:
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "member_access_expression":
        fn = fn.child_by_field_name("name")
    return _type_argument(fn) if fn is not None and fn.type == "generic_name" else None


def _arguments(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type == "argument"] if args is not None else []


def _first_argument(call: Node) -> Node | None:
    args = _arguments(call)
    return args[0].named_children[-1] if args and args[0].named_children else None


def _table_arguments(call: Node) -> tuple[str, str]:
    """``ToTable("X", "s")`` / ``ToTable("X", schema: "s")`` -> ``("X", "s")``."""
    positional: list[str] = []
    schema = ""
    for a in _arguments(call):
        label = node_text(a.child_by_field_name("name"))
        value = _string(a.named_children[-1] if a.named_children else None)
        if label in ("schema", "schemaName"):
            schema = value
        elif not label:
            positional.append(value)
    table = positional[0] if positional else ""
    return table, schema or (positional[1] if len(positional) > 1 else "")


def _configured_entity(call: Node, s: Site) -> Node | None:
    """The entity type a ``ToTable`` call configures (its type node), or None."""
    chain = call.child_by_field_name("function")
    while chain is not None:  # modelBuilder.Entity<T>().Property(…).ToTable(…)
        if chain.type == "invocation_expression":
            name = _called(chain)
            if name in _OWNED:
                return None
            if name == "Entity":
                return _generic_argument(chain)
            chain = chain.child_by_field_name("function")
        elif chain.type == "member_access_expression":
            chain = chain.child_by_field_name("expression")
        else:
            break
    up = call.parent
    while up is not None and up != s.decl.node:  # modelBuilder.Entity<T>(e => e.ToTable(…))
        if up.type == "invocation_expression":
            name = _called(up)
            if name in _OWNED:
                return None
            if name == "Entity":
                return _generic_argument(up)
        up = up.parent
    return _builder_parameter(s) or _configuration_base(s)


def _builder_parameter(s: Site) -> Node | None:
    params = s.decl.node.child_by_field_name("parameters")
    for p in params.named_children if params is not None else []:
        kind = p.child_by_field_name("type")
        if kind is not None and kind.type == "generic_name" and \
                head_name(kind).endswith("EntityTypeBuilder"):
            return _type_argument(kind)
    return None


def _configuration_base(s: Site) -> Node | None:
    owner = s.decl if not s.decl.member else s.decl.parent
    for c in owner.node.named_children if owner is not None else []:
        if c.type != "base_list":
            continue
        for b in c.named_children:
            if b.type == "generic_name" and head_name(b).rsplit(".", 1)[-1] in _CONFIG_BASES:
                return _type_argument(b)
    return None


# -- the model -----------------------------------------------------------------------------------


def _model(contexts: dict[str, _Context], attributes: dict[str, str],
           fluent: dict[str, set[_Fluent]], graph: CsIndex) -> EfModel:
    model = EfModel()
    configured = {  # the context's default schema is known once every part of it is read
        k: {_table_id(t, schema, contexts[c].schema if c else "") for t, schema, c in v}
        for k, v in fluent.items()}
    for key, table in attributes.items():
        configured.setdefault(key, {table})
    for key, tables in configured.items():
        model.entity_tables[key] |= tables
    for key in sorted(contexts):
        ctx = contexts[key]
        sets: dict[str, set[str]] = {}
        for prop, entities in sorted(_inherited_props(key, contexts, graph).items()):
            sets[prop] = set()
            for entity in entities:
                tables = configured.get(entity) or {_conventional(ctx, prop, entity)}
                sets[prop] |= tables
                model.entity_tables[entity] |= tables
        for entity in ctx.declared - set(model.entity_tables):
            model.entity_tables[entity].add(_table_id(entity.rsplit(".", 1)[-1], "", ctx.schema))
        model.dbsets[key] = sets
    return model


def _inherited_props(key: str, contexts: dict[str, _Context], graph: CsIndex,
                     seen: set[str] | None = None) -> dict[str, list[str]]:
    seen = seen if seen is not None else set()
    if key in seen:
        return {}
    seen.add(key)
    props: dict[str, list[str]] = {}
    for base in graph.base_keys(key):
        props.update(_inherited_props(base, contexts, graph, seen))
    props.update(contexts[key].props if key in contexts else {})
    return props


def _conventional(ctx: _Context, prop: str, entity: str) -> str:
    if not ctx.ef6:
        return _table_id(prop, "", ctx.schema)
    name = entity.rsplit(".", 1)[-1]
    return _table_id(pluralize(name) if ctx.pluralize else name, "", ctx.schema)


def pluralize(word: str) -> str:
    """English plural by the common rules (EF6's pluralizer knows more irregular words)."""
    lower = word.lower()
    if lower.endswith("y") and len(word) > 1 and lower[-2] not in "aeiou":
        return word[:-1] + "ies"
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"
