"""Where conversations live: a protocol, an in-memory backend and a durable SQLite backend.

A backend stores, per conversation, its :class:`ConversationState` (config, next index,
evicted count, summary) and its buffered utterances.  It does no eviction or summarising
itself (:mod:`excerpt.memory.conversation` decides that); it applies each change as one unit:
:meth:`MemoryBackend.commit` writes the new utterance, removes the evicted ones and saves the
new state together, so a reader never sees a half-applied add.

A change that depends on what is stored (the next index, what to evict) is made inside
:meth:`MemoryBackend.writing`: a write transaction on one conversation that every other writer,
thread or process, waits for; the store reads the conversation again inside it, so several
processes can write one conversation without losing or renumbering an utterance.

The SQLite backend keeps its own file (``<home>/memory.db``), in WAL mode with
``synchronous=FULL``: each commit is one transaction (``BEGIN IMMEDIATE``: one writer at a time
across processes), fsynced before it returns, so an acknowledged add survives a killed process
or a power cut.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import Protocol, runtime_checkable

from excerpt.errors import InputError, StoreError
from excerpt.memory.model import ConversationConfig, ConversationState, Utterance

MEMORY_DB = "memory.db"
BACKENDS = ("in-memory", "durable")
BUSY_TIMEOUT = 30.0  # seconds a writer waits for another process's write transaction


Save = Callable[[ConversationState, Sequence[Utterance], Sequence[int]], None]


class ConversationWrite:
    """One conversation inside a backend's write transaction: what is stored now (as of the
    transaction) and the one change to make."""

    def __init__(self, state: Callable[[], ConversationState | None],
                 utterances: Callable[[], list[Utterance]], save: Save) -> None:
        self._state, self._utterances, self._save = state, utterances, save

    def state(self) -> ConversationState | None:
        return self._state()

    def utterances(self) -> list[Utterance]:
        return self._utterances()

    def commit(self, state: ConversationState, added: Sequence[Utterance] = (),
               removed: Sequence[int] = ()) -> None:
        """Insert ``added``, delete the ``removed`` indexes, save ``state`` (made durable when
        the transaction ends)."""
        self._save(state, added, removed)


@runtime_checkable
class MemoryBackend(Protocol):
    """Storage for conversations; every method is safe to call from several threads."""

    def state(self, conversation: str) -> ConversationState | None:
        """The conversation's state, or None when it does not exist."""
        ...

    def utterances(self, conversation: str) -> list[Utterance]:
        """The buffered utterances, by ``utterance_index`` ascending (empty when unknown)."""
        ...

    def commit(self, conversation: str, state: ConversationState,
               added: Sequence[Utterance] = (), removed: Sequence[int] = ()) -> None:
        """In one unit: insert ``added``, delete the ``removed`` indexes, save ``state``."""
        ...

    def writing(self, conversation: str) -> AbstractContextManager[ConversationWrite]:
        """A write transaction on ``conversation``: other writers of it (threads or processes)
        wait until the block ends; committed when it ends normally, rolled back on an error."""
        ...

    def conversations(self) -> list[str]:
        """The names of every stored conversation, sorted."""
        ...

    def close(self) -> None:
        ...


def copy_into(source: MemoryBackend, target: MemoryBackend) -> int:
    """Copy every conversation of ``source`` into ``target`` (replacing any of the same name);
    the number of conversations copied."""
    names = source.conversations()
    for name in names:
        state = source.state(name)
        if state is None:
            continue
        stale = [u.utterance_index for u in target.utterances(name)]
        target.commit(name, state, added=source.utterances(name), removed=stale)
    return len(names)


class InMemoryBackend:
    """Conversations in a dict: fast, gone with the process."""

    def __init__(self) -> None:
        self._states: dict[str, ConversationState] = {}
        self._utterances: dict[str, dict[int, Utterance]] = {}
        self._lock = threading.RLock()

    def state(self, conversation: str) -> ConversationState | None:
        with self._lock:
            return self._states.get(conversation)

    def utterances(self, conversation: str) -> list[Utterance]:
        with self._lock:
            found = self._utterances.get(conversation, {})
            return [found[i] for i in sorted(found)]

    def commit(self, conversation: str, state: ConversationState,
               added: Sequence[Utterance] = (), removed: Sequence[int] = ()) -> None:
        with self._lock:
            buffer = self._utterances.setdefault(conversation, {})
            for index in removed:
                buffer.pop(index, None)
            for utterance in added:
                buffer[utterance.utterance_index] = utterance
            self._states[conversation] = state

    @contextmanager
    def writing(self, conversation: str) -> Iterator[ConversationWrite]:
        # One process: holding the lock is the transaction (a failed block leaves what it
        # committed; the store commits last, so nothing is half-applied).
        with self._lock:
            yield ConversationWrite(
                lambda: self.state(conversation), lambda: self.utterances(conversation),
                lambda state, added, removed: self.commit(conversation, state, added, removed))

    def conversations(self) -> list[str]:
        with self._lock:
            return sorted(self._states)

    def close(self) -> None:
        pass


_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    name TEXT PRIMARY KEY,
    buffer_size INTEGER NOT NULL,
    max_tokens INTEGER NOT NULL,
    summary_token_limit INTEGER NOT NULL,
    next_index INTEGER NOT NULL,
    evicted INTEGER NOT NULL,
    summary TEXT NOT NULL,
    deleted INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS utterances (
    conversation TEXT NOT NULL,
    utterance_index INTEGER NOT NULL,
    speaker TEXT NOT NULL,
    turn_number INTEGER NOT NULL,
    timestamp TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (conversation, utterance_index)
) WITHOUT ROWID;
"""


class SQLiteBackend:
    """Conversations in one SQLite file; every commit is durable when it returns."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # timeout: busy_timeout from the start, as processes opening a new file at once
            # contend for the switch to WAL and the schema too.
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                       timeout=BUSY_TIMEOUT)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the memory store {self.path}: {exc}") from exc
        self._lock = threading.Lock()

    @classmethod
    def at_home(cls, home: str | Path) -> SQLiteBackend:
        """The memory store of an excerpt home: ``<home>/memory.db``."""
        return cls(Path(home) / MEMORY_DB)

    def state(self, conversation: str) -> ConversationState | None:
        with self._lock, self._errors():
            return self._state(conversation)

    def utterances(self, conversation: str) -> list[Utterance]:
        with self._lock, self._errors():
            return self._utterances(conversation)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"memory store {self.path}: {exc}") from exc

    def commit(self, conversation: str, state: ConversationState,
               added: Sequence[Utterance] = (), removed: Sequence[int] = ()) -> None:
        with self.writing(conversation) as write:
            write.commit(state, added, removed)

    @contextmanager
    def writing(self, conversation: str) -> Iterator[ConversationWrite]:
        # BEGIN IMMEDIATE takes the file's write lock now, before anything is read, so the
        # reads inside see the last committed state and no other process commits in between
        # (it waits up to busy_timeout).
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield ConversationWrite(
                    lambda: self._state(conversation), lambda: self._utterances(conversation),
                    lambda state, added, removed: self._save(conversation, state, added,
                                                             removed))
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreError(f"memory store {self.path}: {exc}") from exc
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        # A rollback that fails (a closed or broken connection) must not hide the error that
        # made it necessary; the transaction dies with the connection anyway.
        with suppress(sqlite3.Error):
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")

    def _state(self, conversation: str) -> ConversationState | None:
        row = self._db.execute(
            "SELECT buffer_size, max_tokens, summary_token_limit, next_index, evicted, summary,"
            " deleted FROM conversations WHERE name = ?", (conversation,)).fetchone()
        if row is None:
            return None
        return ConversationState(ConversationConfig(row[0], row[1], row[2]), row[3], row[4],
                                 row[5], row[6])

    def _utterances(self, conversation: str) -> list[Utterance]:
        rows = self._db.execute(
            "SELECT utterance_index, speaker, turn_number, timestamp, text, tokens"
            " FROM utterances WHERE conversation = ? ORDER BY utterance_index",
            (conversation,)).fetchall()
        return [Utterance(*row) for row in rows]

    def _save(self, conversation: str, state: ConversationState, added: Sequence[Utterance],
              removed: Sequence[int]) -> None:
        config = state.config
        self._db.executemany(
            "DELETE FROM utterances WHERE conversation = ? AND utterance_index = ?",
            [(conversation, index) for index in removed])
        self._db.executemany(
            "INSERT OR REPLACE INTO utterances VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(conversation, u.utterance_index, u.speaker, u.turn_number, u.timestamp, u.text,
              u.tokens) for u in added])
        self._db.execute(
            "INSERT OR REPLACE INTO conversations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (conversation, config.buffer_size, config.max_tokens, config.summary_token_limit,
             state.next_index, state.evicted, state.summary, state.deleted))

    def conversations(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT name FROM conversations ORDER BY name").fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_backend(name: str, home: str | Path | None = None) -> MemoryBackend:
    """A backend by the seed's names: ``in-memory``, or ``durable`` (``<home>/memory.db``)."""
    if name == "in-memory":
        return InMemoryBackend()
    if name == "durable":
        if home is None:
            raise InputError("the durable memory backend needs a home folder")
        return SQLiteBackend.at_home(home)
    raise InputError(f"unknown memory backend {name!r}; expected one of {', '.join(BACKENDS)}")
