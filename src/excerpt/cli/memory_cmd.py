"""`excerpt memory`: conversation memory from the command line, and its daemon.

    excerpt memory CONVERSATION add --speaker user --turn 1 "text"
    excerpt memory CONVERSATION read|last N|search QUERY|summary|delete INDEX|stats|config
    excerpt memory serve [--host 127.0.0.1] [--port 8765] [--backend durable|in-memory]
                         [--allow-host NAME]...

The conversation commands act on the durable store in ``--home`` (``memory.db``), or on a
running daemon when ``--daemon URL`` is given (they send the daemon's single-entry form,
``POST /v1/memory/CONVERSATION/query``). Either way they print the same JSON.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import click

from excerpt.cli.main import cli, emit, handles_errors, json_option
from excerpt.errors import InputError, ServiceError
from excerpt.memory.model import SPEAKERS


class _ConversationGroup(click.Group):
    """``excerpt memory NAME VERB ...``: a first word that is not a command names the
    conversation; ``serve`` is a command of its own."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] == "--daemon" else 1  # the group's only option with a value
        if i < len(args) and args[i] not in self.commands:
            ctx.meta["conversation"] = args.pop(i)
        return super().parse_args(ctx, args)


class _ConversationCommand(click.Command):
    """A verb on one conversation: its usage and help name the CONVERSATION that comes
    before the verb (``excerpt memory CONVERSATION add ...``)."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        group = ctx.parent.command_path if ctx.parent else "excerpt memory"
        formatter.write_usage(f"{group} CONVERSATION {ctx.info_name}",
                              " ".join(self.collect_usage_pieces(ctx)))

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text("CONVERSATION: the conversation's name, any word that is not "
                                 "a verb of `excerpt memory`; given before the verb.")


_ConversationGroup.command_class = _ConversationCommand


@cli.group(cls=_ConversationGroup)
@click.option("--daemon", default=None, metavar="URL",
              help="Talk to a running memory daemon (e.g. http://127.0.0.1:8765).")
@click.pass_context
def memory(ctx: click.Context, daemon: str | None) -> None:
    """Conversation memory: excerpt memory CONVERSATION VERB ..., or excerpt memory serve."""
    ctx.obj["memory_daemon"] = daemon


def _run(ctx: click.Context, intent: str, data: dict[str, Any]) -> None:
    conversation = ctx.meta.get("conversation")  # shared by every context of the command
    if not conversation:
        raise click.UsageError("name the conversation: excerpt memory CONVERSATION " + intent)
    daemon = ctx.obj.get("memory_daemon")
    payload = (_remote(daemon, conversation, intent, data) if daemon
               else _local(ctx, conversation, intent, data))
    emit(ctx, payload, lambda: click.echo(json.dumps(payload, ensure_ascii=False, indent=2)))


def _local(ctx: click.Context, conversation: str, intent: str,
           data: dict[str, Any]) -> dict[str, Any]:
    from excerpt.memory.intents import handle
    from excerpt.memory.store import MemoryStore

    store = MemoryStore(ctx.obj["engine"].memory_backend())
    try:
        return handle(store, conversation, intent, data)
    finally:
        store.close()


def _remote(url: str, conversation: str, intent: str, data: dict[str, Any]) -> dict[str, Any]:
    from urllib.parse import quote

    body = json.dumps({"intent": intent, "data": data}).encode("utf-8")
    request = urllib.request.Request(
        f"{url.rstrip('/')}/v1/memory/{quote(conversation, safe='')}/query", body,
        {"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except urllib.error.HTTPError as exc:
        detail = json.loads(exc.read() or b"{}").get("error", exc.reason)
        if exc.code == 400:
            raise InputError(str(detail)) from None
        raise ServiceError(f"memory daemon at {url} answered HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise ServiceError(f"memory daemon at {url} cannot be reached: {exc}") from None


speaker_option = click.option("--speaker", type=click.Choice(SPEAKERS), default=None,
                              help="Only this speaker's utterances.")


@memory.command()
@click.option("--speaker", type=click.Choice(SPEAKERS), required=True,
              help="Who said TEXT.")
@click.option("--turn", type=click.IntRange(min=0), required=True,
              help="The number of the turn TEXT belongs to.")
@click.argument("text")
@json_option
@click.pass_context
@handles_errors
def add(ctx: click.Context, speaker: str, turn: int, text: str) -> None:
    """Add an utterance (oldest ones are evicted into the summary past the limits)."""
    _run(ctx, "add", {"speaker": speaker, "turn": turn, "text": text})


@memory.command()
@speaker_option
@json_option
@click.pass_context
@handles_errors
def read(ctx: click.Context, speaker: str | None) -> None:
    """The buffered utterances, oldest first."""
    _run(ctx, "read", {"speaker": speaker})


@memory.command()
@click.argument("n", type=click.IntRange(min=0))
@speaker_option
@json_option
@click.pass_context
@handles_errors
def last(ctx: click.Context, n: int, speaker: str | None) -> None:
    """The last N utterances, oldest first."""
    _run(ctx, "last", {"n": n, "speaker": speaker})


@memory.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True,
              help="How many utterances.")
@speaker_option
@json_option
@click.pass_context
@handles_errors
def search(ctx: click.Context, query: str, k: int, speaker: str | None) -> None:
    """Utterances by relevance to QUERY (BM25, blended with embeddings when available)."""
    _run(ctx, "search", {"query": query, "k": k, "speaker": speaker})


@memory.command()
@click.option("--token-limit", type=click.IntRange(min=1), default=None,
              help="Cut the summary to this many tokens (default: the whole summary).")
@json_option
@click.pass_context
@handles_errors
def summary(ctx: click.Context, token_limit: int | None) -> None:
    """The running summary of evicted utterances."""
    _run(ctx, "summary", {"token_limit": token_limit})


@memory.command()
@click.argument("index", type=click.IntRange(min=0))
@json_option
@click.pass_context
@handles_errors
def delete(ctx: click.Context, index: int) -> None:
    """Delete the utterance with this utterance_index."""
    _run(ctx, "delete", {"index": index})


@memory.command()
@json_option
@click.pass_context
@handles_errors
def stats(ctx: click.Context) -> None:
    """Counts: utterances, tokens, evicted, summary tokens, config."""
    _run(ctx, "stats", {})


@memory.command()
@click.option("--buffer-size", type=click.IntRange(min=1), default=None,
              help="Utterances kept before the oldest are evicted into the summary.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Tokens kept before the oldest utterances are evicted.")
@click.option("--summary-token-limit", type=click.IntRange(min=1), default=None,
              help="Tokens the running summary may hold.")
@json_option
@click.pass_context
@handles_errors
def config(ctx: click.Context, buffer_size: int | None, max_tokens: int | None,
           summary_token_limit: int | None) -> None:
    """Show or change the conversation's limits (defaults 20 utterances, 8000 tokens)."""
    _run(ctx, "config", {"buffer_size": buffer_size, "max_tokens": max_tokens,
                         "summary_token_limit": summary_token_limit})


@memory.command(cls=click.Command)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True,
              help="The port to listen on.")
@click.option("--backend", type=click.Choice(["durable", "in-memory"]), default="durable",
              show_default=True, help="durable: memory.db in --home; in-memory: lost on exit.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Also serve requests whose Host header is NAME (repeatable); by default only "
                   "loopback names and --host itself (a guard against DNS rebinding).")
@click.pass_context
@handles_errors
def serve(ctx: click.Context, host: str, port: int, backend: str,
          allow_hosts: tuple[str, ...]) -> None:
    """Run the memory daemon (HTTP, JSON) until interrupted."""
    from excerpt.memory.backends import open_backend
    from excerpt.memory.store import MemoryStore
    from excerpt.server.memory_api import serve as run

    store = MemoryStore(open_backend(backend, Path(ctx.obj["engine"].home)))
    click.echo(f"memory daemon on http://{host}:{port} ({backend})", err=True)
    try:
        run(store, backend, host, port, allow_hosts)
    finally:
        store.close()
