"""Settings as data: every setting has a default and a help text, and unknown names fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.errors import InputError
from excerpt.settings import SETTINGS, Settings, load_settings


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


def test_readme_settings_example_loads(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    block = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "settings.yaml"
    path.write_text(block, "utf-8")
    loaded = load_settings(path)
    assert loaded.graph_edge_allowlist == Settings().graph_edge_allowlist
    assert loaded.log_dir == "log/excerpt"


def test_toml_and_yaml_agree(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text('graph_max_depth = 1\ngraph_edge_allowlist = ["Calls"]\n'
                                     "bm25_k1 = 1\n")
    (tmp_path / "s.yml").write_text("graph_max_depth: 1\ngraph_edge_allowlist: [Calls]\n"
                                    "bm25_k1: 1\n")
    a, b = load_settings(tmp_path / "s.toml"), load_settings(tmp_path / "s.yml")
    assert a == b
    assert a.graph_max_depth == 1 and a.graph_edge_allowlist == ("Calls",) and a.bm25_k1 == 1


@pytest.mark.parametrize(("text", "message"), [
    ("no_such: 1\n", "unknown setting 'no_such'"),
    ("answer_min_coverage: 0.5\n", "is gone: .*answer_min_confidence"),
    ("graph_max_depth: 1.5\n", "graph_max_depth must be int"),
    ("graph_max_depth: true\n", "graph_max_depth must be int"),
    ("fusion: 3\n", "fusion must be str"),
    ("graph_edge_allowlist: Calls\n", "must be a list of strings"),
    ("[1, 2]\n", "name: value pairs"),
    ("a: [unclosed\n", "not valid YAML"),
])
def test_bad_settings_files_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_settings(path)


def test_missing_file_and_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")
    (tmp_path / "s.ini").write_text("x=1")
    with pytest.raises(InputError, match=r"toml, \.yaml or \.yml"):
        load_settings(tmp_path / "s.ini")


def test_yaml_booleans_get_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("graph_edge_allowlist: [Calls, On]\n")
    with pytest.raises(InputError, match="quote them"):
        load_settings(path)
    path.write_text('graph_edge_allowlist: [Calls, "On"]\n')
    assert load_settings(path).graph_edge_allowlist == ("Calls", "On")
