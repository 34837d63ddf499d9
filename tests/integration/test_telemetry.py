"""Issue 33 part 1: OpenTelemetry spans for the stages of search and ask, measured by the same
seam as ``timings_ms`` (src/excerpt/telemetry.py), and ``GET /metrics`` on ``excerpt serve``.

In process, the SDK's in-memory exporter takes the spans of a real engine over the handbook;
over HTTP, a real ``excerpt serve`` sends them over OTLP/HTTP to a receiver on loopback that
decodes them with opentelemetry-proto, and ``/metrics`` is read with Prometheus' text parser.
A secret source (ACL tag ``board``, label ``secret``) is asked about by callers without the tag
or the clearance: none of its words, its file name or its node ids reach a span or a metric.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from prometheus_client.parser import text_string_to_metric_families
from tests.http import add_keys, call, excerpt_serve

from excerpt import telemetry
from excerpt.engine import Engine
from excerpt.types import Filters, Principal

ROOT = Path(__file__).resolve().parents[2]
SECRET_WORDS = ("escrow", "deposit", "Friday", "price", "ledger-qx9", "qx9")
"""Words of the secret that the question does not hold (the caller sees its own question;
a span never carries it either: QUESTION_WORDS)."""
QUESTION_WORDS = ("Qorvex", "qorvex", "Zumbrota", "zumbrota", "merger")
SECRET = ("The Qorvex merger closes in Zumbrota on Friday; the board alone knows the "
          "price.\n\nThe Qorvex escrow account at Zumbrota bank holds the deposit.\n")
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
QUESTION = "When does the Qorvex merger close in Zumbrota?"


def _book() -> Path:
    for data in (ROOT.parent / "shared" / "data", ROOT / ".." / "shared" / "data"):
        if (data / "books" / "pg174_dorian_gray.txt").is_file():
            return data / "books" / "pg174_dorian_gray.txt"
    pytest.skip("../shared/data/books is not here")


def _corpus(home: Path, tmp: Path) -> Path:
    """The handbook (public) and a secret ledger for the board, in ``home``."""
    secret = tmp / "secret"
    secret.mkdir(exist_ok=True)
    (secret / "ledger-qx9.txt").write_text(SECRET, encoding="utf-8")
    engine = Engine(home)
    engine.ingest(ROOT / "examples" / "handbook", "c")
    engine.ingest(secret, "c", acl_tags=("board",), classification_labels=("secret",))
    book = tmp / "dorian-gray-opening.txt"  # its first chapters: a real search, a quick import
    book.write_text(_book().read_text(encoding="utf-8")[:80_000], encoding="utf-8")
    engine.ingest(book, "books")
    engine.close()
    return home


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("telemetry")
    return _corpus(tmp / "home", tmp)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    telemetry.use(SimpleSpanProcessor(exporter))
    try:
        yield exporter
    finally:
        telemetry.use(None)


def _ms(span: ReadableSpan) -> float:
    assert span.start_time is not None and span.end_time is not None
    return (span.end_time - span.start_time) / 1e6


def _children(all_spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return sorted((s for s in all_spans
                   if s.parent is not None and s.parent.span_id == parent.context.span_id),
                  key=lambda s: s.start_time or 0)


def _one_root(all_spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    assert len({s.context.trace_id for s in all_spans if s.context}) == 1, "one trace"
    roots = [s for s in all_spans if s.parent is None]
    assert [r.name for r in roots] == [name]
    return roots[0]


def _gap(all_spans: tuple[ReadableSpan, ...], root: ReadableSpan) -> float:
    """How far the root's stage spans are from adding up to its time, as a share of it."""
    covered = sum(_ms(s) for s in _children(all_spans, root))
    return abs(_ms(root) - covered) / _ms(root)


def _names(all_spans: tuple[ReadableSpan, ...], root: ReadableSpan) -> list[str]:
    return [s.name for s in _children(all_spans, root)]


# The stages add up within 5 %: judged on the median of a few runs, since one descheduling of
# the process (the other tests, CI's other work) between two stages of a 1 ms search is more.


def test_one_ask_is_one_trace_whose_stages_add_up_to_its_time(
        home: Path, spans: InMemorySpanExporter) -> None:
    engine = Engine(home)
    ask = "How do snapshots become visible after an import?"
    engine.ask(ask, Filters(collection="c"))  # models loaded and caches warm
    gaps, inner = [], []
    for _ in range(3):
        spans.clear()
        result = engine.ask(ask, Filters(collection="c"))
        done = spans.get_finished_spans()
        root = _one_root(done, "ask")
        gaps.append(_gap(done, root))
        names = _names(done, root)
        assert names[:3] == ["resolve", "grounding", "retrieval"] and "compose" in names
        retrieval = next(s for s in _children(done, root) if s.name == "retrieval")
        searches = _children(done, retrieval)
        assert searches and {s.name for s in searches} == {"search"}
        for search in searches:
            assert dict(search.attributes or {})["gen_ai.operation.name"] == "retrieval"
            assert {"filter", "analyze", "rank", "pin", "expand", "fetch"} <= set(
                _names(done, search))
            [rank] = [s for s in _children(done, search) if s.name == "rank"]
            assert _names(done, rank) == ["bm25", "semantic", "fusion"]
            inner.append(_gap(done, search))
    assert statistics.median(gaps) <= 0.05, gaps
    # a search inside an ask takes under a millisecond over the handbook: what its stages
    # leave out is mostly the spans' own making (~20 us each with the in-memory exporter)
    assert statistics.median(inner) <= 0.25, inner
    for name, ms in result.timings_ms.items():  # one clock: the spans are timings_ms
        if name != "total":
            [span] = [s for s in _children(done, root) if s.name == name]
            assert abs(_ms(span) - ms) < 0.5, (name, _ms(span), ms)
    engine.close()


def test_a_search_is_one_trace_whose_stages_add_up(home: Path,
                                                   spans: InMemorySpanExporter) -> None:
    engine = Engine(home)
    engine.search("the portrait in the locked room", Filters(collection="books"))
    gaps = []
    for _ in range(5):
        spans.clear()
        engine.search("the portrait in the locked room", Filters(collection="books"), k=5)
        done = spans.get_finished_spans()
        root = _one_root(done, "search")
        assert _names(done, root) == ["filter", "analyze", "rank", "pin", "expand", "fetch",
                                      "report"]
        [rank] = [s for s in _children(done, root) if s.name == "rank"]
        assert _names(done, rank) == ["bm25", "semantic", "fusion"]
        gaps.append(_gap(done, root))
    assert statistics.median(gaps) <= 0.05, gaps
    assert dict(root.attributes or {}) == {
        "gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "books",
        "excerpt.mode": "hybrid", "gen_ai.request.top_k": 5}
    engine.close()


def test_an_import_is_one_trace_of_its_phases(tmp_path: Path,
                                              spans: InMemorySpanExporter) -> None:
    engine = Engine(tmp_path / "home")
    engine.ingest(ROOT / "examples" / "handbook", "h", embedder="none")
    done = spans.get_finished_spans()
    root = _one_root(done, "ingest")
    assert _names(done, root) == ["prepare", "load", "analyze", "publish"]
    assert _gap(done, root) <= 0.05
    assert dict(root.attributes or {})["gen_ai.data_source.id"] == "h"
    engine.close()


def _exported_text(all_spans: tuple[ReadableSpan, ...]) -> str:
    """Everything a span exports: names, attributes, events, status, resource."""
    return "\n".join(s.to_json() for s in all_spans)


def test_hidden_nodes_reach_no_span(home: Path, spans: InMemorySpanExporter) -> None:
    engine = Engine(home)
    for who in (Principal.anonymous(), Principal(acl_tags=frozenset({"staff"})),
                Principal(acl_tags=frozenset({"board"})),  # the tag without the clearance
                Principal(clearances=frozenset({"secret"}))):  # the clearance without it
        engine.ask(QUESTION, Filters(collection="c"), who, explain=lambda _: None, record=True)
        engine.search(QUESTION, Filters(collection="c"), who)
        engine.search("Qorvex escrow", Filters(collection="c"), who, mode="bm25")
    text = _exported_text(spans.get_finished_spans())
    assert "retrieval" in text and "bm25" in text
    for word in (*SECRET_WORDS, *QUESTION_WORDS, "When does"):
        assert word not in text, word
    # and the board sees it: the secret was there to be found
    board = Principal(acl_tags=frozenset({"board"}), clearances=frozenset({"secret"}))
    answer = engine.ask(QUESTION, Filters(collection="c"), board)
    assert "escrow" in json.dumps(answer.to_json())
    engine.close()


def test_off_by_default_no_sdk_is_imported(home: Path) -> None:
    """Without an endpoint a search imports nothing of OpenTelemetry (telemetry costs one clock
    read per stage: bench/RESULTS.md, "Issue 33: telemetry cost")."""
    script = ("import sys; from excerpt.engine import Engine; from excerpt.types import Filters;"
              f"Engine({str(home)!r}).search('import snapshot', Filters(collection='c'),"
              " mode='bm25');"
              "Engine({0!r}).ask('What is a snapshot?', Filters(collection='c'), mode='bm25');"
              "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
              .replace("{0!r}", repr(str(home))))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_the_endpoint_comes_from_the_setting_or_the_standard_variables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    assert telemetry.endpoint("") is None
    assert telemetry.endpoint("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
    assert telemetry.endpoint("") == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:4318/v1/traces")
    assert telemetry.endpoint("") == "http://traces:4318/v1/traces"
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert telemetry.endpoint("http://127.0.0.1:4318") is None


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP collector's traces endpoint: POST /v1/traces, protobuf."""

    received: list[bytes]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        ok = self.path == "/v1/traces" and self.headers.get_content_type() == (
            "application/x-protobuf")
        if ok:
            self.received.append(body)
        self.send_response(200 if ok else 404)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def receiver(free_port: Callable[[], int]) -> Iterator[tuple[str, list[bytes]]]:
    received: list[bytes] = []
    handler = type("Receiver", (_Receiver,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def _decoded(received: list[bytes]) -> list[dict[str, Any]]:
    """Every span received: name, its attributes, trace and parent."""
    out = []
    for body in received:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scoped in resource.scope_spans:
                for span in scoped.spans:
                    out.append({"name": span.name, "trace": span.trace_id.hex(),
                                "id": span.span_id.hex(), "parent": span.parent_span_id.hex(),
                                "ms": (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6,
                                "attributes": {a.key: str(a.value) for a in span.attributes}})
    return out


def _family(text: str, name: str) -> list[Any]:
    return [s for f in text_string_to_metric_families(text) if f.name == name
            for s in f.samples]


def test_serve_exports_spans_over_otlp_and_metrics_move(
        home: Path, tmp_path: Path, free_port: Callable[[], int],
        receiver: tuple[str, list[bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    collector, received = receiver
    settings = tmp_path / "settings.yml"
    settings.write_text(f"otel_endpoint: {collector}\n", encoding="utf-8")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    keys = add_keys(home)
    upload = tmp_path / "note.txt"
    upload.write_text("Lunch is at noon in the canteen.\n", encoding="utf-8")
    with excerpt_serve(["--home", str(home), "--settings", str(settings)], free_port()) as url:
        alice, root = keys["alice"], keys["root"]
        assert call(f"{url}/metrics")[0] == 401
        assert call(f"{url}/metrics", alice)[0] == 403
        status, answer = call(f"{url}/v1/ask", alice, {"question": QUESTION, "collection": "c",
                                                      "explain": True})
        assert status == 200 and not any(w in json.dumps(answer) for w in SECRET_WORDS)
        status, events = call(f"{url}/v1/ask/stream", alice, {"question": QUESTION,
                                                             "collection": "c"})
        assert status == 200 and "event: answer" in events
        # bob may read it: his answer quotes it, and still no span carries a text
        status, answer = call(f"{url}/v1/ask", keys["bob"], {"question": QUESTION,
                                                            "collection": "c"})
        assert status == 200 and "escrow" in json.dumps(answer)
        status, _ = call(f"{url}/v1/search?q=Qorvex+escrow&collection=c", alice,
                         headers={"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"})
        assert status == 200
        assert call(f"{url}/v1/search?q=x&collection=nowhere", alice)[0] == 404
        status, _ = call(f"{url}/v1/ingest?filename=note.txt&collection=up&embedder=none",
                         keys["ivy"], upload.read_bytes())
        assert status == 200
        status, text = call(f"{url}/metrics", root)
        assert status == 200 and isinstance(text, str)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and [
                s["name"] for s in _decoded(received)].count("ask") < 3:
            time.sleep(0.1)
    got = _decoded(received)
    asks = [s for s in got if s["name"] == "ask"]
    by_id = {s["id"]: s for s in got}
    assert sorted(by_id[s["parent"]]["name"] for s in asks) == [
        "POST /v1/ask", "POST /v1/ask", "POST /v1/ask/stream"]  # the stream's worker too
    ask = asks[0]
    stages = [s for s in got if s["parent"] == ask["id"]]
    assert {"resolve", "grounding", "retrieval", "compose"} <= {s["name"] for s in stages}
    assert all(s["trace"] == ask["trace"] for s in stages)
    # one ask in a server beside other work: the 5 % is judged in process (above)
    assert abs(sum(s["ms"] for s in stages) - ask["ms"]) <= 0.10 * ask["ms"]
    assert {"search", "bm25", "semantic", "fusion"} <= {s["name"] for s in got}
    [request] = [s for s in got if s["id"] == ask["parent"]]
    assert request["name"] == "POST /v1/ask" and request["attributes"]["http.route"] == (
        'string_value: "/v1/ask"\n')
    searches = [s for s in got if s["name"] == "GET /v1/search"]
    assert len(searches) == 2  # the caller's traceparent continued in one
    assert [s["trace"] == TRACE_ID for s in searches].count(True) == 1
    for body in received:
        for word in (*SECRET_WORDS, *QUESTION_WORDS):
            assert word.encode() not in body, word
    for word in (*SECRET_WORDS, *QUESTION_WORDS, "nowhere"):
        assert word not in text, word
    requests = {(s.labels["route"], s.labels["status"]): s.value for s in _family(
        text, "excerpt_http_request_duration_seconds") if s.name.endswith("_count")}
    assert requests[("/v1/ask/stream", "200")] == 1
    assert requests[("/v1/ask", "200")] == 2 and requests[("/v1/search", "200")] == 1
    assert requests[("/metrics", "401")] == 1 and requests[("/metrics", "403")] == 1
    stage_counts = {s.labels["stage"]: s.value for s in _family(
        text, "excerpt_stage_duration_seconds") if s.name.endswith("_count")}
    assert stage_counts["bm25"] >= 4 and stage_counts["compose"] == 3
    errors = {s.labels["kind"]: s.value for s in _family(text, "excerpt_errors")
              if s.name.endswith("_total")}
    assert errors == {"unauthorized": 1, "forbidden": 1, "not_found": 1}
    imports = {s.labels["outcome"]: s.value for s in _family(text, "excerpt_imports")
               if s.name.endswith("_total")}
    assert imports == {"completed": 1}
    [maps] = _family(text, "excerpt_open_segment_maps")
    assert maps.value >= 0


def test_metrics_public_needs_no_key(home: Path, tmp_path: Path,
                                     free_port: Callable[[], int]) -> None:
    settings = tmp_path / "settings.yml"
    settings.write_text("metrics_public: true\n", encoding="utf-8")
    with excerpt_serve(["--home", str(home), "--settings", str(settings)], free_port()) as url:
        status, text = call(f"{url}/metrics")
    assert status == 200 and "excerpt_http_request_duration_seconds" in text
