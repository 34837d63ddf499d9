"""``segment_has_code``: whether a segment holds any code node, the test a search uses to skip
reading the query for code names. It must never say "no" for a segment with code (the skip
would lose a pin), sorted ids (bisection) or not (a scan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.retrieve.identifiers import segment_has_code
from excerpt.store.segment import Segment, write_segment


def segment(folder: Path, ids: list[str]) -> Segment:
    write_segment(folder, ids, [["word"] for _ in ids], [() for _ in ids], [() for _ in ids],
                  None, {})
    return Segment(folder, "s")


@pytest.mark.parametrize(("ids", "expected"), [
    (["a", "b", "z"], False),
    (["CS", "CS;x", "SQL", "SQLx"], False),  # the prefixes' neighbours in sorted order
    (["A:x", "CS:Contoso.Order", "b"], True),
    (["1", "SQL:dbo.Tenants"], True),  # the last id
    (["CS:A"], True),
    (["규정 제1조", "교원인사규정 제15조"], False),  # not in id order: scanned
    (["z", "SQL:dbo.T", "a"], True),  # not in id order: scanned
    ([], False),
])
def test_code_is_found_whatever_the_order(tmp_path: Path, ids: list[str],
                                          expected: bool) -> None:
    seg = segment(tmp_path / "seg", ids)
    assert segment_has_code(seg) is expected
    assert segment_has_code(seg) is expected  # kept
