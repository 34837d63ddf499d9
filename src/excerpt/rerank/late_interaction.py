"""Late interaction (ColBERT-style MaxSim) over the token vectors of all-MiniLM-L6-v2.

Khattab & Zaharia (2020), "ColBERT", eq. (3): ``S(q, d) = Σ_i max_j  E_q[i] · E_d[j]`` over
L2-normalised token vectors.  Here the vectors are the last hidden states of the packaged
MiniLM (the same int8 ONNX graph the embedder runs, in this module's own session: the embedder
only exposes pooled vectors), without ColBERT's training; ``[CLS]``/``[SEP]`` are dropped and
the sum is divided by the number of query tokens (which does not change the order).

The MaxSim score can be blended with the first-stage position (``prior_weight``): documents
arrive in first-stage order, and the rank that order carries (BM25 + dense) is information the
token vectors do not have.  ``prior_weight`` 0 ranks by MaxSim alone.

SciFact (809 train queries, bench/RESULTS.md "Rerank"): over excerpt's BM25 top-30/50 it adds
+0.026/+0.027 nDCG@10 (0.6961 -> 0.7224/0.7235); over the hybrid ranking, which already has
MiniLM's pooled vector, it adds nothing beyond noise (0.7317 -> 0.7334/0.7360, held-out half
-0.002/+0.001).

Cost: every candidate is a full MiniLM pass (~25 ms for a 256-token abstract on an idle core),
so a query without cached token vectors took 1.7 s (top-30) to 2.2 s (top-50) median on the
shared 2-core box; with the vectors cached (``cache``: any mutable mapping from text to its
``(tokens, 384)`` float16 matrix, ~180 KB per abstract) it is the query pass and one matrix
product, 50-70 ms under the same load.

Korean: MiniLM is English-only; when the query or any candidate contains Hangul the first-stage
order is kept unchanged (a reranker that cannot read the text must not reorder it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.analyze.language import HANGUL
from excerpt.errors import DependencyError
from excerpt.rerank.contract import LATE_INTERACTION, KeepOrder, RerankResult, check_limit, ranked

TokenMatrix = npt.NDArray[np.float16]

DEFAULT_PRIOR_WEIGHT = 0.5
"""Picked on the tune half of SciFact (bench/rerank.py): 0.3-0.5 over a BM25 first stage,
0.7-0.8 over hybrid; 0.0 (MaxSim alone) loses to the hybrid first stage by 0.018."""
DEFAULT_MAX_DOC_TOKENS = 256
DEFAULT_MAX_QUERY_TOKENS = 64


def maxsim(query_tokens: npt.NDArray[np.floating], doc_tokens: npt.NDArray[np.floating]) -> float:
    """Mean over query tokens of the best cosine with any document token (unit rows given)."""
    if len(query_tokens) == 0 or len(doc_tokens) == 0:
        return 0.0
    sims = np.asarray(query_tokens, dtype=np.float32) @ np.asarray(doc_tokens, dtype=np.float32).T
    return float(sims.max(axis=1).mean())


def maxsim_many(query_tokens: npt.NDArray[np.floating],
                docs: Sequence[npt.NDArray[np.floating]]) -> list[float]:
    """:func:`maxsim` of each document, as one matrix product over all their tokens."""
    lengths = [len(d) for d in docs]
    if len(query_tokens) == 0 or not docs:
        return [0.0] * len(docs)
    nonempty = [d for d in docs if len(d)]
    if not nonempty:
        return [0.0] * len(docs)
    sims = (np.asarray(query_tokens, dtype=np.float32)
            @ np.concatenate(nonempty).astype(np.float32, copy=False).T)
    starts = np.cumsum([0, *[n for n in lengths if n][:-1]])
    best = np.maximum.reduceat(sims, starts, axis=1).mean(axis=0)
    values = iter(best.tolist())
    return [float(next(values)) if n else 0.0 for n in lengths]


def blend_with_prior(scores: Sequence[float], prior_weight: float) -> list[float]:
    """``(1 - w) · minmax(scores) + w · (1 - i / (n - 1))``: the model's scores, min-max
    normalised over the candidates, mixed with the linear first-stage position prior."""
    if prior_weight == 0.0 or len(scores) < 2:
        return [float(s) for s in scores]
    s = np.asarray(scores, dtype=np.float64)
    spread = float(s.max() - s.min())
    norm = (s - s.min()) / spread if spread > 0 else np.zeros_like(s)
    prior = 1.0 - np.arange(len(s)) / (len(s) - 1)
    return [float(v) for v in (1.0 - prior_weight) * norm + prior_weight * prior]


class LateInteractionReranker:
    """MaxSim over MiniLM token vectors; see the module docstring."""

    name: str = LATE_INTERACTION

    def __init__(
        self,
        *,
        prior_weight: float = DEFAULT_PRIOR_WEIGHT,
        max_doc_tokens: int = DEFAULT_MAX_DOC_TOKENS,
        max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS,
        workers: int | None = None,
        cache: MutableMapping[str, TokenMatrix] | None = None,
    ) -> None:
        from excerpt.embed.minilm import check_minilm_dependencies, cpu_count

        if not 0.0 <= prior_weight <= 1.0:
            raise ValueError(f"prior_weight must be in [0, 1], not {prior_weight}")
        for label, value in (("max_doc_tokens", max_doc_tokens),
                             ("max_query_tokens", max_query_tokens)):
            if not 3 <= value <= 512:
                raise ValueError(f"{label} must be in 3..512, not {value}")
        check_minilm_dependencies()
        self.prior_weight = prior_weight
        self.max_doc_tokens = max_doc_tokens
        self.max_query_tokens = max_query_tokens
        self.workers = workers or cpu_count()
        self.cache = cache
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    # -- the model -------------------------------------------------------------------------

    def _load(self) -> tuple[Any, Any]:
        if self._session is not None:
            return self._session, self._tokenizer
        with self._lock:
            if self._session is None:
                self._tokenizer = _minilm_tokenizer()
                self._session = _minilm_session()
            return self._session, self._tokenizer

    def _encode_one(self, session: Any, ids: Sequence[int], special: Sequence[int]
                    ) -> TokenMatrix:
        row = np.asarray([ids], dtype=np.int64)
        hidden = session.run(["last_hidden_state"], {
            "input_ids": row, "attention_mask": np.ones_like(row),
            "token_type_ids": np.zeros_like(row)})[0][0]
        keep = hidden[[i for i, s in enumerate(special) if not s]]
        norms = np.linalg.norm(keep, axis=1, keepdims=True)
        out: TokenMatrix = (keep / np.maximum(norms, 1e-12)).astype(np.float16)
        return out

    def encode(self, texts: Sequence[str], max_tokens: int | None = None) -> list[TokenMatrix]:
        """Unit token vectors (float16, ``[CLS]``/``[SEP]`` dropped) of each text, one ONNX run
        per text (as the embedder: a vector depends on its text alone), over ``workers``."""
        if not texts:
            return []
        session, tokenizer = self._load()
        limit = max_tokens or self.max_doc_tokens
        encodings = [tokenizer.encode(t) for t in texts]
        jobs = [(e.ids[:limit - 1] + e.ids[-1:], [*e.special_tokens_mask[:limit - 1], 1])
                if len(e.ids) > limit else (e.ids, e.special_tokens_mask) for e in encodings]
        if self.workers == 1 or len(jobs) == 1:
            return [self._encode_one(session, ids, sp) for ids, sp in jobs]
        with ThreadPoolExecutor(self.workers, thread_name_prefix="maxsim") as pool:
            return list(pool.map(lambda job: self._encode_one(session, *job), jobs))

    def document_tokens(self, documents: Sequence[str]) -> list[TokenMatrix]:
        """Token vectors of each document, from ``cache`` when it has them (filled otherwise)."""
        if self.cache is None:
            return self.encode(documents)
        cache = self.cache
        missing = sorted({d for d in documents if d not in cache})
        for text, tokens in zip(missing, self.encode(missing), strict=True):
            cache[text] = tokens
        return [cache[d] for d in documents]

    # -- ranking ---------------------------------------------------------------------------

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """MaxSim of each document (before the prior)."""
        q = self.encode([query], self.max_query_tokens)[0]
        return maxsim_many(q, self.document_tokens(documents))

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]:
        check_limit(limit)
        if not documents or limit == 0:
            return []
        if HANGUL.search(query) or any(HANGUL.search(d) for d in documents):
            return KeepOrder().rerank(query, documents, limit)
        return ranked(blend_with_prior(self.scores(query, documents), self.prior_weight), limit)

    def __repr__(self) -> str:
        return (f"LateInteractionReranker(prior_weight={self.prior_weight}, "
                f"max_doc_tokens={self.max_doc_tokens}, workers={self.workers})")


def _minilm_tokenizer() -> Any:
    from excerpt.embed import minilm

    tokenizers = minilm._require("tokenizers", minilm.RUNTIME_HINTS["tokenizers"],
                                 "the late-interaction reranker")
    # located, not imported: the package is installed --no-deps and only its files are used
    spec = importlib.util.find_spec(minilm.TOKENIZER_PACKAGE)
    if spec is None or spec.origin is None:
        raise DependencyError(f"the late-interaction reranker needs "
                              f"{minilm.TOKENIZER_PACKAGE!r}; install it with: "
                              f"{minilm.TOKENIZER_HINT}")
    path = Path(spec.origin).parent / "model" / "tokenizer.json"
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    tokenizer.no_truncation()  # truncated by hand, keeping the final [SEP]
    tokenizer.no_padding()
    return tokenizer


def _minilm_session() -> Any:
    from excerpt.embed import minilm
    from excerpt.embed._onnx_graph import GraphRewriteError, optimise_minilm

    what = "the late-interaction reranker"
    ort = minilm._require("onnxruntime", minilm.RUNTIME_HINTS["onnxruntime"], what)
    package = minilm._require(minilm.MODEL_PACKAGE, minilm.MODEL_HINT, what)
    model = raw = Path(package.model_path()).read_bytes()
    pinned = getattr(package, "SHA256", None)
    if pinned and hashlib.sha256(raw).hexdigest() == pinned:
        try:
            model = optimise_minilm(raw)
        except GraphRewriteError:  # pragma: no cover - the pinned file always rewrites
            model = raw
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1  # parallelism comes from concurrent calls
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.enable_mem_pattern = False
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
