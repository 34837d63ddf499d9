"""The `excerpt` command: thin wrappers over the engine (see docs/cli.md and CONTRACT.md).

Every command takes --json and then prints exactly one JSON object on stdout; progress and logs
go to stderr.  Exit 0 on success, 2 for a usage error, 1 for a refused input or a failure.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from excerpt import service
from excerpt.cli.places import citation_place
from excerpt.edge.errors import in_tree, reason
from excerpt.embedder_names import EMBEDDERS
from excerpt.engine import Engine
from excerpt.errors import ExcerptError, InputError
from excerpt.ingest import FORMATS
from excerpt.limits import LIMITS, within
from excerpt.scope import Rights, Scope
from excerpt.settings import Settings, load_settings
from excerpt.types import SEARCH_MODES, Filters, Principal, SearchMode

F = TypeVar("F", bound=Callable[..., Any])


def default_home() -> str:
    return os.environ.get("EXCERPT_HOME") or "./.excerpt"


def emit(ctx: click.Context, payload: dict[str, Any], human: Callable[[], None]) -> None:
    if ctx.obj["json"]:
        click.echo(json.dumps(payload, ensure_ascii=False))
    else:
        human()


def handles_errors(func: F) -> F:
    """Map excerpt's errors to exit 1 with a one-line reason (and a JSON error under --json);
    so too a process out of open files, wherever it ran out (the store, a segment, a model)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        try:
            return func(*args, **kwargs)
        except (ExcerptError, OSError) as exc:
            known = in_tree(exc, "raise the limit (ulimit -n)")  # edge/errors.py: every door's
            if known is None:
                raise
            fail(ctx, known)

    return cast(F, wrapper)


def fail(ctx: click.Context, exc: ExcerptError) -> None:
    """Exits with ``exc``'s code after its one-line reason."""
    line = reason(exc)
    if ctx.obj.get("json"):
        click.echo(json.dumps({"error": line, "kind": exc.kind}, ensure_ascii=False))
    click.echo(f"excerpt: {line}", err=True)
    ctx.exit(exc.exit_code)


def json_option(func: F) -> F:
    def callback(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if value:
            ctx.ensure_object(dict)["json"] = True

    return click.option(
        "--json", "as_json", is_flag=True, expose_value=False, callback=callback,
        help="Print one JSON object on stdout.",
    )(func)


def principal_options(func: F) -> F:
    func = click.option("--acl-tag", "acl_tags", multiple=True, metavar="T",
                        help="A group the caller belongs to (repeatable).")(func)
    func = click.option("--clearance", "clearances", multiple=True, metavar="L",
                        help="A classification label the caller may read (repeatable).")(func)
    func = click.option("--all-access", is_flag=True,
                        help="See everything (administrators and tests); reported in the output.")(
        func
    )
    return func


LOCAL_RIGHTS = Rights(Principal.admin(), may_see_all=True)
"""A local command may name any rights (it reads the store's files anyway); what it names is
exactly what it gets, by the one rule of :mod:`excerpt.scope`: nothing named is anonymous."""


def make_principal(acl_tags: tuple[str, ...], clearances: tuple[str, ...],
                   all_access: bool) -> Principal:
    return Scope(acl_tag=acl_tags, clearance=clearances,
                 all_access=all_access).principal(LOCAL_RIGHTS)


def local_scope(scope: Scope) -> tuple[Filters, Principal]:
    """The filters and principal of a command's scope options (:mod:`excerpt.scope`, the
    model the HTTP bodies, MCP tools and chat read too); a bad ``--where`` is a usage error."""
    try:
        filters = scope.filters()
    except InputError as exc:
        raise click.BadParameter(str(exc).removeprefix("where: "), param_hint="--where") from None
    return filters, scope.principal(LOCAL_RIGHTS)


class Bounded(click.IntRange):
    """An integer option with the bounds of ``LIMITS[name]`` (:mod:`excerpt.limits`): a value
    outside them is a usage error (exit 2) in the very sentence HTTP and MCP refuse it with."""

    def __init__(self, name: str) -> None:
        low, high = LIMITS[name]
        super().__init__(low, high)
        self.limit = name

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = click.INT.convert(value, param, ctx)
        try:
            return within(self.limit, number)
        except InputError as exc:
            raise click.UsageError(str(exc), ctx) from None


COMMANDS = {
    "ask": "ask_cmd",
    "collections": "catalogue_cmd",
    "snapshots": "catalogue_cmd",
    "graph": "code_cmd",
    "context": "code_cmd",
    "eval": "eval_cmd",
    "mcp": "mcp_cmd",
    "memory": "memory_cmd",
    "pg": "pg_cmd",
    "migrate": "pg_cmd",
    "keys": "serve_cmd",
    "serve": "serve_cmd",
    "sync": "sync_cmd",
    "merge": "sync_cmd",
}
"""The commands defined in other modules of :mod:`excerpt.cli`, by the module that adds them
(with ``@cli.command``) when imported."""


class LazyCommands(MutableMapping[str, click.Command]):
    """The top-level commands, each other module's imported when one of its commands is
    looked up (``excerpt search`` imports no ask, eval, serve, sync…), all of them when the
    commands are listed (``--help``, anything walking ``cli.commands``)."""

    def __init__(self, given: Mapping[str, click.Command]) -> None:
        self._loaded: dict[str, click.Command] = dict(given)

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded and name in COMMANDS:
            importlib.import_module(f"excerpt.cli.{COMMANDS[name]}")  # adds it to `cli`
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        for module in sorted(set(COMMANDS.values())):
            importlib.import_module(f"excerpt.cli.{module}")
        return iter(list(self._loaded))

    def __len__(self) -> int:
        return len(list(iter(self)))


class LazyGroup(click.Group):
    """The top-level group, its commands in a :class:`LazyCommands`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.commands)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:  # `search x --home DIR`: say where it goes
            raise self.misplaced(exc, ctx.invoked_subcommand) or exc from None

    def misplaced(self, exc: click.NoSuchOption,
                  command: str | None) -> click.UsageError | None:
        """The usage error for a global option given after the command (click only knows
        the command's own options there), or None when ``exc`` is about another option."""
        for param in self.params:
            if isinstance(param, click.Option) and exc.option_name in param.opts:
                value = "" if param.is_flag else f" {param.metavar or 'VALUE'}"
                rest = f" {command or 'COMMAND'} …" if param.expose_value else ""  # --version
                return click.UsageError(
                    f"{exc.option_name} is a global option: put it before the command: "
                    f"excerpt {exc.option_name}{value}{rest}", exc.ctx)
        return None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", default=default_home, show_default="$EXCERPT_HOME or ./.excerpt",
              type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Where the store lives.")
@click.option("--settings", "settings_file", default=None, envvar="EXCERPT_SETTINGS",
              type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Pipeline settings file (.toml/.yaml); options given on a command win.")
@click.option("--log-dir", default=None, envvar="EXCERPT_LOG_DIR",
              type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write pipeline traces and logs here (overrides the log_dir setting).")
@click.option("--store", "store_url", default=None, envvar="EXCERPT_STORE", metavar="URL",
              help="Keep everything in PostgreSQL + pgvector at this postgresql:// URL "
                   "(--home then holds only scratch files).")
@click.option("--json", "as_json", is_flag=True, help="Same as --json on the command.")
@click.version_option(package_name="excerpt")
@click.pass_context
def cli(ctx: click.Context, home: Path, settings_file: Path | None, log_dir: Path | None,
        store_url: str | None, as_json: bool) -> None:
    """excerpt: a grounded retrieval engine over your books, regulations and code."""
    ctx.ensure_object(dict)
    ctx.obj["json"] = ctx.obj.get("json", False) or as_json
    try:
        settings = load_settings(settings_file) if settings_file else Settings()
    except ExcerptError as exc:
        raise click.BadParameter(str(exc), param_hint="--settings") from None
    if log_dir is not None:
        settings = settings.with_(log_dir=str(log_dir))
    ctx.obj["engine"] = Engine(home, settings, store_url=store_url)
    ctx.call_on_close(ctx.obj["engine"].close)


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar on stderr, one task per stage."""
    if not enabled:
        yield lambda stage, done, total: None
        return
    from rich.console import Console  # here: rich takes ~0.1-0.5 s to import, and a search
    from rich.progress import (  # never draws a progress bar
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=Console(stderr=True), transient=False,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def unresolved_summary(unresolved: dict[str, list[str]], shown: int = 3) -> str:
    """``ReadsFrom 2 (SQL:a.b, SQL:c.d), dynamic SQL 1 (SQL:dbo.p)``: counts, a few names."""
    parts = []
    for kind, names in unresolved.items():
        more = ", …" if len(names) > shown else ""
        parts.append(f"{kind} {len(names)} ({', '.join(names[:shown])}{more})")
    return "; ".join(parts)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--collection", default="default", show_default=True,
              help="The collection the snapshot joins (created on first use).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="How to read PATHS; auto: by file name and content.")
@click.option("--acl-tag", "acl_tags", multiple=True, metavar="T",
              help="ACL tag put on every node (repeatable).")
@click.option("--classification", "labels", multiple=True, metavar="L",
              help="Classification label put on every node (repeatable).")
@click.option("--snapshot-name", default=None, help="A human name for the new snapshot.")
@click.option("--source", default=None,
              help="Name of the source (default: the paths); its snapshots replace each other.")
@click.option("--embedder", type=click.Choice(EMBEDDERS), default="auto", show_default=True,
              help="auto: MiniLM for English, multilingual e5 for Korean; none: BM25 only.")
@click.option("--ray", "ray_address", default=None, metavar="ADDRESS",
              help="Embed the batches on a Ray cluster: auto (the cluster `ray start` made "
                   "here), HOST:PORT, ray://HOST:PORT, or local (a private one for this run); "
                   "the rest of the import runs here. Needs ray: pip install \"excerpt[cluster]\".")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@json_option
@click.pass_context
@handles_errors
def ingest(ctx: click.Context, paths: tuple[Path, ...], collection: str, fmt: str,
           acl_tags: tuple[str, ...], labels: tuple[str, ...], snapshot_name: str | None,
           source: str | None, embedder: str, ray_address: str | None,
           no_progress: bool) -> None:
    """Import PATHS (files or folders) as one new snapshot of a source."""
    engine: Engine = ctx.obj["engine"]
    try:
        with progress_bar(not no_progress) as update:
            result = engine.ingest(
                list(paths), collection=collection, fmt=fmt, acl_tags=acl_tags,
                classification_labels=labels, snapshot_name=snapshot_name, embedder=embedder,
                source=source, progress=update, ray=ray_address,
            )
    except KeyboardInterrupt:  # Ctrl-C: the run is marked failed and nothing of it shows
        click.echo("excerpt: interrupted: the import was not published, nothing of it is "
                   "visible; run it again to import", err=True)
        ctx.exit(130)  # 128 + SIGINT, as a shell reports a command Ctrl-C stopped
    payload = result.to_json()

    def human() -> None:
        click.echo(
            f"{result.status}: snapshot {result.snapshot_id} in {result.collection!r}: "
            f"{result.documents} documents, {result.nodes} nodes, {result.edges} edges "
            f"in {result.seconds:.1f} s ({result.embedded} embedded)"
            + (f", {len(result.errors)} skipped (below)" if result.errors else "")
        )
        if result.formats:
            click.echo("  by format: " + "; ".join(
                f"{fmt}: {c['read']} read, {c['skipped']} skipped"
                for fmt, c in result.formats.items()))
        for issue in result.errors:
            click.echo(f"  skipped {issue.path}: {issue.reason}", err=True)
        if result.unresolved:
            click.echo(f"  unresolved (kept as edges to objects not in the import): "
                       f"{unresolved_summary(result.unresolved)}", err=True)

    emit(ctx, payload, human)


@cli.command()
@click.argument("before")
@click.argument("after")
@click.option("--exact-whitespace", is_flag=True,
              help="Count whitespace-only differences as changes (default: 'reformatted').")
@principal_options
@json_option
@click.pass_context
@handles_errors
def diff(ctx: click.Context, before: str, after: str, exact_whitespace: bool,
         acl_tags: tuple[str, ...], clearances: tuple[str, ...], all_access: bool) -> None:
    """What changed from snapshot BEFORE to snapshot AFTER (e.g. two editions of a book
    imported with the same --source): nodes added, removed, changed, per document; only
    nodes the caller may see are compared."""
    from excerpt.ingest.books.editions import diff_snapshots

    result = diff_snapshots(ctx.obj["engine"].store, before, after,
                            make_principal(acl_tags, clearances, all_access),
                            ignore_whitespace=not exact_whitespace)
    payload = result.to_json()

    def human() -> None:
        counts = payload["counts"]
        click.echo(", ".join(f"{n} {k}" for k, n in counts.items()))
        for doc in payload["documents"]:
            kinds = ("added", "removed", "changed", "reformatted")
            parts = [f"{k} {', '.join(doc[k])}" for k in kinds if doc[k]]
            click.echo(f"{doc['document_id']} ({doc['status']}): " + "; ".join(parts))

    emit(ctx, payload, human)


@cli.command("snapshot-set")
@click.argument("name")
@click.argument("snapshot_ids", nargs=-1, required=True)
@click.option("--collection", default="default", show_default=True,
              help="The collection of the snapshots.")
@json_option
@click.pass_context
@handles_errors
def snapshot_set(ctx: click.Context, name: str, snapshot_ids: tuple[str, ...],
                 collection: str) -> None:
    """Name a set of snapshots (creates it, or replaces its members)."""
    payload = ctx.obj["engine"].snapshot_set(name, list(snapshot_ids), collection)
    emit(ctx, payload, lambda: click.echo(f"set {name}: {', '.join(payload['snapshot_ids'])}"))


@cli.command()
@click.argument("query")
@click.option("--collection", default="default", show_default=True,
              help="The collection to search.")
@click.option("--mode", type=click.Choice(SEARCH_MODES), default="hybrid", show_default=True,
              help="bm25: words; semantic: embeddings; hybrid: both, fused.")
@click.option("-k", "k", type=Bounded("k"), default=None,
              help="How many hits, at most 100 (default: adaptive, else setting default_k).")
@click.option("--snapshot", "snapshot_id", default=None, help="Search this snapshot only.")
@click.option("--snapshot-set", default=None, help="Search the snapshots of this set.")
@click.option("--where", "where", multiple=True, metavar="KEY=VALUE",
              help="Metadata filter: the value, or a list holding it (repeatable; VALUE parsed "
                   "as JSON if it can be).")
@click.option("--rerank", "rerank", default=None, metavar="NAME", is_flag=False,
              flag_value="features",
              help="Rank 3 x k, rerank to k with NAME (features, late-interaction, "
                   "cross-encoder:PATH; bare --rerank: features).")
@principal_options
@json_option
@click.pass_context
@handles_errors
def search(ctx: click.Context, query: str, collection: str, mode: str, k: int | None,
           snapshot_id: str | None, snapshot_set: str | None, where: tuple[str, ...],
           rerank: str | None, acl_tags: tuple[str, ...], clearances: tuple[str, ...],
           all_access: bool) -> None:
    """Search a collection within the caller's access rights."""
    filters, principal = local_scope(Scope(collection, snapshot_id, snapshot_set, where,
                                           acl_tags, clearances, all_access))
    request = service.SearchRequest(query, cast(SearchMode, mode), k, rerank)  # a path: local
    result = service.search(ctx.obj["engine"], request, filters, principal)
    payload = result.to_json()

    def human() -> None:
        if not result.hits:
            click.echo("no hits")
        for rank, hit in enumerate(result.hits, start=1):
            meta = (citation_place(dict(hit.node.metadata)) if "path" in hit.node.metadata
                    else ", ".join(f"{k}={v}" for k, v in hit.node.metadata.items()
                                   if k != "language"))
            click.echo(f"{rank:>2}. [{hit.score:.4f}] {hit.node.id}  {hit.node.title}  {meta}")
            snippet = " ".join(hit.node.text.split())
            click.echo(f"    {snippet[:200]}{'…' if len(snippet) > 200 else ''}")
        click.echo(f"({result.mode}, {result.timings_ms['total']:.1f} ms)", err=True)

    emit(ctx, payload, human)


def main() -> None:
    cli(obj={"json": False})


if __name__ == "__main__":
    main()
