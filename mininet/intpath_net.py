#!/usr/bin/python3
"""Build any intpath topology in Mininet with P4Runtime switches.

Run with Debian's interpreter (/usr/bin/python3), which sees the mininet
package. --topo takes whatever `intpath` takes (a generator expression, our
JSON with or without ports, p4lang topology.json, p4-utils p4app.json,
GraphML, GML): the launcher asks `intpath topo export --format json` for the
resolved topology, so both read it the same way. Each switch is either the intpath reference switch (`--switch soft`, the default)
or bmv2's simple_switch_grpc running the compiled p4/ program
(`--switch bmv2`). The launcher writes the switch map that `intpath deploy`
reads and tears everything down on exit, on a signal, or with `--cleanup`
after a crash.
"""

import argparse
import atexit
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from mininet.clean import cleanup as mininet_cleanup
from mininet.link import TCLink
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host, Switch
from mininet.topo import Topo

RUN_DIR = "/tmp/intpath-mininet"
CPU_PORT = 255
# Ports the switches listen on start below Linux's ephemeral range (32768
# on): a port in it can be taken as a client connection's source port
# between the check that it is free and the switch's bind.
GRPC_BASE_PORT = 10100
# The reference switches' text admin interfaces (queue rates at run time).
ADMIN_BASE_PORT = 10500
# bmv2's Thrift servers, for simple_switch_CLI.
THRIFT_BASE_PORT = 9090
# How long switches may take to serve P4Runtime, all started at once: on two
# busy cores 80 of them need a few seconds.
START_TIMEOUT_BASE = 20.0
START_TIMEOUT_PER_SWITCH = 0.5


class TopologyError(Exception):
    """A topology file the launcher cannot build, with the reason."""


class StartError(Exception):
    """A switch that did not start or could not be configured, named with
    what failed."""


def find_binary(name, given=None):
    """A program of ours: `given`, else on PATH, else built in this checkout
    (`$INTPATH_BIN_DIR`, target/release, target/debug)."""
    if given:
        if shutil.which(given):
            return shutil.which(given)
        raise TopologyError(f"{given}: not an executable program")
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [os.environ.get("INTPATH_BIN_DIR")] + [
        os.path.join(here, "..", "target", p) for p in ("release", "debug")]
    found = shutil.which(name) or next(
        (os.path.join(d, name) for d in dirs
         if d and os.access(os.path.join(d, name), os.X_OK)), None)
    if not found:
        raise TopologyError(f"cannot find `{name}`: build it (cargo build --release) and put "
                            f"target/release on PATH, or give its path")
    return os.path.abspath(found)


def load_topology(spec, intpath=None, strict=False):
    """The topology `spec` names, resolved by `intpath topo export`: every
    link with both ports, every host with its switch and port."""
    cmd = [find_binary("intpath", intpath), "topo", "export", "--format", "json", "--topo", spec]
    if strict:
        cmd.append("--strict")
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        lines = [line for line in run.stderr.splitlines() if line.strip()]
        raise TopologyError(lines[-1] if lines else f"{spec}: intpath exited {run.returncode}")
    # Warnings (skipped self-loops) go where the user looks.
    sys.stderr.write(run.stderr)
    return json.loads(run.stdout)


def host_links(topo):
    """Host attachments as (host, switch, switch_port, link)."""
    hosts = {h["name"] for h in topo["hosts"]}
    for link in topo["links"]:
        if link["a"] in hosts:
            yield link["a"], link["b"], link["b_port"], link
        elif link["b"] in hosts:
            yield link["b"], link["a"], link["a_port"], link


class IntpathTopo(Topo):
    """The exported topology, ports kept exactly as the plan uses them."""

    def build(self, topo, link_opts, delays=True):
        for s in topo["switches"]:
            self.addSwitch(s["name"], device_id=s["id"], dpid="%016x" % s["id"])
        for h in topo["hosts"]:
            self.addHost(h["name"], ip=h["ip"] + "/8", mac=h["mac"])
        hosts = {h["name"] for h in topo["hosts"]}
        for link in topo["links"]:
            if link["a"] in hosts or link["b"] in hosts:
                continue
            self.addLink(link["a"], link["b"], port1=link["a_port"], port2=link["b_port"],
                         **link_options(link, link_opts, delays))
        for host, switch, port, link in host_links(topo):
            self.addLink(host, switch, port1=0, port2=port,
                         **link_options(link, link_opts, delays))


def link_options(link, defaults, delays=True):
    opts = dict(defaults)
    if link.get("bw_mbps"):
        opts["bw"] = link["bw_mbps"]
    if link.get("delay_ms") and delays:
        opts["delay"] = f"{link['delay_ms']}ms"
    return opts


def netem_available():
    """Whether link delays can be emulated: loads sch_netem if it is a
    module, then tries it on a throw-away veth pair."""
    subprocess.run(["modprobe", "sch_netem"], capture_output=True, check=False)
    name = f"inetem{os.getpid() % 100000}"
    if subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"],
                      capture_output=True).returncode != 0:
        return False
    try:
        return subprocess.run(["tc", "qdisc", "add", "dev", name, "root", "netem", "delay", "1ms"],
                              capture_output=True).returncode == 0
    finally:
        subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)


def delays_possible(topo, link_opts):
    """Whether to emulate link delays: not when the kernel cannot (one
    warning here rather than a tc error per link and the delay silently
    missing)."""
    wanted = "delay" in link_opts or any(link.get("delay_ms") for link in topo["links"])
    if not wanted or netem_available():
        return True
    print("warning: the kernel has no sch_netem qdisc (modprobe sch_netem failed), so link "
          "delays (--delay, delay_ms) are not applied; bandwidths still are", file=sys.stderr)
    return False


def free_port(port):
    """The first port from `port` on that nobody listens on: a switch that
    finds its port taken exits while a readiness check would see the other
    listener and report it up."""
    while True:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                port += 1


def take_port(cls, counter):
    """The first free port from the class's counter on; the next switch
    looks from the one after it."""
    port = free_port(getattr(cls, counter))
    setattr(cls, counter, port + 1)
    return port


def wait_for_ports(switches, timeout):
    """Waits until every switch's gRPC server listens on 127.0.0.1, all at
    once: started one by one, 80 switches would each wait their turn.
    Raises StartError naming a switch that died or never listened."""
    pending = list(switches)
    deadline = time.time() + timeout
    while pending:
        for s in list(pending):
            if s.proc.poll() is not None:
                raise StartError(f"{s.name}: switch did not start; see {RUN_DIR}/{s.name}.log")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", s.grpc_port)) == 0:
                    pending.remove(s)
        if pending and time.time() > deadline:
            raise StartError(f"{pending[0].name}: switch did not start within {timeout:.0f} s; "
                             f"see {RUN_DIR}/{pending[0].name}.log")
        if pending:
            time.sleep(0.05)


class P4RuntimeSwitch(Switch):
    """A switch process that speaks P4Runtime on 127.0.0.1:grpc_port.

    Subclasses say which program to run; the ports are the Mininet
    interfaces, numbered as in the topology."""

    next_grpc_port = GRPC_BASE_PORT

    def __init__(self, name, device_id=None, queue_rates=None, queue_depth=None, **kwargs):
        Switch.__init__(self, name, **kwargs)
        self.device_id = device_id
        self.grpc_port = take_port(P4RuntimeSwitch, "next_grpc_port")
        self.queue_rates = queue_rates or {}
        self.queue_depth = queue_depth
        self.proc = None

    def p4_ports(self):
        return [(port, intf.name) for port, intf in sorted(self.intfs.items()) if intf.name != "lo"]

    def command(self):
        raise NotImplementedError

    def start(self, controllers):
        """Starts the process; `batchStartup` waits for it to serve."""
        os.makedirs(RUN_DIR, exist_ok=True)
        with open(os.path.join(RUN_DIR, f"{self.name}.log"), "w") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        with open(os.path.join(RUN_DIR, f"{self.name}.pid"), "w") as f:
            f.write(str(self.proc.pid))

    @classmethod
    def batchStartup(cls, switches):
        """Mininet calls this once for all switches of a class after
        starting each: wait for all of them together, then configure."""
        wait_for_ports(switches, START_TIMEOUT_BASE + START_TIMEOUT_PER_SWITCH * len(switches))
        for s in switches:
            s.configure()
        return switches

    def configure(self):
        """Settings made once the switch serves (none for ours: queues are
        command-line flags)."""

    @classmethod
    def batchShutdown(cls, switches):
        """SIGTERM to every switch first, then the waits: one by one, each
        switch's exit would be waited for in turn."""
        for s in switches:
            if s.proc and s.proc.poll() is None:
                s.proc.terminate()
        for s in switches:
            s.stop()
        return switches

    def stop(self, deleteIntfs=True):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        pidfile = os.path.join(RUN_DIR, f"{self.name}.pid")
        if os.path.exists(pidfile):
            os.remove(pidfile)
        Switch.stop(self, deleteIntfs)

    def map_entry(self):
        return {"name": self.name, "grpc_addr": f"127.0.0.1:{self.grpc_port}",
                "device_id": self.device_id, "cpu_port": CPU_PORT}


class SoftSwitch(P4RuntimeSwitch):
    """The intpath reference switch (intpath-switch), with its admin
    interface on 127.0.0.1 so that a driving program can throttle a port
    mid-run (`intpath demo --fault link:auto`)."""

    binary = "intpath-switch"
    next_admin_port = ADMIN_BASE_PORT

    def __init__(self, name, **kwargs):
        P4RuntimeSwitch.__init__(self, name, **kwargs)
        self.admin_port = take_port(SoftSwitch, "next_admin_port")

    def map_entry(self):
        entry = P4RuntimeSwitch.map_entry(self)
        entry["admin_addr"] = f"127.0.0.1:{self.admin_port}"
        return entry

    def command(self):
        cmd = [self.binary, "--device-id", str(self.device_id), "--cpu-port", str(CPU_PORT)]
        for port, intf in self.p4_ports():
            cmd += ["-i", f"{port}@{intf}"]
        for port, pps in sorted(self.queue_rates.items()):
            cmd += ["--queue-rate", f"{port}={pps}"]
        if self.queue_depth:
            cmd += ["--queue-depth", str(self.queue_depth)]
        cmd += ["--admin-addr", f"127.0.0.1:{self.admin_port}"]
        return cmd + ["--", "--grpc-server-addr", f"127.0.0.1:{self.grpc_port}"]


class Bmv2Switch(P4RuntimeSwitch):
    """bmv2's simple_switch_grpc, for users who have p4c and bmv2."""

    binary = "simple_switch_grpc"
    json_path = None
    next_thrift_port = THRIFT_BASE_PORT

    def __init__(self, name, **kwargs):
        P4RuntimeSwitch.__init__(self, name, **kwargs)
        self.thrift_port = take_port(Bmv2Switch, "next_thrift_port")

    def map_entry(self):
        entry = P4RuntimeSwitch.map_entry(self)
        entry["thrift_port"] = self.thrift_port
        return entry

    def command(self):
        cmd = [self.binary, "--device-id", str(self.device_id), "--no-p4",
               "--thrift-port", str(self.thrift_port)]
        for port, intf in self.p4_ports():
            cmd += ["-i", f"{port}@{intf}"]
        cmd += ["--", "--grpc-server-addr", f"127.0.0.1:{self.grpc_port}",
                "--cpu-port", str(CPU_PORT)]
        return cmd

    def configure(self):
        # bmv2 sets queues through its Thrift CLI, per egress port.
        cli = []
        if self.queue_depth:
            cli.append(f"set_queue_depth {self.queue_depth}")
        cli += [f"set_queue_rate {pps} {port}" for port, pps in sorted(self.queue_rates.items())]
        for command in cli:
            self.cli(command)

    def cli(self, command):
        """Runs one simple_switch_CLI command. The CLI exits 0 after most
        failures and says so in its output, so both are checked."""
        argv = ["simple_switch_CLI", "--thrift-port", str(self.thrift_port)]
        try:
            run = subprocess.run(argv, input=command + "\n", capture_output=True, text=True,
                                 timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise StartError(f"{self.name}: simple_switch_CLI {command!r}: {e}") from None
        out = (run.stdout + run.stderr).strip()
        failed = [line for line in out.splitlines()
                  if line.lstrip().startswith(CLI_FAILURES) or "Could not connect" in line]
        if run.returncode != 0 or failed:
            why = (failed or out.splitlines() or [f"exit status {run.returncode}"])[-1].strip()
            raise StartError(f"{self.name}: simple_switch_CLI {command!r} failed: {why}")


# How simple_switch_CLI reports a command it could not run.
CLI_FAILURES = ("Error", "Invalid", "***", "Traceback", "Exception")


def cleanup_stale(topo=None):
    """Kills switch processes and removes links left by a crashed run.

    With the topology, only its switches' interfaces are removed (host ends
    vanish with the hosts' namespaces). Without it, Mininet's own cleanup
    (`mn -c`) runs, which also deletes /tmp/*.log and /tmp/*.out files, so
    it is kept for an explicit `--cleanup` without `--topo`."""
    if os.path.isdir(RUN_DIR):
        for f in os.listdir(RUN_DIR):
            if f.endswith(".pid"):
                try:
                    with open(os.path.join(RUN_DIR, f)) as fh:
                        os.killpg(int(fh.read().strip()), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
                os.remove(os.path.join(RUN_DIR, f))
    if topo is None:
        mininet_cleanup()
        return
    # Host shells outlive a killed launcher (Mininet starts them as
    # `bash … -is mininet:NAME`), and with them the hosts' namespaces.
    for h in topo["hosts"]:
        subprocess.run(["pkill", "-9", "-f", "--", f"-is mininet:{h['name']}$"], check=False)
    prefixes = tuple(f"{s['name']}-eth" for s in topo["switches"])
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(prefixes):
            subprocess.run(["ip", "link", "del", name], stderr=subprocess.DEVNULL, check=False)


def hold_run_lock():
    """One network at a time: switch names, gRPC ports and the leftovers
    cleanup removes are shared. The lock dies with the process, so a crashed
    launcher never blocks the next one."""
    os.makedirs(RUN_DIR, exist_ok=True)
    f = open(os.path.join(RUN_DIR, "launcher.lock"), "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        raise RuntimeError(f"another intpath Mininet network is running (launcher pid "
                           f"{f.read().strip() or '?'}); stop it first") from None
    f.truncate(0)
    f.write(str(os.getpid()))
    f.flush()
    return f


def parse_queue_rates(specs):
    """`s1:3=500` → {"s1": {3: 500}}."""
    out = {}
    for spec in specs or []:
        try:
            where, pps = spec.split("=")
            switch, port = where.split(":")
            out.setdefault(switch, {})[int(port)] = int(pps)
        except ValueError:
            raise TopologyError(f"--queue-rate {spec!r}: expected SWITCH:PORT=PPS") from None
    return out


def start_network(topo, switch_kind="soft", switch_binary=None, queue_rates=None,
                  queue_depth=None, link_opts=None, switch_map=None):
    """Builds and starts the network; returns the Mininet object.

    Writes the switch map to `switch_map` if given."""
    cls = {"soft": SoftSwitch, "bmv2": Bmv2Switch}[switch_kind]
    if switch_binary:
        cls.binary = switch_binary
    rates = queue_rates or {}

    def make_switch(name, **kw):
        return cls(name, queue_rates=rates.get(name), queue_depth=queue_depth, **kw)

    link_opts = link_opts or {}
    delays = delays_possible(topo, link_opts)
    if not delays:
        link_opts = {k: v for k, v in link_opts.items() if k != "delay"}
    net = Mininet(topo=IntpathTopo(topo, link_opts, delays), switch=make_switch, host=Host,
                  link=TCLink, controller=None, autoSetMacs=False, autoStaticArp=False,
                  waitConnected=False, build=False)
    net.timings = {}
    try:
        t = time.monotonic()
        net.build()
        net.timings["hosts and links"] = time.monotonic() - t
        t = time.monotonic()
        net.start()
        net.timings["switches"] = time.monotonic() - t
    except BaseException:
        # Whatever started so far (switches, links, host shells) goes too.
        net.stop()
        raise
    t = time.monotonic()
    configure_hosts(net)
    net.timings["host settings"] = time.monotonic() - t
    if switch_map:
        write_json_atomically(switch_map, {"switches": [s.map_entry() for s in net.switches]})
    return net


def configure_hosts(net):
    """Static ARP for every other host and no checksum offloads, in one
    shell command per host. Mininet's autoStaticArp runs one `arp` per host
    pair, which is 16,256 shell round trips for a k=8 fat tree."""
    neighbours = [(h.IP(), h.MAC()) for h in net.hosts]
    for h in net.hosts:
        intf = h.defaultIntf().name
        batch = os.path.join(RUN_DIR, f"{h.name}.neigh")
        with open(batch, "w") as f:
            for ip, mac in neighbours:
                if ip != h.IP():
                    f.write(f"neigh replace {ip} lladdr {mac} dev {intf} nud permanent\n")
        # Offloaded checksums would leave the UDP/IP checksums empty on veth.
        h.cmd(f"ip -batch {batch}; ethtool -K {intf} tx off rx off >/dev/null 2>&1")
        os.remove(batch)


def write_json_atomically(path, value):
    """Readers polling for the file (`intpath demo`) never see half of it."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=2)
    os.replace(tmp, path)


def write_hosts_file(net, path):
    write_json_atomically(path, {
        h.name: {"pid": h.pid, "intf": h.defaultIntf().name, "ip": h.IP(), "mac": h.MAC()}
        for h in net.hosts})


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topo", help="generator expression or topology file, anything `intpath "
                    "topo show` takes (JSON, p4lang topology.json, p4app.json, GraphML, GML)")
    ap.add_argument("--strict", action="store_true",
                    help="refuse self-loops instead of skipping them with a warning")
    ap.add_argument("--intpath", help="the intpath program [default: on PATH, else this "
                    "checkout's target/release]")
    ap.add_argument("--switch", choices=["soft", "bmv2"], default="soft",
                    help="soft: intpath-switch (default); bmv2: simple_switch_grpc")
    ap.add_argument("--switch-binary", help="path of the switch program [default: "
                    "intpath-switch or simple_switch_grpc on PATH, else next to intpath]")
    ap.add_argument("--switch-map", default="switches.json",
                    help="where to write the map `intpath deploy --switches` reads")
    ap.add_argument("--queue-rate", action="append", metavar="SWITCH:PORT=PPS",
                    help="egress queue rate of one port (a bottleneck); repeatable")
    ap.add_argument("--queue-depth", type=int, help="egress queue depth in packets")
    ap.add_argument("--bw", type=float, help="bandwidth of every link, Mbit/s")
    ap.add_argument("--delay", help="delay of every link, e.g. 1ms")
    ap.add_argument("--hosts-file", help="write each host's namespace pid, interface, IP "
                    "and MAC here, for programs that run commands in hosts (nsenter)")
    ap.add_argument("--run-for", type=float, help="keep the network up this many seconds, "
                    "then tear it down (default: interactive Mininet CLI)")
    ap.add_argument("--until-stdin-closes", action="store_true",
                    help="keep the network up until standard input closes (for a driving "
                    "program such as `intpath demo`), then tear it down")
    ap.add_argument("--cleanup", action="store_true",
                    help="remove what a crashed run left behind, then exit; with --topo only "
                    "that topology's switches, without it Mininet's `mn -c` (which also "
                    "deletes /tmp/*.log)")
    args = ap.parse_args()

    setLogLevel("warning")
    if not args.topo and not args.cleanup:
        ap.error("--topo is required")
    try:
        topo = load_topology(args.topo, args.intpath, args.strict) if args.topo else None
        rates = parse_queue_rates(args.queue_rate)
        binary = args.switch_binary
        # A cleanup only kills switches; it needs no switch program.
        if topo and args.switch == "soft" and not binary and not args.cleanup:
            binary = find_binary("intpath-switch")
    except TopologyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        lock = hold_run_lock()
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    cleanup_stale(topo)
    if args.cleanup:
        return 0
    link_opts = {}
    if args.bw:
        link_opts["bw"] = args.bw
    if args.delay:
        link_opts["delay"] = args.delay
    try:
        net = start_network(topo, args.switch, binary, rates, args.queue_depth,
                            link_opts, args.switch_map)
    except StartError as e:
        print(f"error: {e}; everything started is torn down", file=sys.stderr)
        return 1
    atexit.register(net.stop)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.hosts_file:
        write_hosts_file(net, args.hosts_file)
    took = ", ".join(f"{what} {secs:.1f} s" for what, secs in net.timings.items())
    print(f"network up: {len(net.switches)} switches, {len(net.hosts)} hosts ({took}); "
          f"switch map {args.switch_map}", flush=True)
    if args.until_stdin_closes:
        sys.stdin.read()
    elif args.run_for is not None:
        time.sleep(args.run_for)
    else:
        from mininet.cli import CLI
        CLI(net)
    return 0


if __name__ == "__main__":
    sys.exit(main())
