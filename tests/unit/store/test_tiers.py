"""The merge policy (store/tiers.py): levels by powers of the factor, merges only within a key,
the smallest first up to AT_ONCE, segments mostly of deleted rows rewritten first."""

from __future__ import annotations

from excerpt.store.tiers import SegmentStat, level, next_merge


def stats(rows: list[int], key: str = "k") -> list[SegmentStat]:
    return [SegmentStat(f"s{i:04d}", r, key) for i, r in enumerate(rows)]


def test_levels_are_powers_of_the_factor_above_the_floor() -> None:
    assert [level(r) for r in (0, 1, 999, 1000, 9999, 10_000, 10**6)] == [3, 3, 3, 3, 3, 4, 6]
    assert level(8, factor=2) == 9  # the floor, 1,000 rows, is 2 ** 9.97


def test_a_level_merges_when_it_holds_factor_segments() -> None:
    assert next_merge(stats([1] * 9)) == []
    assert next_merge(stats([1] * 10)) == [f"s{i:04d}" for i in range(10)]
    assert next_merge(stats([5_000, 3, 7_000] + [20_000] * 9)) == []  # level 3 x 3, 4 x 9


def test_a_tidy_pass_leaves_at_most_one_segment_under_the_floor() -> None:
    leftovers = stats([5, 300, 40, 5_000, 12_000])  # what a pass left
    assert next_merge(leftovers) == []
    assert next_merge(leftovers, tidy=True) == ["s0000", "s0002", "s0001"]  # the small ones
    assert next_merge(stats([5, 5_000]), tidy=True) == []  # one small one alone stays


def test_the_lowest_full_level_goes_first_smallest_first_at_most_at_once() -> None:
    rows = [15_000] * 10 + [5, 3, 9, 1, 2, 7, 4, 8, 6, 3, 2]
    picked = next_merge(stats(rows), at_once=4)
    assert picked == ["s0013", "s0014", "s0020", "s0011"]  # rows 1, 2, 2, 3 (ties by name)


def test_segments_of_another_analyzer_or_model_never_merge_together() -> None:
    mixed = stats([1] * 6, "minilm") + [SegmentStat(f"e{i}", 1, "e5") for i in range(6)]
    assert next_merge(mixed) == []
    assert len(next_merge(mixed, factor=6)) == 6


def test_a_segment_mostly_of_deleted_rows_is_rewritten_alone_first() -> None:
    doomed = SegmentStat("big", 80, "k", dead=20)  # 20 % deleted
    kept = SegmentStat("fine", 95, "k", dead=5)
    assert next_merge([kept, doomed, *stats([1] * 10)]) == ["big"]
    assert next_merge([kept]) == []


def test_large_segments_stay_and_a_merge_writes_a_bounded_number_of_rows() -> None:
    big = stats([1_000_000] * 10)  # ten large imports: never rewritten behind anyone's back
    assert next_merge(big) == []
    many = stats([60_000] * 20)  # level 4, full: as many as fit in one merge's rows
    assert next_merge(many) == [f"s{i:04d}" for i in range(16)]  # 16 x 60,000 <= 1,000,000
