"""Per-snapshot search segments: written once when an import completes, memory-mapped for reads.

A segment is a folder of numpy arrays over the snapshot's nodes, in ordinal order (nodes are
sorted by id when the segment is built, so ordinal order *is* id order inside a segment, which
makes tie-breaking by id free):

    ids.txt              one node id per line, in ordinal (= id) order
    meta.json            counts, analyzer version, embedding model, security vocabularies
    terms.txt            one term per line; line i is term id i
    post_indptr.npy      int64[n_terms + 1]   postings of term t are [indptr[t], indptr[t+1])
    post_docs.npy        int32[n_postings]    node ordinals, increasing within a term
    post_tf.npy          float32[n_postings]  term frequency in that node
    doc_len.npy          float32[n_nodes]     tokens per node (BM25 length normalisation)
    blk_indptr.npy       int64[n_terms + 1]   block-max entries of term t are [indptr[t], ..[t+1])
    blk_ids.npy          int32[n_entries]     block (ordinal >> meta["block_shift"]), increasing
    blk_start.npy        int64[n_entries]     first posting of the term in that block
    blk_max_tf.npy       float32[n_entries]   largest tf of the term in that block
    blk_min_len.npy      float32[n_entries]   shortest node holding the term in that block
    imp_*.npy            the most common terms' postings in impact order (store/impacts.py);
                         only in segments holding such a term (meta["impacts"])
    vectors.npy          float32[n_nodes, dim]  L2-normalised embeddings (absent: no vectors)
    acl_indptr.npy / acl_ids.npy        CSR of each node's ACL tag ids (into meta["acl_tags"])
    label_indptr.npy / label_ids.npy    CSR of each node's classification label ids
    edge_indptr.npy      int64[n_nodes + 1]   outgoing edges of node o are [indptr[o], indptr[o+1])
    edge_to.npy          int32[n_edges]       target, an index into edge_targets.txt
    edge_rel.npy         int16[n_edges]       relation, an index into meta["relations"]
    edge_targets.txt     one target id per line (targets may lie outside the snapshot)

Raw term frequencies and lengths are stored, not BM25 weights: collection statistics (document
frequency, average length) belong to the read view, which may span several segments, and are
combined at query time (HOUSE.md: scores independent of import history).  For the same
reason the block-max entries (for terms with many postings only) hold the largest tf and the
shortest length rather than a weight: a bound on a term's BM25 weight in a block under any
view's statistics follows from them (retrieve/pruning.py).  Format-2 segments have none and
are searched exhaustively.

Arrays are read on first use, small ones into memory and larger ones memory-mapped, within a
bound on the maps (so the open files) a store keeps (store/maps.py).
"""

from __future__ import annotations

import json
import os
import threading
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.errors import EXHAUSTED, StoreError
from excerpt.store.ann import AnnConfig
from excerpt.store.ann import build as build_ann
from excerpt.store.ann import load as load_ann
from excerpt.store.blocks import Blocks, block_maxima
from excerpt.store.impacts import IMPACT_POSTINGS, Impacts, impact_files
from excerpt.store.maps import Layout, OpenMaps, layout, map_array, read_array, resources
from excerpt.types import Principal

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

SEGMENT_FORMAT = 3  # 2: edges (format-1 segments have none); 3: block maxima (2 has none)
BLOCK_SHIFT = 10  # block-max entries cover 1024 ordinals
LONG_POSTINGS = 512  # terms with at least this many postings get block-max entries
WEIGHTS_CACHED = 4_000_000  # postings up to which a segment caches its term weights
NORMS_KEPT = 16  # length norms kept per segment (one per view statistics; 4 bytes a node)
FILTERS_KEPT = 64  # metadata filter masks kept per segment (1 byte a node each)
WEIGHTS_KEPT = 4  # term weight arrays kept per segment (4 bytes a posting each)
SHARED_MAPS = OpenMaps()  # the bound of segments opened outside a store (tests, imports)


def _csr(groups: Sequence[Sequence[str]], vocab: list[str]) -> tuple[IntArray, IntArray]:
    index = {v: i for i, v in enumerate(vocab)}
    indptr = np.zeros(len(groups) + 1, dtype=np.int64)
    ids: list[int] = []
    for i, group in enumerate(groups):
        ids.extend(index[g] for g in group)
        indptr[i + 1] = len(ids)
    return indptr, np.asarray(ids, dtype=np.int64)


def _invert(
    tokens: Sequence[Sequence[str]],
) -> tuple[list[str], IntArray, npt.NDArray[np.int32], FloatArray, FloatArray]:
    """Token lists -> sorted vocabulary and term-major postings (CSR), vectorised with numpy."""
    index: dict[str, int] = {}
    flat = array("q")
    doc_len = np.zeros(len(tokens), dtype=np.float32)
    for ordinal, toks in enumerate(tokens):
        flat.extend([index.setdefault(t, len(index)) for t in toks])
        doc_len[ordinal] = len(toks)
    vocab = sorted(index)
    rank = np.empty(len(index), dtype=np.int64)
    rank[[index[t] for t in vocab]] = np.arange(len(vocab), dtype=np.int64)
    owners = np.repeat(np.arange(len(tokens), dtype=np.int64), doc_len.astype(np.int64))
    keys = rank[np.frombuffer(flat, dtype=np.int64)] * max(len(tokens), 1) + owners
    uniq, counts = np.unique(keys, return_counts=True)
    term_of = uniq // max(len(tokens), 1)
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term_of, minlength=len(vocab)), out=indptr[1:])
    docs = (uniq % max(len(tokens), 1)).astype(np.int32)
    return vocab, indptr, docs, counts.astype(np.float32), doc_len


def id_ranks(ids: Sequence[str]) -> npt.NDArray[np.int64]:
    """Each id's place in sorted order (ties, an id held twice, by row)."""
    order = np.asarray(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids), dtype=np.int64)
    return rank


def _keep(cache: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """``cache[key] = value``, the oldest entry going first when ``limit`` are kept: the
    per-segment caches of derived arrays (one per view statistics or filter) stay bounded."""
    if len(cache) >= limit:
        for oldest in list(cache)[:1]:  # list(): one step, safe in threads
            cache.pop(oldest, None)
    cache[key] = value


def save_array(folder: Path, name: str, array: npt.NDArray[Any]) -> None:
    with open(folder / name, "wb") as fh:
        np.save(fh, array, allow_pickle=False)
        fh.flush()
        os.fsync(fh.fileno())


def write_segment(
    folder: Path,
    ids: Sequence[str],
    tokens: Sequence[Sequence[str]],
    acl_tags: Sequence[Sequence[str]],
    labels: Sequence[Sequence[str]],
    vectors: FloatArray | None,
    meta: dict[str, Any],
    edges: Sequence[tuple[str, str, str]] = (),
    block_shift: int = BLOCK_SHIFT,
    long_postings: int = LONG_POSTINGS,
    ann: AnnConfig | None = None,
    impact_postings: int = IMPACT_POSTINGS,
) -> None:
    """Write a segment for nodes given in ordinal order; ``folder`` must not exist yet.

    ``edges`` are (from_id, relation, to_id); edges leaving a node outside the segment are
    not kept (nothing can be expanded from a node that is not there).  ``block_shift`` and
    ``long_postings`` shape the block-max entries, ``impact_postings`` which terms get an
    impact order (tests make them small).  With ``ann``, a
    segment of at least ``ann.min_nodes`` vectors also gets its IVF index (store/ann.py).
    """
    folder.mkdir(parents=True)
    relations = _write_edges(folder, ids, edges)
    vocab, indptr, docs, tfs, doc_len = _invert(tokens)
    acl_vocab = sorted({t for g in acl_tags for t in g})
    label_vocab = sorted({lab for g in labels for lab in g})
    acl_indptr, acl_ids = _csr(acl_tags, acl_vocab)
    label_indptr, label_ids = _csr(labels, label_vocab)
    (folder / "ids.txt").write_text("\n".join(ids), encoding="utf-8")
    (folder / "terms.txt").write_text("\n".join(vocab), encoding="utf-8")
    blk_indptr, blk_ids, blk_start, blk_max_tf, blk_min_len = block_maxima(
        indptr, docs, tfs, doc_len, block_shift, long_postings)
    impacts = impact_files(indptr, docs, tfs, doc_len, impact_postings)
    for name, arr in (
        *impacts,
        ("blk_indptr.npy", blk_indptr),
        ("blk_ids.npy", blk_ids),
        ("blk_start.npy", blk_start),
        ("blk_max_tf.npy", blk_max_tf),
        ("blk_min_len.npy", blk_min_len),
        ("post_indptr.npy", indptr),
        ("post_docs.npy", docs),
        ("post_tf.npy", tfs),
        ("doc_len.npy", doc_len),
        ("acl_indptr.npy", acl_indptr),
        ("acl_ids.npy", acl_ids),
        ("label_indptr.npy", label_indptr),
        ("label_ids.npy", label_ids),
    ):
        save_array(folder, name, arr)
    if vectors is not None:
        save_array(folder, "vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))
    indexed = vectors is not None and ann is not None and build_ann(folder, vectors, ann)
    full_meta = {
        **meta,
        "format": SEGMENT_FORMAT,
        "nodes": len(tokens),
        "terms": len(vocab),
        "postings": int(indptr[-1]),
        "total_length": float(doc_len.sum()),
        "acl_tags": acl_vocab,
        "classification_labels": label_vocab,
        "dim": int(vectors.shape[1]) if vectors is not None else 0,
        "relations": relations,
        "block_shift": block_shift,
        "impacts": bool(impacts),
        "ann": "ivf-sq8" if indexed else None,
    }
    (folder / "meta.json").write_text(json.dumps(full_meta, ensure_ascii=False), encoding="utf-8")


def _write_edges(folder: Path, ids: Sequence[str],
                 edges: Sequence[tuple[str, str, str]]) -> list[str]:
    ordinal = {node_id: i for i, node_id in enumerate(ids)}
    kept = sorted({(ordinal[f], r, t) for f, r, t in edges if f in ordinal})
    relations = sorted({r for _, r, _ in kept})
    targets = sorted({t for _, _, t in kept})
    rel_id = {r: i for i, r in enumerate(relations)}
    target_id = {t: i for i, t in enumerate(targets)}
    counts = np.bincount(np.asarray([o for o, _, _ in kept], dtype=np.int64),
                         minlength=len(ids))
    indptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    save_array(folder, "edge_indptr.npy", indptr)
    save_array(folder, "edge_to.npy",
               np.asarray([target_id[t] for _, _, t in kept], dtype=np.int32))
    save_array(folder, "edge_rel.npy",
               np.asarray([rel_id[r] for _, r, _ in kept], dtype=np.int16))
    (folder / "edge_targets.txt").write_text("\n".join(targets), encoding="utf-8")
    return relations


class _Array:
    """A segment's array as an attribute: one read into memory becomes a plain attribute of
    the segment (as cheap to read as one: a query reads postings in every segment of its
    view); a mapped one is asked of the segment's maps at every read, as they may drop it."""

    def __init__(self, file: str) -> None:
        self.file = file

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, segment: Segment, owner: type | None = None) -> npt.NDArray[Any]:
        found = segment._array(self.file)
        if self.file in segment._arrays:
            segment.__dict__[self.name] = found
        return found


@dataclass(frozen=True)
class Postings:
    docs: npt.NDArray[np.int32]
    tf: FloatArray


class Segment:
    """Read side of a segment; every array is loaded on first use: read into memory when it
    is small, else memory-mapped under ``maps``' bound (the store's; store/maps.py)."""

    def __init__(self, folder: Path, snapshot_id: str, maps: OpenMaps | None = None) -> None:
        self.folder = folder
        self.snapshot_id = snapshot_id
        self.maps = SHARED_MAPS if maps is None else maps
        self.mapped: dict[str, npt.NDArray[Any]] = {}  # changed by self.maps only
        self.touched = -1
        self.meta: dict[str, Any] = json.loads(self._text("meta.json"))
        self._masks: dict[Principal, BoolArray] = {}
        self._stats: dict[Principal, tuple[int, float]] = {}
        self._norms: dict[tuple[float, float, float], FloatArray] = {}
        self._weights: dict[tuple[float, float, float], FloatArray] = {}
        self._weights_lock = threading.Lock()  # one thread computes, the others wait for it
        self._arrays: dict[str, npt.NDArray[Any]] = {}  # read into memory: kept
        self._layouts: dict[str, Layout] = {}  # of the mapped ones
        self._filters: dict[tuple[str, str], BoolArray] = {}

    def _array(self, name: str) -> npt.NDArray[Any]:
        """The array in file ``name``: kept in memory, or mapped (and mapped again after
        ``maps`` dropped it). The caller keeps what it is given for one read at most: a
        segment read later may be given a new map of the same bytes."""
        found = self._arrays.get(name)
        if found is not None:
            return found
        found = self.mapped.get(name)
        if found is None:
            return self._open(name)
        if self.touched != self.maps.clock:
            self.maps.used(self)
        return found

    def _open(self, name: str) -> npt.NDArray[Any]:
        with resources():
            try:
                return self._open_once(name)
            except OSError as exc:
                if exc.errno not in EXHAUSTED:
                    raise
                self.maps.close()  # idle segments' maps free their files: once more
                return self._open_once(name)

    def _open_once(self, name: str) -> npt.NDArray[Any]:
        path = self.folder / name
        where = self._layouts.get(name)
        if where is None:  # first read: small arrays are read, and kept (never dropped)
            if path.stat().st_size < self.maps.read_below:
                return self._arrays.setdefault(name, read_array(path))
            where = self._layouts.setdefault(name, layout(path))
        return self.maps.put(self, name, map_array(path, where))

    def _text(self, name: str) -> str:
        with resources():
            return (self.folder / name).read_text("utf-8")

    def close(self) -> None:
        """Drops this segment's maps (its snapshot is deleted); a later read maps again."""
        self.maps.close(self)

    @property
    def size(self) -> int:
        return int(self.meta["nodes"])

    @property
    def total_length(self) -> float:
        return float(self.meta["total_length"])

    @property
    def embed_model(self) -> str | None:
        model = self.meta.get("embed_model")
        return str(model) if model and self.meta.get("dim") else None

    @cached_property
    def ids(self) -> list[str]:
        text = self._text("ids.txt")
        return text.split("\n") if text else []

    @cached_property
    def ids_sorted(self) -> bool:
        """Whether ordinal order is id order (true of every segment the pipeline writes), so
        that ties in score can be broken by ordinal without comparing ids."""
        ids = self.ids
        return all(a <= b for a, b in pairwise(ids))

    @cached_property
    def id_rank(self) -> npt.NDArray[np.int64] | None:
        """Each row's place in id order, for a segment whose rows are not in id order (a
        merged one: its snapshots' rows one after another): ties in score are then broken by
        id in numpy. None when ordinal order is id order. A merge writes it
        (``id_rank.npy``); computed here for a segment without the file."""
        if self.ids_sorted:
            return None
        if (self.folder / "id_rank.npy").exists():
            return np.asarray(self._array("id_rank.npy"), dtype=np.int64)
        return id_ranks(self.ids)

    @cached_property
    def ordinal_of(self) -> dict[str, int]:
        """Node id -> ordinal (its row in every array of this segment); in a merged segment
        holding an id more than once (a source's snapshots), its last row (:attr:`repeated`
        has them all)."""
        return {node_id: i for i, node_id in enumerate(self.ids)}

    @cached_property
    def members(self) -> list[tuple[str, int, int]]:
        """(snapshot id, first row, rows) of each snapshot whose rows this segment holds, in
        row order: ``meta["members"]`` of a merged segment (store/merge.py), else its own
        snapshot over every row."""
        listed = self.meta.get("members")
        if listed:
            return [(str(sid), int(first), int(n)) for sid, first, n in listed]
        return [(self.snapshot_id, 0, self.size)]

    @cached_property
    def _ranges(self) -> dict[str, tuple[int, int]]:
        return {sid: (first, n) for sid, first, n in self.members}

    def member_range(self, snapshot_id: str) -> tuple[int, int]:
        """(first row, rows) of ``snapshot_id`` in this segment."""
        found = self._ranges.get(snapshot_id)
        if found is None:
            raise StoreError(f"segment {self.folder.name} holds no rows of {snapshot_id!r}")
        return found

    def visible_in(self, snapshot_id: str, principal: Principal) -> BoolArray:
        """What ``principal`` may see of the rows of ``snapshot_id``, in that snapshot's node
        order (its ordinals)."""
        first, n = self.member_range(snapshot_id)
        return self.visible(principal)[first:first + n]

    @cached_property
    def repeated(self) -> dict[str, list[int]]:
        """Every row of each id held more than once (only a merged segment can)."""
        if len(self.members) < 2:
            return {}
        rows: dict[str, list[int]] = {}
        for i, node_id in enumerate(self.ids):
            rows.setdefault(node_id, []).append(i)
        return {k: v for k, v in rows.items() if len(v) > 1}

    @cached_property
    def term_ids(self) -> dict[str, int]:
        text = self._text("terms.txt")
        return {t: i for i, t in enumerate(text.split("\n"))} if text else {}

    _indptr = _Array("post_indptr.npy")
    post_docs = _Array("post_docs.npy")
    post_tf = _Array("post_tf.npy")
    doc_len = _Array("doc_len.npy")

    @property
    def vectors(self) -> FloatArray | None:
        return self._array("vectors.npy") if self._has_vectors else None

    @cached_property
    def _has_vectors(self) -> bool:
        return (self.folder / "vectors.npy").exists()

    def vector_rows(self, ordinals: IntArray) -> FloatArray:
        """The float vectors of ``ordinals``, read from the file (``os.preadv``) rather than
        through the memory map. A search through the IVF index re-scores a few hundred
        scattered rows; read through the map, each row made the kernel map the 64 KB around
        it (fault-around, which MADV_RANDOM does not turn off), so at 1M nodes 200 queries
        left 1.4 GB of the 1.5 GB vector file resident in the process
        (bench/scale_hybrid.py)."""
        dim = int(self.meta["dim"])
        out = np.empty((len(ordinals), dim), dtype=np.float32)
        row = dim * 4
        start = self._vectors_offset
        with resources(), open(self.folder / "vectors.npy", "rb", buffering=0) as fh:
            fd = fh.fileno()
            for i, ordinal in enumerate(np.asarray(ordinals).tolist()):
                if os.preadv(fd, [out[i]], start + ordinal * row) != row:
                    raise OSError(f"{self.folder}/vectors.npy: short read at row {ordinal}")
        return out

    @cached_property
    def _vectors_offset(self) -> int:
        """Where the rows of ``vectors.npy`` begin (after numpy's header)."""
        with resources():
            return layout(self.folder / "vectors.npy").offset

    @property
    def indexed(self) -> bool:
        """Whether the segment has an IVF index (known without loading it)."""
        return bool(self.meta.get("ann"))

    @cached_property
    def ann(self) -> Any | None:
        """The IVF index of the vectors (store/ann.py), or None: scanned exactly."""
        return load_ann(self.folder) if self.indexed else None

    @cached_property
    def _edge_targets(self) -> list[str]:
        text = self._text("edge_targets.txt")
        return text.split("\n") if text else []

    @cached_property
    def has_edges(self) -> bool:
        """Whether the segment holds its edges (format 2 on; a folder never changes: asked
        once, not a file-system call at every graph step)."""
        return (self.folder / "edge_indptr.npy").exists()

    def outgoing(self, ordinal: int) -> list[tuple[str, str]]:
        """(relation, to_id) of the edges leaving node ``ordinal``, sorted."""
        indptr = self._array("edge_indptr.npy")
        start, end = int(indptr[ordinal]), int(indptr[ordinal + 1])
        if start == end:
            return []
        relations, targets = self.meta["relations"], self._edge_targets
        to = self._array("edge_to.npy")[start:end].tolist()
        rel = self._array("edge_rel.npy")[start:end].tolist()
        return [(relations[r], targets[t]) for r, t in zip(rel, to, strict=True)]

    def incoming(self, node_id: str) -> list[tuple[int, str]]:
        """(row, relation) of the edges into ``node_id`` from this segment's rows."""
        return self._incoming.get(node_id, [])

    @cached_property
    def _incoming(self) -> dict[str, list[tuple[int, str]]]:
        indptr = np.asarray(self._array("edge_indptr.npy"))
        owners = np.repeat(np.arange(self.size), np.diff(indptr)).tolist()
        relations, targets = self.meta["relations"], self._edge_targets
        out: dict[str, list[tuple[int, str]]] = {}
        for row, to, rel in zip(owners, self._array("edge_to.npy").tolist(),
                                self._array("edge_rel.npy").tolist(), strict=True):
            out.setdefault(targets[to], []).append((row, relations[rel]))
        return out

    def postings(self, term: str) -> Postings | None:
        tid = self.term_ids.get(term)
        if tid is None:
            return None
        start, end = int(self._indptr[tid]), int(self._indptr[tid + 1])
        return Postings(self.post_docs[start:end], self.post_tf[start:end])

    @property
    def block_shift(self) -> int | None:
        """log2 of the ordinals a block-max entry covers; None: a segment without them."""
        shift = self.meta.get("block_shift")
        return None if shift is None else int(shift)

    def term_range(self, term: str) -> tuple[int, int] | None:
        """[start, end) of the term's postings in :attr:`post_docs` / :attr:`post_tf`."""
        tid = self.term_ids.get(term)
        if tid is None:
            return None
        bounds = self._bounds
        return bounds[tid], bounds[tid + 1]

    @cached_property
    def _bounds(self) -> list[int]:
        """The postings' indptr as Python ints: a query reads two per term (0.06 us here
        against 0.5 us through numpy)."""
        return self._indptr.tolist()  # type: ignore[no-any-return]

    @property
    def postings_in_memory(self) -> bool:
        """Whether the postings were read into memory: a slice of them then holds no file
        open, and a search may keep it across segments without a copy (retrieve/lexical)."""
        return "post_docs.npy" in self._arrays

    def blocks(self, term: str) -> Blocks | None:
        """The term's block-max entries (None: it has none, its postings are short)."""
        tid = self.term_ids.get(term)
        if tid is None or self.block_shift is None:
            return None
        indptr = self._array("blk_indptr.npy")
        start, end = int(indptr[tid]), int(indptr[tid + 1])
        if start == end:
            return None
        first = self._array("blk_start.npy")[start:end]
        ends = np.append(first[1:], self._indptr[tid + 1])
        return Blocks(self._array("blk_ids.npy")[start:end], first, ends,
                      self._array("blk_max_tf.npy")[start:end],
                      self._array("blk_min_len.npy")[start:end])

    def impacts(self, term: str) -> Impacts | None:
        """The term's postings in impact order (None: it has none, it is not that common)."""
        if not self.meta.get("impacts"):
            return None
        tid = self.term_ids.get(term)
        if tid is None:
            return None
        indptr = self._array("imp_indptr.npy")
        first, last = int(indptr[tid]), int(indptr[tid + 1])
        if first == last:
            return None
        runs = self._array("imp_run_indptr.npy")
        a, z = int(runs[tid]), int(runs[tid + 1])
        return Impacts(self._array("imp_docs.npy")[first:last],
                       self._array("imp_run_start.npy")[a:z] - first,
                       self._array("imp_run_tf.npy")[a:z], self._array("imp_run_len.npy")[a:z])

    def doc_freq(self, term: str) -> int:
        tid = self.term_ids.get(term)
        return 0 if tid is None else int(self._indptr[tid + 1] - self._indptr[tid])

    def visible(self, principal: Principal) -> BoolArray:
        """Which nodes the principal may see: the security filter, as one boolean mask."""
        mask = self._masks.get(principal)
        if mask is None:
            mask = self._compute_visible(principal)
            self._masks[principal] = mask
        return mask

    def metadata_mask(self, key: str, value: Any,
                      ordinals: Callable[[], Sequence[int]]) -> BoolArray:
        """Which nodes a metadata filter ``key=value`` keeps (``ordinals()``: the store's
        answer), kept per filter: an ask scoped to "page 12" searches several times, and a
        snapshot never changes, so the store is asked once."""
        found = (key, json.dumps(value, sort_keys=True))  # 12, 12.0 and "12" stay apart
        mask = self._filters.get(found)
        if mask is None:
            mask = np.zeros(self.size, dtype=bool)
            mask[list(ordinals())] = True
            _keep(self._filters, found, mask, FILTERS_KEPT)
        return mask

    def length_norm(self, avgdl: float, k1: float, b: float) -> FloatArray:
        """Per node, BM25's ``k1 * (1 - b + b * |d| / avgdl)`` in float32, computed as
        retrieve/lexical.py's ``term_weight`` computes it (so to the same bits), once per
        view statistics: a query then pays one gather and two operations per posting."""
        key = (avgdl, k1, b)
        norm = self._norms.get(key)
        if norm is None:
            norm = np.asarray(k1 * (1.0 - b + b * self.doc_len / avgdl), dtype=np.float32)
            _keep(self._norms, key, norm, NORMS_KEPT)  # views differ by caller
        return norm

    def term_weights(self, avgdl: float, k1: float, b: float) -> FloatArray | None:
        """Every posting's BM25 term weight ``tf / (tf + length_norm)`` under these view
        statistics, in posting order (float32, the bits of retrieve/lexical.py's
        ``term_weight``), kept for the next query of the same view; None above
        ``WEIGHTS_CACHED`` postings (4 bytes each per view statistics kept)."""
        if int(self.meta["postings"]) > WEIGHTS_CACHED:
            return None
        key = (avgdl, k1, b)
        weights = self._weights.get(key)
        if weights is None:
            with self._weights_lock:  # a server's threads meet new statistics at once
                weights = self._weights.get(key)
                if weights is None:
                    tf = self.post_tf
                    weights = np.asarray(
                        tf / (tf + self.length_norm(avgdl, k1, b)[self.post_docs]),
                        dtype=np.float32)
                    _keep(self._weights, key, weights, WEIGHTS_KEPT)
        return weights

    def visible_stats(self, principal: Principal) -> tuple[int, float]:
        """(nodes the principal may see, their total length), counted once per principal like
        its mask: the BM25 statistics of a view that filters nothing else."""
        stats = self._stats.get(principal)
        if stats is None:
            mask = self.visible(principal)
            count = int(mask.sum())
            stats = (count, float(self.doc_len[mask].sum()) if count else 0.0)
            self._stats[principal] = stats
        return stats

    def _compute_visible(self, principal: Principal) -> BoolArray:
        n = self.size
        if principal.all_access:
            return np.ones(n, dtype=bool)
        acl_ok = self._untagged_or_shared(principal.acl_tags)
        uncleared = [lab not in principal.clearances for lab in self.meta["classification_labels"]]
        label_bad = self._count_flagged("label", np.asarray(uncleared, dtype=bool))
        return np.asarray(acl_ok & (label_bad == 0), dtype=bool)

    def _count_flagged(self, kind: str, flagged_vocab: BoolArray) -> IntArray:
        """Per node, how many of its tags (of ``kind``) are flagged in the vocabulary."""
        indptr = np.asarray(self._array(f"{kind}_indptr.npy"))
        ids = np.asarray(self._array(f"{kind}_ids.npy"))
        if ids.size == 0:
            return np.zeros(self.size, dtype=np.int64)
        owner = np.repeat(np.arange(self.size), np.diff(indptr))
        return np.bincount(owner[flagged_vocab[ids]], minlength=self.size).astype(np.int64)

    def _untagged_or_shared(self, caller_tags: frozenset[str]) -> BoolArray:
        """ACL rule: a node with no tags is public; otherwise it must share one with the caller."""
        shared = np.asarray([t in caller_tags for t in self.meta["acl_tags"]], dtype=bool)
        untagged = np.diff(np.asarray(self._array("acl_indptr.npy"))) == 0
        return np.asarray((self._count_flagged("acl", shared) > 0) | untagged, dtype=bool)
