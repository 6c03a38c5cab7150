"""One service of the shop as a threaded HTTP server."""

import json
import logging
import random
import signal
import threading

import flask
import requests
from opentelemetry.instrumentation.flask import FlaskInstrumentor
from werkzeug.serving import make_server

from . import addr, telemetry
from .calls import Calls
from .services import DATABASE, SERVICES
from .work import Fault, Work

HEALTH = "/healthz"


class Context:
    """What a handler works with: its peers, its work, its random numbers
    and the request's query parameters."""

    def __init__(self, calls, work, rng, db, jobs):
        self.calls = calls
        self.work = work
        self.rng = rng
        self.db = db
        self.jobs = jobs

    @property
    def args(self):
        return flask.request.args


def missing_peers(name, peers):
    """The callees of service `name` that `peers` has no address for."""
    return [c for c in SERVICES[name].callees if c not in peers]


def serve(name, listen, peers, seed, fault, host_attributes, db_url=None, delay_on="service"):
    """Serves service `name` on `listen` (ip, port) until SIGTERM or SIGINT,
    then flushes every span and returns. `peers` maps callee names to (ip,
    port); `fault` is (delay_ms, share, after_s), on the service's requests
    or, with `delay_on` "database", on its queries to the PostgreSQL
    database at `db_url`."""
    rng = random.Random(seed)
    fault = Fault(rng, *fault)
    no_fault = Fault(rng)
    spec = SERVICES[name]
    provider = telemetry.start(name, host_attributes)
    db = None
    if db_url and spec.database:
        # Only a shop with a database needs psycopg.
        from . import database

        database.prepare(db_url)
        db = database.Database(db_url, fault if delay_on == DATABASE else no_fault)
    jobs = None
    if db_url and spec.jobs == "send":
        from . import jobs as job_queue

        job_queue.prepare(db_url)
        jobs = job_queue.Publisher(db_url)
    calls = Calls({p: addr.url(*peers[p]) for p in spec.callees})
    ctx = Context(calls, Work(rng, spec.work_ms), rng, db, jobs)
    handler_fault = no_fault if delay_on == DATABASE else fault

    app = flask.Flask(name)
    # Health checks are not traced, as most teams configure it.
    FlaskInstrumentor().instrument_app(app, excluded_urls=HEALTH.lstrip("/"))

    stop = threading.Event()
    threads = []
    if spec.worker:
        if not db_url:
            raise SystemExit(f"shop serve: error: {name} handles jobs from a database: give --db")
        from . import jobs as job_queue

        def handle_job(job):
            spec.handler(ctx, job)
            handler_fault.maybe_delay()

        job_queue.prepare(db_url)
        worker = job_queue.Worker(db_url, handle_job)
        threads.append(threading.Thread(target=worker.run, args=(stop,), name="jobs"))
    else:

        @app.get(spec.route)
        def handle(**params):
            body = spec.handler(ctx, **params)
            handler_fault.maybe_delay()
            return flask.jsonify(body)

    @app.errorhandler(requests.RequestException)
    def callee_failed(e):
        # A failed callee fails this request as a bad gateway, logged in
        # one line rather than as a traceback.
        req = e.request
        what = f"{req.method} {req.url}" if req is not None else "a call"
        app.logger.warning("%s failed: %s", what, type(e).__name__)
        return flask.jsonify({"error": f"{what} failed"}), 502

    @app.get(HEALTH)
    def health():
        return flask.jsonify({"service": name})

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server(listen[0], listen[1], app, threaded=True)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, name="serve")
    thread.start()
    for t in threads:
        t.start()
    ip, port = server.server_address[:2]
    ready = {"service": name, "listen": f"{ip}:{port}", "fault_begins_unix": fault.begins_unix}
    print(json.dumps(ready), flush=True)
    try:
        stop.wait()
    finally:
        server.shutdown()
        thread.join()
        for t in threads:
            t.join()
        server.server_close()
        provider.shutdown()
