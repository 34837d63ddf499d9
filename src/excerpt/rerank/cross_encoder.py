"""An ONNX cross-encoder from a local path: ``(query, document)`` pairs -> relevance logits.

No package on the registry ships cross-encoder weights, so this backend runs a model the user
exported (e.g. ``cross-encoder/ms-marco-MiniLM-L-6-v2`` through ``optimum``) from disk:

* ``model.onnx``: inputs ``input_ids`` and ``attention_mask`` (and ``token_type_ids`` when the
  graph declares it; only the inputs the graph declares are fed), int64 or int32; the first
  output (or the one named ``logits``) of shape ``[batch]`` or ``[batch, 1]`` is the score;
  ``[batch, 2]`` (a two-class head) scores ``logit[1] - logit[0]``, the positive log-odds;
* ``tokenizer.json`` in the same folder (the ``tokenizers`` format, with the model's pair
  template: ``[CLS] query [SEP] document [SEP]`` and segment ids for BERT).

Truncation: a pair longer than ``max_length`` (default 512, BERT's position limit) is cut with
the ``longest_first`` strategy, Hugging Face's default for cross-encoders: tokens are taken from
the longer side, in practice the end of the document, so a long document is scored on its
beginning only.  Split long texts into passages before reranking if their end matters.

Batching: pairs are sorted by length and run ``batch_size`` at a time, each batch padded to its
longest pair (padding is masked, so a score does not depend on its batch-mates beyond float
rounding).  Errors: a missing model or tokenizer file is an :class:`~excerpt.errors.InputError`
when the reranker is made; a file ONNX Runtime or ``tokenizers`` cannot read, or a graph without
the expected inputs/outputs, is one at the first ``rerank``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.errors import DependencyError, InputError
from excerpt.rerank.contract import CROSS_ENCODER_PREFIX, RerankResult, rerank_with

DEFAULT_MAX_LENGTH = 512
DEFAULT_BATCH_SIZE = 16
TOKENIZER_FILE = "tokenizer.json"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
RUNTIME_HINTS = {
    "onnxruntime": "pip install onnxruntime==1.31.1",
    "tokenizers": "pip install tokenizers==0.23.3",
}


def _require(package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise DependencyError(f"the cross-encoder reranker needs the Python package {package!r}; "
                              f"install it with: {RUNTIME_HINTS[package]}") from exc


class CrossEncoderReranker:
    """Scores each (query, document) pair with an ONNX cross-encoder; see the module docstring."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        tokenizer_path: str | Path | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int = 1,
    ) -> None:
        self.model_path = Path(model_path).expanduser()
        self.tokenizer_path = (Path(tokenizer_path).expanduser() if tokenizer_path is not None
                               else self.model_path.parent / TOKENIZER_FILE)
        if max_length < 3:
            raise ValueError(f"max_length must be >= 3, not {max_length}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        if threads < 1:
            raise ValueError(f"threads must be >= 1, not {threads}")
        if not self.model_path.is_file():
            raise InputError(f"cross-encoder model {str(self.model_path)!r} is not a file")
        if not self.tokenizer_path.is_file():
            raise InputError(f"cross-encoder tokenizer {str(self.tokenizer_path)!r} is not a "
                             f"file (expected {TOKENIZER_FILE} beside the model)")
        self.name = f"{CROSS_ENCODER_PREFIX}{self.model_path}"
        self.max_length = max_length
        self.batch_size = batch_size
        self.threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, int, dict[str, Any], str] | None = None

    # -- loading ---------------------------------------------------------------------------

    def _load(self) -> tuple[Any, Any, int, dict[str, Any], str]:
        if self._loaded is not None:
            return self._loaded
        with self._lock:
            if self._loaded is None:
                tokenizer, pad_id = self._load_tokenizer()
                session, inputs, output = self._load_session()
                self._loaded = (session, tokenizer, pad_id, inputs, output)
            return self._loaded

    def _load_tokenizer(self) -> tuple[Any, int]:
        tokenizers = _require("tokenizers")
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(self.tokenizer_path))
        except Exception as exc:  # tokenizers raises a bare Exception on a bad file
            raise InputError(f"cross-encoder tokenizer {str(self.tokenizer_path)!r} cannot be "
                             f"read: {exc}") from exc
        padding = tokenizer.padding
        pad_id = padding.get("pad_id") if padding else None
        if pad_id is None:
            pad_id = next((i for tok in ("[PAD]", "<pad>")
                           if (i := tokenizer.token_to_id(tok)) is not None), 0)
        tokenizer.no_padding()  # padded per batch below
        tokenizer.enable_truncation(max_length=self.max_length, strategy="longest_first")
        return tokenizer, int(pad_id)

    def _load_session(self) -> tuple[Any, dict[str, Any], str]:
        ort = _require("onnxruntime")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.enable_mem_pattern = False  # shapes change every batch
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(str(self.model_path), options,
                                           providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime's errors are not a public hierarchy
            raise InputError(f"cross-encoder model {str(self.model_path)!r} cannot be loaded "
                             f"by ONNX Runtime: {exc}") from exc
        declared = {i.name: i for i in session.get_inputs()}
        if "input_ids" not in declared or "attention_mask" not in declared:
            raise InputError(f"cross-encoder model {str(self.model_path)!r} has inputs "
                             f"{sorted(declared)}; it needs input_ids and attention_mask")
        extra = sorted(set(declared) - set(INPUT_NAMES))
        if extra:
            raise InputError(f"cross-encoder model {str(self.model_path)!r} has inputs this "
                             f"backend cannot feed: {extra} (it feeds {list(INPUT_NAMES)})")
        dtypes = {name: np.int32 if i.type == "tensor(int32)" else np.int64
                  for name, i in declared.items()}
        outputs = [o.name for o in session.get_outputs()]
        output = "logits" if "logits" in outputs else outputs[0]
        return session, dtypes, output

    # -- scoring ---------------------------------------------------------------------------

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """The model's score of each ``(query, document)`` pair, in the order given."""
        if not documents:
            return []
        session, tokenizer, pad_id, dtypes, output = self._load()
        encodings = tokenizer.encode_batch([(query, d) for d in documents])
        order = sorted(range(len(documents)), key=lambda i: (len(encodings[i].ids), i))
        out = np.empty(len(documents), dtype=np.float64)
        for start in range(0, len(order), self.batch_size):
            rows = order[start:start + self.batch_size]
            out[rows] = self._run(session, [encodings[i] for i in rows], pad_id, dtypes, output)
        return [float(s) for s in out]

    def _run(self, session: Any, encodings: Sequence[Any], pad_id: int,
             dtypes: dict[str, Any], output: str) -> npt.NDArray[np.float64]:
        width = max(len(e.ids) for e in encodings)
        arrays = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUT_NAMES}
        arrays["input_ids"][:] = pad_id
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            arrays["input_ids"][row, :n] = enc.ids
            arrays["attention_mask"][row, :n] = 1
            arrays["token_type_ids"][row, :n] = enc.type_ids
        feed = {name: arrays[name].astype(dtype, copy=False) for name, dtype in dtypes.items()}
        logits = np.asarray(session.run([output], feed)[0], dtype=np.float64)
        if logits.ndim == 1 and logits.shape[0] == len(encodings):
            return logits
        if logits.ndim == 2 and logits.shape[0] == len(encodings):
            if logits.shape[1] == 1:
                return logits[:, 0]
            if logits.shape[1] == 2:
                return logits[:, 1] - logits[:, 0]
        raise InputError(f"cross-encoder model {str(self.model_path)!r}: output {output!r} has "
                         f"shape {list(logits.shape)} for {len(encodings)} pairs; expected "
                         f"[batch], [batch, 1] or [batch, 2]")

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]:
        return rerank_with(self.scores, query, documents, limit)

    def __repr__(self) -> str:
        return (f"CrossEncoderReranker({str(self.model_path)!r}, max_length={self.max_length}, "
                f"batch_size={self.batch_size})")
