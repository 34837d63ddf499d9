"""``excerpt sync``: a collection that mirrors a folder.

Every file is its own source, ``sync:<name>/<relative path>``, where ``name`` is the folder's
name unless one is given, and its document and node ids begin with ``<name>/<relative path>``
(``notes/a/README.md:0000``: two README.md files of one folder are two documents). The prefix
keeps sync's sources apart from ``excerpt ingest``'s (named by their paths) and from another
folder's files synced into the same collection: a
sync retires only the sources under its own prefix, so it never takes another folder's files
out of the view. The name, not the absolute path, identifies the folder, so that a folder
moved on disk, or the same folder uploaded as a zip (``POST /v1/sync``), keeps its sources and
their history; two *different* folders of the same name synced into one collection must be
given different names (``--name``).

One pass: walk the folder once (ingest/files.py), hash every file (sha256 of its bytes and of
the import options, :func:`excerpt.ingest.pipeline.content_hash`) and compare with what the
store recorded for the source's latest snapshot, read in one query; a changed file's import
reads the bytes its hash read (within the file set's memory budget), so it is opened once.
An unchanged file costs its hash and nothing else (no run, no parsing, no embedding, no
snapshot). A new or changed file is imported alone as a new snapshot of its source (atomic,
as every import); a file that fails to load is reported (path, reason) and the others go on;
the sources of deleted files are retired in one transaction (out of the latest view, their
snapshots kept). A process killed at any moment
leaves every file either imported whole or not at all, and the next pass finishes the work.

Each imported file is a small segment of its own; the pass merges the collection's segments
every ``MERGE_EVERY`` imports and when it ends (store/compaction.py), so a folder of 10,000
files is searched as a few segments. A pass holds the collection's sync lock
(store/locks.py): two syncs of one collection never import a file twice.

This module lives beside the engine rather than in ``ingest/``: it is not a loader but a
policy over imports (which files to import, which sources to retire), and ``ingest/`` holds the
loaders by domain and the one-import pipeline that sync calls once per changed file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from excerpt.embedder_names import EMBEDDERS
from excerpt.errors import ExcerptError, InputError
from excerpt.ingest.files import FileSet, require_paths, resolve_files
from excerpt.ingest.pipeline import (
    Importer,
    Progress,
    content_hash,
    fingerprint,
    no_progress,
)
from excerpt.names import plain_name
from excerpt.store.ann import AnnConfig

if TYPE_CHECKING:
    from excerpt.settings import Settings
    from excerpt.store.base import Store

__all__ = ["SOURCE_PREFIX", "SyncFailure", "SyncOptions", "SyncResult", "merge_collection",
           "sync_folder", "sync_source", "watch_folder"]

SOURCE_PREFIX = "sync:"
SYNC_IDS = 2
"""How a synced file's ids are made (2: from its path in the folder, ``notes/a/README.md:0000``;
1 took its name alone, and ``a/README.md`` hid ``b/README.md``): part of the content hash, so
files synced the old way are imported once more."""
MERGE_EVERY = 1000
"""Files a sync pass imports between two merges of the collection's segments."""


@dataclass(frozen=True)
class SyncOptions:
    """How the files of a synced folder are imported (as ``excerpt ingest`` takes them)."""

    collection: str = "default"
    fmt: str = "auto"
    acl_tags: tuple[str, ...] = ()
    classification_labels: tuple[str, ...] = ()
    embedder: str = "auto"
    name: str | None = None
    roots: tuple[Path, ...] | None = None
    wait: bool = True
    """When another sync holds the collection: wait for it (else BusyError at once)."""


@dataclass(frozen=True)
class SyncFailure:
    path: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass
class SyncResult:
    """What one pass did, by file (paths relative to the folder)."""

    collection: str
    name: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: int = 0
    deleted: list[str] = field(default_factory=list)
    failed: list[SyncFailure] = field(default_factory=list)
    snapshots: dict[str, str] = field(default_factory=dict)
    merges: int = 0
    """Segment merges the pass ran when it ended (store/compaction.py)."""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection, "name": self.name,
            "added": len(self.added), "changed": len(self.changed),
            "unchanged": self.unchanged, "deleted": len(self.deleted),
            "failed": len(self.failed), "seconds": round(self.seconds, 3),
            "files": {"added": self.added, "changed": self.changed, "deleted": self.deleted},
            "failures": [f.to_json() for f in self.failed],
            "snapshots": self.snapshots, "merges": self.merges,
        }

    def summary(self) -> str:
        return (f"{len(self.added)} added, {len(self.changed)} changed, {self.unchanged} "
                f"unchanged, {len(self.deleted)} deleted, {len(self.failed)} failed "
                f"in {self.seconds:.1f} s")


def sync_source(name: str, relative: str) -> str:
    """The source of the file at ``relative`` (POSIX) in the folder synced as ``name``."""
    return f"{SOURCE_PREFIX}{name}/{relative}"


def folder_name(folder: Path, name: str | None) -> str:
    """``name`` or the folder's own name, refused when it cannot be one path component."""
    chosen = name if name is not None else folder.resolve().name
    try:
        return plain_name(chosen, "sync name", max_chars=255, max_bytes=255)
    except InputError as exc:
        raise InputError(f"{exc}; give --name") from None


@dataclass
class _Plan:
    """Files to import, as (relative path, the file alone, hash, is it new)."""

    todo: list[tuple[str, FileSet, str, bool]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


def sync_folder(importer: Importer, folder: Path, options: SyncOptions,
                progress: Progress = no_progress,
                remembered: dict[str, tuple[str, str]] | None = None,
                on_wait: Callable[[str], None] | None = None) -> SyncResult:
    """One pass making ``options.collection`` mirror ``folder`` (see the module docstring).

    ``remembered`` (source -> (hash, reason)): failures of earlier passes of this process; a
    file that failed with the same content is reported again without another import run
    (``--watch`` passes it, so a broken file is not re-parsed on every change elsewhere).
    The pass holds the collection's sync lock (store/locks.py): a second sync of it waits
    (``on_wait`` is told whom for) or, with ``options.wait`` false, raises BusyError."""
    started = time.perf_counter()
    if options.embedder not in EMBEDDERS:
        raise InputError(f"unknown embedder {options.embedder!r}; choose one of {EMBEDDERS}")
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder (excerpt sync mirrors a folder)")
    name = folder_name(folder, options.name)
    result = SyncResult(options.collection, name)
    with importer.store.sync_lock(options.collection, options.wait, on_wait):
        plan = _plan(importer, folder, name, options, result, progress)
        _import(importer, plan, name, options, result, progress, remembered)
        _retire(importer, name, options.collection, plan.seen, result)
        if result.added or result.changed or result.deleted:
            result.merges += _merge(importer, options.collection, progress)
    result.seconds = time.perf_counter() - started
    return result


def _plan(importer: Importer, folder: Path, name: str, options: SyncOptions,
          result: SyncResult, progress: Progress) -> _Plan:
    store = importer.store
    known = (store.source_states(options.collection)
             if options.collection in store.collections() else {})
    load_options = importer.options(options.acl_tags, options.classification_labels,
                                    options.roots)
    shaping = {**fingerprint(options.fmt, load_options, options.embedder, None),
               "ids": SYNC_IDS}
    files = resolve_files([folder]).files(folder)  # the pass's one walk
    plan = _Plan()
    for done, file in enumerate(files, 1):
        progress("hash", done, len(files))
        relative = file.name
        source = sync_source(name, relative)
        plan.seen.add(source)
        try:
            require_paths([file.path], load_options.roots)  # each file refused on its own
            alone = FileSet.of(file, load_options.roots)  # imported alone, with the bytes
            hashed = content_hash([file.path], shaping, files=alone)  # its hash reads
        except (OSError, ExcerptError) as exc:
            result.failed.append(SyncFailure(relative, _reason(exc)))
            continue
        state = known.get(source)
        if state is not None and state.content_hash == hashed:
            result.unchanged += 1
            alone.release()
        else:
            plan.todo.append((relative, alone, hashed, state is None))
    return plan


def _import(importer: Importer, plan: _Plan, name: str, options: SyncOptions,
            result: SyncResult, progress: Progress,
            remembered: dict[str, tuple[str, str]] | None) -> None:
    for done, (relative, alone, hashed, new) in enumerate(plan.todo, 1):
        progress("import", done - 1, len(plan.todo))
        source = sync_source(name, relative)
        earlier = (remembered or {}).get(source)
        if earlier is not None and earlier[0] == hashed:
            alone.release()
            result.failed.append(SyncFailure(relative, earlier[1]))
            continue
        try:
            imported = importer.run(
                alone.given, options.collection, options.fmt, options.acl_tags,
                options.classification_labels, None, options.embedder, source,
                roots=options.roots, known_hash=hashed, document_id=f"{name}/{relative}",
                files=alone)
        except (OSError, ExcerptError) as exc:
            result.failed.append(SyncFailure(relative, _reason(exc)))
            if remembered is not None:
                remembered[source] = (hashed, _reason(exc))
            continue
        finally:
            alone.release()  # read or failed: its bytes leave room for the next files
        (result.added if new else result.changed).append(relative)
        if imported.snapshot_id:
            result.snapshots[relative] = imported.snapshot_id
        if done % MERGE_EVERY == 0:  # a long first sync keeps its segments few as it goes
            result.merges += _merge(importer, options.collection, progress, tidy=False)
    if plan.todo:
        progress("import", len(plan.todo), len(plan.todo))


def merge_collection(store: Store, settings: Settings, collection: str,
                     progress: Progress | None = None, tidy: bool = True,
                     factor: int | None = None) -> int:
    """``collection``'s small segments merged under ``settings`` (store/compaction.py): by a
    sync pass, ``excerpt merge`` and ``serve``'s background, whoever holds the collection's
    sync lock. ``tidy``: the small segments a pass leaves merge too; ``factor``: the
    setting ``merge_factor`` unless given, 0 merging nothing. Returns the merges run."""
    factor = settings.merge_factor if factor is None else factor
    if not factor:
        return 0
    return store.merge(collection, AnnConfig.from_settings(settings), progress, factor, tidy)


def _merge(importer: Importer, collection: str, progress: Progress, tidy: bool = True) -> int:
    return merge_collection(importer.store, importer.settings, collection, progress, tidy)


def _retire(importer: Importer, name: str, collection: str, seen: set[str],
            result: SyncResult) -> None:
    if collection not in importer.store.collections():
        return
    prefix = sync_source(name, "")
    gone = sorted(s for s in importer.store.source_states(collection)
                  if s.startswith(prefix) and s not in seen)
    if gone:
        importer.store.retire_sources(collection, gone)
    result.deleted = [s.removeprefix(prefix) for s in gone]


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if isinstance(exc, ExcerptError) else f"{type(exc).__name__}: {text}"


def watch_folder(run_once: Callable[[], SyncResult], folder: Path, quiet_ms: int,
                 report: Callable[[SyncResult], None], stop_event: Any = None,
                 ready: Callable[[], None] | None = None) -> int:
    """Sync now, then again after each burst of changes, once no file has changed for
    ``quiet_ms`` (a burst is cut after ``GROUP_FACTOR`` times that, so a folder written to
    without pause is still synced). Returns the passes made when ``stop_event`` is set or
    Ctrl-C ends the wait (watchfiles ends it cleanly; a Ctrl-C during a pass reaches the
    caller after that import was marked failed). ``ready`` is called once the watch is in
    place and the first pass reported (tests wait for it)."""
    import watchfiles

    # The watch is in place before the first pass, so a change made during it is not lost;
    # waking every WAKE_MS with no change lets that first pass start at once.
    root = folder.resolve()

    def visible(_change: Any, path: str) -> bool:  # what a pass reads: no hidden file
        parts = Path(path).parts[len(root.parts):]
        return not any(part.startswith(".") for part in parts)

    watcher = watchfiles.watch(root, watch_filter=visible, debounce=quiet_ms * GROUP_FACTOR,
                               step=quiet_ms, stop_event=stop_event, raise_interrupt=False,
                               yield_on_timeout=True, rust_timeout=WAKE_MS)
    passes = 0
    for changes in watcher:
        if passes and not changes:
            continue
        report(run_once())
        passes += 1
        if ready is not None:
            ready()
            ready = None
    return passes


GROUP_FACTOR = 20
"""How much longer than the quiet time one burst of changes may last before a pass runs."""
WAKE_MS = 200
