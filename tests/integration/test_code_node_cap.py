"""The code node cap is a setting (``code_max_node_tokens``), honoured by every ingest."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.settings import Settings
from excerpt.tokens import count_tokens
from excerpt.types import Filters, Principal

BODY = "\n".join(f"        total += Compute({i}, total) * {i};" for i in range(60))
SOURCE = f"""namespace Shop
{{
    public class Ledger
    {{
        public int Sum()
        {{
            var total = 0;
{BODY}
            return total;
        }}

        private static int Compute(int a, int b) {{ return a + b; }}
    }}
}}
"""


def test_the_setting_caps_every_code_node(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "Ledger.cs").write_text(SOURCE, encoding="utf-8")
    sizes = {}
    for cap in (512, 96):
        engine = Engine(tmp_path / f"home{cap}", Settings(code_max_node_tokens=cap))
        result = engine.ingest(folder, collection="c", fmt="code", embedder="none")
        assert result.snapshot_id is not None
        ids = list(engine.store.segment(result.snapshot_id).ids)
        nodes = engine.store.nodes_by_id(result.snapshot_id, ids)
        sizes[cap] = [count_tokens(n.text) for n in nodes]
        assert max(sizes[cap]) <= cap
        hits = engine.search("Ledger.Sum", Filters("c"), Principal.admin(), "bm25", 3).hits
        assert hits[0].node.id == "CS:Shop.Ledger.Sum"  # the first part keeps the member's id
        engine.close()
    assert len(sizes[96]) > len(sizes[512])  # the member was cut into parts


def test_a_cap_below_one_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    settings = tmp_path / "s.yml"
    settings.write_text("code_max_node_tokens: 0\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "Ledger.cs").write_text(SOURCE, encoding="utf-8")
    out = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "--settings", str(settings),
                                   "ingest", str(tmp_path / "src"), "--format", "code",
                                   "--embedder", "none", "--no-progress"])
    assert out.exit_code != 0 and "at least 1" in out.output
