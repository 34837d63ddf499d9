"""The CLI's commands load with their module when looked up (issue 20, item 4), yet the
group still lists, shows and runs every one of them, each from the module it names."""

from __future__ import annotations

import json
import subprocess
import sys

from excerpt.cli.main import COMMANDS, cli

PROBE = """
import json, sys
from excerpt.cli.main import cli
before = sorted(m for m in sys.modules if m.startswith("excerpt.cli."))
cli.commands["sync"]
after_one = sorted(m for m in sys.modules if m.startswith("excerpt.cli."))
names = sorted(cli.commands)
print(json.dumps({"before": before, "after_one": after_one, "names": names}))
"""


def test_a_lookup_imports_only_its_module_and_a_listing_all() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True).stdout
    seen = json.loads(out)
    modules = {f"excerpt.cli.{m}" for m in COMMANDS.values()}
    assert not modules & set(seen["before"])
    assert modules & set(seen["after_one"]) == {"excerpt.cli.sync_cmd"}
    assert set(COMMANDS) | {"ingest", "diff", "snapshot-set", "search"} == set(seen["names"])


def test_each_command_comes_from_the_module_named_for_it() -> None:
    for name, module in COMMANDS.items():
        command = cli.commands[name]
        assert command.callback is not None
        assert command.callback.__module__ == f"excerpt.cli.{module}", name
    defined_here = {n for n, c in cli.commands.items()
                    if c.callback is not None and c.callback.__module__ == "excerpt.cli.main"}
    assert defined_here == {"ingest", "diff", "snapshot-set", "search"}  # none unmapped


def test_unknown_commands_stay_unknown() -> None:
    assert "nope" not in cli.commands
    assert cli.commands.get("nope") is None
