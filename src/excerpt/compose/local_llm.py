"""An in-process local chat model: a GGUF file run by llama.cpp through ``xllamacpp`` (optional).

``open_local(path)`` checks the file, loads it once and keeps it warm: later calls with the same
(resolved path, threads, context) share the loaded model, and calls with the same arguments
return the same :class:`LocalChat`. A ``LocalChat`` is a ``compose.synthesis.ChatClient``:
``chat(messages)`` gives the whole reply, ``stream(messages)`` its pieces as they are generated
(``"".join(stream(m)) == chat(m)``), ``last_usage`` the token counts of the last call.
Generation is deterministic (greedy, a fixed seed, no prompt cache: the same messages give the
same reply whatever ran before) and one at a time per model.

Nothing is downloaded, ever. The file is checked before llama.cpp sees it; errors:

- ``DependencyError``: xllamacpp is not installed (``pip install 'excerpt[reader]'``);
- ``InputError``: no such file; not a GGUF file (its first 4 bytes are not ``GGUF``); a
  truncated GGUF (its metadata or tensor table runs past the end of the file, or the file ends
  before the last tensor's data starts); a model without ``tokenizer.chat_template`` (a base
  model, which cannot follow the reader's instructions);
- ``ServiceError``: llama.cpp refused the file anyway (a tensor cut short, an architecture it
  does not know, too little memory), the runtime reported an error (a prompt longer than the
  context: ``status`` 400), or the call took longer than ``timeout_s`` (waiting for another
  generation included); generation is then stopped at its next token. llama.cpp cannot be
  interrupted while it reads the prompt, so a stopped generation may hold the model until its
  first token; the caller gets its error at the deadline all the same.

Quirks of the runtime, handled here: ``xllamacpp.Server`` always serves llama.cpp's HTTP API
(by default on a random loopback port, with no key and every CORS origin allowed); it listens on
a Unix socket in a folder only this user may enter instead, and has a random API key that
nobody is told. Its streaming is a callback on llama.cpp's thread that stops generation by
returning True; generation runs on a worker thread feeding a queue, which makes the iterator and
the deadline possible. Errors arrive as a chunk ``{"error": {...}}``, not as exceptions.
"""

from __future__ import annotations

import atexit
import importlib
import mmap
import os
import queue
import secrets
import shutil
import struct
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from excerpt.errors import DependencyError, InputError, ServiceError

__all__ = ["INSTALL_HINT", "LocalChat", "default_threads", "gguf_metadata", "open_local"]

INSTALL_HINT = "pip install 'excerpt[reader]'"
SEED = 42
MAX_DEFAULT_THREADS = 8

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
            11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_DONE = object()


class _Truncated(Exception):
    """The GGUF header claims more bytes than the file has."""


class _GGUFReader:
    """Little-endian GGUF (versions 2 and 3) read from a buffer, with every length checked."""

    def __init__(self, buf: mmap.mmap) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, fmt: str) -> Any:
        end = self.pos + struct.calcsize(fmt)
        if end > len(self.buf):
            raise _Truncated
        value = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos = end
        return value

    def skip(self, size: int) -> None:
        if self.pos + size > len(self.buf):
            raise _Truncated
        self.pos += size

    def string(self) -> str:
        size = self.take("<Q")
        start = self.pos
        self.skip(size)
        return self.buf[start:self.pos].decode("utf-8", errors="replace")

    def value(self, kind: int) -> object:
        """The value of type ``kind``; an array is skipped and read as its length."""
        if kind in _SCALARS:
            return self.take(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind != _ARRAY:
            raise ValueError(f"unknown metadata type {kind}")
        item, count = self.take("<I"), self.take("<Q")
        if item in _SCALARS:
            self.skip(count * struct.calcsize(_SCALARS[item]))
        elif item == _STRING:
            for _ in range(count):
                self.skip(self.take("<Q"))
        else:
            for _ in range(count):
                self.value(item)
        return count


def gguf_metadata(path: Path) -> dict[str, object]:
    """The metadata of the GGUF file ``path`` (arrays as their lengths). Raises ``InputError``
    when the file is not GGUF, or is truncated before its last tensor's data."""
    try:
        with path.open("rb") as fh:
            return _read_metadata(path, fh)
    except OSError as exc:
        raise InputError(f"cannot read the model file {path}: {exc.strerror or exc}") from None


def _read_metadata(path: Path, fh: BinaryIO) -> dict[str, object]:
    if fh.read(4) != b"GGUF":
        raise InputError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")
    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        reader = _GGUFReader(buf)
        reader.pos = 4
        try:
            version = reader.take("<I")
            if version not in (2, 3):
                raise InputError(f"{path} is GGUF version {version}; only little-endian "
                                 "versions 2 and 3 are read")
            n_tensors, n_keys = reader.take("<Q"), reader.take("<Q")
            metadata: dict[str, object] = {}
            for _ in range(n_keys):
                key = reader.string()
                metadata[key] = reader.value(reader.take("<I"))
            last_offset = -1
            for _ in range(n_tensors):
                reader.string()                                   # name
                reader.skip(8 * reader.take("<I") + 4)            # dimensions, type
                last_offset = max(last_offset, reader.take("<Q"))
            alignment = metadata.get("general.alignment", 32)
            align = alignment if isinstance(alignment, int) and alignment > 0 else 32
            if n_tensors and -(-reader.pos // align) * align + last_offset >= len(buf):
                raise _Truncated                                  # before the last tensor
        except _Truncated:
            raise InputError(f"{path} is a truncated GGUF file (it ends before the data its "
                             "header describes); download or copy it again") from None
        except ValueError as exc:
            raise InputError(f"{path} is a corrupt GGUF file: {exc}") from None
    return metadata


def default_threads() -> int:
    """The CPUs this process may run on, at most ``MAX_DEFAULT_THREADS`` (more rarely helps:
    generation is bound by memory bandwidth)."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:                    # not Linux
        available = os.cpu_count() or 1
    return max(1, min(MAX_DEFAULT_THREADS, available))


@dataclass
class _Model:
    """A loaded model: llama.cpp's server object and the lock that serialises generation."""

    name: str
    server: Any
    lock: threading.Lock = field(default_factory=threading.Lock)


class LocalChat:
    """Chat with a loaded local model; get one from :func:`open_local`. ``last_usage`` is set
    when a call's reply is complete (a failed call leaves the previous one)."""

    reader_name = "local"  # the reader it is (compose.readers)

    def __init__(self, model: _Model, max_tokens: int, timeout_s: float) -> None:
        self._model = model
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.last_usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0}

    @property
    def model(self) -> str:
        return self._model.name

    def chat(self, messages: list[dict[str, str]]) -> str:
        """The whole reply to ``messages`` (role/content dicts)."""
        return "".join(self.stream(messages))

    def stream(self, messages: list[dict[str, str]]) -> Iterator[str]:
        """The reply's pieces as they are generated. Closing the iterator early stops
        generation at the next token (``last_usage`` then counts the pieces it gave, and the
        prompt's tokens by excerpt's own counter: llama.cpp reports its count only at the end)."""
        deadline = time.monotonic() + self.timeout_s
        model = self._model
        if not model.lock.acquire(timeout=self.timeout_s):
            raise self._timeout("waiting for another generation")
        request = {"messages": messages, "max_tokens": self.max_tokens, "temperature": 0.0,
                   "top_k": 1, "seed": SEED, "cache_prompt": False, "stream": True,
                   "stream_options": {"include_usage": True}}
        chunks: queue.SimpleQueue[object] = queue.SimpleQueue()
        cancel = threading.Event()

        def on_chunk(chunk: dict[str, Any]) -> bool:          # True stops generation
            chunks.put(chunk)
            return cancel.is_set() or not threading.main_thread().is_alive()

        def generate() -> None:
            try:
                # Not once the interpreter is exiting: this thread may have started after its
                # exit joined the others (asked from a daemon thread), and one inside llama.cpp
                # then crashes the exit. Started before, it is joined, and on_chunk stops it.
                if threading.main_thread().is_alive():
                    model.server.handle_chat_completions(request, on_chunk)
            except Exception as exc:  # the binding's own errors (a message it cannot encode)
                chunks.put(exc)
            finally:
                model.lock.release()
                chunks.put(_DONE)

        try:
            # Never a daemon (a thread inherits its creator's flag): one left inside llama.cpp
            # when the interpreter exits aborts the process ("exception not rethrown"). The
            # exit waits for this one instead, which on_chunk stops at its next token.
            threading.Thread(target=generate, name="excerpt-local-llm", daemon=False).start()
        except BaseException:
            model.lock.release()
            raise
        pieces, finished = 0, False
        try:
            while (item := self._next(chunks, deadline)) is not _DONE:
                for piece in self._pieces(item):
                    pieces += 1
                    yield piece
            finished = True
        finally:
            cancel.set()
            if not finished:  # cut short by the caller: what it had, one piece a token
                self.last_usage = {"prompt_tokens": _estimate(messages),
                                   "completion_tokens": pieces}

    def _next(self, chunks: queue.SimpleQueue[object], deadline: float) -> object:
        try:
            return chunks.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise self._timeout("generating; stopped") from None

    def _pieces(self, item: object) -> Iterator[str]:
        if isinstance(item, Exception):
            raise ServiceError(f"local model {self.model} failed: {item}")
        chunk: dict[str, Any] = item if isinstance(item, dict) else {}
        error = chunk.get("error")
        if error is not None:
            message = error.get("message", error) if isinstance(error, dict) else error
            status = error.get("code") if isinstance(error, dict) else None
            raise ServiceError(f"local model {self.model}: {message}",
                               status=status if isinstance(status, int) else None)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.last_usage = {"prompt_tokens": int(usage.get("prompt_tokens", 0)),
                               "completion_tokens": int(usage.get("completion_tokens", 0))}
        for choice in chunk.get("choices") or ():
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                yield piece

    def _timeout(self, doing: str) -> ServiceError:
        return ServiceError(f"local model {self.model} did not answer within "
                            f"{self.timeout_s:g} s ({doing})")


_models: dict[tuple[str, int, int], _Model] = {}
_chats: dict[tuple[str, int, int, int, float], LocalChat] = {}
_open_lock = threading.Lock()


def _estimate(messages: list[dict[str, str]]) -> int:
    from excerpt.tokens import count_tokens

    return sum(count_tokens(m.get("content", "")) for m in messages)


def open_local(path: str | Path, threads: int | None = None, context: int = 4096,
               max_tokens: int = 384, timeout_s: float = 120.0) -> LocalChat:
    """The chat model in the GGUF file ``path``, loaded on first use and kept warm.

    ``threads`` defaults to :func:`default_threads`; ``context`` is the context window in tokens
    (prompt and reply); ``max_tokens`` caps each reply; ``timeout_s`` bounds each call."""
    if threads is not None and threads < 1:
        raise InputError(f"threads must be at least 1, not {threads}")
    if context < 16 or max_tokens < 1 or max_tokens >= context:
        raise InputError(f"need 16 <= context and 1 <= max_tokens < context, not context="
                         f"{context}, max_tokens={max_tokens}")
    if timeout_s <= 0:
        raise InputError(f"timeout_s must be positive, not {timeout_s}")
    resolved = Path(path).expanduser().resolve()
    n_threads = threads or default_threads()
    with _open_lock:
        key = (str(resolved), n_threads, context)
        chat = _chats.get((*key, max_tokens, timeout_s))
        if chat is None:
            model = _models.get(key) or _load(resolved, n_threads, context)
            _models[key] = model
            chat = _chats[(*key, max_tokens, timeout_s)] = LocalChat(model, max_tokens,
                                                                      timeout_s)
        return chat


def _private_socket() -> Path:
    """A Unix socket path in a folder only this user may enter (mkdtemp: mode 0700), removed at
    exit: llama.cpp's server listens there instead of on a loopback TCP port, where any local
    user could read its /health and /v1/models (the model's path)."""
    folder = Path(tempfile.mkdtemp(prefix="excerpt-llm-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder / "llama.sock"


def _load(path: Path, threads: int, context: int) -> _Model:
    if not path.is_file():
        raise InputError(f"no model file at {path}")
    template = gguf_metadata(path).get("tokenizer.chat_template")
    if not isinstance(template, str) or not template.strip():
        raise InputError(f"{path.name} has no chat template: a base model cannot follow the "
                         "reader's instructions; use an instruction-tuned (chat) model")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")    # idle threads sleep, not spin
    try:
        xlc: Any = importlib.import_module("xllamacpp")
    except ImportError:
        raise DependencyError("the local reader model needs the llama.cpp runtime xllamacpp; "
                              f"install it with: {INSTALL_HINT}") from None
    params = xlc.CommonParams()
    params.model.path = str(path)
    params.offline = True
    params.n_ctx = context
    params.n_predict = context
    params.n_parallel = 1
    params.cache_prompt = False
    for cpu in (params.cpuparams, params.cpuparams_batch):
        cpu.n_threads = threads
    params.sampling.temp = 0.0
    params.sampling.top_k = 1
    params.sampling.seed = SEED
    params.verbosity = -1                                   # llama.cpp's log off
    params.api_keys = [secrets.token_hex(16)]              # its HTTP API: locked, and
    params.hostnames = [str(_private_socket())]            # on no TCP port at all
    params.n_threads_http = 1
    params.endpoint_slots = False
    params.ui = False
    try:
        server = xlc.Server(params)
    except RuntimeError:
        raise ServiceError(f"llama.cpp could not load {path.name} (a corrupt or incomplete file, "
                           "an architecture this runtime does not know, or too little memory "
                           f"for a context of {context} tokens)") from None
    return _Model(path.name, server)
