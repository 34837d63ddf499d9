"""Another CPU, simulated: with ``EXCERPT_CPU_JITTER=EPS`` every MiniLM and E5 vector moves by a
small, deterministic amount (a noise vector of norm EPS, seeded by the text's tokens, so a text
always gets the same vector), as int8 kernels of another CPU move them (AVX2 against AVX-512 VNNI
or AMX: a hybrid score of 0.88 became 0.89, issue 28 item 8).

``EXCERPT_CPU_JITTER=0.01 .venv/bin/python -m pytest`` runs the suite so: a test or a doc example
that fails only then pins a figure the CPU can move. The conftest puts this folder on
``PYTHONPATH`` when the variable is set, so ``excerpt`` subprocesses (CLI runs, ``excerpt
serve``) are moved alike; Python imports ``sitecustomize`` at start-up by that name.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np


def _jitter(rows: Any, keys: list[bytes], eps: float) -> Any:
    out = np.array(rows, dtype=np.float32, copy=True)
    for i, key in enumerate(keys):
        seed = int.from_bytes(hashlib.sha256(key).digest()[:8], "little")
        noise = np.random.default_rng(seed).standard_normal(out.shape[1]).astype(np.float32)
        scale = float(np.linalg.norm(out[i])) or 1.0
        out[i] += noise / np.linalg.norm(noise) * eps * scale
    return out


def install(eps: float) -> None:
    """Wraps the embedders' pooling steps (imported lazily: only when the run uses them)."""
    from excerpt.embed import e5_runtime, minilm
    from excerpt.embed.base import l2_normalise

    plain_minilm = minilm.MiniLMEmbedder._run
    plain_e5 = e5_runtime.E5Runtime._run if hasattr(e5_runtime, "E5Runtime") else None

    def minilm_run(self: Any, session: Any, encodings: Any) -> Any:
        rows = plain_minilm(self, session, encodings)
        keys = [np.asarray(e.ids, dtype=np.int64).tobytes() for e in encodings]
        return l2_normalise(_jitter(rows, keys, eps))

    minilm.MiniLMEmbedder._run = minilm_run  # type: ignore[method-assign]
    if plain_e5 is not None:
        def e5_run(self: Any, windows: Any) -> Any:
            rows = plain_e5(self, windows)
            keys = [np.asarray(w, dtype=np.int64).tobytes() for w in windows]
            return _jitter(rows, keys, eps)

        e5_runtime.E5Runtime._run = e5_run  # type: ignore[method-assign]


if os.environ.get("EXCERPT_CPU_JITTER"):
    install(float(os.environ["EXCERPT_CPU_JITTER"]))
