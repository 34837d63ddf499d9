"""Query vectors kept for the next call: one ask embeds its question for the search's dense
leg, again for the sentence scores of composition and again for MMR; a conversation repeats
its questions. :class:`CachedQueries` wraps an embedder so that the same text is embedded
once (the ``size`` most recent texts are kept; vectors are read-only, shared between calls).
Documents are not cached here (the store's vector cache keeps them, by content hash)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

QUERIES_KEPT = 256


class CachedQueries:
    """``embedder`` with its query vectors kept (see the module docstring); thread-safe."""

    def __init__(self, embedder: Any, size: int = QUERIES_KEPT) -> None:
        self.embedder = embedder
        self.size = size
        self._kept: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> Any:
        with self._lock:
            if text in self._kept:
                self._kept.move_to_end(text)
                return self._kept[text]
        vector = self.embedder.embed_query(text)  # outside the lock: threads embed at once
        vector.setflags(write=False)
        with self._lock:
            self._kept[text] = vector
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return vector

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self.embedder.embed_documents(texts)
