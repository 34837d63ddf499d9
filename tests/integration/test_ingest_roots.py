"""Ingest roots hold through symbolic links: a server that ingests paths only inside its roots
reads no file that resolves outside them (a link to a file, a link to a folder, a hidden
link in a bundle folder), over HTTP and at the engine; nothing is published on refusal."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.http import call

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.server.app import create_app

SECRET = "The payroll of every employee lives in this file outside the ingest root."


def _tree(base: Path) -> Path:
    """``base/root`` (the ingest root) with folders whose links point into ``base/outside``."""
    outside = base / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "payroll.txt").write_text(SECRET, "utf-8")
    (outside / "folder" / "more.txt").write_text(SECRET, "utf-8")
    root = base / "root"
    for name in ("file_link", "folder_link", "inside_link", "bundle"):
        (root / name).mkdir(parents=True)
        (root / name / "ok.txt").write_text("A plain note about the weather.", "utf-8")
    os.symlink(outside / "payroll.txt", root / "file_link" / "payroll.txt")
    os.symlink(outside / "folder", root / "folder_link" / "more")
    os.symlink(root / "file_link" / "ok.txt", root / "inside_link" / "same.txt")  # stays inside
    (root / "bundle" / "repo_meta.json").write_text(json.dumps({"Repo": "R", "SnapshotId": "s"}))
    os.symlink(outside / "payroll.txt", root / "bundle" / ".hidden")
    return root


REFUSED = [("file_link", "payroll.txt"), ("folder_link", "more"), ("bundle", ".hidden")]


@pytest.mark.parametrize(("folder", "link"), REFUSED)
def test_the_engine_refuses_links_out_of_the_roots(tmp_path: Path, folder: str,
                                                    link: str) -> None:
    root = _tree(tmp_path)
    engine = Engine(tmp_path / "home")
    with pytest.raises(InputError, match="resolves outside the ingest roots") as info:
        engine.ingest(root / folder, embedder="none", ingest_roots=[root])
    assert link in str(info.value) and str(tmp_path / "outside") not in str(info.value)
    assert engine.store.snapshots() == []


def test_links_that_stay_inside_and_unconfined_imports_are_read(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    engine = Engine(tmp_path / "home")
    inside = engine.ingest(root / "inside_link", embedder="none", ingest_roots=[root])
    assert inside.documents == 2
    # the command line names its own paths: no roots, links are read as before
    assert engine.ingest(root / "file_link", embedder="none").documents == 2


@pytest.fixture
def service(tmp_path: Path, serving: Callable[[Any], AbstractContextManager[str]]
            ) -> Iterator[tuple[str, str, Path, Engine]]:
    root = _tree(tmp_path)
    home = tmp_path / "home"
    out = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", "root", "--role", "admin",
                                   "--json"])
    assert out.exit_code == 0, out.output
    engine = Engine(home)
    app = create_app(engine, KeyRing.load(home / "keys.yaml"), ingest_roots=[root])
    with serving(app) as url:
        yield url, json.loads(out.output)["key"], root, engine


def _post(url: str, key: str, body: dict[str, Any]) -> tuple[int, Any]:
    return call(f"{url}/v1/ingest/path", key, body, timeout=30)


def test_http_ingest_path_refuses_links_out_of_the_root(
        service: tuple[str, str, Path, Engine]) -> None:
    url, key, root, engine = service
    for folder, link in REFUSED:
        status, body = _post(url, key, {"path": str(root / folder), "embedder": "none"})
        assert status == 400 and body["kind"] == "input", (folder, body)
        assert link in body["error"] and "outside the ingest roots" in body["error"]
        assert "outside/" not in body["error"]  # the link's target is not told
    status, body = _post(url, key, {"path": str(root / "file_link" / "payroll.txt"),
                                    "embedder": "none"})
    assert status == 403  # the path named resolves outside: refused by the route itself
    assert engine.store.snapshots() == []
    status, body = _post(url, key, {"path": str(root / "inside_link"), "embedder": "none"})
    assert status == 200 and body["documents"] == 2
