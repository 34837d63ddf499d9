"""The index behind :func:`excerpt.analyze.kiwi_entries.could_match`: built once into the
cache directory, read back by the next process, rebuilt when damaged, and no error when the
directory cannot be written (each process then builds its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json
from excerpt.analyze import kiwi_entries as k
answers = [k.could_match(t) for t in ("학생 징계 절차", "부트캠프 과정", "잭바우어")]
print(json.dumps({"answers": answers, "path": str(k.cache_path())}))
"""
ANSWERS = [False, True, True]


def probe(cache: Path) -> dict[str, object]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          check=True, env=env)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_the_index_is_built_once_then_read_and_rebuilt_when_damaged(tmp_path: Path) -> None:
    first = probe(tmp_path)
    path = Path(str(first["path"]))
    assert first["answers"] == ANSWERS
    assert path.parent == tmp_path / "excerpt" and path.stat().st_size > 1_000_000
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    built = path.stat().st_mtime_ns
    second = probe(tmp_path)
    assert second["answers"] == ANSWERS and path.stat().st_mtime_ns == built  # read, not built
    path.write_bytes(path.read_bytes()[:1000])  # damaged: cut short
    assert probe(tmp_path)["answers"] == ANSWERS
    assert path.stat().st_size > 1_000_000  # rebuilt whole


@pytest.mark.slow
def test_an_unwritable_cache_is_no_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert probe(blocked)["answers"] == ANSWERS
