"""``POST /v1/sync?collection=C``: ``excerpt sync`` of a folder sent as a zip (ingester or
admin keys; reader keys 403).

The body is a zip of the folder, streamed to a temporary folder as ``POST /v1/ingest``'s
uploads are (edge/uploads.py: size limit, removed afterwards, leftovers of a killed server
removed at start), then unpacked through :class:`excerpt.ingest._archive.SafeZip` (the
archive limits of the settings, no member outside the archive, no compression bomb) and
synced with the CLI's semantics and result JSON. The folder's name (its sources are
``sync:NAME/PATH``) is ``name``, or the zip's one top folder when every member is inside it
(``zip -r docs.zip docs``; that folder is then the root, as on the command line); a zip of
loose files needs ``name``. Paths in messages name ``upload:NAME``, never the server's folder.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Query, Request

from excerpt.edge.bodies import choice
from excerpt.edge.keys import Caller
from excerpt.edge.uploads import MAX_UPLOAD, Uploads, inside, receive, renamed, upload_name
from excerpt.embedder_names import EMBEDDERS
from excerpt.engine import Engine
from excerpt.errors import ExcerptError, InputError
from excerpt.ingest import FORMATS
from excerpt.ingest._archive import SafeZip
from excerpt.ingest.pipeline import archive_limits, check_labels
from excerpt.server.openapi import errors
from excerpt.sync import SyncFailure, SyncOptions, SyncResult, folder_name

__all__ = ["MAX_FILES", "mount", "unpack"]

MAX_FILES = 20_000
"""Files one synced zip may hold (each becomes a source; the byte limits are the settings')."""


def mount(app: FastAPI, engine: Engine, uploads: Uploads, caller: Callable[..., Any]) -> None:
    """Add ``POST /v1/sync`` to ``app``; ``caller`` is the app's key dependency."""

    @app.post("/v1/sync", responses=errors(400, 401, 403, 404, 409, 503))
    async def sync(request: Request, collection: str = "default",
                   name: str | None = Query(None, min_length=1),
                   format: str = Query("auto", pattern=choice(FORMATS)),
                   acl_tag: list[str] = Query([]),  # noqa: B008
                   classification: list[str] = Query([]),  # noqa: B008
                   embedder: str = Query("auto", pattern=choice(EMBEDDERS)),
                   who: Caller = Depends(caller)) -> Any:  # noqa: B008
        """Sync the zipped folder sent as the body into ``collection`` (``excerpt sync``)."""
        from starlette.concurrency import run_in_threadpool

        who.rights().check_ingest(paths=False)
        if name is not None:  # before anything touches the disk: it names a folder below
            upload_name(name, "name")
        check_labels(acl_tag, classification)
        folder = uploads.new()
        shown = name or "folder.zip"
        try:
            await receive(request.stream(), folder / "folder.zip", MAX_UPLOAD)
            options = SyncOptions(collection=collection, fmt=format, acl_tags=tuple(acl_tag),
                                  classification_labels=tuple(classification),
                                  embedder=embedder, wait=False)
            result = await run_in_threadpool(_unpack_and_sync, engine, folder, name, options)
        except ExcerptError as exc:  # its message names the upload, never the folder
            raise renamed(renamed(exc, folder / "tree", shown), folder, "folder.zip") from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return result.to_json()


def _unpack_and_sync(engine: Engine, folder: Path, name: str | None,
                     options: SyncOptions) -> SyncResult:
    tree = folder / "tree"
    root = unpack(folder / "folder.zip", tree, engine, name)
    chosen = folder_name(root, name)
    result = engine.sync(root, replace(options, name=chosen))
    result.failed = [SyncFailure(f.path, str(renamed(InputError(f.reason), tree, chosen)))
                     for f in result.failed]
    return result


def unpack(archive: Path, tree: Path, engine: Engine, name: str | None) -> Path:
    """Write the zip's files under ``tree`` within the settings' archive limits; the folder
    to sync: the zip's one top folder when every file is inside it, else ``tree/NAME``."""
    with SafeZip(archive, archive_limits(engine.settings), "a zip of a folder") as zipped:
        members = [m for m in zipped.names if not _skipped(m)]
        if not members:
            raise InputError("upload:folder.zip: the zip holds no files")
        if len(members) > MAX_FILES:
            raise InputError(f"upload:folder.zip: the zip holds {len(members)} files, over "
                             f"{MAX_FILES}")
        tops = {m.split("/", 1)[0] for m in members}
        single = len(tops) == 1 and all("/" in m for m in members)
        if not single and name is None:
            raise InputError("the zip has no single top folder: give the folder's name "
                             "(name=…)")
        root = inside(tree, tree / upload_name(tops.pop() if single else str(name), "name"))
        base = tree if single else root
        for member in members:
            target = inside(tree, base.joinpath(*[p for p in member.split("/") if p]))
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(member) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
            except OSError as exc:  # a file and a folder of the same name, a name too long
                raise InputError(f"upload:folder.zip: cannot unpack {member!r} "
                                 f"({exc.strerror})") from None
    return root


def _skipped(member: str) -> bool:
    """Members a sync would not read anyway: hidden ones (a leading dot, as ``walk_files``)
    and the ``__MACOSX/`` resource forks macOS's Finder adds beside the folder."""
    parts = [p for p in member.split("/") if p]
    return not parts or parts[0] == "__MACOSX" or any(p.startswith(".") for p in parts)
