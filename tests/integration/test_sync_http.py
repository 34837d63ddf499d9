"""`POST /v1/sync`: a zipped folder synced with the CLI's semantics and result JSON; ingester
and admin keys only (reader keys 403); archive limits and bad zips are 400s that name the
upload, never a server path; nothing of an upload is left on the server."""

from __future__ import annotations

import urllib.parse
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from tests.http import add_keys, call, zipped

from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app
from excerpt.settings import Settings

FILES = {
    "notes/river.txt": b"The river runs past the old stone mill.",
    "notes/harbor/lantern.md": b"# Harbor\n\nA lantern burns in the harbor all night.",
    "notes/meadow.txt": b"Violet flowers in the meadow by the orchard.",
}


def deflated(members: dict[str, bytes]) -> bytes:
    return zipped(members, zipfile.ZIP_DEFLATED)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory,
            serving: Callable[[Any], AbstractContextManager[str]]
            ) -> Iterator[tuple[str, dict[str, str], Path]]:
    home = tmp_path_factory.mktemp("sync-http") / "home"
    keys = add_keys(home)
    settings = Settings().with_(archive_max_total_mb=1)
    with serving(create_app(Engine(home, settings), KeyRing.load(home / "keys.yaml"))) as url:
        yield url, keys, home


def sync(url: str, key: str, body: bytes, **query: str) -> tuple[int, Any]:
    params = urllib.parse.urlencode({"collection": "docs", "embedder": "none", **query})
    return call(f"{url}/v1/sync?{params}", key, body, method="POST")


def test_a_zipped_folder_syncs_as_the_cli_does(
        service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, home = service
    status, first = sync(url, keys["ivy"], deflated(FILES))
    assert status == 200, first
    assert (first["name"], first["added"], first["failed"]) == ("notes", 3, 0)
    finder = {**FILES, "__MACOSX/notes/._river.txt": b"\x00\x05", "notes/.DS_Store": b"\x00"}
    status, again = sync(url, keys["root"], deflated(finder))  # as macOS zips a folder
    assert (status, again["unchanged"], again["added"]) == (200, 3, 0)
    fewer = {k: v for k, v in FILES.items() if "meadow" not in k}
    fewer["notes/river.txt"] = b"The river floods the copper canyon."
    status, third = sync(url, keys["ivy"], deflated(fewer))
    assert (third["changed"], third["deleted"], third["files"]["deleted"]) == (
        1, 1, ["meadow.txt"])
    engine = Engine(home)
    assert sorted(s.source for s in engine.store.latest_snapshots("docs")) == [
        "sync:notes/harbor/lantern.md", "sync:notes/river.txt"]
    engine.close()
    assert list((home / "uploads").iterdir()) == []  # every upload's folder removed


def test_loose_files_need_a_name_and_failures_name_the_upload(
        service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, home = service
    loose = {"a.txt": b"thunder over the willow", "bad.txt": b"\x00\x01binary"}
    status, body = sync(url, keys["ivy"], deflated(loose))
    assert (status, body["kind"]) == (400, "input") and "name" in body["error"]
    status, body = sync(url, keys["ivy"], deflated(loose), name="loose")
    assert status == 200 and (body["name"], body["added"], body["failed"]) == ("loose", 1, 1)
    reason = body["failures"][0]["reason"]
    assert "upload:loose" in reason and str(home) not in reason


def test_reader_keys_are_refused(service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, _ = service
    status, body = sync(url, keys["alice"], deflated(FILES))
    assert (status, body["kind"]) == (403, "forbidden")
    assert sync(url, keys["eve"], deflated(FILES))[0] == 401


def test_bad_zips_are_400s_naming_the_upload(service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, home = service
    status, body = sync(url, keys["ivy"], b"not a zip at all")
    assert status == 400 and "upload:folder.zip" in body["error"]
    assert str(home) not in body["error"]
    big = deflated({"big/zeros.txt": b"0" * (2 * 1024 * 1024)})  # over 1 MB in all
    status, body = sync(url, keys["ivy"], big)
    assert status == 400 and "archive_max" in body["error"] and str(home) not in body["error"]
    assert sync(url, keys["ivy"], deflated({}))[0] == 400


def test_the_same_upload_again_is_unchanged(service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, _ = service
    query = urllib.parse.urlencode({"filename": "mill.txt", "collection": "up",
                                    "embedder": "none"})
    body = b"The mill wheel turns by the river."
    status, first = call(f"{url}/v1/ingest?{query}", keys["ivy"], body, method="POST")
    assert (status, first["status"]) == (200, "completed")
    status, again = call(f"{url}/v1/ingest?{query}", keys["ivy"], body, method="POST")
    assert (status, again["status"], again["snapshot_id"]) == (200, "unchanged",
                                                                first["snapshot_id"])


def test_a_sync_while_another_runs_is_409_naming_no_server_path(
        service: tuple[str, dict[str, str], Path]) -> None:
    """A web request does not wait for another sync of its collection (store/locks.py): 409
    ``busy`` at once, and the same upload goes through once the other ends."""
    from excerpt.store.sqlite import SQLiteStore

    url, keys, home = service
    holder = SQLiteStore(home)
    with holder.sync_lock("busy-docs", wait=False):
        status, body = sync(url, keys["ivy"], deflated(FILES), collection="busy-docs")
        assert (status, body["kind"]) == (409, "busy"), body
        assert "a sync of collection 'busy-docs' is already running" in body["error"]
        assert str(home) not in body["error"]
    status, body = sync(url, keys["ivy"], deflated(FILES), collection="busy-docs")
    assert (status, body["added"]) == (200, 3)
    holder.close()
