"""What every embedding model looks like to the rest of excerpt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]
"""``(n, dim)`` float32, one L2-normalised row per text (or ``(dim,)`` for one query)."""


@runtime_checkable
class Embedder(Protocol):
    """A sentence-embedding model.

    ``name`` is the stable model id stored next to the vectors; vectors from different names
    are never compared.  Constructors are cheap; the model loads on first use and is safe to
    share between threads of one process.
    """

    name: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        """``(len(texts), dim)`` float32 with L2-normalised rows; ``(0, dim)`` for no texts."""
        ...

    def embed_query(self, text: str) -> FloatMatrix:
        """``(dim,)`` float32, L2-normalised."""
        ...


def l2_normalise(matrix: FloatMatrix) -> FloatMatrix:
    """Rows scaled to unit length (all-zero rows stay zero), as float32."""
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    out: FloatMatrix = (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return out
