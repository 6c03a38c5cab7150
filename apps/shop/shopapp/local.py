"""The whole shop on this machine: every service as its own process on a
free loopback port, then the load generator, then an orderly stop."""

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.request

from .load import TIMEOUT_S
from .services import DATABASE, SERVICES, start_order

SHOP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shop.py")
LOOPBACK = "127.0.0.1"
# A service's start includes importing Flask and the OpenTelemetry SDK,
# slow on a busy machine; its stop includes flushing its spans.
START_S = 30.0
STOP_S = 20.0


class Failure(Exception):
    """Why the run failed, in one line."""


def run(duration_s, rate, seed, fault=None, otlp=None, db=None, freeze=None):
    """Runs the shop under load; `fault` is (service, ms, share, after_s),
    the service "database" for inventory's queries; `otlp` an OTLP/HTTP
    base URL for every process's spans; `db` a PostgreSQL URL the services
    that read a database use; `freeze` (service, after_s, for_s) stops that
    service's process for a while, as a stalled VM or a debugger would.
    Returns what happened as a dict; raises Failure."""
    if fault and not db and (fault[0] == DATABASE or SERVICES[fault[0]].worker):
        raise Failure(f"a fault on {fault[0]} needs a database: give --db URL")
    env = dict(os.environ)
    if otlp:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = otlp
        # It would take precedence for traces.
        env.pop("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None)
    children = []
    # SIGTERM stops the run like Ctrl-C, through the clean-up below (and
    # Ctrl-C does so even where the shell started us ignoring it).
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.default_int_handler)
    try:
        waves = start_order(db)
        services, ports, began = {}, {}, None
        index = {n: i for i, n in enumerate(n for wave in waves for n in wave)}
        for wave in waves:
            for name in wave:
                cmd = _serve_cmd(name, seed + 1 + index[name], ports, fault, db)
                services[name] = _spawn(cmd, env, name, children, stdout=subprocess.PIPE)
            for name in wave:
                ready = _ready(name, services[name])
                ports[name] = int(ready["listen"].rpartition(":")[2])
                _healthy(name, ports[name])
                if fault and _faulted(name, fault, db):
                    began = ready["fault_begins_unix"]
        frozen = _Freeze(services[freeze[0]], freeze[1], freeze[2]) if freeze else None
        try:
            load = _load(ports["frontend"], rate, duration_s, seed, env, children)
        finally:
            if frozen:
                frozen.end()
        for name, p in services.items():
            if p.poll() is not None:
                raise Failure(f"{name} exited with {p.returncode} during the load")
        for wave in reversed(waves):
            _stop([(name, services[name]) for name in wave])
        if load["ok"] == 0:
            raise Failure(f"none of the {load['sent']} requests succeeded")
        out = {"ports": ports, "fault": None, "load": load}
        if fault:
            service, ms, share, after_s = fault
            out["fault"] = {
                "service": service,
                "ms": ms,
                "share": share,
                "after_s": after_s,
                "began_unix": began,
            }
        if frozen:
            service, after_s, for_s = freeze
            out["freeze"] = {
                "service": service,
                "after_s": after_s,
                "for_s": for_s,
                "began_unix": frozen.began,
            }
        return out
    finally:
        _clean_up(children)


class _Freeze:
    """Stops a process (SIGSTOP) `after_s` from now for `for_s`, in a
    thread; `end` resumes it at once if it is still stopped, so that it can
    answer the SIGTERM that stops the run."""

    def __init__(self, p, after_s, for_s):
        self._p, self._after_s, self._for_s = p, after_s, for_s
        self._done = threading.Event()
        self.began = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        if self._done.wait(self._after_s):
            return
        self.began = time.time()
        os.kill(self._p.pid, signal.SIGSTOP)
        self._done.wait(self._for_s)
        os.kill(self._p.pid, signal.SIGCONT)

    def end(self):
        self._done.set()
        self._thread.join()


def _faulted(name, fault, db):
    """Whether service `name` carries `fault`: its own, or its database's."""
    database = fault[0] == DATABASE and db and SERVICES[name].database
    return fault[0] == name or bool(database)


def _serve_cmd(name, seed, ports, fault, db):
    cmd = ["serve", "--service", name, "--listen", f"{LOOPBACK}:0", "--seed", str(seed)]
    for callee in SERVICES[name].callees:
        cmd += ["--peer", f"{callee}={LOOPBACK}:{ports[callee]}"]
    if db and SERVICES[name].needs_db:
        cmd += ["--db", db]
    if fault and _faulted(name, fault, db):
        target, ms, share, after_s = fault
        cmd += ["--delay-ms", str(ms), "--delay-share", str(share), "--delay-after", str(after_s)]
        if target == DATABASE:
            cmd += ["--delay-on", DATABASE]
    return cmd


def _spawn(cmd, env, name, children, stdout):
    p = subprocess.Popen(
        [sys.executable, SHOP, *cmd],
        env={**env, "OTEL_SERVICE_NAME": name},
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        text=True,
    )
    children.append(p)
    return p


def _ready(name, p):
    """The line a service prints once it listens."""
    ready, _, _ = select.select([p.stdout], [], [], START_S)
    if not ready:
        raise Failure(f"{name} did not listen within {START_S:.0f} s")
    line = p.stdout.readline()
    if not line:
        raise Failure(f"{name} exited with {p.wait()} before listening")
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        raise Failure(f"{name} said {line.strip()!r} instead of where it listens") from None


def _healthy(name, port):
    deadline = time.monotonic() + START_S
    while True:
        try:
            with urllib.request.urlopen(f"http://{LOOPBACK}:{port}/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise Failure(f"{name} did not answer its health check within {START_S:.0f} s")
        time.sleep(0.1)


def _load(port, rate, duration_s, seed, env, children):
    cmd = ["load", "--target", f"{LOOPBACK}:{port}", "--rate", str(rate)]
    cmd += ["--duration", str(duration_s), "--seed", str(seed)]
    p = _spawn(cmd, env, "loadgen", children, stdout=subprocess.PIPE)
    try:
        out, _ = p.communicate(timeout=duration_s + TIMEOUT_S + START_S + STOP_S)
    except subprocess.TimeoutExpired:
        raise Failure("the load generator did not finish in time") from None
    if p.returncode != 0:
        raise Failure(f"the load generator exited with {p.returncode}")
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        raise Failure(f"the load generator printed {out.strip()!r}") from None


def _stop(named):
    """SIGTERM to each of `named` [(name, process)], then each must exit 0."""
    for _, p in named:
        p.terminate()
    for name, p in named:
        try:
            code = p.wait(STOP_S)
        except subprocess.TimeoutExpired:
            raise Failure(f"{name} did not stop within {STOP_S:.0f} s of SIGTERM") from None
        if code != 0:
            raise Failure(f"{name} exited with {code} on SIGTERM")


def _clean_up(children):
    """Nothing started here outlives the run, however it ends; callers are
    told first."""
    for p in reversed(children):
        if p.poll() is None:
            p.terminate()
    for p in children:
        try:
            p.wait(STOP_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p.stdout:
            p.stdout.close()
