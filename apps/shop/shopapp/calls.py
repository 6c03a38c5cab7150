"""Calls from one service to the others, one at a time or in parallel."""

import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor

import requests

# A callee that has not answered by then has failed; below the load
# generator's own timeout, so the caller can still answer with an error.
TIMEOUT_S = 3.0
# Enough workers for the parallel calls of many concurrent requests.
POOL_WORKERS = 64


class Calls:
    """HTTP calls to the peers (name -> base URL). Each thread keeps its own
    session, so connections are reused without sharing one between threads."""

    def __init__(self, peers):
        self._peers = peers
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=POOL_WORKERS, thread_name_prefix="call")

    def get(self, service, path, **params):
        """GET `path` on `service`; its JSON body, or an exception."""
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        r = session.get(self._peers[service] + path, params=params, timeout=TIMEOUT_S)
        r.raise_for_status()
        return r.json()

    def parallel(self, calls):
        """[(service, path, params)] called at once; their bodies in order.
        Each worker runs in a copy of the caller's context, so its client
        span is a child of the caller's server span: thread pools do not
        carry the OpenTelemetry context by themselves."""
        futures = [
            self._pool.submit(contextvars.copy_context().run, self.get, service, path, **params)
            for service, path, params in calls
        ]
        return [f.result() for f in futures]
