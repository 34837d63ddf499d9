"""Hostile zip files for tests, written in milliseconds.

``zipfile`` takes ~15 s to deflate 1.5 GB of zeros; a deflate stream may instead repeat one
byte-aligned block (``Z_FULL_FLUSH`` resets the window, so a block that encodes 1 MiB of zeros
means the same wherever it stands), so a 1.5 GB member costs 1.5 MB of copies.  The archive
is then written by hand (local headers, central directory, end record), which also lets a test
declare a size the member does not have.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
_ZEROS = bytes(MIB)


@dataclass(frozen=True)
class Member:
    name: str
    data: bytes = b""  # deflated as is
    zeros_mib: int = 0  # or: this many MiB of zeros (a bomb)
    declared_size: int | None = None  # the size the headers claim (None: the true size)


# A code bundle's parts (``excerpt.ingest.code.bundle``), for bundles built from members
BUNDLE_META = Member("R/repo_meta.json", json.dumps({"Repo": "R", "SnapshotId": "s"}).encode())
BUNDLE_CHUNKS = "R/regular_code_bundle/chunks.json"


def _zeros_stream(mib: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``mib`` MiB of zeros, and its CRC-32."""
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    one = block.compress(_ZEROS) + block.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(_ZEROS, crc)
    return one * mib + b"\x03\x00", crc  # b"\x03\x00": an empty final block


def _deflated(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def write_zip(path: Path, members: list[Member]) -> Path:
    """``members`` as a deflated zip at ``path`` (sizes under 4 GiB: no zip64)."""
    out, central = bytearray(), bytearray()
    for m in members:
        if m.zeros_mib:
            payload, crc = _zeros_stream(m.zeros_mib)
            size = m.zeros_mib * MIB
        else:
            payload, crc, size = _deflated(m.data), zlib.crc32(m.data), len(m.data)
        size = size if m.declared_size is None else m.declared_size
        name = m.name.encode("utf-8")
        fields = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0x21, crc, len(payload), size)
        central += struct.pack("<IH", 0x02014B50, 20) + fields + struct.pack(
            "<HHHHHII", len(name), 0, 0, 0, 0, 0, len(out)) + name
        out += struct.pack("<I", 0x04034B50) + fields + struct.pack("<HH", len(name), 0)
        out += name + payload
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                      len(out), 0)
    path.write_bytes(bytes(out + central + end))
    return path


def write_bzip2_bundle(path: Path) -> Path:
    """A code bundle whose chunks.json is bzip2 (zipfile would expand it without a bound)."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(BUNDLE_META.name, BUNDLE_META.data)
        zf.writestr(BUNDLE_CHUNKS, "[]", compress_type=zipfile.ZIP_BZIP2)
    return path
