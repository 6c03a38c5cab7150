"""A job queue in PostgreSQL, the way many teams build one before they need
a broker: the publisher inserts a row, a worker takes rows off with
`SELECT … FOR UPDATE SKIP LOCKED`. No instrumentation library knows such a
queue, so its spans are made by hand as the OpenTelemetry messaging
conventions say: a PRODUCER span where the job is sent, the trace context
carried in the row, a CONSUMER span where it is handled. Nobody waits for
the handling: it happens after the request that sent the job answered."""

import json
import logging
import queue

import psycopg
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind

# The one queue: frontend's page views, which `activity` records.
QUEUE = "page_views"
# How long an idle worker waits before looking again.
POLL_S = 0.02
# How long a worker whose connection failed waits before connecting again.
RECONNECT_S = 1.0

log = logging.getLogger(__name__)


def prepare(url):
    """Creates the jobs table if it is not there."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS jobs (id bigserial PRIMARY KEY, queue text NOT NULL,"
            " body text NOT NULL, headers text NOT NULL)"
        )


def _attributes(url, operation):
    info = psycopg.conninfo.conninfo_to_dict(url)
    attrs = {
        "messaging.system": "postgresql",
        "messaging.destination.name": QUEUE,
        "messaging.operation.type": operation,
    }
    if info.get("host"):
        attrs["server.address"] = info["host"]
    if info.get("port"):
        attrs["server.port"] = int(info["port"])
    return attrs


class Publisher:
    """Sends jobs to [`QUEUE`] from a request's handler."""

    def __init__(self, url):
        self._url = url
        self._attrs = _attributes(url, "send")
        self._tracer = trace.get_tracer(__name__)
        self._idle = queue.SimpleQueue()

    def publish(self, body):
        with self._tracer.start_as_current_span(
            f"send {QUEUE}", kind=SpanKind.PRODUCER, attributes=self._attrs
        ):
            headers = {}
            propagate.inject(headers)
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = psycopg.connect(self._url, autocommit=True)
            try:
                conn.execute(
                    "INSERT INTO jobs (queue, body, headers) VALUES (%s, %s, %s)",
                    (QUEUE, json.dumps(body), json.dumps(headers)),
                )
            except psycopg.Error:
                conn.close()
                raise
            self._idle.put(conn)


class Worker:
    """Takes jobs off [`QUEUE`] one at a time and hands each to `handle`
    under a CONSUMER span whose parent is the span that sent it."""

    def __init__(self, url, handle):
        self._url = url
        self._handle = handle
        self._attrs = _attributes(url, "process")
        self._tracer = trace.get_tracer(__name__)

    def run(self, stop):
        """Until the event `stop` is set. A job that cannot be read or
        handled is logged and dropped; a lost connection is made again."""
        while not stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    self._take(conn, stop)
            except psycopg.Error as e:
                log.warning("job queue: %s; connecting again", str(e).strip())
                stop.wait(RECONNECT_S)

    def _take(self, conn, stop):
        while not stop.is_set():
            row = conn.execute(
                "DELETE FROM jobs WHERE id = (SELECT id FROM jobs WHERE queue = %s"
                " ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING body, headers",
                (QUEUE,),
            ).fetchone()
            if row is None:
                stop.wait(POLL_S)
                continue
            try:
                body, headers = json.loads(row[0]), json.loads(row[1])
            except ValueError as e:
                log.warning("job queue: dropped a job that is not JSON: %s", e)
                continue
            with self._tracer.start_as_current_span(
                f"process {QUEUE}",
                context=propagate.extract(headers if isinstance(headers, dict) else {}),
                kind=SpanKind.CONSUMER,
                attributes=self._attrs,
            ):
                try:
                    self._handle(body)
                except Exception as e:  # one bad job must not stop the worker
                    log.warning("job queue: a job failed: %s: %s", type(e).__name__, e)
