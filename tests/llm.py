"""A local OpenAI-compatible chat-completions server for the tests of the LLM path (the one
seam excerpt cannot run for real here): each request's last message is recorded and answered
by ``reply``, so the real client code (excerpt.compose.llm) is exercised over HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ChatStandIn:
    """``reply(prompt) -> content`` answers each request; ``prompts`` holds what was asked."""

    def __init__(self, reply: Callable[[str], str]) -> None:
        self.prompts: list[str] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                stand_in.prompts.append(prompt)
                data = json.dumps({"choices": [{"message": {
                    "role": "assistant", "content": reply(prompt)}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def requests(self) -> int:
        return len(self.prompts)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
