"""One service of the workers app, as gunicorn loads it in each worker
process. Tracing is set up here, at import, which gunicorn does in every
worker after forking it: what the OpenTelemetry Python documentation asks
of forking servers (a batch span processor's thread does not survive a
fork). The SDK gives each process its own `service.instance.id`."""

import json
import os
import random
import time

import requests
from flask import Flask
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.flask import FlaskInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

SERVICE = os.environ["WORKERS_SERVICE"]
# The services this one calls, one after another, and where they listen.
CALLS = json.loads(os.environ.get("WORKERS_CALLS", "{}"))

provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
app = Flask(SERVICE)
FlaskInstrumentor().instrument_app(app)
RequestsInstrumentor().instrument()
session = requests.Session()


@app.route("/")
def handle():
    # Work before the calls (about 2.5 ms) and between them (about 1 ms),
    # lognormal as a handler's is.
    time.sleep(random.lognormvariate(-6.0, 0.6))
    for url in CALLS.values():
        session.get(url, timeout=5).raise_for_status()
        time.sleep(random.lognormvariate(-7.0, 0.6))
    return "ok"
