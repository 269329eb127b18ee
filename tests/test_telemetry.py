"""Tracing set-up: an endpoint that does not answer costs one log line, not a retry storm."""

from __future__ import annotations

import logging
import socket

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult

from smol_instruments.base.config import load_settings
from smol_instruments.base.telemetry import FailFastExporter


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_endpoint_drops_spans_and_logs_once(caplog: pytest.LogCaptureFixture) -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}/v1/traces"
    exporter = FailFastExporter(endpoint)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with caplog.at_level(logging.WARNING, logger="smol_instruments.base.telemetry"):
        for _ in range(5):
            with tracer.start_as_current_span("x"):
                pass
    provider.shutdown()
    assert exporter.dropped == 5
    warnings = [r for r in caplog.records if "does not answer" in r.getMessage()]
    assert len(warnings) == 1
    assert endpoint in warnings[0].getMessage()


def test_export_result_is_failure_without_a_listener() -> None:
    exporter = FailFastExporter(f"http://127.0.0.1:{_closed_port()}/v1/traces")
    assert exporter.export([]) is SpanExportResult.FAILURE


def test_otel_endpoint_wins_over_phoenix_endpoint() -> None:
    settings = load_settings(
        None,
        phoenix_endpoint="http://127.0.0.1:1/v1/traces",
        otel_exporter_otlp_endpoint="http://127.0.0.1:4318",
    )
    assert settings.traces_endpoint == "http://127.0.0.1:4318/v1/traces"
    plain = load_settings(
        None, phoenix_endpoint="http://127.0.0.1:6006/v1/traces", otel_exporter_otlp_endpoint=None
    )
    assert plain.traces_endpoint == "http://127.0.0.1:6006/v1/traces"
