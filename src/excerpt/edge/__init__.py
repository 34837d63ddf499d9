"""The request edge every front door shares: API keys and the rights they carry (keys.py),
request bodies and their limits (bodies.py), uploaded archives (uploads.py) and the mapping of
excerpt's errors to HTTP statuses (errors.py).  The REST server (server/), MCP (mcp/) and the
chat API import it; it imports neither of them."""
