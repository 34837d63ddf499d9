"""`excerpt collections` and `excerpt snapshots`: what the caller may see, and deleting it.

    excerpt collections [principal options]            names with snapshot/document/node counts
    excerpt collections overview NAME [principal]      sources, snapshots, counts, metadata and
                                                       example questions (catalogue_overview.py)
    excerpt collections delete NAME [--yes]            a collection with all its snapshots and sets
    excerpt snapshots [--collection C] [principal]      snapshots and sets (see catalogue.py)
    excerpt snapshots delete ID [--yes]                 one snapshot, whole

Listing goes through the caller's rights (a collection or snapshot it sees nothing of is absent,
and an unknown --collection is an error naming the closest one it may see).  Deleting is a
local administrator's act (whoever holds the store; there is no HTTP route for it): it asks for
confirmation unless --yes, and the store deletes in one transaction (store/deletion.py).  Paths
are never cut in the table: a long source wraps inside its column.
"""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.table import Table

from excerpt import service
from excerpt.catalogue import Catalogue
from excerpt.cli.main import (
    cli,
    emit,
    handles_errors,
    json_option,
    make_principal,
    principal_options,
)
from excerpt.errors import InputError

yes_option = click.option("--yes", "-y", is_flag=True,
                          help="Do not ask for confirmation (for scripts).")


def _confirm(yes: bool, what: str) -> None:
    """Go on when --yes was given or the user says yes (on stderr, so stdout stays one JSON
    object); otherwise refuse (exit 1; under --json the usual error object)."""
    if yes:
        return
    try:
        agreed = click.confirm(f"Delete {what}? This cannot be undone", default=False,
                               err=True)
    except click.Abort:  # no input (end of stdin, Ctrl-C)
        agreed = False
    if not agreed:
        raise InputError("nothing deleted: not confirmed (give --yes to skip the question)")


def _catalogue(ctx: click.Context) -> Catalogue:
    catalogue: Catalogue = ctx.obj["engine"].catalogue
    return catalogue


@cli.group(invoke_without_command=True)
@principal_options
@json_option
@click.pass_context
@handles_errors
def collections(ctx: click.Context, acl_tags: tuple[str, ...], clearances: tuple[str, ...],
                all_access: bool) -> None:
    """List the collections the caller may see (anonymous by default) with the snapshots,
    documents and nodes it sees there (documents and nodes: the latest snapshot of each
    source, what a search reads); `collections delete NAME` deletes one."""
    if ctx.invoked_subcommand is not None:
        return
    payload = _catalogue(ctx).collections(make_principal(acl_tags, clearances, all_access))

    def human() -> None:
        if not payload["collections"]:
            click.echo("no collections you may see: `excerpt ingest PATH --collection NAME`")
            return
        table = Table("collection", "snapshots", "documents", "nodes")
        for c in payload["collections"]:
            table.add_row(c["name"], str(c["snapshots"]), str(c["documents"]), str(c["nodes"]))
        Console().print(table)

    emit(ctx, payload, human)


@collections.command("overview")
@click.argument("name")
@click.option("--examples", "n_examples", type=int, default=3, show_default=True,
              help="How many example questions to make from the collection's headings.")
@principal_options
@json_option
@click.pass_context
@handles_errors
def collections_overview(ctx: click.Context, name: str, n_examples: int,
                         acl_tags: tuple[str, ...], clearances: tuple[str, ...],
                         all_access: bool) -> None:
    """Collection NAME on one page, as the caller may see it: its sources (live or retired,
    the latest snapshot of each), snapshots, counts, last import, metadata keys with their
    most common values (for --where) and example questions made from its headings (the web
    UI's start page; GET /v1/collections/NAME/overview)."""
    request = service.OverviewRequest(name, n_examples)
    payload = service.overview(ctx.obj["engine"], request,
                               make_principal(acl_tags, clearances, all_access))
    emit(ctx, payload, lambda: _overview_text(payload))


def _overview_text(payload: dict[str, Any]) -> None:
    counts = payload["counts"]
    click.echo(f"{payload['collection']}: {counts['documents']} documents, {counts['nodes']} "
               f"nodes in {counts['sources']} sources ({counts['snapshots']} snapshots); "
               f"last import {payload['last_import']}")
    table = Table("source", "state", "latest snapshot", "created", "documents", "nodes")
    for column in table.columns:
        column.overflow = "fold"
    for s in payload["sources"]:
        state = "retired" if s["retired"] else "live" if s["live"] else ""
        table.add_row(s["source"], state, s["snapshot_id"], s["created_at"],
                      str(s["documents"]), str(s["nodes"]))
    Console().print(table)
    if payload["metadata"]["keys"]:
        click.echo("filters (--where KEY=VALUE), the most common values:")
    for key in payload["metadata"]["keys"]:
        shown = ", ".join(f"{v['value']} ({v['nodes']})" for v in key["values"][:5])
        click.echo(f"  {key['key']}: {shown}" + (" …" if key["distinct"] > 5 else ""))
    if payload["examples"]:
        click.echo("try asking:")
        for example in payload["examples"]:
            click.echo(f"  {example['question']}")


@collections.command("delete")
@click.argument("name")
@yes_option
@json_option
@click.pass_context
@handles_errors
def collections_delete(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete collection NAME with every snapshot and snapshot set in it (asks first)."""
    catalogue = _catalogue(ctx)
    if name not in catalogue.store.collections():
        raise catalogue.missing_collection(name, make_principal((), (), True))
    count = len(catalogue.store.snapshots(name))
    _confirm(yes, f"collection {name!r} and its {count} snapshots")
    payload = catalogue.delete_collection(name)
    emit(ctx, payload, lambda: click.echo(
        f"deleted collection {name!r} ({payload['snapshots']} snapshots)"))


@cli.group(invoke_without_command=True)
@click.option("--collection", default=None, help="Only this collection (an error if unknown).")
@principal_options
@json_option
@click.pass_context
@handles_errors
def snapshots(ctx: click.Context, collection: str | None, acl_tags: tuple[str, ...],
              clearances: tuple[str, ...], all_access: bool) -> None:
    """List the snapshots and snapshot sets the caller may see (a snapshot when it may see one
    of its nodes, counting only those; anonymous by default), each marked retired when a sync
    took its source out of the current view; `snapshots delete ID` deletes one."""
    if ctx.invoked_subcommand is not None:
        return
    principal = make_principal(acl_tags, clearances, all_access)
    payload = ctx.obj["engine"].snapshots(collection, principal)
    emit(ctx, payload, lambda: _snapshot_table(payload))


def _snapshot_table(payload: dict[str, Any]) -> None:
    """The snapshots as a table whose cells wrap (a long source path is folded over lines,
    never cut), then the sets; a snapshot of a retired source (a file a sync saw deleted) says
    so: it is history, not in what a search reads."""
    table = Table("snapshot", "collection", "source", "nodes", "name", "created", "retired")
    for column in table.columns:
        column.overflow = "fold"
    for s in payload["snapshots"]:
        table.add_row(s["snapshot_id"], s["collection"], s["source"], str(s["nodes"]),
                      s["name"] or "", s["created_at"], "retired" if s["retired"] else "")
    Console().print(table)
    for st in payload["sets"]:
        click.echo(f"set {st['name']}: {', '.join(st['snapshot_ids'])}")


@snapshots.command("delete")
@click.argument("snapshot_id", metavar="ID")
@yes_option
@json_option
@click.pass_context
@handles_errors
def snapshots_delete(ctx: click.Context, snapshot_id: str, yes: bool) -> None:
    """Delete snapshot ID whole: its documents, nodes, edges, vectors and places in snapshot
    sets, in one transaction (asks first). Reads of its source fall back to the previous
    snapshot of that source."""
    catalogue = _catalogue(ctx)
    info = catalogue.store.snapshot(snapshot_id)
    _confirm(yes, f"snapshot {snapshot_id!r} of {info.collection!r} ({info.nodes} nodes)")
    payload = catalogue.delete_snapshot(snapshot_id)
    emit(ctx, payload, lambda: click.echo(
        f"deleted snapshot {snapshot_id!r} of {payload['collection']!r}"))
