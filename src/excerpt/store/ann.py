"""Approximate dense search for large segments: an HNSW graph (faiss) over 8-bit quantized
vectors, walked only through the nodes the caller may see, its candidates re-scored with the
segment's float vectors.

Measured (bench/dense_ann.py, SciFact MiniLM vectors replicated with noise, one node in seven
hidden): an exact scan reads every vector (1.5 GB a query at 1M nodes); binary codes with
float re-scoring cut the bytes but not the linear scan (16 ms at 100k, 49 ms at 1M); HNSW with
efSearch 256 found 0.996 of the exact top 10 in 0.7 ms at 100k, but only 0.48 at 1M, where
each document's ~190 noisy copies make clusters the graph walk does not leave. So it is off by
default (setting ``dense_index_min_nodes`` 0) until an index holds its recall at 1M; with the
setting, segments of at least that many nodes get ``vectors.hnsw`` when they are written.

Security: the walk takes the caller's mask as a faiss ``IDSelectorBitmap``, so a hidden node is
never a result, whatever the graph passes through; when the mask leaves under
:attr:`AnnConfig.min_visible` of the segment visible, the visible rows are scanned exactly
instead (a filtered walk would wander through hidden nodes, and the exact scan is small then).
A ranking that used the index says so in the search's notes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

INDEX_FILE = "vectors.hnsw"
FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class AnnConfig:
    """When a segment gets an index, how it is built, and how it is searched."""

    min_nodes: int = 200_000
    m: int = 32
    ef_construction: int = 100
    ef_search: int = 256
    candidates: int = 100
    """Nodes the walk returns at least, re-scored exactly before the top ``depth`` is kept."""
    min_visible: float = 0.02


DEFAULT = AnnConfig()


def build(folder: Path, vectors: FloatArray, config: AnnConfig) -> bool:
    """Writes ``folder/vectors.hnsw`` when the segment is large enough; whether it did."""
    if len(vectors) < config.min_nodes:
        return False
    import faiss

    eight_bit: Any = faiss.ScalarQuantizer.QT_8bit
    index = faiss.IndexHNSWSQ(vectors.shape[1], eight_bit, config.m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = config.ef_construction
    rows = np.ascontiguousarray(vectors, dtype=np.float32)
    index.train(rows[:: max(1, len(rows) // 100_000)])  # the 8-bit ranges of each dimension
    index.add(rows)
    partial = folder / (INDEX_FILE + ".partial")
    faiss.write_index(index, str(partial))
    with open(partial, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(partial, folder / INDEX_FILE)
    return True


def load(folder: Path) -> Any | None:
    """The segment's index, or None when it has none."""
    path = folder / INDEX_FILE
    if not path.is_file():
        return None
    import faiss

    return faiss.read_index(str(path))


def usable(mask: BoolArray, visible: int, config: AnnConfig) -> bool:
    """Whether the walk suits this mask (enough of the segment visible)."""
    return visible >= config.min_visible * len(mask)


def search(index: Any, vectors: FloatArray, mask: BoolArray, query: FloatArray, depth: int,
           config: AnnConfig) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """Ordinals of the visible nodes nearest ``query`` (at most ``max(depth, candidates)``)
    and their exact cosine scores, best first."""
    import faiss

    want = max(depth, config.candidates)
    bitmap = np.packbits(mask, bitorder="little")
    params = faiss.SearchParametersHNSW(  # type: ignore[attr-defined]
        sel=faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bitmap)),
        efSearch=max(config.ef_search, want))
    _, found = index.search(np.ascontiguousarray(query[None, :], dtype=np.float32), want,
                            params=params)
    ordinals = np.sort(found[0][found[0] >= 0])
    scores = np.asarray(vectors[ordinals] @ query, dtype=np.float32)
    order = np.argsort(-scores, kind="stable")
    return ordinals[order], scores[order]
