"""An import's rights never widen a record's access, end to end on both stores: a bundle
imported with `--acl-tag finance` keeps its hr-only record hidden from finance, and its
untagged record takes the import's tag."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.errors import NotFoundError
from excerpt.types import Filters, Principal


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    engine = Engine(tmp_path / "home", store_url=url)
    yield engine
    engine.close()


def _bundle(tmp: Path) -> Path:
    chunks = [{"Id": "C1", "File": "Layoffs.cs", "Text": "class Layoffs { void PlanCuts() {} }",
               "acl_tags_any": ["hr"]},
              {"Id": "C2", "File": "Budget.cs", "Text": "class Budget { void PlanCuts() {} }"}]
    files = {"repo_meta.json": json.dumps({"Repo": "Shop", "SnapshotId": "v1"}),
             "regular_code_bundle/chunks.json": json.dumps(chunks)}
    for name, text in files.items():
        (tmp / "b" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "b" / name).write_text(text, "utf-8")
    return tmp / "b"


def test_import_tags_do_not_widen_on_either_store(engine: Engine, tmp_path: Path) -> None:
    engine.ingest(_bundle(tmp_path), collection="c", acl_tags=["finance"], embedder="none")

    def seen(*tags: str) -> set[str]:
        try:
            hits = engine.search("PlanCuts", Filters("c"), Principal(frozenset(tags)),
                                 "bm25").hits
        except NotFoundError:  # a collection the caller sees nothing of is not there to it
            return set()
        return {h.node.id for h in hits}

    assert seen("finance") == {"C2"}  # the hr record stays hr's
    assert seen("hr") == {"C1"}
    assert seen() == set()  # the untagged record is finance's now, not public
