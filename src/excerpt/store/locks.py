"""One sync per collection at a time: a lock that says who holds it (issue 30 item 3).

Two syncs of one folder at once imported every file twice (each saw the file unchanged in
nobody's snapshot yet). A sync now holds its collection's lock for its whole pass; a second
one waits for it (the CLI says whom it waits for) or, asked not to wait (a web request),
fails at once with :class:`~excerpt.errors.BusyError` naming the holder.

The embedded store locks a file in the home (``locks/sync-<digest of the name>.lock``) with
``flock``: the kernel releases it when its holder exits, killed or not, so a crashed sync
never leaves a collection locked. The holder writes its process id, host and start time into
the file for the next one to read. (PostgreSQL holds a session advisory lock instead:
store/postgres.py.)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from excerpt.errors import BusyError

Waiting = Callable[[str], None]
"""Told once, with who holds the lock, when a sync must wait for it."""


def lock_key(collection: str) -> str:
    """The collection's lock name: a digest, so any collection name makes a safe file name."""
    return hashlib.sha256(collection.encode("utf-8")).hexdigest()[:24]


def holder_text(raw: str) -> str:
    """Who holds a lock, from what its holder wrote (or a plain phrase when unreadable)."""
    try:
        who = json.loads(raw)
        return f"process {who['pid']} on {who['host']}, since {who['since']}"
    except (ValueError, KeyError, TypeError):
        return "another process"


@contextlib.contextmanager
def file_lock(path: Path, what: str, wait: bool,
              on_wait: Waiting | None = None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` for the block (module docstring); ``what`` names
    the work in messages ("a sync of collection 'notes'")."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd, what, wait, on_wait)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                  "since": datetime.now(UTC).isoformat(timespec="seconds")}
                                 ).encode("utf-8"), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, what: str, wait: bool, on_wait: Waiting | None) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        holder = holder_text(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
    if not wait:
        raise BusyError(f"{what} is already running ({holder}); try again when it ends")
    if on_wait is not None:
        on_wait(f"waiting for {what} to end ({holder})")
    fcntl.flock(fd, fcntl.LOCK_EX)  # blocks until the holder ends (Ctrl-C interrupts it)


def process_started(pid: int) -> float:
    """When process ``pid`` started (seconds since the epoch), -1.0 when it is gone: with its
    pid, what tells a live import run or merge from a dead one whose pid was reused."""
    import psutil  # only imports need it; a search does not pay its import (~20 ms)

    try:
        return float(psutil.Process(pid).create_time())
    except psutil.Error:
        return -1.0
