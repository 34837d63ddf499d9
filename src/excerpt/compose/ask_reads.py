"""What one ask reads, over one resolve of its snapshots: the seams the ask pipeline
(compose/ask.py) takes — search, idf, vectors, the sentence embedder — bound to one view per
metadata scope its searches read and to each text read once into a :class:`Question`.

The engine resolves the caller's snapshots and hands them here; the pipeline then never
reaches back into the engine. tests/integration/test_ask_reads_once.py counts the resolves
and views, test_ask_analyses_once.py the question's analyses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

from excerpt.compose.extract import Embed, view_embed
from excerpt.errors import InputError
from excerpt.ingest.books.parts import excluded_parts, without_parts
from excerpt.query.question import Question
from excerpt.retrieve.relations import code_pins, read_question
from excerpt.retrieve.searcher import Searcher, SearchResult
from excerpt.retrieve.view import View
from excerpt.store.base import SnapshotInfo
from excerpt.types import Filters, Hit, IdfWeights, Principal, check_where

SearchView = Callable[[View, Question, Filters, int], SearchResult]
"""Searches an open view for a read question at a depth (the engine's, which traces it)."""


class AskReads:
    """One ask's reads: ``snapshots`` (resolved once) as ``principal`` sees them under
    ``filters``; ``warm(model)`` gives an embedder; ``search_view`` searches (None: this
    read composes from passages it is given, and does not search)."""

    def __init__(self, searcher: Searcher, snapshots: Sequence[SnapshotInfo], filters: Filters,
                 principal: Principal, question: str, warm: Callable[[str], Any],
                 search_view: SearchView | None = None) -> None:
        self.searcher, self.access = searcher, searcher.access
        self.snapshots, self.filters, self.principal = snapshots, filters, principal
        self.text, self._search_view, self._warm = question, search_view, warm
        self.view = self.access.view(snapshots, principal, filters.metadata)
        self._views: dict[tuple[tuple[str, str], ...], View] = {(): self.view}
        self.question = searcher.read(question)  # every stage reads it (query/question.py)
        self._read: dict[str, Question] = {question: self.question}
        self._excluded = excluded_parts(searcher.settings.ask_exclude_parts, filters.metadata)

    @cached_property
    def _code(self) -> bool:
        """Whether the question asks how code objects relate and pins some of them."""
        return read_question(self.text) is not None and bool(code_pins(
            self.text, lambda names: self.access.code_ids(self.view, names),
            lambda: self.access.graph(self.view)))

    def search(self, query: str, k: int, scope: Mapping[str, Any]) -> list[Hit]:
        """The pipeline's search: ``query``'s ``k`` best under the ask's filters narrowed by
        ``scope`` (a book, chapter...), book apparatus left out; for a code question, the nodes
        the whole question pins (retrieve/relations.py) lead."""
        scoped = replace(self.filters, metadata={**self.filters.metadata, **scope})
        hits = without_parts(lambda n: self._scoped(query, scoped, n).hits, k, self._excluded)
        if self._code:
            whole = self._scoped(self.text, scoped, k)
            pinned = set(whole.analysis.get("named_nodes", ()))
            lead = [h for h in whole.hits if h.node.id in pinned]
            return lead + [h for h in hits if h.node.id not in pinned]
        return hits

    def _scoped(self, query: str, scoped: Filters, n: int) -> SearchResult:
        """A search of the view of ``scoped``'s metadata (laid out once per scope) for
        ``query`` (read once per text)."""
        if not query.strip():
            raise InputError("the query is empty")
        assert self._search_view is not None, "a read made to compose does not search"
        key = tuple(sorted((k, repr(v)) for k, v in scoped.metadata.items()
                           if self.filters.metadata.get(k) != v))
        if key not in self._views:
            check_where(scoped.metadata)
            self._views[key] = self.access.view(self.snapshots, self.principal, scoped.metadata)
        if query not in self._read:
            self._read[query] = self.searcher.read(query)
        return self._search_view(self._views[key], self._read[query], scoped, n)

    def idf(self, question: Question) -> IdfWeights:
        """The view's idf weights of the question's tokens (the composer's coverage)."""
        return self.access.idf_weights(self.view, list(question.tokens))

    def vectors(self, hits: Sequence[Hit]) -> Any:
        """The question's vector and the hits' stored ones (for MMR), or None."""
        return self.access.node_vectors(self.view, self.searcher.query_embedder, self.text,
                                        [(h.snapshot_id, h.node.id) for h in hits])

    def embed(self, text: str) -> Embed | None:
        """The sentence embedder of the view's model, for ranking answer sentences."""
        return view_embed([p.embed_model for p in self.view.parts], self._warm, text)
