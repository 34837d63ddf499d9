"""Settings as data: the SETTINGS table, the Settings dataclass and docs agree."""

from __future__ import annotations

from dataclasses import fields

import pytest

from excerpt.settings import SETTINGS, Settings


def test_table_and_dataclass_agree() -> None:
    defaults = {f.name: f.default for f in fields(Settings)}
    assert {s.name: s.default for s in SETTINGS} == defaults
    assert all(s.help.strip() for s in SETTINGS)


def test_with_rejects_unknown_names() -> None:
    assert Settings().with_(fusion="blend").fusion == "blend"
    with pytest.raises(KeyError):
        Settings().with_(no_such_setting=1)
