"""Runs the workers app on loopback: three Flask services, each served by
gunicorn worker processes (`front` calls `mid` then `leaf`, `mid` calls
`leaf`), traced by the official OpenTelemetry Python SDK and exporting over
OTLP/HTTP; sends Poisson load to `front`, stops the services cleanly (their
spans flushed) and prints a JSON report."""

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = {"front": ["mid", "leaf"], "mid": ["leaf"], "leaf": []}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, deadline):
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def load(url, rate, duration_s):
    """Requests at Poisson times, each on a thread of its own so a slow
    answer never delays the next; (sent, answered)."""
    answered = []
    threads = []

    def one():
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                answered.append(r.status == 200)
        except OSError:
            answered.append(False)

    start = time.time()
    while time.time() - start < duration_s:
        t = threading.Thread(target=one)
        t.start()
        threads.append(t)
        time.sleep(random.expovariate(rate))
    for t in threads:
        t.join()
    return len(threads), sum(answered)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--otlp", required=True, metavar="URL", help="OTLP/HTTP base URL")
    p.add_argument("--rate", type=float, required=True, help="requests per second")
    p.add_argument("--duration", type=float, required=True, help="seconds of load")
    p.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    p.add_argument("--threads", type=int, default=1, help="threads per worker")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    random.seed(args.seed)
    ports = {s: free_port() for s in CALLS}
    procs = []
    try:
        for service, callees in CALLS.items():
            env = dict(os.environ)
            env["WORKERS_SERVICE"] = service
            env["WORKERS_CALLS"] = json.dumps(
                {c: f"http://127.0.0.1:{ports[c]}/" for c in callees}
            )
            env["OTEL_EXPORTER_OTLP_ENDPOINT"] = args.otlp
            cmd = [sys.executable, "-m", "gunicorn", "--chdir", HERE, "-b",
                   f"127.0.0.1:{ports[service]}", "-w", str(args.workers),
                   "--threads", str(args.threads), "app:app"]
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, text=True))
        deadline = time.time() + 30
        for service, port in ports.items():
            if not wait_listening(port, deadline):
                sys.exit(f"workers: {service} is not listening on {port}")
        # Every worker imports the app (and its SDK) on start: give them
        # the time before the load starts.
        time.sleep(2)
        sent, answered = load(f"http://127.0.0.1:{ports['front']}/", args.rate, args.duration)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        errors = [proc.communicate(timeout=30)[1] for proc in procs]
    failed = [e for e in errors if "Failed to export" in e]
    if failed:
        sys.exit("workers: a span export failed:\n" + failed[0])
    print(json.dumps({"ports": ports, "sent": sent, "answered": answered}))


if __name__ == "__main__":
    main()
