"""The shop's database: inventory's stock counts in PostgreSQL, read through
psycopg and traced by the official OpenTelemetry psycopg instrumentation, a
client span per query. PostgreSQL itself records no spans: to a tracing
system it is a callee seen only from its caller's side."""

import queue

import psycopg
from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

# The skus the services ask for (sku-000 to sku-999).
SKUS = 1000
# One statement whether healthy or slow (pg_sleep(0) when healthy): a slow
# query looks like a lock wait or a bad plan, the same text taking longer.
QUERY = "SELECT count, pg_sleep(%s) FROM stock WHERE sku = %s"


def prepare(url):
    """Creates and fills the stock table if it is not there. Untraced: call
    it before `Database`, which turns the instrumentation on."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS stock (sku text PRIMARY KEY, count integer NOT NULL)"
        )
        conn.execute(
            "INSERT INTO stock SELECT 'sku-' || lpad(i::text, 3, '0'), i % 50 "
            f"FROM generate_series(0, {SKUS - 1}) AS i ON CONFLICT DO NOTHING"
        )


class Database:
    """Stock counts from PostgreSQL at `url`; `fault` (a `work.Fault`)
    slows a share of the queries inside the server. Connections are kept
    for reuse, one per concurrent request at most."""

    def __init__(self, url, fault):
        PsycopgInstrumentor().instrument()
        self._url = url
        self._fault = fault
        self._idle = queue.SimpleQueue()

    def stock(self, sku):
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            conn = psycopg.connect(self._url, autocommit=True)
        try:
            row = conn.execute(QUERY, (self._fault.delay_s(), sku)).fetchone()
        except psycopg.Error:
            conn.close()
            raise
        self._idle.put(conn)
        return row[0] if row else 0
