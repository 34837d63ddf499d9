"""Approximate dense search for large segments: an inverted file (faiss IVF: k-means cells
of 8-bit quantized vectors), searched only through the nodes the caller may see, the best of
its candidates (by their 8-bit scores, across every segment of a view) re-scored with the
segments' float vectors.

Measured (bench/dense_ann.py, SciFact MiniLM vectors replicated with noise to 1M, one node in
seven hidden, recall of the exact top 10): an exact scan reads every vector (1.5 GB, 66 ms a
query); binary codes with float re-scoring cut the bytes but not the linear scan (49 ms);
HNSW (efSearch 256, 100 re-scored) fell to 0.48, each document's ~190 noisy copies making
clusters that 8-bit distances cannot order; this IVF (4,000 cells of 8-bit vectors, 256
probed, 400 candidates re-scored in float) found 1.0 of it in 5.2 ms p50, 6.6 ms p95, an index
of 380 MB built in about 1-1.5 minutes. So segments of at least ``dense_index_min_nodes``
nodes (setting) get ``vectors.ivf`` when they are written; smaller ones are scanned exactly,
fast there.

Re-scoring only the best ``rescore_factor`` x depth of a view's candidates, not all 400 of
each segment: at 10M nodes in ten segments (a home larger than memory) the re-score read 4,000
scattered rows a query from disk, and the semantic p50 / p95 went 105 / 229 -> 65 / 93 ms at
the same recall@10, 0.997 (bench/RESULTS.md, issue 30, session 17).

Security: the search takes the caller's mask as a faiss ``IDSelectorBitmap``, so a hidden
node is never a result; when the mask leaves under :attr:`AnnConfig.min_visible` of the
segment visible, the visible rows are scanned exactly instead (the probed cells would hold few
visible nodes, and that scan is small). A ranking that used the index says so in the notes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.settings import Settings

INDEX_FILE = "vectors.ivf"
FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class AnnConfig:
    """When a segment gets an index, how it is built, and how it is searched."""

    min_nodes: int = Settings.dense_index_min_nodes
    """Nodes from which a segment gets an index: the setting's default, declared there once
    (an import passes the setting it runs with)."""
    cells_per_sqrt: int = 4
    """Cells: 4 x sqrt(nodes) (4,000 at 1M), each trained on 40 sampled nodes."""
    nprobe: int = Settings.dense_index_nprobe
    """Cells a search probes (the setting's default)."""
    candidates: int = Settings.dense_index_candidates
    """Nodes the walk returns at least, ordered by their 8-bit scores."""
    rescore_factor: int = 2
    """Of those, ``rescore_factor`` x depth (the best across a view's segments) are re-scored
    from the float vectors (:func:`rescored`)."""
    min_visible: float = 0.02

    @classmethod
    def from_settings(cls, settings: Settings) -> AnnConfig:
        """The configuration ``settings`` ask for (an import and a search read it here)."""
        return cls(min_nodes=settings.dense_index_min_nodes,
                   nprobe=settings.dense_index_nprobe,
                   candidates=settings.dense_index_candidates)


DEFAULT = AnnConfig()


def build(folder: Path, vectors: FloatArray, config: AnnConfig) -> bool:
    """Writes ``folder/vectors.ivf`` when the segment is large enough (``min_nodes`` 0:
    never, as the setting says); whether it did."""
    if config.min_nodes <= 0 or len(vectors) < config.min_nodes:
        return False
    import faiss

    rows = np.ascontiguousarray(vectors, dtype=np.float32)
    cells = max(1, min(len(rows) // 40, int(config.cells_per_sqrt * len(rows) ** 0.5)))
    quantizer = faiss.IndexFlatIP(rows.shape[1])
    eight_bit: Any = faiss.ScalarQuantizer.QT_8bit
    index = faiss.IndexIVFScalarQuantizer(quantizer, rows.shape[1], cells, eight_bit,
                                          faiss.METRIC_INNER_PRODUCT)
    sample = np.random.default_rng(0).choice(len(rows), min(len(rows), cells * 40), False)
    index.train(rows[np.sort(sample)])  # the cells, and the 8-bit ranges of each dimension
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


def nearest(index: Any, mask: BoolArray, query: FloatArray, depth: int, config: AnnConfig
            ) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """Ordinals of the visible nodes nearest ``query`` (at most ``max(depth, candidates)``)
    and faiss' scores of them from the 8-bit codes, best first: approximate to about 1e-3, so
    a search re-scores the best of them exactly (:func:`rescore`)."""
    import faiss

    want = max(depth, config.candidates)
    bitmap = np.packbits(mask, bitorder="little")
    searching: Any = faiss.SearchParametersIVF  # typed in faiss without its keywords
    params = searching(sel=faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bitmap)),
                       nprobe=config.nprobe)
    scores, found = index.search(np.ascontiguousarray(query[None, :], dtype=np.float32), want,
                                 params=params)
    kept = found[0] >= 0
    return found[0][kept].astype(np.int64), scores[0][kept].astype(np.float32)


def rescore(rows: Callable[[npt.NDArray[np.int64]], FloatArray],
            ordinals: npt.NDArray[np.int64], query: FloatArray
            ) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """``ordinals`` and their exact cosine scores, best first; ``rows(ordinals)`` gives their
    float vectors (a segment reads them from its file: Segment.vector_rows)."""
    ordinals = np.sort(ordinals)
    scores = np.asarray(rows(ordinals) @ query, dtype=np.float32)
    order = np.argsort(-scores, kind="stable")
    return ordinals[order], scores[order]


def rescored(depth: int, config: AnnConfig) -> int:
    """How many of the approximate best a search re-scores exactly: ``rescore_factor`` x
    ``depth``, at least ``depth`` + 20 (the 8-bit scores' error reorders neighbours, not the
    far side of the cut)."""
    return max(config.rescore_factor * depth, depth + 20)


def search(index: Any, rows: Callable[[npt.NDArray[np.int64]], FloatArray], mask: BoolArray,
           query: FloatArray, depth: int, config: AnnConfig
           ) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """The visible nodes nearest ``query`` in one segment, best first, with exact cosine
    scores: :func:`nearest`, then the best :func:`rescored` of them re-scored. (A view of
    many segments re-scores the best across all of them instead: retrieve/dense.py.)"""
    ordinals, _ = nearest(index, mask, query, depth, config)
    return rescore(rows, ordinals[:rescored(depth, config)], query)
