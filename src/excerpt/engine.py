"""The engine: the one place where excerpt's stages are wired together.

    ingest:  load (per format) -> language + tokens per node -> vectors (cached) -> segment
             -> publish (one transaction)
    search:  resolve the read view -> security + metadata masks -> read the query once
             -> bm25 | semantic | hybrid fusion -> fetch the hit nodes
    graph:   the same view -> breadth-first over allow-listed edges of visible nodes
             (outgoing, incoming or both)
    context: the same view -> whole node texts in priority order under the budgets
             (from a query: search -> graph expansion of the hits -> the same packing)

Ingestion itself lives in :mod:`excerpt.ingest.pipeline`; traces in :mod:`excerpt.provenance`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from excerpt import telemetry
from excerpt.catalogue import Catalogue
from excerpt.embedder_names import EMBEDDERS
from excerpt.errors import InputError, NotFoundError, StoreError
from excerpt.graph.expand import DIRECTIONS, Direction, GraphLimits, GraphResult, expand
from excerpt.query.question import Question
from excerpt.retrieve.access import Access
from excerpt.retrieve.backends import access_for
from excerpt.retrieve.searcher import Searcher, SearchResult
from excerpt.retrieve.view import View
from excerpt.settings import Settings
from excerpt.store.base import SnapshotInfo, Store
from excerpt.store.open import open_store
from excerpt.tokens import count_tokens
from excerpt.types import (
    SEARCH_MODES,
    Filters,
    Hit,
    Node,
    Principal,
    SearchMode,
    check_where,
)

# What a search does not run is imported where it is used (a cold `excerpt search` pays for
# every import before its first result): asking and composing, ingestion and sync, the context
# stage, memory, reranking, traces, query-vector caching. (The graph expansion and the token
# counter are loaded by the search's own modules anyway: imported above.)
if TYPE_CHECKING:
    from excerpt.compose.ask import AskOptions, AskResult
    from excerpt.compose.composer import ComposedAnswer
    from excerpt.compose.synthesis import KeptSentence
    from excerpt.context.fetch import ContextResult
    from excerpt.embed.queries import CachedQueries
    from excerpt.ingest.pipeline import Importer, IngestResult, Progress
    from excerpt.memory.backends import MemoryBackend
    from excerpt.provenance.prov import ExplainCallback
    from excerpt.provenance.trace import Trace, TraceLog
    from excerpt.rerank import Reranker
    from excerpt.retrieve.dense import QueryEmbedder
    from excerpt.sync import SyncOptions, SyncResult

__all__ = ["EMBEDDERS", "Engine", "IngestResult", "Progress", "SearchResult"]  # SearchResult:
# retrieve/searcher.py's, named here as the public API has always named it

_LAZY = {"IngestResult": "excerpt.ingest.pipeline", "Progress": "excerpt.ingest.pipeline"}


def __getattr__(name: str) -> Any:
    """``excerpt.engine.IngestResult`` and ``Progress`` stay importable from here, loaded
    (with the ingestion pipeline) only when asked for."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_log = logging.getLogger(__name__)
MAX_AROUND = 10
"""Nodes :meth:`Engine.passage` shows at most on each side of a passage."""


class Engine:
    """Cheap to construct; the store opens on first use and models load when first needed."""

    def __init__(self, home: Path | str, settings: Settings | None = None,
                 store: Store | None = None, store_url: str | None = None) -> None:
        """``store_url`` (``postgresql://…``) keeps everything in PostgreSQL, ``home`` then
        only holds scratch files of imports being built; otherwise the embedded store lives
        in ``home``."""
        self.home = Path(home)
        self.settings = settings or Settings()
        self._store = store
        self.store_url = store_url
        self._embedders: dict[str, Any] = {}
        self._access: Access | None = None
        self._searcher: Searcher | None = None
        self._warm: dict[str, CachedQueries] = {}
        self._trace_log: TraceLog | None = None
        telemetry.configure(self.settings.otel_endpoint)  # off unless an endpoint is set
        if self.settings.log_dir:
            from excerpt.provenance.trace import TraceLog

            self._trace_log = TraceLog(self.settings.log_dir)

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.home, self.store_url, self.settings)
        return self._store

    def memory_backend(self) -> MemoryBackend:
        """Where conversations are kept: beside the store (memory/beside.py chooses)."""
        from excerpt.memory.beside import backend_beside

        return backend_beside(self.store)

    @property
    def access(self) -> Access:
        """How views are read and ranked: segments, or SQL for a PostgreSQL store."""
        if self._access is None:
            self._access = access_for(self.store, self.settings)
        return self._access

    @property
    def searcher(self) -> Searcher:
        """The search stages over this engine's views (retrieve/searcher.py)."""
        if (self._searcher is None or self._searcher.access is not self.access
                or self._searcher.settings is not self.settings):  # replaced: follow them
            self._searcher = Searcher(self.access, self.settings, self.store.nodes_at,
                                      self._warm_embedder, self._reranker)
        return self._searcher

    @property
    def catalogue(self) -> Catalogue:
        """Which snapshots and sets exist, as a principal may know them."""
        return Catalogue(self.store, self.access)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
            self._access = None

    # -- ingestion ------------------------------------------------------------------------------

    def ingest(
        self,
        paths: Path | str | Sequence[Path | str],
        collection: str = "default",
        fmt: str = "auto",
        acl_tags: Sequence[str] = (),
        classification_labels: Sequence[str] = (),
        snapshot_name: str | None = None,
        embedder: str = "auto",
        source: str | None = None,
        progress: Progress | None = None,
        ingest_roots: Sequence[Path | str] | None = None,
        ray: str | None = None,
    ) -> IngestResult:
        """Import ``paths`` as one snapshot; raises on a refused corpus (the run is 'failed').
        With ``ingest_roots``, every file read must resolve inside them (links included);
        ``progress`` None reports nothing; ``ray``, a Ray cluster address, embeds the batches
        there (:mod:`excerpt.embed.ray_embed`)."""
        from excerpt.ingest.pipeline import no_progress

        phases = telemetry.Phases(progress or no_progress)  # spans of its phases, if tracing
        with telemetry.stage("ingest", None, {"excerpt.operation": "ingest",
                                              "gen_ai.data_source.id": collection,
                                              "excerpt.format": fmt}, root=True):
            result = self._importer().run(
                paths, collection, fmt, acl_tags, classification_labels, snapshot_name,
                embedder, source, phases, ingest_roots, ray=ray)
            phases.close()
        return result

    def sync(self, folder: Path | str, options: SyncOptions | None = None,
             progress: Progress | None = None,
             remembered: dict[str, tuple[str, str]] | None = None,
             on_wait: Callable[[str], None] | None = None) -> SyncResult:
        """Make a collection mirror ``folder``: one pass of :mod:`excerpt.sync` (new and
        changed files imported, unchanged ones skipped by hash, deleted ones retired), one
        sync of a collection at a time (``on_wait``: told whom a second one waits for)."""
        from excerpt.ingest.pipeline import no_progress
        from excerpt.sync import SyncOptions, sync_folder

        return sync_folder(self._importer(), Path(folder), options or SyncOptions(),
                           progress or no_progress, remembered, on_wait)

    def _importer(self) -> Importer:
        from excerpt.ingest.pipeline import Importer

        return Importer(self.store, self.settings, self._embedder)

    def _embedder(self, model: str) -> Any:
        if model not in self._embedders:
            from excerpt.embed import get_embedder

            self._embedders[model] = get_embedder(model)
        return self._embedders[model]

    # -- snapshots ------------------------------------------------------------------------------

    def snapshots(self, collection: str | None = None,
                  principal: Principal | None = None) -> dict[str, Any]:
        """Snapshots and sets as ``principal`` (default: anonymous) may know them
        (:meth:`excerpt.catalogue.Catalogue.listing`)."""
        return self.catalogue.listing(collection, principal or Principal.anonymous())

    def snapshot_set(self, name: str, snapshot_ids: Sequence[str],
                     collection: str = "default") -> dict[str, Any]:
        return self.catalogue.create_set(name, snapshot_ids, collection)

    def passage(self, node_id: str, filters: Filters | None = None,
                principal: Principal | None = None, around: int = 1) -> dict[str, Any]:
        """A node in its place: with up to ``around`` nodes before and after it in its
        document, only those the caller may see. A node it may not see is "not found", as an
        unknown id is. Each node's ``metadata.overlap`` says how many of its first characters
        repeat the node before it (shown once when both are shown)."""
        if not 0 <= around <= MAX_AROUND:
            raise InputError(f"around must be between 0 and {MAX_AROUND}, got {around}")
        filters, principal, view = self._open_view(filters, principal)
        nodes = self.access.around(view, node_id, around)
        if not nodes:
            raise NotFoundError(f"no node {node_id!r} in collection {filters.collection!r}")
        at = [n.id for n in nodes].index(node_id)

        def shown(node: Node) -> dict[str, Any]:
            return {"id": node.id, "text": node.text, "title": node.title,
                    "source": node.source, "metadata": dict(node.metadata)}

        return {"id": node_id, "document_id": nodes[at].document_id,
                "before": [shown(n) for n in nodes[:at]], "passage": shown(nodes[at]),
                "after": [shown(n) for n in nodes[at + 1:]]}

    def _open_view(self, filters: Filters | None, principal: Principal | None
                   ) -> tuple[Filters, Principal, Any]:
        """The read's filters and principal (defaults: everything, anonymous) and its view."""
        snapshots, filters, principal = self._read(filters, principal)
        view = self.access.view(snapshots, principal, filters.metadata)
        self._require_seen(view, snapshots, filters, principal)
        return filters, principal, view

    def _require_seen(self, view: Any, snapshots: Sequence[SnapshotInfo], filters: Filters,
                      principal: Principal) -> None:
        """A collection of which ``principal`` may see no node is answered as one that is not
        there (not_found, as chat's models, list_collections and /v1/snapshots answer it): an
        empty result would tell the caller that the name exists. Checked only when the view
        shows nothing (metadata filters that leave nothing keep their empty answer)."""
        if snapshots and not view.visible and not self.access.seen(view):
            raise self.catalogue.missing_collection(filters.collection, principal)

    def _read(self, filters: Filters | None, principal: Principal | None
              ) -> tuple[list[SnapshotInfo], Filters, Principal]:
        """The snapshots a read sees, with its filters and principal (defaults: everything,
        anonymous)."""
        filters = filters or Filters()
        check_where(filters.metadata)
        principal = principal or Principal.anonymous()
        return self.resolve(filters, principal), filters, principal

    def resolve(self, filters: Filters, principal: Principal | None = None
                ) -> list[SnapshotInfo]:
        """The snapshots a read sees (:meth:`excerpt.catalogue.Catalogue.resolve`)."""
        return self.catalogue.resolve(filters, principal)

    # -- search ---------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        filters: Filters | None = None,
        principal: Principal | None = None,
        mode: SearchMode = "hybrid",
        k: int | None = None,
        fetch: bool = True,
        reranker: str | None = None,
    ) -> SearchResult:
        """Rank the view for ``query``; ``fetch=False`` skips loading hit texts (evaluation),
        leaving ``hits`` empty and the ranking in ``ranking`` as (id, score, snapshot_id).
        ``reranker`` (a name, :mod:`excerpt.rerank`): rank 3 x k, let it keep k, in its order
        with its scores (nodes the query names stay first)."""
        if not query.strip():
            raise InputError("the query is empty")
        if mode not in SEARCH_MODES:
            raise InputError(f"unknown mode {mode!r}; choose one of {SEARCH_MODES}")
        if k is not None and k < 1:
            raise InputError("-k must be at least 1")
        t0 = time.perf_counter()
        with telemetry.stage("search", None, _search_attributes(filters, mode, k), t0, True):
            filters, principal, view = self._open_view(filters, principal)
            return self._search(view, query, filters, principal, mode, k, fetch, reranker, t0)

    def _search(self, view: View, query: str | Question, filters: Filters,
                principal: Principal, mode: SearchMode, k: int | None, fetch: bool,
                reranker: str | None, t0: float) -> SearchResult:
        """:meth:`search` over an open ``view`` (of ``filters`` as ``principal``), the clock
        started at ``t0`` (before the view was opened, when it was); traced when traces are
        kept. ``query``: a text (read by the search) or a question an ask has read."""
        result = self.searcher.search(view, query, filters, principal, mode, k, fetch,
                                      reranker, t0)
        if self._trace_log and fetch:
            from excerpt.provenance.trace import search_entry

            trace, lines = search_entry(result.query, mode, result.k,
                                        self._applied(view, filters, principal), result.hits,
                                        result.timings_ms)
            self._write_trace(trace, self._trace_log.RESULTS_LOG, lines)
        return result

    # -- ask ----------------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        filters: Filters | None = None,
        principal: Principal | None = None,
        mode: SearchMode = "hybrid",
        options: AskOptions | None = None,
        reranker: str | None = None,
        explain: ExplainCallback | None = None,
        record: bool = False,
        llm: Any = None,
        on_sentence: Callable[[KeptSentence], None] | None = None,
    ) -> AskResult:
        """Answer ``question`` from what ``principal`` may see (:mod:`excerpt.compose.ask`):
        ``options`` default to :meth:`ask_options` (the settings'), ``reranker`` to the setting
        ``reranker`` ("none" for no rerank; a name, ``excerpt.rerank``), ``explain``
        receives the PROV-O events as they happen, ``record`` keeps them on the result.
        ``options.reader`` names who writes the answer (:mod:`excerpt.compose.readers`);
        ``llm``, a chat client, reads instead (as the reader 'openai'); ``on_sentence``
        receives each checked sentence of a model's answer as soon as it is judged."""
        from excerpt.compose.ask import AskPipeline
        from excerpt.compose.ask_reads import AskReads

        if not question.strip():
            raise InputError("the question is empty")
        options = options or self.ask_options()
        reranker = self.settings.reranker if reranker is None else reranker
        with telemetry.stage("ask", None, _ask_attributes(filters, mode, options), root=True):
            with telemetry.stage("resolve"):  # the reader, the snapshots, the view, the question
                reader_name, client = self._reader(options, llm)
                snapshots, filters, principal = self._read(filters, principal)  # resolved once
                reads = AskReads(self.searcher, snapshots, filters, principal, question,
                                 self._warm_embedder, self._ask_search(principal, mode))
                self._require_seen(reads.view, snapshots, filters, principal)
                chosen = None if reranker in (None, "none") else self._reranker(str(reranker))
            pipeline = AskPipeline(
                reads.search, chosen, reads.idf, reads.vectors if mode != "bm25" else None,
                client, reader_name, model_concepts=reader_name == "openai", embed=reads.embed,
                as_typed=mode != "bm25")
            return pipeline.run(reads.question, options, explain, record, on_sentence)

    def _ask_search(self, principal: Principal, mode: SearchMode
                    ) -> Callable[[View, Question, Filters, int], SearchResult]:
        """An ask's search of an open view for a read question (traced as searches are)."""
        def search_view(view: View, asked: Question, scoped: Filters, n: int) -> SearchResult:
            with telemetry.stage("search", None, _search_attributes(scoped, mode, n),
                                 root=True):
                return self._search(view, asked, scoped, principal, mode, n, True, None,
                                    time.perf_counter())

        return search_view

    def _reader(self, options: AskOptions, llm: Any) -> tuple[str, Any]:
        """(reader name, its chat client): ``llm`` when given (the reader it says it is, else
        openai), else ``options.reader``'s."""
        if llm is not None:
            return str(getattr(llm, "reader_name", "openai")), llm
        from excerpt.compose.readers import open_reader

        return options.reader, open_reader(options.reader, self.settings, options.reader_model)

    def ask_options(self, doc_limit: int | None = None, fetch_limit: int | None = None,
                    max_quotes: int | None = None, mmr: bool = False,
                    reader: str | None = None, reader_model: str | None = None) -> AskOptions:
        """The ask options every interface uses (CLI, HTTP, MCP, chat, Python): what the caller
        gives, the settings' for the rest (``ask_doc_limit``, ``ask_max_quotes``,
        ``mmr_lambda`` when ``mmr``, ``answer_min_confidence``, ``reader``). A reader name is
        checked here, before any work; ``reader_model`` (a path) is for local callers only."""
        from excerpt.compose.ask import AskOptions
        from excerpt.compose.readers import check_reader

        s = self.settings
        return AskOptions(doc_limit or s.ask_doc_limit, fetch_limit,
                          max_quotes or s.ask_max_quotes, s.mmr_lambda if mmr else None,
                          s.answer_min_confidence, reader=check_reader(reader or s.reader),
                          reader_model=reader_model)

    def compose(self, question: str, passages: Sequence[Hit],
                filters: Filters | None = None, principal: Principal | None = None,
                options: AskOptions | None = None) -> ComposedAnswer:
        """The extractive answer ``ask`` composes, from ``passages`` (best first, already
        what ``principal`` may see: a search's hits): the same sentence scoring (the view's
        idf weights and embedder) without ask's own retrieval. Used by the scenario eval."""
        from excerpt.compose.ask import AskOptions
        from excerpt.compose.ask_reads import AskReads
        from excerpt.compose.composer import compose

        snapshots, filters, principal = self._read(filters, principal)
        options = options or AskOptions()
        reads = AskReads(self.searcher, snapshots, filters, principal, question,
                         self._warm_embedder)
        weights = reads.idf(reads.question)
        return compose(reads.question, passages, reads.question.language, options.max_quotes,
                       options.min_confidence, weights, reads.embed(question),
                       absent=weights.absent)

    def _reranker(self, name: str) -> Reranker:
        """The reranker ``name``; plain ``cross-encoder`` is the settings' model."""
        from excerpt.rerank import get_reranker

        return get_reranker(name, self.settings.cross_encoder_model)

    def _write_trace(self, trace: Trace, log_name: str, lines: list[str]) -> None:
        """The trace and log lines under log_dir, and in the store when it keeps traces
        (PostgreSQL: every application server's traces in one table)."""
        assert self._trace_log is not None
        self._trace_log.write(trace, log_name, lines)
        try:
            self.store.record_trace(trace.to_json())
        except StoreError as exc:  # a trace never fails the request it describes
            _log.warning("trace not kept in the store: %s", exc)

    def _applied(self, view: View, filters: Filters, principal: Principal) -> dict[str, Any]:
        """The filters a trace records: only snapshots the caller may see are named."""
        from excerpt.provenance.trace import retrieval_filters

        return retrieval_filters(self.access.seen(view), filters, principal)

    # -- graph ----------------------------------------------------------------------------------

    def graph(
        self,
        seeds: Sequence[str],
        filters: Filters | None = None,
        principal: Principal | None = None,
        limits: GraphLimits | None = None,
    ) -> GraphResult:
        """Expand ``seeds`` along allow-listed edges (``limits.direction``) inside the
        caller's view."""
        limits = limits or self.graph_limits()
        if not seeds:
            raise InputError("give at least one seed id")
        if limits.max_depth < 0 or limits.max_nodes < 1:
            raise InputError("--max-depth must be >= 0 and --max-nodes >= 1")
        filters, principal, view = self._open_view(filters, principal)
        graph = self.access.graph(view)
        result = expand(seeds, graph.outgoing, graph.status, limits, graph.prefetch,
                        graph.incoming)
        if self._trace_log:
            from excerpt.provenance.trace import graph_entry

            trace, lines = graph_entry(self._applied(view, filters, principal), result)
            self._write_trace(trace, self._trace_log.GRAPH_LOG, lines)
        return result

    def graph_limits(self, max_depth: int | None = None, max_nodes: int | None = None,
                     allow: Sequence[str] = (), seed_only: bool = False,
                     direction: str = "out") -> GraphLimits:
        """Expansion limits: what is given, the settings' for the rest."""
        if direction not in DIRECTIONS:
            raise InputError(f"unknown direction {direction!r}; choose one of {DIRECTIONS}")
        s = self.settings
        way: Direction = direction
        return GraphLimits(s.graph_max_depth if max_depth is None else max_depth,
                           s.graph_max_nodes if max_nodes is None else max_nodes,
                           tuple(allow or s.graph_edge_allowlist), seed_only, way)

    # -- context --------------------------------------------------------------------------------

    def context(
        self,
        seeds: Sequence[str],
        graph: Sequence[str] = (),
        filters: Filters | None = None,
        principal: Principal | None = None,
        budget_tokens: int | None = None,
        max_chars: int | None = None,
        prioritization: str | None = None,
        query: str | None = None,
        search_mode: SearchMode = "hybrid",
        k: int | None = None,
        limits: GraphLimits | None = None,
    ) -> ContextResult:
        """Whole node texts in priority order under the token and character budgets.

        ``budget_tokens`` None takes the budget from settings (``context_budget_tokens``).
        Ids the caller cannot see and unknown ids are both skipped as "not found".
        ``query``: search it (``search_mode``, ``k`` hits), expand the hits (``limits``) and pack
        the hits as seeds and what expansion reached as graph nodes, after any given ids.
        """
        from excerpt.context.fetch import PRIORITIZATIONS, ContextResult, pack, priority_order

        mode = prioritization or self.settings.context_prioritization
        if mode not in PRIORITIZATIONS:
            raise InputError(f"unknown prioritization {mode!r}; choose one of {PRIORITIZATIONS}")
        budget = self.settings.context_budget_tokens if budget_tokens is None else budget_tokens
        if budget < 0 or (max_chars is not None and max_chars < 0):
            raise InputError("budgets must not be negative")
        if query is not None:
            seeds, graph = self._query_context(query, seeds, graph, filters, principal,
                                               search_mode, k, limits)
        elif not seeds and not graph:
            raise InputError("give --query or at least one --seed or --graph id")
        filters, principal, view = self._open_view(filters, principal)
        order = priority_order(seeds, graph, mode)
        texts = self.access.visible_texts(view, [node_id for node_id, _ in order])
        taken, skipped = pack(order, texts, count_tokens, budget, max_chars)
        result = ContextResult(taken, skipped, budget, max_chars, mode)
        if self._trace_log:
            from excerpt.provenance.trace import context_entry

            trace, lines = context_entry(self._applied(view, filters, principal), result)
            self._write_trace(trace, self._trace_log.RESULTS_LOG, lines)
        return result

    def _query_context(self, query: str, seeds: Sequence[str], graph: Sequence[str],
                       filters: Filters | None, principal: Principal | None, mode: SearchMode,
                       k: int | None, limits: GraphLimits | None
                       ) -> tuple[list[str], list[str]]:
        """Seeds and graph ids of a context built from a query: the search's hits (visible
        only), then the nodes their expansion reaches (visible only)."""
        found = self.search(query, filters, principal, mode, k, fetch=False)
        hits = [node_id for node_id, _, _ in found.ranking]
        reached: list[str] = []
        if hits:
            expanded = self.graph(hits, filters, principal, limits)
            reached = [node_id for node_id, depth in expanded.nodes if depth > 0]
        return [*seeds, *hits], [*graph, *reached]

    def _query_embedder(self, model: str) -> QueryEmbedder | None:
        return self._warm_embedder(model).embed_query  # type: ignore[no-any-return]

    def _warm_embedder(self, model: str) -> Any:
        """The query embedder of ``model``, its model loaded (once) so no query pays for it,
        its query vectors kept (:mod:`excerpt.embed.queries`: an ask embeds its question once
        for search, sentence scores and MMR)."""
        if model not in self._warm:
            from excerpt.embed.queries import CachedQueries

            self._warm[model] = CachedQueries(self._embedder(model))
            self._warm[model].embed_query("warm up")
        return self._warm[model]


def _search_attributes(filters: Filters | None, mode: str, k: int | None
                       ) -> dict[str, str | int]:
    """A search span's attributes (GenAI retrieval): the collection the caller named, the
    mode and k; never the query."""
    out: dict[str, str | int] = {"gen_ai.operation.name": "retrieval", "excerpt.mode": mode,
                                 "gen_ai.data_source.id": (filters or Filters()).collection}
    if k is not None:
        out["gen_ai.request.top_k"] = k
    return out


def _ask_attributes(filters: Filters | None, mode: str, options: AskOptions
                    ) -> dict[str, str | int]:
    """An ask span's attributes: the collection named, the mode, the reader, the limits."""
    return {"excerpt.operation": "ask", "excerpt.mode": mode,
            "gen_ai.data_source.id": (filters or Filters()).collection,
            "excerpt.reader": options.reader, "excerpt.doc_limit": options.doc_limit}
