"""A tiny ONNX cross-encoder and its tokenizer.json, written by hand for the tests.

The graph (opset 13) computes, per pair, ``Σ_t W[input_ids[t]] · mask[t] · (1 + type[t])``:
query tokens count once, document tokens twice, padding not at all (the pad token has a large
weight, so a backend that ignored the mask would be caught).  The protobuf is encoded here
field by field, as ``excerpt.embed._onnx_graph`` does, so the tests need no ``onnx`` package.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

from excerpt.embed._protobuf import int_field, ld, str_field

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "apple", "banana", "cherry", "date", "fig", "grape"]
WEIGHTS = [50.0, 0.0, 0.0, 0.0, 1.0, 2.0, -1.0, 0.5, 3.0, 0.25]
FLOAT, INT64 = 1, 7


def _node(op: str, inputs: Sequence[str], outputs: Sequence[str], **ints: int) -> bytes:
    body = b"".join(str_field(1, i) for i in inputs) + b"".join(str_field(2, o) for o in outputs)
    body += str_field(3, f"{op}_{outputs[0]}") + str_field(4, op)
    for name, value in ints.items():  # AttributeProto: name=1, i=3, type=20 (INT = 2)
        body += ld(5, str_field(1, name) + int_field(3, value) + int_field(20, 2))
    return ld(1, body)


def _tensor(name: str, dims: Sequence[int], dtype: int, raw: bytes) -> bytes:
    body = b"".join(int_field(1, d) for d in dims) + int_field(2, dtype)
    body += str_field(8, name) + ld(9, raw)
    return ld(5, body)


def _value_info(field: int, name: str, dtype: int, dims: Sequence[str | int]) -> bytes:
    shape = b"".join(ld(1, str_field(2, d) if isinstance(d, str) else int_field(1, d))
                     for d in dims)
    tensor_type = int_field(1, dtype) + ld(2, shape)
    return ld(field, str_field(1, name) + ld(2, ld(1, tensor_type)))


def tiny_model(weights: Sequence[float] = WEIGHTS, two_class: bool = False,
               with_token_types: bool = True) -> bytes:
    nodes = [
        _node("Gather", ["W", "input_ids"], ["g"]),
        _node("Cast", ["attention_mask"], ["m"], to=FLOAT),
        _node("Mul", ["g", "m"], ["gm"]),
    ]
    if with_token_types:
        nodes += [_node("Cast", ["token_type_ids"], ["tt"], to=FLOAT),
                  _node("Add", ["tt", "one"], ["tt1"]),
                  _node("Mul", ["gm", "tt1"], ["contrib"])]
    else:
        nodes += [_node("Identity", ["gm"], ["contrib"])]
    nodes.append(_node("ReduceSum", ["contrib", "axes"], ["s" if two_class else "logits"],
                       keepdims=1))
    if two_class:  # logits = [-s, s]: the positive log-odds is 2 s
        nodes += [_node("Neg", ["s"], ["neg"]), _node("Concat", ["neg", "s"], ["logits"], axis=1)]
    inits = [
        _tensor("W", [len(weights)], FLOAT, struct.pack(f"<{len(weights)}f", *weights)),
        _tensor("one", [], FLOAT, struct.pack("<f", 1.0)),
        _tensor("axes", [1], INT64, struct.pack("<q", 1)),
    ]
    inputs = ["input_ids", "attention_mask", *(["token_type_ids"] if with_token_types else [])]
    graph = b"".join(nodes) + str_field(2, "tiny_cross_encoder") + b"".join(inits)
    graph += b"".join(_value_info(11, n, INT64, ["batch", "seq"]) for n in inputs)
    graph += _value_info(12, "logits", FLOAT, ["batch", 2 if two_class else 1])
    opset = ld(8, str_field(1, "") + int_field(2, 13))
    return int_field(1, 8) + opset + ld(7, graph)


def tiny_tokenizer_json(path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(path))


def expected_score(query: str, document: str, max_tokens: int | None = None) -> float:
    """What the tiny graph computes for the pair, from the token lists by hand."""
    def ids(text: str) -> list[int]:
        return [VOCAB.index(w) if w in VOCAB else 1 for w in text.split()]

    q, d = ids(query), ids(document)
    if max_tokens is not None:  # longest_first: drop from the longer side's end
        while len(q) + len(d) + 3 > max_tokens:
            if len(d) >= len(q):
                d.pop()
            else:
                q.pop()
    return sum(WEIGHTS[i] for i in [2, *q, 3]) + 2 * sum(WEIGHTS[i] for i in [*d, 3])


