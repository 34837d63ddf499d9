"""The caches an access keeps per view (retrieve/access.py) stay bounded: past
``SHADOW_VIEWS`` sets of snapshots the oldest is forgotten, and a set asked again is kept."""

from __future__ import annotations

from excerpt.retrieve import access
from excerpt.store.base import ViewKey


def test_a_view_cache_forgets_the_oldest_past_its_bound() -> None:
    cache: dict[ViewKey, int] = {}
    keys = [ViewKey((f"s{i}",)) for i in range(access.SHADOW_VIEWS + 3)]
    for i, key in enumerate(keys):
        access._remember(cache, key, i)
    assert len(cache) == access.SHADOW_VIEWS
    assert list(cache) == keys[3:]
    access._remember(cache, keys[-1], -1)  # replaced in place: nothing else forgotten
    assert len(cache) == access.SHADOW_VIEWS and cache[keys[-1]] == -1 and keys[3] in cache
