"""`excerpt mcp`: the MCP server over stdio, for an agent that starts it (Claude Desktop,
Cursor, VS Code): JSON-RPC on stdin and stdout, logs on stderr."""

from __future__ import annotations

import logging

import click

from excerpt.cli.main import cli, handles_errors, make_principal, principal_options


@cli.command()
@principal_options
@click.pass_context
@handles_errors
def mcp(ctx: click.Context, acl_tags: tuple[str, ...], clearances: tuple[str, ...],
        all_access: bool) -> None:
    """Serve the engine to an MCP client over stdio (tools search, ask, graph, context,
    get_nodes, list_collections, list_snapshots, memory_add, memory_read, memory_search;
    resources excerpt://COLLECTION/NODE_ID). Every call has the rights of --acl-tag,
    --clearance and --all-access (anonymous by default); a call may narrow them, never widen
    them. The corpus is read-only here (ingest with `excerpt ingest`); the memory tools write
    conversations, named as `excerpt memory` names them."""
    from excerpt.mcp.server import build_server, fixed_rights
    from excerpt.scope import Rights

    logging.basicConfig(level=logging.WARNING, format="%(message)s")  # stderr: stdout is MCP's
    principal = make_principal(acl_tags, clearances, all_access)
    rights = Rights(principal, all_access, "", "all access needs `excerpt mcp --all-access`")
    server = build_server(ctx.obj["engine"], fixed_rights(rights))
    try:
        server.run("stdio")
    finally:
        server.excerpt_tools.close()  # type: ignore[attr-defined]
