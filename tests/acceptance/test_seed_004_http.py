"""Seed 004 over HTTP: bootstrap, the retrieval cases, graph cases and the security matrices
asked of `excerpt serve` with API keys, never of the engine directly.

By default the service runs in this process, on the session's store of both releases. The
integration runner (tools/run_retrieval_integration_tests.sh) starts a real `excerpt serve`
process instead and sets ``EXCERPT_SERVICE_URL`` and ``EXCERPT_SERVICE_KEYS`` (its keys file):
this module adds its keys to that file with `excerpt keys add`, and the server reads them from
the next request on. The security matrices' bundle is uploaded through ``POST /v1/ingest``.
"""

from __future__ import annotations

import io
import json
import os
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app
from excerpt.types import SEARCH_MODES

from .conftest import FAKE_SET, FakeEnterprise
from .test_seed_004_graph import ABC, PAY
from .test_seed_004_retrieval import CASES, markers_found
from .test_seed_004_security import SCENARIOS, TABLE, allowed, write_bundle


@dataclass(frozen=True)
class Service:
    url: str
    keys: dict[str, str]  # role or scenario -> API key
    fe: FakeEnterprise
    sec: str  # the collection the matrices' bundle was uploaded to

    def call(self, who: str, path: str, body: Any = None,
             content_type: str = "application/json") -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else (
            json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(
            self.url + path, data, {"Authorization": f"Bearer {self.keys[who]}",
                                    "Content-Type": content_type},
            method="POST" if data is not None else "GET")
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def ok(self, who: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        status, payload = self.call(who, path, body, **kwargs)
        assert status == 200, (path, status, payload)
        return payload

    def search(self, who: str, query: str, **params: Any) -> Any:
        return self.ok(who, "/v1/search?" + urllib.parse.urlencode({"q": query, **params},
                                                                     doseq=True))


def add_key(keys_file: Path, name: str, *args: str) -> str:
    out = CliRunner().invoke(cli, ["keys", "add", name, "--keys", str(keys_file), *args,
                                   "--json"])
    assert out.exit_code == 0, out.output
    return str(json.loads(out.output)["key"])


def zipped(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"Release_SEC/{path.relative_to(folder)}")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def service(fake_enterprise: FakeEnterprise, tmp_path_factory: pytest.TempPathFactory,
            serving: Callable[[Any], AbstractContextManager[str]]) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("seed004-http")
    external = os.environ.get("EXCERPT_SERVICE_URL")
    keys_file = Path(os.environ["EXCERPT_SERVICE_KEYS"]) if external else root / "keys.yaml"
    run = uuid.uuid4().hex[:8]  # names of this run's keys and collection, unique per server
    keys = {"admin": add_key(keys_file, f"admin-{run}", "--role", "admin"),
            "ingester": add_key(keys_file, f"ingester-{run}", "--role", "ingester"),
            "reader": add_key(keys_file, f"reader-{run}")}
    for scenario, (principal, _, _) in SCENARIOS.items():
        args = [a for t in sorted(principal.acl_tags) for a in ("--acl-tag", t)]
        args += [a for c in sorted(principal.clearances) for a in ("--clearance", c)]
        keys[scenario] = add_key(keys_file, f"{scenario}-{run}", *args)
    started = nullcontext(external) if external else serving(
        create_app(Engine(fake_enterprise.home), KeyRing.load(keys_file)))
    with started as url:
        service = Service(str(url), keys, fake_enterprise, f"sec-{run}")
        upload = zipped(write_bundle(root / "bundle"))
        done = service.ok("ingester", f"/v1/ingest?filename=Release_SEC.zip"
                          f"&collection={service.sec}&embedder=minilm", upload,
                          content_type="application/zip")
        assert done["status"] == "completed" and done["nodes"] == len(TABLE)
        yield service


def test_http_b1_snapshot_set_names_both_releases(service: Service) -> None:
    listing = service.ok("reader", "/v1/snapshots?collection=code")
    sets = {s["name"]: s["snapshot_ids"] for s in listing["sets"]}
    assert sets[FAKE_SET] == [service.fe.snapshot_a, service.fe.snapshot_b]


@pytest.mark.parametrize(("case", "mode", "query", "markers", "sources"), CASES,
                         ids=[c[0] for c in CASES])
def test_http_retrieval_case(service: Service, case: str, mode: str, query: str,
                             markers: list[str], sources: list[str]) -> None:
    scope = {"collection": "code", "snapshot": service.fe.snapshot_a, "all_access": True}
    result = service.search("admin", query, mode=mode, k=10, **scope)
    assert result["hits"], f"case {case}: no seed node"
    texts = service.ok("admin", "/v1/context", {
        "seeds": [h["id"] for h in result["hits"]], "budget_tokens": 100_000, **scope})
    assert texts["node_texts"] and all(t["text"].strip() for t in texts["node_texts"])
    assert markers_found(markers, [t["text"] for t in texts["node_texts"]]), case
    files = {h["source"].rsplit("/", 1)[-1] for h in result["hits"]}
    assert files & set(sources), f"case {case}: none of {sources} in {sorted(files)}"


def test_http_all_access_needs_an_admin_key(service: Service) -> None:
    status, body = service.call("reader", "/v1/search?q=payments&collection=code"
                                "&all_access=true")
    assert status == 403 and body["kind"] == "forbidden"


@pytest.mark.parametrize("case", sorted(ABC))
def test_http_graph_allowlist_cases(service: Service, case: str) -> None:
    allow, nodes, edges = ABC[case]
    result = service.ok("admin", "/v1/graph", {
        "seeds": [PAY], "collection": "code", "snapshot": service.fe.snapshot_a,
        "max_depth": 1, "allow": list(allow), "all_access": True})
    assert {n["id"] for n in result["nodes"]} == nodes
    assert {(e["from_id"], e["relation"], e["to_id"]) for e in result["edges"]} == edges


@pytest.mark.parametrize("mode", SEARCH_MODES)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_http_search_returns_exactly_what_the_key_may_see(service: Service, scenario: str,
                                                          mode: str) -> None:
    principal, visible, hidden = SCENARIOS[scenario]
    result = service.search(scenario, "general ledger entries", collection=service.sec,
                            mode=mode, k=50)
    got = {h["id"] for h in result["hits"]}
    assert got == allowed(principal) and visible <= got and not hidden & got


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_http_graph_and_context_are_trimmed_per_key(service: Service, scenario: str) -> None:
    principal, _, hidden = SCENARIOS[scenario]
    tree = service.ok(scenario, "/v1/graph", {"seeds": ["ROOT"], "collection": service.sec})
    assert {n["id"] for n in tree["nodes"]} == allowed(principal)
    assert not any(h in json.dumps(tree) for h in hidden)
    texts = service.ok(scenario, "/v1/context", {"seeds": sorted(TABLE),
                                                 "collection": service.sec,
                                                 "budget_tokens": 100_000})
    assert {n["id"] for n in texts["node_texts"]} == allowed(principal)
    assert not any(h in json.dumps(texts["node_texts"]) for h in hidden)


def test_http_a_key_cannot_widen_its_rights(service: Service) -> None:
    query = "/v1/search?q=ledger&mode=bm25&k=50&collection=" + service.sec
    plain = service.ok("reader", query)
    widened = service.ok("reader", query + "&acl_tag=finance&acl_tag=hr&clearance=secret")
    assert {h["id"] for h in plain["hits"]} == {h["id"] for h in widened["hits"]} == {
        "ROOT", "CLS_NONE"}
