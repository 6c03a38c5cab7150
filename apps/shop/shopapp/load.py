"""An open-loop load generator: Poisson arrivals at a fixed rate, each
request sent from a thread pool so that slow answers never delay the next
arrival."""

import math
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from . import addr, telemetry

TIMEOUT_S = 5.0


def run(target, rate, duration_s, seed):
    """Sends GET /home to `target` (ip, port) at `rate` per second for
    `duration_s`, traced as service `loadgen`; waits for the last answer and
    returns the summary."""
    provider = telemetry.start("loadgen")
    try:
        return _send(addr.url(*target) + "/home", rate, duration_s, random.Random(seed))
    finally:
        provider.shutdown()


def _send(url, rate, duration_s, rng):
    local = threading.local()
    lock = threading.Lock()
    latencies, failed = [], 0

    def one():
        nonlocal failed
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = requests.Session()
        t0 = time.perf_counter()
        try:
            ok = session.get(url, timeout=TIMEOUT_S).status_code == 200
        except requests.RequestException:
            ok = False
        ms = (time.perf_counter() - t0) * 1000
        with lock:
            if ok:
                latencies.append(ms)
            else:
                failed += 1

    # As many workers as requests can be outstanding before they time out.
    workers = max(8, min(512, math.ceil(rate * TIMEOUT_S)))
    sent = 0
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="load") as pool:
        start = time.monotonic()
        at = start + rng.expovariate(rate)
        while at < start + duration_s:
            time.sleep(max(0.0, at - time.monotonic()))
            pool.submit(one)
            sent += 1
            at += rng.expovariate(rate)
    latencies.sort()
    return {
        "sent": sent,
        "ok": len(latencies),
        "failed": failed,
        "mean_ms": round(sum(latencies) / len(latencies), 2) if latencies else None,
        "p99_ms": round(latencies[math.ceil(0.99 * len(latencies)) - 1], 2) if latencies else None,
    }
