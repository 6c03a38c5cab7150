#!/usr/bin/env python3
"""orders: six gRPC services traced with OpenTelemetry's gRPC instrumentation.

    orders.py serve --service NAME --listen IP:PORT --peers JSON
    orders.py run-local --duration S --rate R [--seed N]
                        [--fault SERVICE:MS:SHARE:AFTER]

Tracing is configured by the standard OTEL_* environment variables, plus
--otlp for the exporter's base URL; see README.md."""

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
from concurrent import futures

import grpc
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.grpc import GrpcInstrumentorClient, GrpcInstrumentorServer
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# Who calls whom. A stage is a list of calls made together (in parallel
# when there are several); "stock" is asked once per line of the order,
# zero to three lines, one after the other.
CALLS = {
    "gateway": [["users", "orders"]],
    "orders": [["stock*"], ["payments"]],
    "payments": [["ledger"]],
    "users": [["ledger"]],
    "stock": [],
    "ledger": [],
}
# Median own work per request, ms (half before the calls, half after).
WORK_MS = {"gateway": 1.0, "orders": 2.0, "payments": 1.5, "users": 1.0, "stock": 0.8, "ledger": 1.2}
# Worker threads per server: requests past these wait, and answer out of
# the order they came in.
WORKERS = 4
TIMEOUT_S = 3.0


def encode(obj):
    return json.dumps(obj).encode()


def decode(data):
    return json.loads(data or b"{}")


def tracing(service, otlp):
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")))
    trace.set_tracer_provider(provider)
    GrpcInstrumentorClient().instrument()
    GrpcInstrumentorServer().instrument()
    return provider


def method(channel, service):
    return channel.unary_unary(f"/orders.{service}/Handle", request_serializer=encode, response_deserializer=decode)


class Service:
    def __init__(self, name, peers, seed, fault):
        self.name = name
        self.rng = random.Random(f"{seed}/{name}")
        self.lock = threading.Lock()
        self.fault = fault if fault and fault[0] == name else None
        self.started = time.monotonic()
        self.stubs = {p: method(grpc.insecure_channel(addr), p) for p, addr in peers.items()}
        self.fanout = futures.ThreadPoolExecutor(max_workers=8)

    def draws(self):
        with self.lock:
            work = WORK_MS[self.name] * self.rng.lognormvariate(0, 0.5) / 1000
            lines = self.rng.randint(0, 3)
            extra = 0.0
            if self.fault:
                _, ms, share, after = self.fault
                if time.monotonic() - self.started >= after and self.rng.random() < share:
                    extra = ms / 1000
            return work, lines, extra

    def handle(self, request, context):
        work, lines, extra = self.draws()
        time.sleep(work / 2)
        for stage in CALLS[self.name]:
            calls = [c.rstrip("*") for c in stage for _ in range(lines if c.endswith("*") else 1)]
            if len(calls) == 1 or stage[0].endswith("*"):
                for c in calls:
                    self.stubs[c](request, timeout=TIMEOUT_S)
            else:
                pending = [self.stubs[c].future(request, timeout=TIMEOUT_S) for c in calls]
                for p in pending:
                    p.result()
        time.sleep(work / 2 + extra)
        return {"service": self.name}


def serve(args):
    provider = tracing(args.service, args.otlp)
    svc = Service(args.service, json.loads(args.peers), args.seed, args.fault)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKERS))
    handler = grpc.unary_unary_rpc_method_handler(svc.handle, request_deserializer=decode, response_serializer=encode)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(f"orders.{args.service}", {"Handle": handler})])
    server.add_insecure_port(args.listen)
    server.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("ready", flush=True)
    stop.wait()
    server.stop(1).wait()
    provider.shutdown()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(procs):
    for p in procs:
        line = p.stdout.readline()
        if line.strip() != b"ready":
            raise SystemExit(f"a service failed to start (exit {p.wait()})")


def run_local(args):
    listen = {name: f"127.0.0.1:{free_port()}" for name in CALLS}
    procs = []
    for name, stages in CALLS.items():
        peers = {c.rstrip("*"): listen[c.rstrip("*")] for stage in stages for c in stage}
        cmd = [sys.executable, os.path.abspath(__file__), "serve", "--service", name, "--listen", listen[name],
               "--peers", json.dumps(peers), "--otlp", args.otlp, "--seed", str(args.seed)]
        if args.fault:
            cmd += ["--fault", ":".join(str(x) for x in args.fault)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE))
    try:
        wait_ready(procs)
        provider = tracing("loadgen", args.otlp)
        gateway = method(grpc.insecure_channel(listen["gateway"]), "gateway")
        rng = random.Random(f"{args.seed}/load")
        counts = {"sent": 0, "answered": 0, "failed": 0}
        lock = threading.Lock()

        def one():
            try:
                gateway({"order": rng.random()}, timeout=2 * TIMEOUT_S)
                outcome = "answered"
            except grpc.RpcError:
                outcome = "failed"
            with lock:
                counts[outcome] += 1

        pool = futures.ThreadPoolExecutor(max_workers=32)
        end = time.monotonic() + args.duration
        due = time.monotonic()
        while due < end:
            time.sleep(max(0.0, due - time.monotonic()))
            pool.submit(one)
            counts["sent"] += 1
            due += rng.expovariate(args.rate)
        pool.shutdown(wait=True)
        provider.shutdown()
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            p.wait()
    fault = None
    if args.fault:
        fault = dict(zip(["service", "ms", "share", "after_s"], args.fault))
    print(json.dumps({"ports": listen, "fault": fault, "load": counts}))


def fault(text):
    parts = text.split(":")
    if len(parts) != 4 or parts[0] not in CALLS:
        raise argparse.ArgumentTypeError(f"{text!r} is not SERVICE:MS:SHARE:AFTER with an orders service")
    try:
        ms, share, after = float(parts[1]), float(parts[2]), float(parts[3])
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not SERVICE:MS:SHARE:AFTER with numbers") from None
    if ms < 0 or not 0 <= share <= 1 or after < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: MS and AFTER must be ≥ 0 and SHARE in 0..1")
    return parts[0], ms, share, after


def positive(text):
    x = float(text)
    if not x > 0:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("serve", "run-local"):
        p = sub.add_parser(name)
        p.add_argument("--otlp", default=os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"))
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--fault", type=fault)
    s = sub.choices["serve"]
    s.add_argument("--service", required=True, choices=list(CALLS))
    s.add_argument("--listen", required=True)
    s.add_argument("--peers", default="{}")
    r = sub.choices["run-local"]
    r.add_argument("--duration", type=positive, default=30)
    r.add_argument("--rate", type=positive, default=15)
    args = ap.parse_args()
    serve(args) if args.cmd == "serve" else run_local(args)


if __name__ == "__main__":
    main()
