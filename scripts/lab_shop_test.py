#!/usr/bin/env python3
"""End-to-end test of `intpath lab` with an application intpath did not
write: the OpenTelemetry shop (apps/shop) on a FatTree k=4 lab.

Brings the lab up (with its web view, whose run list must show the lab's
run and which must stop with it), runs the eight shop services and the load generator on
hosts with `lab exec --detach`, throttles a switch link that `lab route`
reports for the catalog -> inventory calls (and that as few other calls
cross as possible) halfway through the load, and expects `lab diagnose
--format json` to name that link first. `lab down` must then leave no
process, namespace or interface behind.

`--fault loss` drops 5 % on that link instead (`--loss-pct` sets it), `--fault delay` delays
every frame leaving it by 20 ms (a long reroute, a flapping optic: no
queue grows), `--fault tbf` throttles its interface in the kernel with a
token bucket (`tc tbf`: a queue outside the switch program, which INT's
queue depth never sees), `--fault service` slows one
service (the seed picks which) by +40 ms on 30 % of its requests from
halfway, `--fault freeze` stops one called service's process (SIGSTOP,
the seed picks which) for FREEZE_S s from halfway, as a stalled VM would,
and `--fault none` injects nothing and expects nobody named.
A quarter into the load, before any fault, the diagnosis of the capture as
it stands (the services still exporting) must name no callee for calls
whose answers were not stored yet.
`--eval` prints the outcome as one JSON line instead of failing on a wrong
diagnosis (scripts/eval-lab-shop.sh runs it over faults and seeds). Needs root and Mininet; runs the
binaries in $INTPATH_BIN_DIR (default target/release). Exit status 0 on
success; on failure, one line saying what was expected and what came.
"""

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("INTPATH_BIN_DIR") or os.path.join(ROOT, "target", "release")
INTPATH = os.path.join(BIN, "intpath")
DIR = os.path.join(ROOT, "target", "lab-shop")
SHOP = os.path.join(ROOT, "apps", "shop", "shop.py")
PYTHON = shutil.which("python3")

# Service -> host, spread over the four pods; the load runs on h15.
PLACEMENT = {
    "frontend": "h1", "auth": "h2", "catalog": "h5", "recommend": "h9",
    "cart": "h13", "inventory": "h7", "pricing": "h11", "reviews": "h3",
}
LOAD_HOST = "h15"
PORT = 8080
CALLS = {
    "frontend": ["auth", "catalog", "recommend", "cart"],
    "catalog": ["inventory", "pricing"],
    "recommend": ["catalog", "reviews"],
    "cart": ["pricing"],
}
FAULTED_CALL = ("catalog", "inventory")
LOAD_RATE = 5
LOAD_SECONDS = 30
# The throttled link's egress, packets/s: below what its probe path, the
# background traffic and the catalog -> inventory calls offer it.
FAULT_PPS = 120
# The lossy link's default drop rate, %: the issue names 2 and 5.
LOSS_PCT = 5
DELAY_LINK_MS = 20
# The kernel throttle: below what the probes alone offer the link, queueing
# up to TBF_LATENCY before it drops.
TBF_RATE = "200kbit"
TBF_LATENCY = "100ms"
# A slow service: +40 ms on 30 % of its requests.
DELAY_MS, DELAY_SHARE = 40, 0.3
# How long a frozen service stays stopped: past its callers' 3 s timeout.
FREEZE_S = 8
# Seconds from the slow service's start to the load's: more than starting
# the other services and reading the routes takes.
SLOW_LEAD = 60
SERVICES = ["inventory", "pricing", "catalog", "reviews", "auth", "cart",
            "recommend", "frontend"]


class Failed(Exception):
    pass


def lab(*args, check=True, timeout=300):
    cmd = [INTPATH, "lab", args[0], "--dir", DIR, *args[1:]]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and run.returncode != 0:
        raise Failed(f"{' '.join(cmd)} exited {run.returncode}: {run.stderr.strip()}")
    return run


def leftovers():
    """Switch processes, Mininet host shells and switch interfaces."""
    out = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        name = os.path.basename(argv[0].decode(errors="replace"))
        if name in ("intpath-switch", "simple_switch_grpc"):
            out.add(f"{name} pid {pid}")
        if any(a.startswith(b"mininet:h") for a in argv):
            out.add(f"host shell pid {pid}")
    for dev in os.listdir("/sys/class/net"):
        if dev.startswith("s") and "-eth" in dev:
            out.add(f"interface {dev}")
    return out


def wait_for_line(path, what, timeout):
    """The first JSON line of a detached process's log."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("{"):
                        return json.loads(line)
        except FileNotFoundError:
            pass
        time.sleep(0.2)
    with open(path) as f:
        tail = f.read()[-1500:]
    raise Failed(f"{what} printed nothing within {timeout} s; {path}:\n{tail}")


def spans_settled(timeout=30):
    """Waits until the lab's database has gained no span for 3 s, and
    returns how many it holds. Calls stuck on a fault answer or time out
    after the load generator has finished, and their spans are exported a
    second later: a diagnosis of the spans stored 3 s after the load once
    missed 145 of 1,731 edges, the end of the run, and named the service
    whose calls waited on the link first."""
    db = os.path.join(DIR, "telemetry.db")
    last, since = -1, time.time()
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
                n = c.execute("SELECT count(*) FROM spans").fetchone()[0]
        except sqlite3.Error:
            n = last
        if n != last:
            last, since = n, time.time()
        elif time.time() - since >= 3:
            break
        time.sleep(0.5)
    return last


def detach(host, *argv):
    out = lab("exec", "--detach", host, "--", *argv).stdout
    # "pid N on HOST, output in LOG"
    return int(out.split()[1]), out.rsplit("output in ", 1)[1].strip()


def fabric(link):
    return not link.startswith("h") and "->h" not in link


def main(fault, seed, evaluate, loss_pct=LOSS_PCT):
    before = leftovers()
    slow = SERVICES[(seed - 1) % len(SERVICES)] if fault == "service" else None
    # A frozen service must have traced callers: not the entry.
    called = [s for s in SERVICES if s != "frontend"]
    frozen = called[(seed - 1) % len(called)] if fault == "freeze" else None
    pid_of = {}
    os.makedirs(os.path.dirname(DIR), exist_ok=True)
    shutil.rmtree(DIR, ignore_errors=True)
    pids = []
    try:
        t0 = time.time()
        up = json.loads(lab("up", "--topo", "fattree:k=4", "--web", "127.0.0.1:0",
                            "--format", "json").stdout)
        print(f"lab up in {time.time() - t0:.1f} s: OTLP {up['otlp_endpoint']}, "
              f"database {up['database']}, web view {up.get('web')}", flush=True)
        web = up.get("web")
        if not web:
            raise Failed(f"lab up --web gave no web view address: {up}")
        runs = json.load(urllib.request.urlopen(web + "api/runs", timeout=10))
        if up["run"] not in [r.get("run") for r in runs["runs"]]:
            raise Failed(f"the lab's web view does not list run {up['run']}: {runs}")
        hosts = {h["name"]: h["ip"] for h in up["hosts"]}
        if up["otlp_endpoint"] != f"http://{up['collector']['ip']}:4318":
            raise Failed(f"OTLP endpoint {up['otlp_endpoint']} is not the collector host's")
        if len(hosts) != 16 or len(up["switches"]) != 20:
            raise Failed(f"{len(hosts)} hosts, {len(up['switches'])} switches")
        again = lab("up", check=False)
        if again.returncode == 0 or "already runs" not in again.stderr:
            raise Failed(f"a second up on the same dir was not refused: {again.stderr.strip()}")
        env = lab("exec", "h5", "--", "sh", "-c",
                  "echo $OTEL_EXPORTER_OTLP_ENDPOINT $OTEL_RESOURCE_ATTRIBUTES").stdout.split()
        if env != [up["otlp_endpoint"], f"host.name=h5,host.ip={hosts['h5']}"]:
            raise Failed(f"exec environment on h5: {env}")

        # Callees first, so a caller's first request finds its peer.
        order = ["inventory", "pricing", "reviews", "auth", "catalog", "cart",
                 "recommend", "frontend"]
        os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "1000"
        for service in order:
            host = PLACEMENT[service]
            peers = []
            for callee in CALLS.get(service, []):
                peers += ["--peer", f"{callee}={hosts[PLACEMENT[callee]]}:{PORT}"]
            if service == slow:
                # The delay counts from the service's start; the load is
                # started SLOW_LEAD s after it, so the fault begins halfway.
                slow_started = time.time()
                peers += ["--delay-ms", str(DELAY_MS), "--delay-share", str(DELAY_SHARE),
                          "--delay-after", str(SLOW_LEAD + LOAD_SECONDS / 2)]
            pid, log = detach(host, PYTHON, SHOP, "serve", "--service", service,
                              "--listen", f"{hosts[host]}:{PORT}", "--seed", str(seed),
                              *peers)
            pids.append(pid)
            pid_of[service] = pid
            wait_for_line(log, f"{service} on {host}", 30)
        print(f"shop up: {PLACEMENT}", flush=True)

        routes = {}
        for caller, callees in CALLS.items():
            for callee in callees:
                pair = (PLACEMENT[caller], PLACEMENT[callee])
                routes[(caller, callee)] = json.loads(
                    lab("route", *pair, "--format", "json").stdout)
        links = lambda r: [f"{l['src']}:{l['src_port']}->{l['dst']}"
                           for l in r["request"] + r["reply"]]
        text = lab("route", PLACEMENT[FAULTED_CALL[0]], PLACEMENT[FAULTED_CALL[1]]).stdout
        faulted = links(routes[FAULTED_CALL])
        if any(l not in text for l in faulted):
            raise Failed(f"`lab route` text and JSON disagree: {text}")
        others = [l for call, r in routes.items() if call != FAULTED_CALL for l in links(r)]
        # The request direction: the catalog's calls queue behind it.
        request = [l for l in faulted[:len(routes[FAULTED_CALL]["request"])] if fabric(l)]
        target = min(request, key=lambda l: (others.count(l), request.index(l)))
        print(f"{FAULTED_CALL[0]} -> {FAULTED_CALL[1]} crosses {' '.join(faulted)}; "
              f"throttling {target} (on {others.count(target)} other calls' routes)", flush=True)

        if slow:
            lead = slow_started + SLOW_LEAD - time.time()
            if lead < 0:
                print(f"setting up took {SLOW_LEAD - lead:.0f} s: the slow service's fault "
                      f"begins {-lead:.0f} s before halfway", flush=True)
            time.sleep(max(lead, 0))
        pid, load_log = detach(LOAD_HOST, PYTHON, SHOP, "load", "--target",
                               f"{hosts[PLACEMENT['frontend']]}:{PORT}", "--rate",
                               str(LOAD_RATE), "--duration", str(LOAD_SECONDS),
                               "--seed", str(seed))
        pids.append(pid)
        load_started = time.time()
        # A quarter in, before any fault, the capture is read while the
        # services run, each exporter partway through a batch: calls whose
        # answers are still to be exported must not name their callee.
        time.sleep(LOAD_SECONDS / 4)
        early = json.loads(lab("diagnose", "--format", "json", timeout=600).stdout)
        early_culprits = early.get("culprits") or []
        early_named = [f"{c['kind']} {c['name']}" for c in early_culprits]
        print(f"diagnosis a quarter in, no fault yet: {early_named or 'nobody'} named; "
              f"unanswered: {json.dumps(early.get('unanswered'))}", flush=True)
        for_silence = [f"{c['kind']} {c['name']}" for c in early_culprits
                       if "unanswered_calls" in c.get("evidence", {})]
        if for_silence and not evaluate:
            raise Failed(f"a quarter into the load, no fault yet, the diagnosis named "
                         f"{for_silence} for calls unanswered while the services still ran: "
                         f"{json.dumps(early.get('unanswered'))}")
        time.sleep(max(load_started + LOAD_SECONDS / 2 - time.time(), 0))
        if fault == "link":
            lab("fault", "link", target, "--rate", str(FAULT_PPS))
            print(f"fault on: {target} at {FAULT_PPS} pps", flush=True)
        elif fault == "loss":
            lab("fault", "link", target, "--loss", str(loss_pct))
            print(f"fault on: {target} loses {loss_pct} %", flush=True)
        elif fault == "delay":
            lab("fault", "link", target, "--delay-ms", str(DELAY_LINK_MS))
            print(f"fault on: {target} delays {DELAY_LINK_MS} ms", flush=True)
        elif fault == "tbf":
            sw, port = target.split("->")[0].split(":")
            dev = f"{sw}-eth{port}"
            subprocess.run(["tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", TBF_RATE,
                            "burst", "3000", "latency", TBF_LATENCY], check=True)
            print(f"fault on: {dev} ({target}) token bucket {TBF_RATE}, {TBF_LATENCY}",
                  flush=True)
        elif fault == "freeze":
            os.kill(pid_of[frozen], signal.SIGSTOP)
            print(f"fault on: {frozen} stopped for {FREEZE_S} s", flush=True)
            time.sleep(FREEZE_S)
            os.kill(pid_of[frozen], signal.SIGCONT)
        load = wait_for_line(load_log, "the load generator", LOAD_SECONDS + 60)
        print(f"load: {load}", flush=True)
        status = lab("status").stdout
        if fault == "link" and f"fault {target}: rate {FAULT_PPS} pps" not in status:
            raise Failed(f"status does not show the fault:\n{status}")
        # The services export every second (OTEL_BSP_SCHEDULE_DELAY); calls
        # stuck on the fault end later.
        print(f"spans stored: {spans_settled()}", flush=True)
        diag = lab("diagnose", "--format", "json", timeout=600)
        result = json.loads(diag.stdout)
        culprits = result.get("culprits") or []
        top = culprits[0] if culprits else None
        summary = json.dumps({k: result.get(k) for k in
                              ("culprits", "edges", "slow_edges", "verdicts", "rejects")})
        print(f"diagnosis: {summary[:3000]}", flush=True)
        expected = {"link": target, "loss": target, "delay": target, "tbf": target, "service": slow,
                    "freeze": frozen, "none": None}[fault]
        if fault == "none":
            right = top is None
        elif fault in ("service", "freeze"):
            right = bool(top) and top.get("kind") == "service" and top.get("name") == expected
        else:
            right = bool(top) and top.get("name") == target and top.get("kind") in ("link", "loss")
        if evaluate:
            print(json.dumps({"fault": fault, "seed": seed, "expected": expected,
                              **({"loss_pct": loss_pct} if fault == "loss" else {}),
                              "named": [f"{c['kind']} {c['name']}" for c in culprits],
                              "named_a_quarter_in": early_named,
                              "right": right}), flush=True)
        elif not right:
            raise Failed(f"the diagnosis does not name {expected or 'nobody'} first "
                         f"(injected from {LOAD_SECONDS / 2:.0f} s of {LOAD_SECONDS} s); "
                         f"it printed: {diag.stdout}")
        else:
            print(f"diagnosis names {top['kind'] + ' ' + top['name'] if top else 'nobody'}, "
                  "as injected", flush=True)
    finally:
        down = lab("down", check=False)
        print(down.stdout.strip() or down.stderr.strip(), flush=True)
    if down.returncode != 0:
        raise Failed(f"lab down failed: {down.stderr.strip()}")
    try:
        urllib.request.urlopen(web + "api/runs", timeout=5)
        raise Failed(f"the web view {web} outlived the lab")
    except urllib.error.URLError:
        pass
    time.sleep(1)
    left = sorted(leftovers() - before)
    alive = [p for p in pids if os.path.exists(f"/proc/{p}") and
             open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
    if left or alive:
        raise Failed(f"lab down left behind: {left + [f'shop pid {p}' for p in alive]}")
    again = lab("down")
    if "nothing was running" not in again.stdout:
        raise Failed(f"a second down did something: {again.stdout.strip()}")
    print("lab down left nothing behind; a second down had nothing to do")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="intpath lab with the OpenTelemetry shop")
    ap.add_argument("--fault", choices=["link", "loss", "delay", "tbf", "service", "freeze", "none"],
                    default="link")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--loss-pct", type=float, default=LOSS_PCT,
                    help=f"with --fault loss: the share of frames the link drops, %% "
                         f"(default {LOSS_PCT})")
    ap.add_argument("--eval", action="store_true",
                    help="print the outcome as JSON instead of failing on a wrong diagnosis")
    args = ap.parse_args()
    try:
        main(args.fault, args.seed, args.eval, args.loss_pct)
    except Failed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
