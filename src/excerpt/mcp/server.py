"""The MCP server object: excerpt's tools and node resources on the official SDK's
``MCPServer``, for any transport (stdio, Streamable HTTP, in memory).

Each tool has a JSON schema for its arguments (the names of the CLI options and HTTP bodies),
a description an agent can act on, and an ``outputSchema`` (:mod:`excerpt.mcp.models`); its
structured result is the CLI's JSON, its text content the same JSON. A refused call
(:class:`excerpt.errors.ExcerptError`, or rights it does not have) is an MCP tool error
(``isError``) whose text is the CLI's one-line message and whose structured content is the
service's ``{"error", "kind"}``; with ``private_errors`` (HTTP) a store failure answers
"internal error" and its message, which may name server paths, goes to the log only.

Who calls is decided by ``rights_of(ctx)``, never by the arguments: a fixed
:class:`excerpt.mcp.tools.Rights` on stdio, the request's bearer key over HTTP
(:mod:`excerpt.mcp.http`). The engine is synchronous: each call runs in a worker thread.
"""

import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from importlib.metadata import version
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.mcpserver.resources import ResourceSecurity
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from excerpt.compose.readers import ReaderName
from excerpt.edge.bodies import advice, nul_field
from excerpt.edge.errors import reason, reply
from excerpt.engine import Engine
from excerpt.errors import ExcerptError, InputError, NotFoundError
from excerpt.limits import LIMITS
from excerpt.mcp import models
from excerpt.mcp.tools import Ingest, Tools
from excerpt.memory.store import MemoryStore
from excerpt.scope import Rights, Scope

RightsOf = Callable[[Context], Rights]
RESOURCE = "excerpt://{collection}/{+node_id}"
"""Node texts as resources: ``excerpt://books/pg174:ch01:0003`` (ids may hold ``/``)."""
_log = logging.getLogger(__name__)

# The arguments every tool names alike (the CLI's options, the HTTP bodies' fields).
Collection = Annotated[str, Field(description="the collection to read (see list_collections)")]
Snapshot = Annotated[str | None, Field(description="read this snapshot only (list_snapshots)")]
SnapshotSet = Annotated[str | None, Field(description="read the snapshots of this named set")]
Where = Annotated[list[str] | None, Field(
    description="metadata filters, KEY=VALUE: equal, or a list holding the value (VALUE "
                "parsed as JSON when it can be), "
                "e.g. book=Iliad")]
AclTag = Annotated[list[str] | None, Field(
    description="narrow the caller's groups to these (never widens the caller's rights)")]
Clearance = Annotated[list[str] | None, Field(
    description="narrow the caller's classification labels to these (never widens)")]
AllAccess = Annotated[bool, Field(description="see everything: admin keys (HTTP) or "
                                              "`excerpt mcp --all-access` only")]
Mode = Annotated[Literal["bm25", "semantic", "hybrid"], Field(
    description="bm25 (words), semantic (embeddings) or hybrid (both, fused)")]


def bounds(name: str) -> dict[str, Any]:
    """A count's bounds (:mod:`excerpt.limits`) for its schema; the tools enforce them
    (:mod:`excerpt.mcp.tools`), refusing in the sentence the CLI and HTTP use."""
    low, high = LIMITS[name]
    return {"minimum": low, "maximum": high}


K = Annotated[int | None, Field(json_schema_extra=bounds("k"),
                                description="how many hits (default: adaptive)")]
Rerank = Annotated[str | None, Field(
    description="reranker: none, features, late-interaction, or cross-encoder (the model "
                "the server's cross_encoder_model setting names; default: the server's "
                "setting reranker)")]
Reader = Annotated[ReaderName | None, Field(
    description="who writes the answer: extractive (quotes, no model), openai or local (a "
                "model the server configures; its sentences are kept only where the quote "
                "they cite supports them); default: the server's setting reader")]
Ids = Annotated[list[str], Field(min_length=1, max_length=100, description="node ids")]
Direction = Annotated[Literal["out", "in", "both"], Field(
    description="follow edges out of the seeds (what they cite, call, read), into them "
                "(what cites or calls them) or both")]
MaxDepth = Annotated[int | None, Field(json_schema_extra=bounds("max_depth"),
                                       description="hops at most (default: setting "
                                                   "graph_max_depth)")]
MaxNodes = Annotated[int | None, Field(json_schema_extra=bounds("max_nodes"),
                                       description="nodes at most (default: setting "
                                                   "graph_max_nodes)")]
Allow = Annotated[list[str] | None, Field(description="edge relations to follow (default: "
                                                      "setting graph_edge_allowlist)")]
Conversation = Annotated[str, Field(min_length=1, max_length=200, description=(
    "the conversation's name; over HTTP a key reads and writes only its own conversations"))]
Speaker = Annotated[str | None, Field(description="only utterances of user, assistant or system")]

_READS = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def build_server(engine: Engine, rights_of: RightsOf, memory: MemoryStore | None = None,
                 private_errors: bool = False, ingest: Ingest | None = None) -> MCPServer:
    """The MCP server over ``engine``; ``rights_of`` says who calls, ``memory`` is the process's
    conversation store (None: the engine's, opened on first use); with ``ingest``, the tool
    ``ingest`` is offered (and still refused to callers whose rights do not allow it)."""
    tools = Tools(engine, memory, ingest)
    server: MCPServer = MCPServer(
        "excerpt", version=version("excerpt"),
        instructions="excerpt is a grounded retrieval engine over books, regulations and "
                     "code. search finds passages; ask answers with quotes and [n] citations "
                     "(check 'cautious'); graph and context follow citations and code "
                     "dependencies; get_nodes and the resources excerpt://COLLECTION/NODE_ID "
                     "give whole node texts. Everything is within the caller's access rights.",
        log_level="WARNING")
    lowlevel = server._lowlevel_server  # the SDK's own server, where its middleware lives
    lowlevel.middleware.append(_KnownArguments(lowlevel.get_tool_input_schema))

    async def run(ctx: Context, op: Callable[..., dict[str, Any]], *args: Any,
                  **kwargs: Any) -> CallToolResult:
        try:
            rights = rights_of(ctx)
            _no_nul(args, kwargs)  # the REST bodies' rule, for every transport
            payload = await anyio.to_thread.run_sync(partial(op, rights, *args, **kwargs))
        except (ExcerptError, PermissionError) as exc:  # the second: the file system's
            return refused(exc, private_errors)
        text = json.dumps(payload, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=payload)

    def scope(collection: str, snapshot: str | None, snapshot_set: str | None,
              where: list[str] | None, acl_tag: list[str] | None, clearance: list[str] | None,
              all_access: bool) -> Scope:
        return Scope(collection, snapshot, snapshot_set, tuple(where or ()), acl_tag,
                     clearance, all_access)

    @server.tool(annotations=_READS)
    async def search(ctx: Context, query: Annotated[str, Field(min_length=1, max_length=2000)],
                     collection: Collection = "default", mode: Mode = "hybrid", k: K = None,
                     snapshot: Snapshot = None, snapshot_set: SnapshotSet = None,
                     where: Where = None, rerank: Rerank = None, acl_tag: AclTag = None,
                     clearance: Clearance = None, all_access: AllAccess = False
                     ) -> Annotated[CallToolResult, models.SearchOutput]:
        """Search a collection for passages (whole node texts, best first) within the caller's
        access rights: the same hits as `excerpt search` and GET /v1/search."""
        where_scope = scope(collection, snapshot, snapshot_set, where, acl_tag, clearance,
                            all_access)
        return await run(ctx, tools.search, where_scope, query, mode, k, rerank)

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
    async def ask(ctx: Context, question: Annotated[str, Field(min_length=1, max_length=2000)],
                  collection: Collection = "default", mode: Mode = "hybrid",
                  snapshot: Snapshot = None, snapshot_set: SnapshotSet = None,
                  where: Where = None,
                  doc_limit: Annotated[int | None, Field(
                      json_schema_extra=bounds("doc_limit"), description=(
                          "passages that reach composition (default: setting ask_doc_limit)"))]
                  = None,
                  fetch_limit: Annotated[int | None, Field(
                      json_schema_extra=bounds("fetch_limit"), description=(
                          "with a reranker: candidates retrieved before it narrows them"))]
                  = None,
                  max_quotes: Annotated[int | None, Field(
                      json_schema_extra=bounds("max_quotes"), description=(
                          "quotes listed at most (default: setting ask_max_quotes)"))] = None,
                  rerank: Rerank = None,
                  mmr: Annotated[bool, Field(description="diversify the passages (MMR)")]
                  = False,
                  conversation: Annotated[str | None, Field(
                      min_length=1, max_length=200, description=(
                          "ask inside this conversation: a follow-up is resolved from its "
                          "recent turns, and the question and answer are recorded"))] = None,
                  reader: Reader = None,
                  acl_tag: AclTag = None, clearance: Clearance = None,
                  all_access: AllAccess = False) -> Annotated[CallToolResult, models.AskOutput]:
        """Answer a question from the collection: an answer whose every sentence is quoted
        from the sources and cites them as [n], the quotes, the citations (book, chapter,
        article, file) and 'cautious' (true: the sources barely cover the question). Options
        not given come from the server's settings, as `excerpt ask` and POST /v1/ask."""
        where_scope = scope(collection, snapshot, snapshot_set, where, acl_tag, clearance,
                            all_access)
        return await run(ctx, tools.ask, where_scope, question, mode, doc_limit, fetch_limit,
                         max_quotes, rerank, mmr, conversation, reader)

    @server.tool(annotations=_READS)
    async def graph(ctx: Context, seeds: Ids, collection: Collection = "default",
                    direction: Direction = "out", max_depth: MaxDepth = None,
                    max_nodes: MaxNodes = None, allow: Allow = None,
                    snapshot: Snapshot = None, snapshot_set: SnapshotSet = None,
                    acl_tag: AclTag = None, clearance: Clearance = None,
                    all_access: AllAccess = False
                    ) -> Annotated[CallToolResult, models.GraphOutput]:
        """The nodes and edges reached from seed ids along allow-listed relations (citations
        of articles, code calls and table reads and writes), only through nodes the caller
        may see: `excerpt graph`."""
        where_scope = scope(collection, snapshot, snapshot_set, None, acl_tag, clearance,
                            all_access)
        return await run(ctx, tools.graph, where_scope, seeds, max_depth, max_nodes,
                         allow or (), direction)

    @server.tool(annotations=_READS)
    async def context(ctx: Context, collection: Collection = "default",
                      query: Annotated[str | None, Field(min_length=1, max_length=2000,
                                                         description=(
                          "search this, expand the hits along the graph, pack them"))] = None,
                      seeds: Annotated[list[str] | None, Field(
                          max_length=100, description="node ids packed first")] = None,
                      graph: Annotated[list[str] | None, Field(
                          max_length=10_000, description="node ids packed after the seeds")]
                      = None,
                      budget_tokens: Annotated[int | None, Field(
                          json_schema_extra=bounds("budget_tokens"), description=(
                          "token budget (default: setting context_budget_tokens)"))] = None,
                      max_chars: Annotated[int | None, Field(
                          json_schema_extra=bounds("max_chars"))] = None,
                      prioritization: Annotated[
                          Literal["seed_first", "graph_first", "balanced"] | None,
                          Field(description="order offered to the budget")] = None,
                      mode: Mode = "hybrid", k: K = None, direction: Direction = "out",
                      max_depth: MaxDepth = None, max_nodes: MaxNodes = None,
                      allow: Allow = None, snapshot: Snapshot = None,
                      snapshot_set: SnapshotSet = None, acl_tag: AclTag = None,
                      clearance: Clearance = None, all_access: AllAccess = False
                      ) -> Annotated[CallToolResult, models.ContextOutput]:
        """Whole node texts under a token budget, for a prompt: from a query (search, then
        what the hits cite or call) or from given ids; never a node the caller may not see,
        never a text cut: `excerpt context`."""
        where_scope = scope(collection, snapshot, snapshot_set, None, acl_tag, clearance,
                            all_access)
        return await run(ctx, tools.context, where_scope, seeds or (), graph or (), query,
                         mode, k, budget_tokens, max_chars, prioritization, max_depth,
                         max_nodes, allow or (), direction)

    @server.tool(annotations=_READS)
    async def get_nodes(ctx: Context, ids: Ids, collection: Collection = "default",
                        snapshot: Snapshot = None, snapshot_set: SnapshotSet = None,
                        acl_tag: AclTag = None, clearance: Clearance = None,
                        all_access: AllAccess = False
                        ) -> Annotated[CallToolResult, models.NodesOutput]:
        """The whole texts of nodes by id (e.g. the ids of search hits or citations); ids
        unknown or not visible to the caller are listed as not found."""
        where_scope = scope(collection, snapshot, snapshot_set, None, acl_tag, clearance,
                            all_access)
        return await run(ctx, tools.get_nodes, where_scope, ids)

    @server.tool(annotations=_READS)
    async def list_collections(ctx: Context, acl_tag: AclTag = None,
                               clearance: Clearance = None, all_access: AllAccess = False
                               ) -> Annotated[CallToolResult, models.CollectionsOutput]:
        """The collections of which the caller may see a node, with the counts it may see."""
        return await run(ctx, tools.list_collections, acl_tag, clearance, all_access)

    @server.tool(annotations=_READS)
    async def list_snapshots(ctx: Context,
                             collection: Annotated[str | None, Field(
                                 description="only this collection")] = None,
                             acl_tag: AclTag = None, clearance: Clearance = None,
                             all_access: AllAccess = False
                             ) -> Annotated[CallToolResult, models.SnapshotsOutput]:
        """The snapshots and snapshot sets the caller may see (a snapshot when it may see one
        of its nodes, counting only those): `excerpt snapshots`."""
        return await run(ctx, tools.list_snapshots, collection, acl_tag, clearance,
                         all_access)

    @server.tool(annotations=_READS)
    async def collection_overview(ctx: Context, collection: Collection,
                                  examples: Annotated[int, Field(
                                      ge=0, le=10, description="how many example questions")
                                  ] = 3,
                                  acl_tag: AclTag = None, clearance: Clearance = None,
                                  all_access: AllAccess = False
                                  ) -> Annotated[CallToolResult, models.OverviewOutput]:
        """A collection on one page, as the caller may see it: its sources (live or retired),
        snapshots, counts, last import, the metadata keys a where filter can name with their
        most common values, and example questions made from its headings."""
        return await run(ctx, tools.collection_overview, collection, examples, acl_tag,
                         clearance, all_access)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             open_world_hint=False))
    async def memory_add(ctx: Context, conversation: Conversation,
                         speaker: Annotated[Literal["user", "assistant", "system"], Field(
                             description="who said it")],
                         turn: Annotated[int, Field(ge=0, description="the turn number")],
                         text: Annotated[str, Field(min_length=1)]
                         ) -> Annotated[CallToolResult, models.MemoryOutput]:
        """Add an utterance to a conversation's memory (created on first use)."""
        return await run(ctx, tools.memory_add, conversation, speaker, turn, text)

    @server.tool(annotations=_READS)
    async def memory_read(ctx: Context, conversation: Conversation, speaker: Speaker = None,
                          last: Annotated[int | None, Field(ge=1, description=(
                              "only the last N utterances"))] = None
                          ) -> Annotated[CallToolResult, models.MemoryOutput]:
        """The utterances of a conversation in its buffer, oldest first."""
        return await run(ctx, tools.memory_read, conversation, speaker, last)

    @server.tool(annotations=_READS)
    async def memory_search(ctx: Context, conversation: Conversation,
                            query: Annotated[str, Field(min_length=1, max_length=2000)],
                            k: Annotated[int, Field(ge=1, le=100)] = 10,
                            speaker: Speaker = None
                            ) -> Annotated[CallToolResult, models.MemoryOutput]:
        """The utterances of a conversation most relevant to a query, best first."""
        return await run(ctx, tools.memory_search, conversation, query, k, speaker)

    if ingest is not None:
        _ingest_tool(server, tools, run)

    @server.resource(RESOURCE, name="node", mime_type="text/plain",
                     description="A node's whole text, as the caller may see it.",
                     security=ResourceSecurity(reject_path_traversal=False,
                                               reject_absolute_paths=False))
    async def node(collection: str, node_id: str, ctx: Context) -> str:
        try:
            rights = rights_of(ctx)
            return await anyio.to_thread.run_sync(tools.node_text, rights, collection, node_id)
        except NotFoundError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except (ExcerptError, PermissionError) as exc:
            raise ResourceError(_message(exc, private_errors)[0]) from None

    server.excerpt_tools = tools  # type: ignore[attr-defined]  # closed with the server
    return server


def _ingest_tool(server: MCPServer, tools: Tools,
                 run: Callable[..., Awaitable[CallToolResult]]) -> None:
    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             idempotent_hint=False, open_world_hint=False))
    async def ingest(ctx: Context, collection: Collection = "default",
                     text: Annotated[str | None, Field(min_length=1, description=(
                         "the document's text (UTF-8); its source is upload:FILENAME and a new "
                         "import of the same filename replaces it as a new snapshot"))] = None,
                     filename: Annotated[str | None, Field(min_length=1, max_length=255,
                                                           description=(
                         "a plain file name whose suffix picks the format (notes.md, "
                         "book.txt); required with text"))] = None,
                     path: Annotated[str | None, Field(min_length=1, description=(
                         "a file or folder on the server's machine (admin keys: inside the "
                         "server's ingest roots; `excerpt mcp --ingester`: the user's files)"))]
                     = None,
                     format: Annotated[str, Field(description=(
                         "the loader (auto: detected from the files); as `excerpt ingest "
                         "--format`"))] = "auto",
                     acl_tag: Annotated[list[str] | None, Field(description=(
                         "groups that may read the new nodes (none: everyone)"))] = None,
                     classification: Annotated[list[str] | None, Field(description=(
                         "classification labels a reader must hold"))] = None
                     ) -> Annotated[CallToolResult, models.IngestOutput]:
        """Import a document (its text and a file name) or a server-side path as a new
        snapshot of the collection: `excerpt ingest`. Ingester and admin keys over HTTP;
        `excerpt mcp --ingester` on stdio; refused to everyone else."""
        return await run(ctx, tools.ingest, collection, text, filename, path, format,
                         acl_tag or (), classification or ())


def _no_nul(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """No NUL character in any argument (a scope's fields included), as the HTTP bodies."""
    given = [dataclasses.asdict(a) if dataclasses.is_dataclass(a) and not isinstance(a, type)
             else list(a) if isinstance(a, tuple) else a for a in (*args, *kwargs.values())]
    place = nul_field(given, "arguments")
    if place is not None:
        raise InputError(f"{place}: a NUL character is not allowed")


def _message(exc: Exception, private: bool) -> tuple[str, str]:
    """The one-line message and kind of a refusal: the CLI's (its first line), or with
    ``private`` (or from the file system, whose message names a path) the service's, as the
    REST routes answer it (a store failure's message stays in the log)."""
    if private or not isinstance(exc, ExcerptError):
        _, body = reply(exc)
        return body["error"], body["kind"]
    return reason(exc), exc.kind


class _KnownArguments:
    """SDK middleware: a tool call naming an argument the tool does not take is a tool error
    naming it, the argument meant and the accepted ones, as a JSON body's unknown field is (the
    SDK would drop it silently: ``ask`` with ``k`` answered as if ``k`` were not given)."""

    def __init__(self, schema_of: Callable[[str], Mapping[str, Any] | None] | None
                 ) -> None:
        self.schema_of = schema_of

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        params = ctx.params or {}
        if ctx.method == "tools/call" and self.schema_of is not None:
            name, given = str(params.get("name")), params.get("arguments") or {}
            schema = self.schema_of(name)
            if schema is not None and isinstance(given, dict):
                fields = list(schema.get("properties", {}))
                unknown = [key for key in given if key not in fields]
                if unknown:
                    return refused(InputError(_unknown_argument(name, str(unknown[0]),
                                                                fields)))
        return await call_next(ctx)


def _unknown_argument(tool: str, name: str, fields: list[str]) -> str:
    return (f"{name} is not an argument of the tool {tool}: "
            f"{advice(name, fields, noun='arguments')}")


def refused(exc: Exception, private: bool = False) -> CallToolResult:
    """A tool error carrying the CLI's message (text) and ``{"error", "kind"}`` (structured)."""
    message, kind = _message(exc, private)
    return CallToolResult(content=[TextContent(type="text", text=message)],
                          structured_content={"error": message, "kind": kind}, is_error=True)


def fixed_rights(rights: Rights) -> RightsOf:
    """Every call with the same rights (stdio, in memory): the process's principal."""
    return lambda _ctx: rights
