"""The conversation-memory facade: one lock per store, one backend behind it.

>>> store = MemoryStore(InMemoryBackend(), embedder=None)
>>> store.add("c1", "user", 1, "Book a table at Luigi's in Rome.").utterance_index
0
>>> [u.text for u in store.read("c1")]
["Book a table at Luigi's in Rome."]

Every operation on a store holds its lock, and every write runs inside the backend's write
transaction on the conversation (:meth:`MemoryBackend.writing`), so parallel callers, threads
or processes, neither lose nor reorder writes: indexes follow the order in which the adds took
the transaction, and timestamps never go backwards within a conversation.  A store keeps each
conversation's buffer and search index in memory; it checks the stored state row before using
them, and a write checks it inside the transaction, so another process's writes are always
seen (the state changes with every write: ``next_index`` or ``deleted`` grow, or the config
changes).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np

from excerpt.analyze import detect_language
from excerpt.embed import Embedder, choose_embedder_for_language, get_embedder
from excerpt.errors import DependencyError, InputError
from excerpt.memory import summary as summaries
from excerpt.memory.backends import ConversationWrite, InMemoryBackend, MemoryBackend, copy_into
from excerpt.memory.conversation import ConversationIndex, eviction_count
from excerpt.memory.model import (
    ConversationConfig,
    ConversationState,
    ScoredUtterance,
    Utterance,
    check_speaker,
    utc_now,
)
from excerpt.tokens import count_tokens

AUTO = "auto"
SEMANTIC_FLOOR = 0.85
ALPHA = 0.5


class _Cached:
    def __init__(self, state: ConversationState, buffer: list[Utterance]) -> None:
        self.state = state
        self.buffer = buffer
        self.index: ConversationIndex | None = None


MAX_TEXT_CHARS = 200_000
"""Characters one utterance may hold: four times seed 002's 10,000-token utterances, far from
what a store or a summary should be asked to keep (a reader once stored 300 MB)."""


class MemoryStore:
    """Conversation memory over a :class:`MemoryBackend` (in memory when none is given).

    ``embedder`` decides the semantic half of search: ``"auto"`` (the default) picks MiniLM or
    E5 by the query's language and falls back to BM25 alone when the model is not installed;
    an :class:`~excerpt.embed.Embedder` is used as given; None means BM25 alone.
    """

    def __init__(self, backend: MemoryBackend | None = None, *,
                 embedder: str | Embedder | None = AUTO, semantic_floor: float = SEMANTIC_FLOOR,
                 alpha: float = ALPHA) -> None:
        self.backend: MemoryBackend = backend if backend is not None else InMemoryBackend()
        self.embedder = embedder
        self.semantic_floor = semantic_floor
        self.alpha = alpha
        self._lock = threading.RLock()
        self._cache: dict[str, _Cached] = {}

    # -- internals ---------------------------------------------------------------------------

    def _load(self, conversation: str, write: ConversationWrite | None = None) -> _Cached | None:
        """The conversation as stored (inside ``write``'s transaction when given), from the
        cache when the stored state is the cached one."""
        state = write.state() if write else self.backend.state(conversation)
        if state is None:
            self._cache.pop(conversation, None)
            return None
        cached = self._cache.get(conversation)
        if cached is None or cached.state != state:
            buffer = write.utterances() if write else self.backend.utterances(conversation)
            cached = _Cached(state, buffer)
            self._cache[conversation] = cached
        return cached

    @contextmanager
    def _writing(self, conversation: str) -> Iterator[ConversationWrite]:
        with self._lock:
            try:
                with self.backend.writing(conversation) as write:
                    yield write
            except BaseException:
                self._cache.pop(conversation, None)  # it may hold what was rolled back
                raise

    def _commit(self, conversation: str, write: ConversationWrite, cached: _Cached | None,
                state: ConversationState, buffer: list[Utterance],
                added: list[Utterance]) -> None:
        """Evict from ``buffer`` (which already holds ``added``) as ``state.config`` demands,
        summarise the evicted, then write everything as one backend commit."""
        evict = eviction_count(buffer, state.config)
        evicted, buffer = buffer[:evict], buffer[evict:]
        if evicted:
            state = replace(state, evicted=state.evicted + evict, summary=summaries.merge(
                state.summary, evicted, state.config.summary_token_limit))
        removed = [u.utterance_index for u in evicted]
        write.commit(state, added=added, removed=removed)
        fresh = _Cached(state, buffer)
        if cached is not None and cached.index is not None:
            fresh.index = cached.index
            for index in removed:
                fresh.index.remove(index)
            for utterance in added:
                fresh.index.add(utterance)
        self._cache[conversation] = fresh

    @staticmethod
    def _check_conversation(conversation: str) -> str:
        if not isinstance(conversation, str) or not conversation.strip():
            raise InputError(f"a conversation needs a non-empty name, not {conversation!r}")
        return conversation

    @staticmethod
    def _filter(buffer: list[Utterance], speaker: str | None) -> list[Utterance]:
        if speaker is None:
            return list(buffer)
        check_speaker(speaker)
        return [u for u in buffer if u.speaker == speaker]

    # -- writes ------------------------------------------------------------------------------

    def add(self, conversation: str, speaker: str, turn: int, text: str) -> Utterance:
        """Append an utterance (evicting the oldest past the limits); durable when the backend
        is, once this returns."""
        self._check_conversation(conversation)
        check_speaker(speaker)
        if isinstance(turn, bool) or not isinstance(turn, int) or turn < 0:
            raise InputError(f"turn must be a non-negative integer, not {turn!r}")
        _check_text(text)
        tokens = count_tokens(text)
        with self._writing(conversation) as write:
            cached = self._load(conversation, write)
            state = cached.state if cached is not None else ConversationState()
            buffer = list(cached.buffer) if cached is not None else []
            timestamp = utc_now()
            if buffer and buffer[-1].timestamp > timestamp:
                timestamp = buffer[-1].timestamp
            utterance = Utterance(state.next_index, speaker, turn, timestamp, text, tokens)
            buffer.append(utterance)
            state = replace(state, next_index=state.next_index + 1)
            self._commit(conversation, write, cached, state, buffer, [utterance])
            return utterance

    def config(self, conversation: str, **changes: Any) -> ConversationConfig:
        """The conversation's config, after applying ``changes`` (buffer_size, max_tokens,
        summary_token_limit; None leaves one as it is).  Smaller limits evict at once."""
        self._check_conversation(conversation)
        if not any(v is not None for v in changes.values()):
            with self._lock:
                cached = self._load(conversation)
            config = cached.state.config if cached is not None else ConversationConfig()
            config.with_changes(**changes)  # unknown names are refused even when reading
            return config
        with self._writing(conversation) as write:
            cached = self._load(conversation, write)
            state = cached.state if cached is not None else ConversationState()
            state = replace(state, config=state.config.with_changes(**changes))
            buffer = list(cached.buffer) if cached is not None else []
            self._commit(conversation, write, cached, state, buffer, [])
            return state.config

    def delete(self, conversation: str, index: int) -> bool:
        """Delete the buffered utterance ``index``; False when there is none (its index is
        never given again either way)."""
        with self._writing(conversation) as write:
            cached = self._load(conversation, write)
            if cached is None or all(u.utterance_index != index for u in cached.buffer):
                return False
            state = replace(cached.state, deleted=cached.state.deleted + 1)
            write.commit(state, removed=[index])
            fresh = _Cached(state, [u for u in cached.buffer if u.utterance_index != index])
            fresh.index = cached.index
            if fresh.index is not None:
                fresh.index.remove(index)
            self._cache[conversation] = fresh
            return True

    # -- reads -------------------------------------------------------------------------------

    def read(self, conversation: str, speaker: str | None = None) -> list[Utterance]:
        """The buffered utterances, oldest first (empty for an unknown conversation)."""
        with self._lock:
            cached = self._load(conversation)
            return self._filter(cached.buffer if cached else [], speaker)

    def last(self, conversation: str, n: int, speaker: str | None = None) -> list[Utterance]:
        """The ``n`` most recent utterances (of ``speaker``), oldest first."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError(f"n must be a non-negative integer, not {n!r}")
        found = self.read(conversation, speaker)
        return found[len(found) - n:] if n else []

    def search(self, conversation: str, query: str, k: int = 10,
               speaker: str | None = None) -> list[ScoredUtterance]:
        """Utterances matching ``query``, most relevant first (ties: oldest first).

        Candidates are the utterances sharing a query token (BM25) and, with an embedder, those
        whose cosine similarity to the query reaches ``semantic_floor``.  Without an embedder
        the score is BM25's; with one it is ``(1 - alpha) * bm25 / max bm25 + alpha * cosine``.
        BM25 statistics are those of the whole buffer; ``speaker`` filters the candidates.
        Embeddings are computed on the first search that needs them and kept per utterance
        (E5, for Korean queries, is slow: tens of utterances per second).
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InputError(f"k must be a non-negative integer, not {k!r}")
        if speaker is not None:
            check_speaker(speaker)
        with self._lock:
            cached = self._load(conversation)
            if cached is None or not query.strip() or k == 0:
                return []
            if cached.index is None:
                cached.index = ConversationIndex(cached.buffer)
            index = cached.index
            lexical = index.bm25(query)
            cosine = self._cosine(index, query)
            found = {u.utterance_index: u for u in self._filter(cached.buffer, speaker)}
            allowed = set(found)
        if cosine is None:
            scores = {i: s for i, s in lexical.items() if i in allowed}
        else:
            top = max(lexical.values(), default=0.0) or 1.0
            candidates = {i for i in lexical if i in allowed} | {
                i for i, c in cosine.items() if i in allowed and c >= self.semantic_floor}
            scores = {i: (1 - self.alpha) * lexical.get(i, 0.0) / top
                      + self.alpha * cosine.get(i, 0.0) for i in candidates}
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [ScoredUtterance(found[i], round(float(s), 6)) for i, s in ranked]

    def _embedder_for(self, query: str) -> Embedder | None:
        if self.embedder is None:
            return None
        if isinstance(self.embedder, str):
            name = (choose_embedder_for_language(detect_language(query))
                    if self.embedder == AUTO else self.embedder)
            try:
                return get_embedder(name)
            except DependencyError:
                return None
        return self.embedder

    def _cosine(self, index: ConversationIndex, query: str) -> dict[int, float] | None:
        embedder = self._embedder_for(query)
        if embedder is None:
            return None
        try:
            order, matrix = index.vectors(embedder.name, embedder.embed_documents)
            if not order:
                return {}
            sims = matrix @ embedder.embed_query(query)
        except DependencyError:
            return None
        return {i: float(s) for i, s in zip(order, np.asarray(sims).tolist(), strict=True)}

    def summary(self, conversation: str, token_limit: int | None = None) -> tuple[str, int]:
        """The running summary of evicted utterances and its token count, within
        ``token_limit`` tokens (the conversation's ``summary_token_limit`` when None)."""
        if token_limit is not None and (isinstance(token_limit, bool)
                                        or not isinstance(token_limit, int) or token_limit < 0):
            raise InputError(f"token_limit must be a non-negative integer, not {token_limit!r}")
        with self._lock:
            cached = self._load(conversation)
            if cached is None:
                return "", 0
            limit = cached.state.config.summary_token_limit if token_limit is None else token_limit
            return summaries.read_summary(cached.state.summary, limit)

    def stats(self, conversation: str) -> dict[str, Any]:
        """Counts for the conversation (zeros and the default config when unknown)."""
        with self._lock:
            cached = self._load(conversation)
            state = cached.state if cached else ConversationState()
            buffer = cached.buffer if cached else []
            _, summary_tokens = summaries.read_summary(state.summary)
        return {
            "utterances": len(buffer),
            "total_tokens": sum(u.tokens for u in buffer),
            "evicted": state.evicted,
            "deleted": state.deleted,
            "next_index": state.next_index,
            "summary_tokens": summary_tokens,
            "config": state.config.to_dict(),
        }

    def total_tokens(self, conversation: str) -> int:
        """Tokens of the buffered utterances."""
        return sum(u.tokens for u in self.read(conversation))

    def conversations(self) -> list[str]:
        with self._lock:
            return self.backend.conversations()

    # -- backends ----------------------------------------------------------------------------

    def switch_backend(self, backend: MemoryBackend, *, copy: bool = True) -> MemoryBackend:
        """Use ``backend`` from now on, first copying every conversation into it when ``copy``;
        the previous backend is returned, open (the caller closes it)."""
        with self._lock:
            if copy:
                copy_into(self.backend, backend)
            previous, self.backend = self.backend, backend
            self._cache.clear()
            return previous

    def close(self) -> None:
        with self._lock:
            self.backend.close()


def _check_text(text: object) -> None:
    """Text every backend can store alike: PostgreSQL's text holds no NUL character and
    SQLite's UTF-8 no lone surrogate, so both are refused before anything is written; and no
    more than :data:`MAX_TEXT_CHARS` of it, on every interface."""
    if not isinstance(text, str):
        raise InputError(f"text must be a string, not {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise InputError(f"text is {len(text)} characters, over the {MAX_TEXT_CHARS} one "
                         "utterance may hold")
    if "\x00" in text:
        raise InputError("text holds a NUL character (\\x00), which no store keeps")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"text holds a lone surrogate at character {exc.start}: "
                         "not valid Unicode") from None
