"""A folder of documents reports its load file by file (the CLI's progress bar per stage)."""

from __future__ import annotations

from pathlib import Path

from excerpt.engine import Engine


def test_the_load_stage_counts_the_files_read(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"page{i}.html").write_text(
            f"<html><body><main><h1>Page {i}</h1><p>Text of page {i}.</p></main></body></html>",
            "utf-8")
    seen: list[tuple[str, int, int]] = []
    engine = Engine(tmp_path / "home")
    engine.ingest(folder, collection="c", embedder="none",
                  progress=lambda stage, done, total: seen.append((stage, done, total)))
    engine.close()
    loads = [(done, total) for stage, done, total in seen if stage == "load"]
    assert loads[1:4] == [(1, 3), (2, 3), (3, 3)]  # after the pipeline's own (0, 1)
