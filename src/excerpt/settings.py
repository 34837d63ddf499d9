"""Pipeline settings as data: each field carries its default and its help text.

The CLI, the docs and a test read ``SETTINGS``, which is derived from the dataclass, so a
setting is declared exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any


def _setting(default: Any, help_text: str) -> Any:
    return field(default=default, metadata={"help": help_text})


@dataclass(frozen=True)
class Settings:
    bm25_k1: float = _setting(1.5, "BM25 term-frequency saturation (Lucene variant).")
    bm25_b: float = _setting(0.75, "BM25 length normalisation.")
    fusion: str = _setting(
        "blend", "Hybrid fusion: 'blend' (weighted, min-max) or 'rrf' (reciprocal rank).")
    fusion_alpha: float = _setting(0.5, "Weight of the dense score in the 'blend' fusion.")
    rrf_k: int = _setting(60, "The k constant of reciprocal-rank fusion.")
    fusion_depth: int = _setting(100, "Candidates taken from each ranking before fusion.")
    default_k: int = _setting(10, "Hits returned when -k is not given.")
    chunk_chars: int = _setting(800, "Target characters per chunk for text and books.")
    chunk_overlap: int = _setting(100, "Characters of overlap between consecutive chunks.")
    embed_batch: int = _setting(32, "Texts per embedding batch.")
    korean_share_for_e5: float = _setting(
        0.2, "Share of Korean nodes above which e5 embeds an import.")

    def with_(self, **changes: Any) -> Settings:
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise KeyError(f"unknown settings: {sorted(unknown)}")
        return replace(self, **changes)


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(f.name, f.default, f.metadata["help"]) for f in fields(Settings)
)
