"""The protobuf wire format, the little of it excerpt needs to read and write ONNX files
without the ``onnx`` package: varints, length-delimited fields, integer and string fields
(https://protobuf.dev/programming-guides/encoding/)."""

from __future__ import annotations


def varint(value: int) -> bytes:
    """Base-128 varint; a negative int64 is written as its two's complement (ten bytes)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def read_varint(buf: memoryview | bytes, i: int) -> tuple[int, int]:
    """The varint at ``buf[i]`` and the position after it."""
    result = shift = 0
    while True:
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, i


def ld(number: int, payload: bytes | memoryview) -> bytes:
    """Field ``number``, length-delimited (wire type 2): a message, bytes or a string."""
    return varint(number << 3 | 2) + varint(len(payload)) + bytes(payload)


def int_field(number: int, value: int) -> bytes:
    """Field ``number`` as a varint (wire type 0)."""
    return varint(number << 3) + varint(value)


def str_field(number: int, text: str) -> bytes:
    return ld(number, text.encode())
