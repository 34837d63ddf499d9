"""`excerpt keys` and `excerpt serve`: API keys, and the engine over HTTP."""

from __future__ import annotations

import errno
import socket
from pathlib import Path

import click

from excerpt.cli.main import cli, emit, handles_errors, json_option
from excerpt.edge.keys import KEYS_FILE, ROLES, KeyRing
from excerpt.errors import InputError

keys_option = click.option("--keys", "keys_file", default=None,
                           type=click.Path(dir_okay=False, path_type=Path),
                           help=f"The keys file (default: {KEYS_FILE} in --home).")


def _keys_path(ctx: click.Context, keys_file: Path | None) -> Path:
    return keys_file or Path(ctx.obj["engine"].home) / KEYS_FILE


@cli.group()
def keys() -> None:
    """API keys for `excerpt serve`: each maps to a principal and a role."""


@keys.command("add")
@click.argument("name")
@click.option("--acl-tag", "acl_tags", multiple=True, metavar="T",
              help="A group the key's principal belongs to (repeatable).")
@click.option("--clearance", "clearances", multiple=True, metavar="L",
              help="A classification label the key's principal may read (repeatable).")
@click.option("--role", type=click.Choice(ROLES), default="reader", show_default=True,
              help="reader: read; ingester: also import; admin: also ask for all access.")
@keys_option
@json_option
@click.pass_context
@handles_errors
def keys_add(ctx: click.Context, name: str, acl_tags: tuple[str, ...],
             clearances: tuple[str, ...], role: str, keys_file: Path | None) -> None:
    """Create a key for NAME; the key is printed once (the file keeps its SHA-256). NAME, tags
    and labels are non-blank, without control characters; NAME has no '/' or '..'."""
    with KeyRing.editing(_keys_path(ctx, keys_file)) as ring:
        entry, key = ring.add(name, role, acl_tags, clearances)
    payload = {"name": entry.name, "id": entry.identity, "key": key, "role": entry.role,
               "acl_tags": list(entry.acl_tags), "clearances": list(entry.clearances)}
    emit(ctx, payload, lambda: click.echo(f"{key}\n(shown once: keep it; role {role})"))


@keys.command("revoke")
@click.argument("name")
@keys_option
@json_option
@click.pass_context
@handles_errors
def keys_revoke(ctx: click.Context, name: str, keys_file: Path | None) -> None:
    """Revoke NAME's key: requests with it get 401 from the next request on."""
    with KeyRing.editing(_keys_path(ctx, keys_file)) as ring:
        entry = ring.revoke(name)
    emit(ctx, {"name": entry.name, "revoked": True}, lambda: click.echo(f"revoked {name}"))


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8080, show_default=True,
              help="The port to listen on.")
@click.option("--ingest-root", "ingest_roots", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A folder admin keys may ingest server-side paths from (repeatable).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes sharing the port, each with its own engine "
                   "(one per core uses them all).")
@keys_option
@click.pass_context
@handles_errors
def serve(ctx: click.Context, host: str, port: int, ingest_roots: tuple[Path, ...],
          workers: int, keys_file: Path | None) -> None:
    """Serve the engine over HTTP (GET /v1/search, POST /v1/ask, GET /v1/snapshots,
    /-/health, /openapi.json); every call but the health check needs an API key (or, with
    the oidc_issuer setting, a token of that identity provider)."""
    from excerpt.edge.oidc import verifier
    from excerpt.server.merges import BackgroundMerges
    from excerpt.server.workers import serve as run

    if workers > 1 and port == 0:
        raise click.UsageError("--workers needs a fixed --port: each worker listens on it")
    ring = KeyRing.load(_keys_path(ctx, keys_file))  # a broken file: exit 1, naming it
    tokens = verifier(ctx.obj["engine"].settings)  # oidc_* settings it cannot use: exit 1
    if not ring.entries and tokens is None:
        raise click.UsageError("no API keys yet: create one with `excerpt keys add NAME` "
                               "(or set oidc_issuer: docs/cli.md)")
    _check_port(host, port)  # before the URL is printed: never announce a dead address
    plural = f", {workers} workers" if workers > 1 else ""
    issuer = f", tokens of {tokens.issuer}" if tokens else ""
    click.echo(f"excerpt on http://{host}:{port} ({len(ring.entries)} keys{issuer}{plural})",
               err=True)
    merges = BackgroundMerges(ctx.obj["engine"])  # in this process, whatever the workers
    merges.start()
    try:
        run(ctx.obj["engine"], ring, host, port, ingest_roots, workers)
    finally:
        merges.stop()


def _check_port(host: str, port: int) -> None:
    """Refuses (exit 1, one line) an address the server could not listen on: binds it once,
    as uvicorn will (SO_REUSEADDR), and lets it go."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:  # socket.gaierror too: a host that does not resolve
        if exc.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} is in use: another program listens on "
                             f"{host}:{port}; stop it or choose another --port") from None
        raise InputError(f"cannot listen on {host}:{port}: "
                         f"{exc.strerror or exc}") from None
