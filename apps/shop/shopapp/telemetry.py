"""Tracing set up the way the OpenTelemetry documentation shows it: the SDK
reads its configuration (endpoint, resource attributes, sampler, semantic
convention opt-in, ...) from the standard OTEL_* environment variables."""

import os

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


def start(service, attributes=None):
    """Installs the global tracer provider and traces outgoing `requests`
    calls. The service is named `service` unless OTEL_SERVICE_NAME says
    otherwise. Call `shutdown()` on the result to flush every span."""
    os.environ.setdefault("OTEL_SERVICE_NAME", service)
    provider = TracerProvider(resource=Resource.create(attributes or {}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    RequestsInstrumentor().instrument()
    return provider


def host_attributes(ip=None, name=None):
    """What a host resource detector would add: `host.ip` is an array of
    strings in the semantic conventions."""
    attrs = {}
    if ip is not None:
        attrs["host.ip"] = [ip]
    if name is not None:
        attrs["host.name"] = name
    return attrs
