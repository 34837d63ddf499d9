"""The rolling buffer: which utterances to evict, and the per-conversation search index.

Eviction is oldest first, whenever the buffer holds more than ``buffer_size`` utterances or
more than ``max_tokens`` tokens; the newest utterance always stays, even alone over
``max_tokens`` (nothing is truncated: its text is kept whole).

Search is Lucene's BM25 (``excerpt.bm25.idf``, k1 = 1.5, b = 0.75) over the
buffered utterances with excerpt's analyzers, from an inverted index kept in memory and updated
on every add, eviction and delete, optionally blended with the cosine similarity of sentence
embeddings (see :meth:`excerpt.memory.store.MemoryStore.search`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from excerpt.analyze import analyze
from excerpt.bm25 import K1, B, idf
from excerpt.memory.model import ConversationConfig, Utterance

FloatArray = npt.NDArray[np.float32]
Embed = Callable[[list[str]], FloatArray]


def eviction_count(buffer: Sequence[Utterance], config: ConversationConfig) -> int:
    """How many of the oldest utterances of ``buffer`` (oldest first) must go."""
    size, tokens = len(buffer), sum(u.tokens for u in buffer)
    evict = 0
    while size - evict > 1 and (size - evict > config.buffer_size or tokens > config.max_tokens):
        tokens -= buffer[evict].tokens
        evict += 1
    return evict


class ConversationIndex:
    """An inverted index of one conversation's buffered utterances, plus cached embeddings."""

    def __init__(self, utterances: Iterable[Utterance] = ()) -> None:
        self.utterances: dict[int, Utterance] = {}
        self._terms: dict[int, Counter[str]] = {}
        self._lengths: dict[int, int] = {}
        self._matrices: dict[str, tuple[list[int], FloatArray]] = {}
        self._postings: dict[str, dict[int, int]] = {}
        self._total_length = 0
        self._vectors: dict[str, dict[int, FloatArray]] = {}
        for utterance in utterances:
            self.add(utterance)

    def add(self, utterance: Utterance) -> None:
        index = utterance.utterance_index
        if index in self.utterances:
            self.remove(index)
        terms = Counter(analyze(utterance.text))
        self.utterances[index] = utterance
        self._terms[index] = terms
        self._lengths[index] = sum(terms.values())
        self._total_length += self._lengths[index]
        self._matrices.clear()
        for term, tf in terms.items():
            self._postings.setdefault(term, {})[index] = tf

    def remove(self, index: int) -> None:
        if self.utterances.pop(index, None) is None:
            return
        terms = self._terms.pop(index)
        self._total_length -= self._lengths.pop(index)
        self._matrices.clear()
        for term in terms:
            postings = self._postings[term]
            del postings[index]
            if not postings:
                del self._postings[term]
        for vectors in self._vectors.values():
            vectors.pop(index, None)

    def bm25(self, query: str) -> dict[int, float]:
        """BM25 score of every utterance matching at least one query token."""
        n = len(self.utterances)
        if not n:
            return {}
        avgdl = max(self._total_length / n, 1e-9)
        scores: dict[int, float] = {}
        lengths = self._lengths
        for term, qtf in Counter(analyze(query)).items():
            postings = self._postings.get(term)
            if not postings:
                continue
            weight = qtf * idf(len(postings), n)
            for index, tf in postings.items():
                norm = tf / (tf + K1 * (1.0 - B + B * lengths[index] / avgdl))
                scores[index] = scores.get(index, 0.0) + weight * norm
        return scores

    def vectors(self, name: str, embed: Embed) -> tuple[list[int], FloatArray]:
        """Indexes (ascending) and their embeddings by the model ``name``, computing the
        missing ones with ``embed`` (a batch function: texts -> (n, dim) float32)."""
        if name in self._matrices:
            return self._matrices[name]
        cached = self._vectors.setdefault(name, {})
        missing = [i for i in sorted(self.utterances) if i not in cached]
        if missing:
            matrix = embed([self.utterances[i].text for i in missing])
            for i, row in zip(missing, matrix, strict=True):
                cached[i] = row
        order = sorted(self.utterances)
        if not order:
            return order, np.zeros((0, 0), dtype=np.float32)
        found = order, np.stack([cached[i] for i in order]).astype(np.float32, copy=False)
        self._matrices[name] = found
        return found


