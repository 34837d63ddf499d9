"""`excerpt serve` over real HTTP: keys and principals, two keys of different rights on every
route built so far, one JSON error shape, limits."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.http import add_keys, error_shaped

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app
from excerpt.settings import Settings

PUBLIC = ("The cafeteria serves lunch from noon until two in the afternoon on weekdays. "
          "Visitors may buy a lunch ticket at the front desk of the main building.")
SECRET = ("The merger with Northwind closes in March; the board approved the lunch budget cut "
          "and the cafeteria staff reduction as part of the merger plan for the afternoon shift.")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory,
            serving: Callable[[Any], AbstractContextManager[str]]
            ) -> Iterator[tuple[str, dict[str, str], Path]]:
    root = tmp_path_factory.mktemp("service")
    (root / "public").mkdir()
    (root / "public" / "cafeteria.txt").write_text(PUBLIC, "utf-8")
    (root / "secret").mkdir()
    (root / "secret" / "merger.txt").write_text(SECRET, "utf-8")
    home = root / "home"
    engine = Engine(home, Settings(log_dir=str(root / "logs")))  # traces of every request
    engine.ingest(root / "public", collection="c", embedder="none", source="public")
    engine.ingest(root / "secret", collection="c", embedder="none", source="secret",
                  acl_tags=["board"], classification_labels=["secret"])
    keys = add_keys(home)
    text = (home / "keys.yaml").read_text("utf-8")
    assert all(key not in text for key in keys.values())  # only digests are stored
    app = create_app(engine, KeyRing.load(home / "keys.yaml"), ingest_roots=[root / "public"])
    with serving(app) as url:
        yield url, keys, root


def call(url: str, key: str | None = None, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data, headers, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_health_needs_no_key_and_everything_else_does(service: tuple[str, dict[str, str],
                                                                     Path]) -> None:
    url, keys, _ = service
    assert call(f"{url}/-/health") == (200, {"status": "ok"})
    search = f"{url}/v1/search?q=lunch&collection=c&mode=bm25"
    for key in (None, "exk_wrong", keys["eve"]):  # none, unknown, revoked
        status, body = call(search, key)
        assert status == 401 and body["kind"] == "unauthorized"
    assert call(search, keys["alice"])[0] == 200
    assert call(f"{url}/-/version", keys["alice"])[0] == 200


def test_two_keys_see_what_their_principals_may(service: tuple[str, dict[str, str],
                                                                Path]) -> None:
    url, keys, _ = service
    search = f"{url}/v1/search?q=lunch+budget+merger&collection=c&mode=bm25"
    _, alice = call(search, keys["alice"])
    _, bob = call(search, keys["bob"])
    assert [h["id"] for h in alice["hits"]] == ["cafeteria.txt:0000"]
    assert "merger.txt:0000" in [h["id"] for h in bob["hits"]]
    _, widened = call(search + "&acl_tag=board&clearance=secret", keys["alice"])
    assert "Northwind" not in json.dumps(widened)  # a request cannot widen its rights
    _, narrowed = call(search + "&acl_tag=none", keys["bob"])
    assert "Northwind" not in json.dumps(narrowed)  # but it can narrow them
    status, body = call(search + "&all_access=true", keys["alice"])
    assert status == 403 and body["kind"] == "forbidden"
    _, everything = call(search + "&all_access=true", keys["root"])
    assert "merger.txt:0000" in [h["id"] for h in everything["hits"]]


def test_ask_and_its_provenance_keep_the_secret(service: tuple[str, dict[str, str],
                                                                Path]) -> None:
    url, keys, _ = service
    body = {"question": "What did the board decide about the cafeteria lunch budget?",
            "collection": "c", "mode": "bm25", "explain": True, "rerank": "features"}
    status, alice = call(f"{url}/v1/ask", keys["alice"], body)
    assert status == 200 and {"answer", "quotes", "citations", "provenance"} <= set(alice)
    assert "Northwind" not in json.dumps(alice) and "merger.txt" not in json.dumps(alice)
    _, bob = call(f"{url}/v1/ask", keys["bob"], body)
    assert "merger.txt" in json.dumps(bob)


def test_errors_have_one_shape_and_limits_hold(service: tuple[str, dict[str, str],
                                                               Path]) -> None:
    url, keys, _ = service
    for path in ("/v1/search?q=x&collection=c&mode=psychic", "/v1/search?q=x&k=1000",
                 "/v1/search?q=" + "x" * 2001, "/v1/snapshots?collection=nowhere"):
        status, body = call(url + path, keys["alice"])
        assert status in (400, 404) and error_shaped(body), (path, body)
    status, body = call(f"{url}/v1/ask", keys["alice"], {"collection": "c"})
    assert status == 400 and "question" in body["error"]


def test_a_key_revoked_while_serving_is_refused(service: tuple[str, dict[str, str],
                                                                 Path]) -> None:
    url, _, root = service
    home = root / "home"
    out = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", "temp", "--json"])
    key = json.loads(out.output)["key"]
    assert call(f"{url}/v1/snapshots", key)[0] == 200
    time.sleep(0.01)  # a new mtime
    assert CliRunner().invoke(cli, ["--home", str(home), "keys", "revoke", "temp"]).exit_code == 0
    assert call(f"{url}/v1/snapshots", key)[0] == 401


def test_graph_and_context_never_reach_a_hidden_seed(service: tuple[str, dict[str, str],
                                                                      Path]) -> None:
    url, keys, _ = service
    seeds = {"seeds": ["cafeteria.txt:0000", "merger.txt:0000"], "collection": "c"}
    _, alice = call(f"{url}/v1/graph", keys["alice"], seeds)
    _, bob = call(f"{url}/v1/graph", keys["bob"], seeds)
    assert "merger.txt:0000" in json.dumps(bob["nodes"])
    assert "merger.txt:0000" not in json.dumps(alice["nodes"])
    _, alice_ctx = call(f"{url}/v1/context", keys["alice"], seeds)
    _, bob_ctx = call(f"{url}/v1/context", keys["bob"], seeds)
    assert "Northwind" in json.dumps(bob_ctx) and "Northwind" not in json.dumps(alice_ctx)
    assert [n["id"] for n in alice_ctx["node_texts"]] == ["cafeteria.txt:0000"]


def test_memory_conversations_belong_to_their_key(service: tuple[str, dict[str, str],
                                                                   Path]) -> None:
    url, keys, _ = service
    add = {"intent": "add", "data": {"speaker": "user", "turn": 1, "text": "My PIN is 4321."}}
    assert call(f"{url}/v1/memory/notes/query", keys["bob"], add)[0] == 200
    _, bob = call(f"{url}/v1/memory/notes/query", keys["bob"], {"intent": "read"})
    _, alice = call(f"{url}/v1/memory/notes/query", keys["alice"], {"intent": "read"})
    assert [u["text"] for u in bob["utterances"]] == ["My PIN is 4321."]
    assert alice == {"utterances": []}
    status, body = call(f"{url}/v1/memory/notes/query", keys["bob"], {"intent": "teleport"})
    assert status == 400 and body["kind"] == "input"


def test_the_streamed_answer_ends_with_the_plain_answer(service: tuple[str, dict[str, str],
                                                                        Path]) -> None:
    url, keys, _ = service
    body = {"question": "When is lunch served?", "collection": "c", "mode": "bm25"}
    request = urllib.request.Request(
        f"{url}/v1/ask/stream", json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {keys['alice']}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        events = response.read().decode().strip().split("\n\n")
    names = [e.split("\n")[0].removeprefix("event: ") for e in events]
    assert names[0] == "stage" and names[-1] == "answer"
    streamed = json.loads(events[-1].split("\n", 1)[1].removeprefix("data: "))
    _, plain = call(f"{url}/v1/ask", keys["alice"], body)
    streamed.pop("timings_ms")
    plain.pop("timings_ms")
    assert streamed == plain


def upload(url: str, key: str, name: str, text: str, query: str = "") -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{url}/v1/ingest?filename={name}&collection=up&embedder=none{query}", text.encode(),
        {"Authorization": f"Bearer {key}", "Content-Type": "application/octet-stream"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_uploads_need_an_ingester_key_and_keep_their_labels(
        service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, _ = service
    status, body = upload(url, keys["alice"], "notes.txt", "Kimchi is fermented cabbage.")
    assert status == 403 and body["kind"] == "forbidden"
    status, body = upload(url, keys["ivy"], "notes.txt", "Kimchi is fermented cabbage.")
    assert status == 200 and body["status"] == "completed" and body["nodes"] == 1
    status, body = upload(url, keys["ivy"], "plans.txt", "The kimchi factory opens in May.",
                          "&acl_tag=board")
    assert status == 200
    search = f"{url}/v1/search?q=kimchi&collection=up&mode=bm25"
    assert [h["id"] for h in call(search, keys["alice"])[1]["hits"]] == ["notes.txt:0000"]
    assert len(call(search, keys["bob"])[1]["hits"]) == 2
    assert upload(url, keys["ivy"], "empty.txt", "")[0] == 400
    assert upload(url, keys["ivy"], "..", "x")[0] == 400


def test_server_side_paths_only_for_admins_inside_the_roots(
        service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, root = service
    inside = {"path": str(root / "public"), "collection": "server", "embedder": "none"}
    assert call(f"{url}/v1/ingest/path", keys["ivy"], inside)[0] == 403
    status, body = call(f"{url}/v1/ingest/path", keys["root"], inside)
    assert status == 200 and body["nodes"] == 1
    for path in (str(root / "secret"), str(root / "public" / ".." / "secret"), "/etc"):
        status, body = call(f"{url}/v1/ingest/path", keys["root"], {**inside, "path": path})
        assert status == 403, path


def test_the_openapi_document_describes_every_route(service: tuple[str, dict[str, str],
                                                                     Path]) -> None:
    url, _, _ = service
    status, document = call(f"{url}/openapi.json")
    assert status == 200
    assert {"/v1/search", "/v1/ask", "/v1/ask/stream", "/v1/graph", "/v1/context",
            "/v1/ingest", "/v1/snapshots", "/v1/memory/{conversation}/query",
            "/-/health"} <= set(document["paths"])


ERRORS_OF = {
    ("get", "/-/version"): {"401"},
    ("get", "/v1/whoami"): {"401"},
    ("get", "/metrics"): {"401", "403"},
    ("get", "/v1/search"): {"400", "401", "403", "404"},
    ("post", "/v1/ask"): {"400", "401", "403", "404"},
    ("post", "/v1/ask/stream"): {"400", "401", "403"},
    ("post", "/v1/graph"): {"400", "401", "403", "404"},
    ("post", "/v1/context"): {"400", "401", "403", "404"},
    ("post", "/v1/memory/{conversation}/query"): {"400", "401"},
    ("post", "/v1/ingest"): {"400", "401", "403"},
    ("post", "/v1/ingest/path"): {"400", "401", "403"},
    ("get", "/v1/snapshots"): {"400", "401", "403", "404"},
    ("get", "/v1/collections/{collection}/overview"): {"400", "401", "403", "404"},
}


def test_the_openapi_document_lists_the_errors_and_the_event_stream(
        service: tuple[str, dict[str, str], Path]) -> None:
    url, _, _ = service
    _, document = call(f"{url}/openapi.json")
    error = document["components"]["schemas"]["ErrorBody"]
    assert set(error["required"]) == {"error", "kind"}
    assert set(error["properties"]) == {"error", "kind", "param"}
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    for (method, path), statuses in ERRORS_OF.items():
        operation = document["paths"][path][method]
        assert statuses <= set(operation["responses"]), (path, operation["responses"])
        assert "422" not in operation["responses"]  # validation answers 400
        for status in statuses:
            schema = operation["responses"][status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (path, status)
        assert operation["security"] == [{"bearer": []}]
    assert "security" not in document["paths"]["/-/health"]["get"]
    stream = document["paths"]["/v1/ask/stream"]["post"]["responses"]["200"]["content"]
    assert set(stream) == {"text/event-stream"}


def test_the_api_docs_load_nothing_from_outside_the_server(
        service: tuple[str, dict[str, str], Path]) -> None:
    url, _, _ = service
    with urllib.request.urlopen(f"{url}/docs", timeout=10) as response:
        html = response.read().decode()
    scripts = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "/static/docs.js" in scripts and all(s.startswith(("/", "data:")) for s in scripts)
    with urllib.request.urlopen(f"{url}/static/docs.js", timeout=10) as response:
        script = response.read().decode()
    assert "/openapi.json" in script and "innerHTML" not in script
    assert not re.search(r"https?://", html + script)
    assert call(f"{url}/redoc")[0] == 404  # FastAPI's CDN-loading pages are off


def test_the_web_ui_is_served_with_no_external_assets(service: tuple[str, dict[str, str],
                                                                       Path]) -> None:
    """The page and every module and stylesheet of the package's static folder are served; none
    loads anything from elsewhere or sets HTML from data."""
    import excerpt.server

    url, _, _ = service
    static = Path(excerpt.server.__file__).parent / "static"
    served = ["/"] + [f"/static/{f.name}" for f in sorted(static.iterdir())
                      if f.suffix in (".js", ".css", ".html")]
    assert "/static/excerpt.js" in served and "/static/answer.js" in served
    pages = {}
    for path in served:
        with urllib.request.urlopen(url + path, timeout=10) as response:
            assert response.status == 200
            pages[path] = response.read().decode()
    assert 'id="query"' in pages["/"] and 'id="ask-button"' in pages["/"]
    assert "/v1/ask" in pages["/static/api.js"]
    assert not any("innerHTML" in text for path, text in pages.items() if path.endswith(".js"))
    assert not any("http://" in p or "https://" in p for p in pages.values())


def test_ask_in_a_conversation_over_http(service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, _ = service
    first = {"question": "When does the cafeteria serve lunch?", "collection": "c",
             "mode": "bm25", "conversation": "meals"}
    _, one = call(f"{url}/v1/ask", keys["alice"], first)
    _, two = call(f"{url}/v1/ask", keys["alice"], {**first, "question": "Can visitors buy it?"})
    assert (one["turn"], two["turn"]) == (1, 2)
    assert two["resolution"] == "pronoun" and " it?" not in two["resolved_question"]
    _, turns = call(f"{url}/v1/memory/meals/query", keys["alice"], {"intent": "read"})
    assert [u["speaker"] for u in turns["utterances"]] == ["user", "assistant"] * 2
    _, other = call(f"{url}/v1/memory/meals/query", keys["bob"], {"intent": "read"})
    assert other == {"utterances": []}  # another key's conversation of the same name


def traces_since(root: Path, seen: set[Path]) -> list[str]:
    files = set((root / "logs" / "pipeline_traces").glob("*-*.json")) - seen
    seen |= files
    return [f.read_text("utf-8") for f in sorted(files)]


def test_traces_of_a_request_hold_only_what_its_key_may_see(
        service: tuple[str, dict[str, str], Path]) -> None:
    url, keys, root = service
    seen: set[Path] = set()
    traces_since(root, seen)
    requests = [("/v1/search?q=lunch+budget+merger&collection=c&mode=bm25", None),
                ("/v1/graph", {"seeds": ["merger.txt:0000", "cafeteria.txt:0000"],
                               "collection": "c"}),
                ("/v1/context", {"seeds": ["merger.txt:0000", "cafeteria.txt:0000"],
                                 "collection": "c"})]
    for path, body in requests:
        assert call(url + path, keys["alice"], body)[0] == 200
    alice = traces_since(root, seen)
    assert len(alice) == 3  # one trace per request: search, graph, context
    assert not any("Northwind" in t for t in alice)
    assert "merger.txt" not in alice[0]  # named in the others only as alice's own seeds
    skipped = json.loads(alice[2])["stages"][1]["state_after"]["skipped"]
    assert skipped == [{"id": "merger.txt:0000", "reason": "not found"}]  # as if unknown
    for path, body in requests:
        assert call(url + path, keys["bob"], body)[0] == 200
    bob = traces_since(root, seen)
    assert "merger.txt:0000" in bob[0]  # bob's search trace does show it
