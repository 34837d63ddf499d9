"""Segment edges: CSR by source ordinal, targets outside the snapshot kept, sources outside not."""

from __future__ import annotations

from pathlib import Path

from excerpt.store.segment import Segment, write_segment


def test_outgoing_edges_round_trip(tmp_path: Path) -> None:
    ids = ["a", "b", "c"]
    edges = [("b", "Calls", "c"), ("a", "WritesTo", "SQL:dbo.t"), ("a", "Calls", "b"),
             ("zz", "Calls", "a"), ("a", "Calls", "b")]
    write_segment(tmp_path / "seg", ids, [["x"]] * 3, [()] * 3, [()] * 3, None, {}, edges)
    seg = Segment(tmp_path / "seg", "s1")
    assert seg.has_edges
    assert seg.outgoing(0) == [("Calls", "b"), ("WritesTo", "SQL:dbo.t")]
    assert seg.outgoing(1) == [("Calls", "c")]
    assert seg.outgoing(2) == []
    assert seg.meta["relations"] == ["Calls", "WritesTo"]


def test_segment_without_edges(tmp_path: Path) -> None:
    write_segment(tmp_path / "seg", ["a"], [["x"]], [()], [()], None, {})
    seg = Segment(tmp_path / "seg", "s1")
    assert seg.outgoing(0) == []
