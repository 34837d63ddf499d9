"""`excerpt graph` and `excerpt context`: dependency expansion and budgeted node texts.

``graph --direction in`` walks edges backwards (who calls, writes or reads a node);
``context --query`` searches, expands the hits and packs them in one call.
"""

from __future__ import annotations

import click

from excerpt.cli.main import (
    Bounded,
    cli,
    emit,
    handles_errors,
    json_option,
    local_scope,
    principal_options,
)
from excerpt.context import PRIORITIZATIONS
from excerpt.engine import Engine
from excerpt.graph.expand import DIRECTIONS
from excerpt.scope import Scope
from excerpt.types import SEARCH_MODES, SearchMode

direction_option = click.option(
    "--direction", type=click.Choice(DIRECTIONS), default="out", show_default=True,
    help="out: edges as stored (what X calls, reads, writes); in: backwards (who calls, "
         "writes or reads X); both.")


@cli.command()
@click.argument("seeds", nargs=-1, required=True)
@click.option("--collection", default="default", show_default=True,
              help="The collection of the seeds.")
@click.option("--snapshot", "snapshot_id", default=None, help="Expand in this snapshot only.")
@click.option("--snapshot-set", default=None, help="Expand in the snapshots of this set.")
@click.option("--max-depth", type=Bounded("max_depth"), default=None,
              help="Deepest level from a seed, up to 10 (default: setting graph_max_depth).")
@click.option("--max-nodes", type=Bounded("max_nodes"), default=None,
              help="Most nodes returned, seeds included, up to 10,000 (default: "
                   "graph_max_nodes).")
@click.option("--allow", "allow", multiple=True, metavar="RELATION",
              help="A relation to follow (repeatable; default: graph_edge_allowlist).")
@click.option("--seed-only", is_flag=True, help="Only edges that touch a seed.")
@direction_option
@principal_options
@json_option
@click.pass_context
@handles_errors
def graph(ctx: click.Context, seeds: tuple[str, ...], collection: str, snapshot_id: str | None,
          snapshot_set: str | None, max_depth: int | None, max_nodes: int | None,
          allow: tuple[str, ...], seed_only: bool, direction: str, acl_tags: tuple[str, ...],
          clearances: tuple[str, ...], all_access: bool) -> None:
    """Expand SEEDS along their dependency edges, inside the caller's rights."""
    engine: Engine = ctx.obj["engine"]
    limits = engine.graph_limits(max_depth, max_nodes, allow, seed_only, direction)
    filters, principal = local_scope(Scope(collection, snapshot_id, snapshot_set, (),
                                           acl_tags, clearances, all_access))
    result = engine.graph(list(seeds), filters, principal, limits)

    def human() -> None:
        for node_id, depth in result.nodes:
            click.echo(f"{'  ' * depth}{node_id}  (depth {depth})")
        for e in result.edges:
            click.echo(f"{e.from_id} --{e.relation}--> {e.to_id}")
        if result.removed_nodes:
            click.echo(f"{result.removed_nodes} nodes and {result.removed_edges} edges removed "
                       "by security", err=True)
        for seed in result.unknown_seeds:
            click.echo(f"seed {seed}: not found", err=True)

    emit(ctx, result.to_json(), human)


@cli.command()
@click.option("--seed", "seeds", multiple=True, metavar="ID", help="A seed node (repeatable).")
@click.option("--graph", "graph_ids", multiple=True, metavar="ID",
              help="A node reached by graph expansion (repeatable).")
@click.option("--collection", default="default", show_default=True,
              help="The collection of the nodes.")
@click.option("--snapshot", "snapshot_id", default=None, help="Read this snapshot only.")
@click.option("--snapshot-set", default=None, help="Read the snapshots of this set.")
@click.option("--budget-tokens", type=Bounded("budget_tokens"), default=None,
              help="Token budget, 1 to 1,000,000 (default: setting context_budget_tokens).")
@click.option("--budget-from-settings", is_flag=True,
              help="Take the budget from settings (the default when --budget-tokens is absent).")
@click.option("--max-chars", type=Bounded("max_chars"), default=None,
              help="Character budget over all texts, up to 10,000,000.")
@click.option("--prioritization", type=click.Choice(PRIORITIZATIONS), default=None,
              help="Order (default: setting context_prioritization).")
@click.option("--query", default=None,
              help="Search this, expand the hits and pack them (hits are seeds).")
@click.option("--mode", type=click.Choice(SEARCH_MODES), default="hybrid", show_default=True,
              help="Search mode of --query.")
@click.option("-k", "k", type=Bounded("k"), default=None,
              help="Hits of --query to expand, at most 100 (default: the search's own k).")
@click.option("--max-depth", type=Bounded("max_depth"), default=None,
              help="Expansion depth of --query's hits, up to 10 (default: setting "
                   "graph_max_depth).")
@click.option("--max-nodes", type=Bounded("max_nodes"), default=None,
              help="Most nodes the expansion returns, up to 10,000 (default: graph_max_nodes).")
@click.option("--allow", "allow", multiple=True, metavar="RELATION",
              help="A relation the expansion follows (repeatable).")
@direction_option
@principal_options
@json_option
@click.pass_context
@handles_errors
def context(ctx: click.Context, seeds: tuple[str, ...], graph_ids: tuple[str, ...],
            collection: str, snapshot_id: str | None, snapshot_set: str | None,
            budget_tokens: int | None, budget_from_settings: bool, max_chars: int | None,
            prioritization: str | None, query: str | None, mode: SearchMode, k: int | None,
            max_depth: int | None, max_nodes: int | None, allow: tuple[str, ...],
            direction: str, acl_tags: tuple[str, ...], clearances: tuple[str, ...],
            all_access: bool) -> None:
    """Fetch whole node texts, seeds and graph nodes, under token and character budgets;
    with --query, the seeds are its hits and the graph nodes what their expansion reaches."""
    if budget_from_settings and budget_tokens is not None:
        raise click.UsageError("give --budget-tokens or --budget-from-settings, not both")
    engine: Engine = ctx.obj["engine"]
    limits = engine.graph_limits(max_depth, max_nodes, allow, direction=direction)
    filters, principal = local_scope(Scope(collection, snapshot_id, snapshot_set, (),
                                           acl_tags, clearances, all_access))
    result = engine.context(list(seeds), list(graph_ids), filters, principal, budget_tokens,
                            max_chars, prioritization, query, mode, k, limits)

    def human() -> None:
        for n in result.node_texts:
            click.echo(f"== {n.id} ({n.group}, {n.tokens} tokens)\n{n.text}")
        for node_id, reason in result.skipped:
            click.echo(f"skipped {node_id}: {reason}", err=True)
        click.echo(f"{result.total_tokens} tokens, {result.total_chars} chars", err=True)

    emit(ctx, result.to_json(), human)
