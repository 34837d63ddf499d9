"""A collection synced from hundreds of files does not run a process out of open files (issue
28, item 2), and a process that runs out anyway says so: 503 ``unavailable`` from the service,
one line and exit 1 from the CLI, never a 500 or a traceback.

Each snapshot is a segment of about twenty array files. Memory-mapped, each held a descriptor
for as long as the process kept the segment, so a search over 300 synced files needed ~2,400
of them: under ``ulimit -n 256`` the CLI died with a traceback and the server answered 500 on
every collection. The tests run the real CLI and a real ``excerpt serve`` under a low
RLIMIT_NOFILE, compare their rankings with a store that maps everything and never lets go
(what the code did before), and count the server's descriptors in /proc.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import resource
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.http import add_keys, call, wait_started, zipped

from excerpt.engine import Engine
from excerpt.settings import Settings
from excerpt.types import Filters, Principal, SearchMode

FILES = 300
LIMIT = 256
WORDS = ["river", "stone", "lantern", "harbor", "meadow", "copper", "violet", "thunder",
         "orchard", "signal", "quiet", "ember", "falcon", "marble", "willow", "canyon"]
QUERIES = ["river lantern", "copper falcon thunder", "quiet meadow", "token117 willow", "ember"]
SERVER_FILES = 64
"""Descriptors a server may hold after searching 300 segments (it starts with ~20)."""


def write_notes(folder: Path, files: int, seed: int) -> None:
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for i in range(files):
        body = " ".join(rng.choices(WORDS, k=60))
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\n{body} token{i}.\n", "utf-8")


def limited(files: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))


def excerpt(home: Path, *args: str, files: int | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own, under ``files`` descriptors if given."""
    return subprocess.run([sys.executable, "-m", "excerpt", "--home", str(home), *args],
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=limited(files) if files else None)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``notes``: 300 synced Markdown files (BM25 only); ``other``: 20 more, embedded; never
    merged (``merge_factor`` 0), so that a view reads one segment per file: the most maps a
    store can be asked for (a merged folder is read as a few segments, test_segment_merges)."""
    root = tmp_path_factory.mktemp("open-files")
    write_notes(root / "notes", FILES, 0)
    write_notes(root / "other", 20, 1)
    home = root / "home"
    (root / "never.toml").write_text("merge_factor = 0\n", "utf-8")
    for name, embedder in (("notes", "none"), ("other", "minilm")):
        run = excerpt(home, "--settings", str(root / "never.toml"), "sync", str(root / name),
                      "--collection", name, "--embedder", embedder, "--json")
        assert run.returncode == 0, run.stderr[-2000:]
    return home


@pytest.fixture(scope="module")
def reference(home: Path) -> Iterator[Callable[[str, str, SearchMode], list[tuple[str, float]]]]:
    """Rankings from a store that maps every array and never drops one: the code before."""
    engine = Engine(home)
    engine.store.maps.limit, engine.store.maps.read_below = 10**9, 0  # type: ignore[attr-defined]

    def ranking(collection: str, query: str, mode: SearchMode) -> list[tuple[str, float]]:
        return hits(engine.search(query, Filters(collection), Principal.admin(), mode,
                                  20).to_json())

    yield ranking
    engine.close()


def hits(result: dict[str, Any]) -> list[tuple[str, float]]:
    return [(hit["id"], hit["score"]) for hit in result["hits"]]


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_the_cli_searches_300_synced_files_under_256_descriptors(
        home: Path, reference: Callable[..., list[tuple[str, float]]], mode: str) -> None:
    for collection in ("notes", "other"):
        run = excerpt(home, "search", QUERIES[0], "--collection", collection, "--mode", mode,
                      "-k", "20", "--json", files=LIMIT)
        assert (run.returncode, run.stderr) == (0, ""), run.stderr[-2000:]
        assert hits(json.loads(run.stdout)) == reference(collection, QUERIES[0], mode)


def test_the_cli_out_of_descriptors_says_so_in_one_line(home: Path) -> None:
    """Lower and lower limits: each run answers as without one, or fails in one line."""
    said = []
    for files in range(5, 11):
        run = excerpt(home, "search", QUERIES[0], "--collection", "notes", "--mode", "bm25",
                      files=files)
        assert "Traceback" not in run.stderr, (files, run.stderr[-2000:])
        if run.returncode:
            lines = run.stderr.strip().splitlines()
            assert run.returncode == 1 and len(lines) == 1 and lines[0].startswith("excerpt: ")
            said.append(lines[0])
    assert any("too many open files" in line for line in said), said


@contextmanager
def serve(home: Path, port: int, files: int) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``excerpt serve`` under ``files`` descriptors; its log must hold no traceback."""
    server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(home), "serve",
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, preexec_fn=limited(files))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_started(url, server)
        yield url, server
    finally:
        server.terminate()
        _, log = server.communicate(timeout=10)
    assert b"Traceback" not in log, log.decode()[-3000:]


def descriptors(pid: int) -> list[int]:
    return sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))


def search_url(url: str, collection: str, query: str, mode: str = "bm25") -> str:
    return (f"{url}/v1/search?collection={collection}&mode={mode}&k=20&q="
            + urllib.parse.quote(query))


@pytest.fixture(scope="module")
def key(home: Path) -> str:
    return add_keys(home, (("alice",),), revoke=())["alice"]


def test_a_server_under_256_descriptors_serves_every_collection(
        home: Path, key: str, reference: Callable[..., list[tuple[str, float]]],
        free_port: Callable[[], int]) -> None:
    with serve(home, free_port(), LIMIT) as (url, server):
        for query in QUERIES:
            for collection, mode in (("notes", "bm25"), ("notes", "hybrid"), ("other", "hybrid")):
                status, body = call(search_url(url, collection, query, mode), key)
                assert status == 200, body
                assert hits(body) == reference(collection, query, mode)
        status, models = call(f"{url}/v1/models", key)
        assert status == 200, models
        assert {m["id"] for m in models["data"]} == {"excerpt:notes", "excerpt:other"}
        assert len(descriptors(server.pid)) <= SERVER_FILES, descriptors(server.pid)


def test_a_server_under_256_descriptors_takes_a_zip_of_200_files_and_serves_it(
        tmp_path: Path, free_port: Callable[[], int]) -> None:
    """The issue's own case: an ingester's POST /v1/sync of a 200-file zip, then searches and
    /v1/models, all answered by a server held to 256 descriptors, which keeps few."""
    write_notes(tmp_path / "notes", 200, 3)
    home = tmp_path / "home"
    keys = add_keys(home, (("ivy", "--role", "ingester"), ("alice",)), revoke=())
    body = zipped({f"notes/{p.name}": p.read_bytes() for p in (tmp_path / "notes").iterdir()})
    with serve(home, free_port(), LIMIT) as (url, server):
        status, synced = call(f"{url}/v1/sync?collection=notes&embedder=none", keys["ivy"],
                              body, method="POST")
        assert (status, synced.get("added")) == (200, 200), synced
        for query in QUERIES:
            status, found = call(search_url(url, "notes", query), keys["alice"])
            assert status == 200 and found["hits"], found
        status, models = call(f"{url}/v1/models", keys["alice"])
        assert status == 200 and [m["id"] for m in models["data"]] == ["excerpt:notes"]
        assert len(descriptors(server.pid)) <= SERVER_FILES, descriptors(server.pid)


def get(connection: http.client.HTTPConnection, path: str, key: str) -> tuple[int, Any]:
    connection.request("GET", path, headers={"Authorization": f"Bearer {key}"})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def test_a_server_out_of_descriptors_answers_503_and_serves_what_it_can(
        tmp_path: Path, free_port: Callable[[], int]) -> None:
    """The server's limit lowered under it (prlimit), so that no new file opens: a search
    that must open a snapshot's files is 503 ``unavailable``, searches and /v1/models that
    need none still answer, and everything answers again once the limit is raised."""
    home = tmp_path / "home"
    for name, seed in (("other", 1), ("late", 2)):
        write_notes(tmp_path / name, 3, seed)
        run = excerpt(home, "sync", str(tmp_path / name), "--collection", name, "--embedder",
                      "none")
        assert run.returncode == 0, run.stderr[-2000:]
    key = add_keys(home, (("alice",),), revoke=())["alice"]
    with serve(home, free_port(), LIMIT) as (url, server):
        # One kept-alive connection: the server needs no new descriptor to answer it.
        connection = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]))
        other, late = (search_url("", name, "river lantern") for name in ("other", "late"))
        assert get(connection, other, key)[0] == 200
        assert get(connection, "/v1/models", key)[0] == 200  # reads late's rights, not more
        held = descriptors(server.pid)
        lowest_free = next(fd for fd in range(len(held) + 1) if fd not in held)
        process = psutil.Process(server.pid)
        process.rlimit(psutil.RLIMIT_NOFILE, (lowest_free, LIMIT))
        try:
            status, body = get(connection, late, key)
            assert (status, body["kind"]) == (503, "unavailable"), body
            assert body["error"].startswith("too many open files in this process: ")
            assert str(home) not in body["error"]
            assert get(connection, other, key)[0] == 200
            assert get(connection, "/v1/models", key)[0] == 200
        finally:
            process.rlimit(psutil.RLIMIT_NOFILE, (LIMIT, LIMIT))
        status, body = get(connection, late, key)
        assert status == 200 and body["hits"], body
        connection.close()


def test_segments_dropped_and_mapped_again_rank_as_segments_never_dropped(
        home: Path, reference: Callable[..., list[tuple[str, float]]]) -> None:
    """Every array mapped (none read into memory) and at most 24 maps: segments are dropped
    and mapped again all the time, by four threads at once, and no ranking changes."""
    modes: tuple[SearchMode, ...] = ("bm25", "hybrid")
    cases = [(c, q, m) for c in ("notes", "other") for q in QUERIES for m in modes]
    expected = {case: reference(*case) for case in cases}
    engine = Engine(home, Settings().with_(segment_open_files=24))
    maps = engine.store.maps  # type: ignore[attr-defined]
    maps.read_below = 0
    before = len(descriptors(os.getpid()))
    failures: list[Any] = []

    def search_all() -> None:
        for case in cases:
            collection, query, mode = case
            found = hits(engine.search(query, Filters(collection), Principal.admin(), mode,
                                       20).to_json())
            if found != expected[case]:
                failures.append((case, found))

    threads = [threading.Thread(target=search_all) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert maps.open <= 24 and maps.dropped > 0
    assert len(descriptors(os.getpid())) - before <= 24 + 8
    engine.close()
    assert maps.open == 0


def test_the_chat_routes_answer_503_for_a_process_out_of_files() -> None:
    """A raw out-of-files error raised outside a segment read (a socket, a database file) is
    chat's 503 ``server_error`` too, never a 500 (the REST routes map it alike)."""
    import errno

    from excerpt.server.chat import _error

    failure = _error(OSError(errno.EMFILE, "Too many open files", "/srv/excerpt/x.npy"))
    body = failure.to_json()
    assert failure.status == 503 and body["error"]["type"] == "server_error", body
    assert "/srv" not in json.dumps(body)
    assert _error(RuntimeError("boom")).status == 500
