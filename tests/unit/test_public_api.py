"""The public API is what ``excerpt.__all__`` names, and every name there exists."""

from __future__ import annotations

import excerpt


def test_all_names_exist_and_are_the_documented_set() -> None:
    assert sorted(excerpt.__all__) == ["AskOptions", "AskResult", "Engine", "ExcerptError",
                                       "Filters", "Principal", "SearchResult", "Settings"]
    for name in excerpt.__all__:
        assert getattr(excerpt, name) is not None
