"""excerpt as an MCP server (the Model Context Protocol, on the official ``mcp`` SDK).

    excerpt mcp [--acl-tag T] [--clearance L] [--all-access]     stdio, one principal
    excerpt serve                                                  Streamable HTTP at /mcp

Tools: ``search``, ``ask``, ``graph``, ``context``, ``get_nodes``, ``list_collections``,
``list_snapshots``, ``memory_add``, ``memory_read``, ``memory_search``; node texts are also
resources, ``excerpt://COLLECTION/NODE_ID``. Every tool reads through the engine with the
caller's rights: the principal of ``excerpt mcp``'s options (anonymous by default), or over
HTTP the request's bearer key, narrowed by the call and never widened, as ``/v1/search`` does.
The corpus is read-only through MCP: there is no ingest tool (ingest with the CLI or
``POST /v1/ingest``); the memory tools write only conversations.

    tools.py    the operations, plain functions over the engine, and the Rights model
    models.py   the tools' structured output (their outputSchema)
    server.py   the SDK's MCPServer with the tools and the resource template
    http.py     /mcp on excerpt serve: bearer keys, one principal per request
"""
