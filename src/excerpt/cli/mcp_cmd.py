"""`excerpt mcp`: the MCP server over stdio, for an agent that starts it (Claude Desktop,
Cursor, VS Code): JSON-RPC on stdin and stdout, logs on stderr."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from excerpt.cli.main import cli, handles_errors, make_principal, principal_options


@cli.command()
@principal_options
@click.option("--ingester", is_flag=True,
              help="Offer the ingest tool: the agent may import documents (their text, or "
                   "files this user can read) into any collection.")
@click.option("--ingest-root", "ingest_roots", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="With --ingester: paths only inside DIR (repeatable; default: anywhere).")
@click.pass_context
@handles_errors
def mcp(ctx: click.Context, acl_tags: tuple[str, ...], clearances: tuple[str, ...],
        all_access: bool, ingester: bool, ingest_roots: tuple[Path, ...]) -> None:
    """Serve the engine to an MCP client over stdio (tools search, ask, graph, context,
    get_nodes, list_collections, list_snapshots, memory_add, memory_read, memory_search;
    resources excerpt://COLLECTION/NODE_ID). Every call has the rights of --acl-tag,
    --clearance and --all-access (anonymous by default); a call may narrow them, never widen
    them. The corpus is read-only unless --ingester is given (then the tool ingest); the
    memory tools write conversations, named as `excerpt memory` names them."""
    import anyio

    from excerpt.edge.uploads import Uploads
    from excerpt.mcp.server import build_server, fixed_rights
    from excerpt.mcp.stdio import serve_stdio
    from excerpt.mcp.tools import Ingest
    from excerpt.scope import Rights

    if ingest_roots and not ingester:
        raise click.UsageError("--ingest-root needs --ingester")
    logging.basicConfig(level=logging.WARNING, format="%(message)s")  # stderr: stdout is MCP's
    engine = ctx.obj["engine"]
    principal = make_principal(acl_tags, clearances, all_access)
    rights = Rights(principal, all_access, "", "all access needs `excerpt mcp --all-access`",
                    may_ingest=ingester, may_ingest_paths=ingester)
    ingest = (Ingest(Uploads(engine.home / "uploads"), tuple(ingest_roots) or None)
              if ingester else None)
    server = build_server(engine, fixed_rights(rights), ingest=ingest)
    try:
        anyio.run(serve_stdio, server)  # the SDK's stdio, answering lines that are not JSON-RPC
    finally:
        server.excerpt_tools.close()  # type: ignore[attr-defined]
