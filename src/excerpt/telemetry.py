"""Traces and stage metrics, measured where ``timings_ms`` is: one clock for every stage.

The stages of a search and an ask record their time through :func:`elapsed` (a leaf: the
milliseconds since a ``time.perf_counter()`` reading) or :class:`stage` (a stage with stages
inside it, the ask's retrieval, a search, an ask). The number they return is the one
``timings_ms`` keeps; when tracing is on the same interval becomes an OpenTelemetry span under
the current one, and when a sink is installed (``excerpt serve``'s ``/metrics``) an observation
of the stage histogram.

Off by default, and then nothing is imported and a stage costs one ``perf_counter`` read and
two global checks. Tracing is on when :func:`configure` finds an endpoint: the setting
``otel_endpoint`` or the standard ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_ENDPOINT`` (``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none``
keep it off); spans go over OTLP/HTTP (protobuf) in batches.

What a span carries: stage names, counts, timings, the search mode, k, the collection the
caller named and a model reader's model and token counts (the GenAI semantic conventions:
``gen_ai.operation.name`` ``retrieval`` / ``chat``, ``gen_ai.data_source.id``,
``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` / ``output_tokens``). Never a question,
a text, a node id or an error's message (a refusal may quote what the caller sent): an
exception is recorded as its type's name only.
"""

from __future__ import annotations

import contextvars
import os
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Protocol, TypeVar

Attributes = Mapping[str, str | int | float | bool]
T = TypeVar("T")

_tracer: Any = None
"""An OpenTelemetry ``Tracer`` while tracing is on; None (the default) when it is off."""
_provider: Any = None
_sink: Sink | None = None
_Leaf = tuple[str, int, int, dict[str, Any]]
_Ended = tuple[Any, list[Any], int]  # a stage's span, its pending stages, its end
_leaves: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "excerpt_telemetry_leaves", default=None)
"""The stages ended under the stage open now (leaves, and stages with theirs), made into spans
and ended when the outermost stage ends: a span costs tens of microseconds to make and export,
which would otherwise fall between the stages it measures."""


class Sink(Protocol):
    """Where stage times and import outcomes go besides traces (server/metrics.py)."""

    def stage(self, name: str, ms: float) -> None: ...

    def imported(self, outcome: str) -> None: ...


_EPOCH_NS = time.time_ns() - time.perf_counter_ns()
"""Wall-clock nanoseconds at ``perf_counter`` zero: spans are placed by the same readings that
time the stages, so a stage that starts where the last one ended leaves no gap between them."""


def _wall(perf: float) -> int:
    return _EPOCH_NS + int(perf * 1e9)


def tracing() -> bool:
    return _tracer is not None


def elapsed(name: str, started: float, attributes: Attributes | None = None) -> float:
    """Milliseconds since ``started`` (a ``perf_counter`` reading): the stage ``name``'s time
    as ``timings_ms`` records it, and a span of that interval under the current one."""
    return lap(name, started, attributes)[0]


def lap(name: str, started: float, attributes: Attributes | None = None) -> tuple[float, float]:
    """:func:`elapsed`, and the ``perf_counter`` reading the stage ended at: the next stage's
    start, so that stages which follow each other add up to the time they took together."""
    now = time.perf_counter()
    ms = (now - started) * 1000
    if _tracer is not None:
        leaf = (name, _wall(started), _wall(now), _stage_attributes(name, attributes))
        pending = _leaves.get()
        if pending is not None:
            pending.append(leaf)
        else:
            _emit(leaf, None)
    if _sink is not None:
        _sink.stage(name, ms)
    return ms, now


class stage:
    """A stage with stages inside it: ``with stage("retrieval", timings):`` records its
    milliseconds in ``timings`` on exit and, when tracing, is the current span meanwhile.
    ``started``: a ``perf_counter`` reading taken before (a search's clock starts before its
    view is opened); ``root``: an operation (a search, an ask) rather than a stage of one."""

    __slots__ = ("_leaves", "_outer", "_pending", "_span", "_token", "attributes", "ended", "ms",
                 "name", "root", "started", "timings")

    def __init__(self, name: str, timings: dict[str, float] | None = None,
                 attributes: Attributes | None = None, started: float | None = None,
                 root: bool = False) -> None:
        self.name, self.timings, self.attributes, self.root = name, timings, attributes, root
        self.started = started
        self.ms = 0.0
        self.ended = 0.0  # the perf_counter reading it ended at (the next stage's start)
        self._span: Any = None
        self._token: Any = None
        self._leaves: Any = None
        self._outer: list[Any] | None = None
        self._pending: list[Any] = []

    def __enter__(self) -> stage:
        if self.started is None:
            self.started = time.perf_counter()
        if _tracer is not None:
            self._open()
        return self

    def _open(self) -> None:
        from opentelemetry import context, trace

        assert self.started is not None
        start = _wall(self.started)
        attributes = dict(self.attributes or {}) if self.root else _stage_attributes(
            self.name, self.attributes)
        self._span = _tracer.start_span(self.name, start_time=start, attributes=attributes)
        self._token = context.attach(trace.set_span_in_context(self._span))
        self._outer = _leaves.get()
        self._leaves = _leaves.set([])

    def rename(self, name: str) -> None:
        """The span's name, once known (a request's route once it was routed)."""
        if self._span is not None:
            self._span.update_name(name)

    def set(self, key: str, value: str | int | float | bool) -> None:
        """An attribute known only as the stage ends (a count, a model's tokens)."""
        if self._span is not None:
            self._span.set_attribute(key, value)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self.started is not None
        if self._span is not None:  # its own bookkeeping inside its time, not between stages
            self._detach()
        self.ended = time.perf_counter()
        self.ms = (self.ended - self.started) * 1000
        end = _wall(self.ended)
        if self.timings is not None:
            self.timings[self.name] = self.ms
        if self._span is not None:
            self._close(kind, end)
        if _sink is not None and not self.root:
            _sink.stage(self.name, self.ms)

    def _detach(self) -> None:
        from opentelemetry import context

        self._pending = self._leaves.var.get()
        _leaves.reset(self._leaves)
        context.detach(self._token)

    def _close(self, kind: type[BaseException] | None, end: int) -> None:
        from opentelemetry.trace import Status, StatusCode

        pending = self._pending
        if kind is not None:  # the type only: a message may quote the caller's input
            self._span.set_attribute("error.type", kind.__name__)
            self._span.set_status(Status(StatusCode.ERROR))
        ended: _Ended = (self._span, pending, end)
        if self._outer is not None:  # made when the outermost stage ends
            self._outer.append(ended)
        else:
            _emit(ended, None)
        self._span = self._token = self._leaves = self._outer = None
        self._pending = []


def _emit(item: _Leaf | _Ended, parent: Any) -> None:
    """A leaf's span made and ended, or a stage's pending spans made and it ended."""
    if len(item) == 4:
        name, start, end, attributes = item
        _tracer.start_span(name, context=parent, start_time=start,
                           attributes=attributes).end(end_time=end)
        return
    from opentelemetry import trace

    span, pending, end = item
    inside = trace.set_span_in_context(span)
    for each in pending:
        _emit(each, inside)
    span.end(end_time=end)


def _stage_attributes(name: str, attributes: Attributes | None) -> dict[str, Any]:
    return {"excerpt.stage": name, **(attributes or {})}


def carried(fn: Callable[[], T]) -> Callable[[], T]:
    """``fn`` to run in another thread under the current span (a search's dense leg): the
    context copied when tracing, ``fn`` itself when not."""
    if _tracer is None:
        return fn
    context = contextvars.copy_context()
    return lambda: context.run(fn)


class Phases:
    """An import's progress callback that, when tracing, also makes each phase it reports
    (load, analyze, embed, index) a span: from its first report to its last (done == total);
    before the first, ``prepare`` (the files walked and hashed), and after the last until
    :meth:`close`, ``publish`` (the segment written, the snapshot published). Off, it only
    passes the reports on."""

    def __init__(self, progress: Callable[[str, int, int], None]) -> None:
        self.progress = progress
        self._name: str | None = None
        self._started = self._ended = 0.0
        self._created = time.perf_counter()

    def __call__(self, name: str, done: int, total: int) -> None:
        if _tracer is not None:
            self._mark(name, done, total)
        self.progress(name, done, total)

    def _mark(self, name: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if self._name is None:  # the files walked and hashed, the run begun
            elapsed("prepare", self._created)
        if name != self._name:
            if self._name is not None and self._ended < self._started:  # left unfinished
                elapsed(self._name, self._started)
            self._name, self._started = name, now
        if done >= total and self._ended < self._started:
            elapsed(name, self._started)
            self._ended = time.perf_counter()

    def close(self) -> None:
        if _tracer is None or self._name is None:
            return
        if self._ended < self._started:
            elapsed(self._name, self._started)
        else:
            elapsed("publish", self._ended)


def continued(headers: Mapping[str, str]) -> Any:
    """The trace a request continues (its W3C ``traceparent``) made current: a token for
    :func:`detach`; None when tracing is off or it carries none."""
    if _tracer is None or "traceparent" not in headers:
        return None
    from opentelemetry import context, propagate

    return context.attach(propagate.extract(headers))


def detach(token: Any) -> None:
    if token is not None:
        from opentelemetry import context

        context.detach(token)


def imported(outcome: str) -> None:
    """An import run ended: ``completed``, ``unchanged`` or ``failed``."""
    if _sink is not None:
        _sink.imported(outcome)


def install_sink(sink: Sink | None) -> None:
    global _sink
    _sink = sink


def endpoint(setting: str = "") -> str | None:
    """The OTLP/HTTP traces URL tracing would use: the setting (a base URL, as
    ``OTEL_EXPORTER_OTLP_ENDPOINT``; ``/v1/traces`` added), else the environment's; None
    when none is set or the environment turns tracing off."""
    env = os.environ
    if (env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
            or env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none"):
        return None
    if setting:
        return setting if setting.rstrip("/").endswith("/v1/traces") else (
            setting.rstrip("/") + "/v1/traces")
    if url := env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip():
        return url
    if url := env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        return url.rstrip("/") + "/v1/traces"
    return None


def configure(setting: str = "") -> bool:
    """Tracing on, once per process, when :func:`endpoint` finds one (the SDK imported only
    then); whether tracing is on."""
    if _tracer is not None:
        return True
    url = endpoint(setting)
    if url is None:
        return False
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        from excerpt.errors import DependencyError

        raise DependencyError(f"tracing to {url} needs OpenTelemetry's SDK and OTLP/HTTP "
                              "exporter: pip install 'excerpt[otel]'") from None
    use(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    return True


def use(processor: Any) -> None:
    """Trace through ``processor`` (an SDK ``SpanProcessor``: a batch exporter, or a test's
    simple processor over an in-memory exporter); None turns tracing off again."""
    global _tracer, _provider
    if _provider is not None:
        _provider.shutdown()
    if processor is None:
        _tracer = _provider = None
        return
    from importlib.metadata import version

    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "excerpt"),
                                "service.version": version("excerpt")})
    _provider = TracerProvider(resource=resource)
    _provider.add_span_processor(processor)
    _tracer = _provider.get_tracer("excerpt")
