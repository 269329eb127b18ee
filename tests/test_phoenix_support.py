"""The Phoenix test helper: a real `phoenix serve` receives an OTLP span and gives it back."""

from __future__ import annotations

import uuid

import pytest
from tests.support.phoenix import PhoenixServer

pytestmark = [pytest.mark.phoenix, pytest.mark.slow]


def test_exported_span_is_read_back_with_its_attributes(phoenix: PhoenixServer) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # A provider of its own: the global one belongs to the code under test.
    provider = TracerProvider(resource=Resource.create({"service.name": "phoenix-support-test"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=phoenix.traces_endpoint))
    )
    marker = uuid.uuid4().hex
    with provider.get_tracer(__name__).start_as_current_span("tool_wrapped.read_file") as span:
        span.set_attribute("tool.name", "read_file")
        span.set_attribute("tool.output_size", 1234)
        span.set_attribute("tool.truncated", True)
        span.set_attribute("test.marker", marker)
        trace_id = format(span.get_span_context().trace_id, "032x")
    assert provider.force_flush(timeout_millis=10_000)
    provider.shutdown()

    spans = phoenix.wait_for_spans(name="tool_wrapped.read_file", trace_id=trace_id)

    assert len(spans) == 1
    got = spans[0]
    assert got["context"]["trace_id"] == trace_id
    assert got["parent_id"] is None
    assert got["attributes"]["tool.name"] == "read_file"
    assert got["attributes"]["tool.output_size"] == 1234
    assert got["attributes"]["tool.truncated"] is True
    assert got["attributes"]["test.marker"] == marker
    assert phoenix.spans(name="no-such-span") == []
    assert phoenix.spans(project="no-such-project") == []


def test_server_listens_on_its_own_ports(phoenix: PhoenixServer) -> None:
    assert phoenix.port not in (0, 6006)
    assert phoenix.grpc_port not in (0, 4317, phoenix.port)
    assert phoenix.traces_endpoint == f"http://127.0.0.1:{phoenix.port}/v1/traces"
    assert "default" in [p["name"] for p in phoenix.projects()]
