"""OpenTelemetry: one global TracerProvider exporting over OTLP/HTTP (to Phoenix or any collector).

Spans: OpenInference's smolagents instrumentor gives `CodeAgent.run`, `Step N` and the LLM
calls with token counts; the tool wrapper adds `tool_wrapped.<name>`; each run is wrapped in a
`smol_instruments.run` span so all of them share one trace whose id the run reports.

An endpoint that does not answer must cost neither start-up nor exit time: the exporter checks
that something listens (a TCP connect with a short timeout, re-checked at most every 30 s)
and otherwise drops the batch, logging one line the first time.

Spans tell what the user is told. The instrumentor opens each `Step N` span around
`CodeAgent._step_stream` and marks it an error when that raises; a subclass that overrides it
and handles what the upstream step raises (ours takes a reply in prose, an AgentParsingError
upstream, as the answer) would get an error step for a run the panel shows as completed. So
`_step_spans_where_decided` moves the span to the most derived override: each class's
`_step_stream` opens the span only for agents whose own class's step it is. And `end_run`
gives the run span the run's status (an error only for a failed run, with its message).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlparse

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from .. import __version__
from .config import Settings

log = logging.getLogger(__name__)

SERVICE_NAME = "smol-instruments"
TRACER_NAME = "smol_instruments"

_lock = threading.Lock()
_provider: TracerProvider | None = None


class FailFastExporter(SpanExporter):
    """Wraps the OTLP exporter; drops batches quickly while the endpoint does not listen."""

    recheck_s = 30.0

    def __init__(self, endpoint: str, timeout_s: float = 3.0) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.endpoint = endpoint
        self._inner = OTLPSpanExporter(endpoint=endpoint, timeout=timeout_s)
        parsed = urlparse(endpoint)
        self._address = (
            parsed.hostname or "localhost",
            parsed.port or (443 if parsed.scheme == "https" else 80),
        )
        self._reachable_at = 0.0
        self._checked_at = -self.recheck_s
        self._warned = False
        self.dropped = 0

    def _reachable(self) -> bool:
        now = time.monotonic()
        if now - self._checked_at < self.recheck_s:
            return self._reachable_at == self._checked_at
        self._checked_at = now
        try:
            with socket.create_connection(self._address, timeout=0.3):
                self._reachable_at = now
                return True
        except OSError:
            return False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not self._reachable():
            self.dropped += len(spans)
            if not self._warned:
                self._warned = True
                log.warning(
                    "tracing endpoint %s does not answer; spans are dropped until it does "
                    "(start Phoenix, or set PHOENIX_ENABLED=false)",
                    self.endpoint,
                )
            return SpanExportResult.FAILURE
        return self._inner.export(spans)

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def setup_tracing(settings: Settings) -> TracerProvider | None:
    """Install the global provider once (idempotent); None when tracing is disabled."""
    global _provider
    if not settings.phoenix_enabled:
        return None
    with _lock:
        if _provider is not None:
            return _provider
        resource = Resource.create(
            {
                "service.name": SERVICE_NAME,
                "service.version": __version__,
                "openinference.project.name": settings.phoenix_project,
            }
        )
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(
            BatchSpanProcessor(
                FailFastExporter(settings.traces_endpoint), schedule_delay_millis=500
            )
        )
        trace.set_tracer_provider(provider)
        try:
            from openinference.instrumentation.smolagents import SmolagentsInstrumentor

            SmolagentsInstrumentor().instrument(tracer_provider=provider)
            _step_spans_where_decided()
        except Exception as exc:  # tracing must never stop the agent
            log.warning("smolagents instrumentation unavailable: %s", exc)
        _provider = provider
        return provider


def _step_spans_where_decided() -> None:
    """Open each `Step N` span around the most derived `_step_stream` of the agent's class, not
    around the upstream one it calls (written for openinference-instrumentation-smolagents
    0.1.x, which wraps `CodeAgent._step_stream` with wrapt and keeps its `_StepWrapper` as
    the wrapper's `_self_wrapper`)."""
    import wrapt
    from smolagents import CodeAgent

    installed = CodeAgent.__dict__.get("_step_stream")
    if not isinstance(installed, wrapt.FunctionWrapper):
        log.warning("smolagents' step is not instrumented as expected; step spans stay as they are")
        return
    opens_span = installed._self_wrapper
    classes = [CodeAgent, *_subclasses(CodeAgent)]
    for owner in classes:
        method = owner.__dict__.get("_step_stream")
        if method is None:
            continue
        if isinstance(method, wrapt.FunctionWrapper):
            method = method.__wrapped__
        owner._step_stream = wrapt.FunctionWrapper(method, _span_if_decided_by(owner, opens_span))


def _span_if_decided_by(owner: type, opens_span: Any) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        if _step_owner(type(instance)) is owner:
            return opens_span(wrapped, instance, args, kwargs)
        return wrapped(*args, **kwargs)  # a subclass's override holds the span

    return wrapper


def _step_owner(kind: type) -> type | None:
    return next((k for k in kind.__mro__ if "_step_stream" in k.__dict__), None)


def _subclasses(kind: type) -> list[type]:
    found: list[type] = []
    subclasses: list[type] = kind.__subclasses__()
    for sub in subclasses:
        found += [sub, *_subclasses(sub)]
    return found


@contextlib.contextmanager
def untraced() -> Iterator[None]:
    """Instrumented calls inside make no spans: work of the host's own, outside any run (the
    daemon's warm-up), must not show in Phoenix as a trace nobody asked for."""
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    with suppress_instrumentation():
        yield


def end_run(span: Any, status: str, error: str | None) -> None:
    """The run span's status: an error only for a run that failed, with what failed."""
    span.set_attribute("smol.status", status)
    if status == "failed":
        span.set_status(trace.Status(trace.StatusCode.ERROR, error or "the run failed"))
    else:
        span.set_status(trace.Status(trace.StatusCode.OK))


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME, __version__)


def flush(timeout_s: float = 5.0) -> None:
    """Export what is buffered (end of a run, before exit)."""
    provider = _provider
    if provider is not None:
        provider.force_flush(int(timeout_s * 1000))


def trace_id_of(span: Any) -> str | None:
    context = span.get_span_context()
    return format(context.trace_id, "032x") if context and context.is_valid else None
