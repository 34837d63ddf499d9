"""Settings as data: every setting has a default and a help text, and unknown names fail."""

from __future__ import annotations

import pytest

from excerpt.settings import SETTINGS, Settings


def test_table_lists_every_setting_with_help() -> None:
    defaults = Settings()
    assert len(SETTINGS) >= 10
    for setting in SETTINGS:
        assert getattr(defaults, setting.name) == setting.default
        assert setting.help.strip().endswith(".")


def test_with_rejects_unknown_names() -> None:
    assert Settings().with_(fusion="blend").fusion == "blend"
    with pytest.raises(KeyError):
        Settings().with_(no_such_setting=1)
