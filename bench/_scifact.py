"""SciFact as every benchmark loads it: from ``$EXCERPT_DATA`` (default ../shared/data)."""

from __future__ import annotations

import os
from pathlib import Path

from excerpt.evaluate.beir import BeirDataset, load_beir_dataset

DATA = Path(os.environ.get("EXCERPT_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
HOME = Path("bench/out/scifact-home")  # the embedded store the SciFact benchmarks share


def scifact(split: str = "train", limit: int = 0) -> tuple[BeirDataset, dict[str, str]]:
    """The dataset and its first ``limit`` queries (0: all); exits saying where it looked when
    SciFact is not there."""
    folder = DATA / "scifact"
    if not folder.exists():
        raise SystemExit(f"SciFact not found at {folder} (set EXCERPT_DATA)")
    data = load_beir_dataset(folder, split)
    return data, dict(list(data.queries.items())[: limit or None])
