"""`excerpt sync FOLDER --collection C`: the collection mirrors the folder (excerpt.sync).

Exit 0 when the pass ran, also when some files failed to load: as ``excerpt ingest``'s skipped
files, each failure is named in the summary (and under ``failures`` in JSON) and the other
files are synced all the same; 1 when the folder cannot be synced at all. With ``--watch`` it
prints one summary (one JSON object per line with ``--json``) per pass until Ctrl-C, which ends
it with exit 0: an import cut short is marked failed by the pipeline and redone next time.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from excerpt.cli.main import cli, emit, handles_errors, json_option, progress_bar
from excerpt.embedder_names import EMBEDDERS
from excerpt.engine import Engine
from excerpt.ingest import FORMATS
from excerpt.store.tiers import FACTOR
from excerpt.sync import SyncOptions, SyncResult, merge_collection, watch_folder
from excerpt.types import Principal


@cli.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--collection", default="default", show_default=True,
              help="The collection that mirrors FOLDER (created on first use).")
@click.option("--name", default=None,
              help="The folder's name in source names sync:NAME/PATH (default: its own name); "
                   "give two different folders of the same name different names.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="How to read each file; auto: by file name and content.")
@click.option("--acl-tag", "acl_tags", multiple=True, metavar="T",
              help="ACL tag put on every node (repeatable).")
@click.option("--classification", "labels", multiple=True, metavar="L",
              help="Classification label put on every node (repeatable).")
@click.option("--embedder", type=click.Choice(EMBEDDERS), default="auto", show_default=True,
              help="auto: MiniLM for English, multilingual e5 for Korean; none: BM25 only.")
@click.option("--watch", is_flag=True,
              help="Keep syncing as files change, until Ctrl-C.")
@click.option("--debounce", type=click.IntRange(min=10), default=500, show_default=True,
              metavar="MS", help="With --watch: sync once no file has changed for MS "
                                 "milliseconds.")
@click.option("--no-wait", is_flag=True,
              help="When another sync of COLLECTION is running, fail at once (saying who "
                   "runs it) instead of waiting for it to end.")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@json_option
@click.pass_context
@handles_errors
def sync(ctx: click.Context, folder: Path, collection: str, name: str | None, fmt: str,
         acl_tags: tuple[str, ...], labels: tuple[str, ...], embedder: str, watch: bool,
         debounce: int, no_wait: bool, no_progress: bool) -> None:
    """Make COLLECTION mirror FOLDER: new and changed files become new snapshots (one source
    per file), unchanged files cost only their hash, deleted files leave the latest view."""
    engine: Engine = ctx.obj["engine"]
    options = SyncOptions(collection=collection, fmt=fmt, acl_tags=acl_tags,
                          classification_labels=labels, embedder=embedder, name=name,
                          wait=not no_wait)
    remembered: dict[str, tuple[str, str]] = {}

    def once() -> SyncResult:
        with progress_bar(not no_progress and not watch) as update:
            return engine.sync(folder, options, update, remembered,
                               lambda message: click.echo(f"excerpt: {message}", err=True))

    def report(result: SyncResult) -> None:
        emit(ctx, result.to_json(), lambda: _human(result))

    if not watch:
        report(once())
        return
    # Ctrl-C during a pass: that import failed cleanly, the next sync redoes it
    with contextlib.suppress(KeyboardInterrupt):
        watch_folder(once, folder, debounce, report)
    click.echo("excerpt: stopped watching", err=True)


@cli.command()
@click.option("--collection", default=None,
              help="The collection whose segments merge (default: every collection).")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@json_option
@click.pass_context
@handles_errors
def merge(ctx: click.Context, collection: str | None, no_progress: bool) -> None:
    """Merge the small segments of a collection (every sync pass does it when it ends): for a
    store synced before segments merged, or imports of many small sources. Results do not
    change; waits for a sync of the collection to end first."""
    engine: Engine = ctx.obj["engine"]
    store = engine.store
    names = [collection] if collection else store.collections()
    if collection and collection not in store.collections():
        raise engine.catalogue.missing_collection(collection, Principal.admin())
    counts: dict[str, int] = {}
    with progress_bar(not no_progress) as update:
        for name in names:
            with store.sync_lock(name, True, lambda m: click.echo(f"excerpt: {m}", err=True)):
                counts[name] = merge_collection(  # asked for: merges even at merge_factor 0
                    store, engine.settings, name, update,
                    factor=engine.settings.merge_factor or FACTOR)
    emit(ctx, {"merges": counts}, lambda: click.echo(
        "; ".join(f"{n}: {c} merge(s)" for n, c in counts.items()) or "no collection"))


LISTED = 20
"""Files named per kind in the human summary (every one is in the JSON)."""


def _human(result: SyncResult) -> None:
    click.echo(f"synced {result.name!r} into {result.collection!r}: {result.summary()}")
    for kind, paths in (("added", result.added), ("changed", result.changed),
                        ("deleted", result.deleted)):
        for path in paths[:LISTED]:
            click.echo(f"  {kind} {path}", err=True)
        if len(paths) > LISTED:
            click.echo(f"  … and {len(paths) - LISTED} more {kind} (--json lists them)",
                       err=True)
    for failure in result.failed:
        click.echo(f"  failed {failure.path}: {failure.reason}", err=True)
