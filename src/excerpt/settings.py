"""Pipeline settings as data: (name, default, help). The CLI, the docs and a test read this list."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("bm25_k1", 1.5, "BM25 term-frequency saturation (Lucene variant)."),
    Setting("bm25_b", 0.75, "BM25 length normalisation."),
    Setting("fusion", "rrf", "Hybrid fusion: 'rrf' (reciprocal rank) or 'blend' (weighted)."),
    Setting("fusion_alpha", 0.5, "Weight of the dense score in the 'blend' fusion."),
    Setting("rrf_k", 60, "The k constant of reciprocal-rank fusion."),
    Setting("fusion_depth", 100, "Candidates taken from each ranking before fusion."),
    Setting("default_k", 10, "Hits returned when -k is not given."),
    Setting("chunk_chars", 800, "Target characters per chunk for text and books."),
    Setting("chunk_overlap", 100, "Characters of overlap between consecutive chunks."),
    Setting("embed_batch", 32, "Texts per embedding batch."),
    Setting("korean_share_for_e5", 0.2, "Share of Korean nodes above which e5 embeds an import."),
)


@dataclass(frozen=True)
class Settings:
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    fusion: str = "rrf"
    fusion_alpha: float = 0.5
    rrf_k: int = 60
    fusion_depth: int = 100
    default_k: int = 10
    chunk_chars: int = 800
    chunk_overlap: int = 100
    embed_batch: int = 32
    korean_share_for_e5: float = 0.2

    def with_(self, **changes: Any) -> Settings:
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise KeyError(f"unknown settings: {sorted(unknown)}")
        return replace(self, **changes)
