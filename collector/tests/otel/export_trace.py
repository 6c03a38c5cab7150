"""Exports one small trace with the official OpenTelemetry Python SDK over
OTLP/HTTP (protobuf) or OTLP/gRPC to the endpoint given (https: over TLS,
configured by the SDK's standard environment variables), then prints what it
sent as one JSON line for the Rust test to compare with the database.

Usage: export_trace.py http|grpc ENDPOINT"""

import json
import sys

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind


def exporter(protocol, endpoint):
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        # https: TLS, with the CA and client certificate the standard
        # OTEL_EXPORTER_OTLP_CERTIFICATE / _CLIENT_CERTIFICATE / _CLIENT_KEY
        # variables name (read by the exporter itself).
        insecure = endpoint.startswith("http://")
        return OTLPSpanExporter(endpoint=endpoint, insecure=insecure, timeout=10)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=endpoint, timeout=10)


def main(protocol, endpoint):
    provider = TracerProvider(
        resource=Resource.create({"service.name": "frontend", "host.name": "h1"})
    )
    finished = []

    class Keep(SimpleSpanProcessor):
        def on_end(self, span):
            finished.append(span)
            super().on_end(span)

    provider.add_span_processor(Keep(exporter(protocol, endpoint)))
    tracer = provider.get_tracer("intpath-otel-test", "0.1")
    with tracer.start_as_current_span("GET /hotels", kind=SpanKind.SERVER) as parent:
        parent.set_attribute("http.route", "/hotels")
        parent.set_attribute("http.status_code", 200)
        parent.set_attribute("ratio", 0.25)
        parent.set_attribute("cached", False)
        with tracer.start_as_current_span("search.Nearby", kind=SpanKind.CLIENT) as child:
            child.set_attribute("rpc.service", "search")
    provider.shutdown()

    out = []
    for s in finished:
        out.append({
            "trace_id": format(s.context.trace_id, "032x"),
            "span_id": format(s.context.span_id, "016x"),
            "parent_span_id": format(s.parent.span_id, "016x") if s.parent else None,
            "name": s.name,
            "kind": {SpanKind.SERVER: 2, SpanKind.CLIENT: 3}[s.kind],
            "start_ns": s.start_time,
            "end_ns": s.end_time,
            "attributes": dict(s.attributes),
            "resource": dict(s.resource.attributes),
        })
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
