"""Read views over a real `excerpt serve` and the CLI: snapshot listings and the filters a
search reports show only snapshots the caller may see (issue 15 item 1), and a metadata filter
of the wrong type or on a security field is a 400 / exit 1, never a 500 or a traceback
(item 12)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from tests.http import call

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app
from excerpt.settings import Settings

PUBLIC = "The cafeteria serves lunch from noon until two in the afternoon on weekdays."
HIDDEN = "Layoffs: the lunch staff of the cafeteria are cut by half in March."
LAYOFFS = "layoffs_2025_q1.txt"

Service = tuple[str, dict[str, str], Path]


def excerpt(home: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--home", str(home), *args], obj={"json": False})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory,
            serving: Callable[[Any], AbstractContextManager[str]]) -> Iterator[Service]:
    """A public book in ``c``; the layoffs file is uploaded (tag hr) by an ingester."""
    root = tmp_path_factory.mktemp("views")
    (root / "cafeteria.txt").write_text(PUBLIC, "utf-8")
    home = root / "home"
    engine = Engine(home, Settings(log_dir=str(root / "logs")))
    engine.ingest(root / "cafeteria.txt", collection="c", embedder="none", source="public")
    keys: dict[str, str] = {}
    for args in (["reader"], ["hr", "--acl-tag", "hr"], ["ivy", "--role", "ingester"],
                 ["root", "--role", "admin"]):
        code, out, _ = excerpt(home, "keys", "add", *args, "--json")
        assert code == 0, out
        keys[args[0]] = json.loads(out)["key"]
    app = create_app(engine, KeyRing.load(home / "keys.yaml"))
    with serving(app) as url:
        status, done = call(f"{url}/v1/ingest?filename={LAYOFFS}&collection=c&acl_tag=hr"
                            "&embedder=none", keys["ivy"], HIDDEN.encode())
        assert status == 200 and done["status"] == "completed", done
        yield url, keys, home


# -- item 1: listings and reported filters --------------------------------------------------


def test_a_reader_lists_no_snapshot_it_cannot_see(service: Service) -> None:
    url, keys, _ = service
    status, reader = call(f"{url}/v1/snapshots?collection=c", keys["reader"])
    assert status == 200
    assert [s["source"] for s in reader["snapshots"]] == ["public"]
    assert "layoffs" not in json.dumps(reader)
    _, hr = call(f"{url}/v1/snapshots?collection=c", keys["hr"])
    assert [s["source"] for s in hr["snapshots"]] == ["public", f"upload:{LAYOFFS}"]
    assert [(s["documents"], s["nodes"]) for s in hr["snapshots"]] == [(1, 1), (1, 1)]
    _, root = call(f"{url}/v1/snapshots?collection=c&all_access=true", keys["root"])
    assert len(root["snapshots"]) == 2  # an admin key asking for all access sees all


def test_search_filters_name_only_snapshots_the_caller_may_see(service: Service) -> None:
    url, keys, home = service
    _, listing = call(f"{url}/v1/snapshots?collection=c", keys["hr"])
    hidden = next(s["snapshot_id"] for s in listing["snapshots"] if "layoffs" in s["source"])
    status, reader = call(f"{url}/v1/search?q=lunch&collection=c&mode=bm25", keys["reader"])
    assert status == 200 and hidden not in json.dumps(reader["filters"])
    assert len(reader["filters"]["snapshot_ids"]) == 1
    _, hr = call(f"{url}/v1/search?q=lunch&collection=c&mode=bm25", keys["hr"])
    assert hidden in hr["filters"]["snapshot_ids"]
    applied = [json.loads(line.split(": ", 1)[1]) for path in (home.parent / "logs").glob("*.log")
               for line in path.read_text("utf-8").splitlines()
               if line.startswith("Applied filters: ")]
    by_tags = {tuple(a["acl_tags_any"]): json.dumps(a) for a in applied}
    assert hidden not in by_tags[()] and "layoffs" not in by_tags[()]  # the reader's trace
    assert hidden in by_tags[("hr",)] and "layoffs" in by_tags[("hr",)]
    status, body = call(f"{url}/v1/search?q=lunch&collection=c&snapshot={hidden}",
                        keys["reader"])
    assert status == 404 and hidden in body["error"]  # as if it did not exist: no probe


def test_the_cli_lists_for_the_principal_it_is_given(service: Service) -> None:
    _, _, home = service
    code, out, _ = excerpt(home, "snapshots", "--collection", "c", "--json")
    assert code == 0 and [s["source"] for s in json.loads(out)["snapshots"]] == ["public"]
    code, out, _ = excerpt(home, "snapshots", "--collection", "c", "--acl-tag", "hr", "--json")
    assert code == 0 and len(json.loads(out)["snapshots"]) == 2
    code, out, _ = excerpt(home, "snapshots", "--collection", "c", "--all-access", "--json")
    assert code == 0 and len(json.loads(out)["snapshots"]) == 2
    assert json.loads(out)["all_access"] is True


# -- item 12: metadata filters -------------------------------------------------------------

BAD_WHERE = ["x=[1]", 'acl_tags=["finance"]', "x=null", 'x={"a":1}', "classification_labels=a"]


@pytest.mark.parametrize("where", BAD_WHERE)
def test_a_bad_where_is_a_400_on_every_route(service: Service, where: str) -> None:
    url, keys, _ = service
    status, body = call(f"{url}/v1/search?q=lunch&collection=c&where={quote(where)}",
                        keys["reader"])
    assert (status, body["kind"]) == (400, "input"), body
    assert "where" in body["error"]
    ask = {"question": "When is lunch?", "collection": "c", "mode": "bm25", "where": [where]}
    status, body = call(f"{url}/v1/ask", keys["reader"], ask)
    assert (status, body["kind"]) == (400, "input"), body
    status, body = call(f"{url}/v1/ask/stream", keys["reader"], ask)
    assert (status, body["kind"]) == (400, "input"), body
    status, body = call(f"{url}/v1/ask/stream", keys["reader"],
                        {**ask, "where": [], "collection": "nowhere"})
    assert (status, body["kind"]) == (404, "not_found"), body


@pytest.mark.parametrize("where", BAD_WHERE)
def test_a_bad_where_is_exit_1_on_the_cli(service: Service, where: str) -> None:
    _, _, home = service
    for command in (["search", "lunch"], ["ask", "When is lunch?"]):
        code, out, err = excerpt(home, *command, "--collection", "c", "--mode", "bm25",
                                 "--where", where)
        assert code == 1, (out, err)
        assert err.startswith("excerpt: where ") and "Traceback" not in out + err
