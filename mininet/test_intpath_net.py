"""Tests of the Mininet launcher (run as root with /usr/bin/python3, which
sees mininet; scripts/test.sh builds the binaries first). The launcher reads
topologies through `intpath topo export`, so every format intpath reads is
checked here, and small networks of each are started for real."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import intpath_net  # noqa: E402

TOPOLOGIES = os.path.join(HERE, "..", "topologies")
SHIPPED = sorted(os.path.join(TOPOLOGIES, f) for f in os.listdir(TOPOLOGIES)
                 if not f.endswith(".md"))
GENERATED = ["fattree:k=4", "leafspine:spines=2,leaves=3,hosts=2",
             "random:n=12,m=20,odd=4,seed=3,hosts=1", "paper-fig4"]
# Our JSON as topologies/README.md allows it: ports left out, a host given
# only by its switch.
NO_PORTS = {
    "switches": [{"name": "s1", "id": 1}, {"name": "s2", "id": 2}, {"name": "s3", "id": 3}],
    "hosts": [
        {"name": "h1", "ip": "10.0.0.1", "mac": "00:00:0a:00:00:01", "switch": "s1"},
        {"name": "h2", "ip": "10.0.0.2", "mac": "00:00:0a:00:00:02"},
    ],
    "links": [{"a": "s1", "b": "s2"}, {"a": "s2", "b": "s3"}, {"a": "s3", "b": "s1"},
              {"a": "h2", "b": "s3"}],
}


def write(text, suffix=".json"):
    f = tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False)
    f.write(text)
    f.close()
    return f.name


def ports_of(topo):
    """{(node, port): (peer, peer_port)} for every link end."""
    out = {}
    for link in topo["links"]:
        out[(link["a"], link["a_port"])] = (link["b"], link["b_port"])
        out[(link["b"], link["b_port"])] = (link["a"], link["a_port"])
    return out


class LoadTopology(unittest.TestCase):
    def test_every_shipped_and_generated_format_builds(self):
        no_ports = write(json.dumps(NO_PORTS))
        self.addCleanup(os.remove, no_ports)
        specs = SHIPPED + GENERATED + [no_ports]
        self.assertTrue(any(s.endswith(".gml") for s in specs))
        self.assertTrue(any(s.endswith(".graphml") for s in specs))
        self.assertTrue(any(s.endswith("p4app.json") for s in specs))
        for spec in specs:
            with self.subTest(spec=spec):
                topo = intpath_net.load_topology(spec)
                mn = intpath_net.IntpathTopo(topo, {})
                self.assertEqual(sorted(mn.switches()), sorted(s["name"] for s in topo["switches"]))
                self.assertEqual(sorted(mn.hosts()), sorted(h["name"] for h in topo["hosts"]))
                self.assertEqual(len(mn.links()), len(topo["links"]))
                # Mininet's ports are exactly the topology's.
                want = ports_of(topo)
                for a, b, info in mn.links(withInfo=True):
                    self.assertEqual(want[(info["node1"], info["port1"])],
                                     (info["node2"], info["port2"]))

    def test_ports_left_out_are_assigned(self):
        path = write(json.dumps(NO_PORTS))
        self.addCleanup(os.remove, path)
        topo = intpath_net.load_topology(path)
        self.assertEqual(ports_of(topo)[("h1", 0)], ("s1", 3))
        self.assertEqual(ports_of(topo)[("s3", 3)], ("h2", 0))

    def test_errors_are_intpaths_one_line(self):
        for spec, want in [("/nonexistent/topo.json", "cannot read topology"),
                           ("fatree:k=4", "is not a generator"),
                           (write("{"), "not valid JSON")]:
            with self.assertRaises(intpath_net.TopologyError) as cm:
                intpath_net.load_topology(spec)
            msg = str(cm.exception)
            self.assertIn(want, msg)
            self.assertIn(spec, msg)
            self.assertNotIn("\n", msg)


class QueueRates(unittest.TestCase):
    def test_parses_and_rejects(self):
        self.assertEqual(intpath_net.parse_queue_rates(["s1:3=500", "s1:4=10", "s2:1=7"]),
                         {"s1": {3: 500, 4: 10}, "s2": {1: 7}})
        for bad in ["s1=5", "s1:x=5", "s1:3"]:
            with self.assertRaises(intpath_net.TopologyError):
                intpath_net.parse_queue_rates([bad])


class RunLock(unittest.TestCase):
    def test_second_launcher_is_refused_until_the_first_ends(self):
        saved = intpath_net.RUN_DIR
        intpath_net.RUN_DIR = tempfile.mkdtemp()
        self.addCleanup(setattr, intpath_net, "RUN_DIR", saved)
        held = intpath_net.hold_run_lock()
        probe = ("import sys; sys.path.insert(0, %r); import intpath_net as n; n.RUN_DIR = %r\n"
                 "try:\n n.hold_run_lock(); print('got it')\n"
                 "except RuntimeError as e:\n print(e)")
        code = probe % (HERE, intpath_net.RUN_DIR)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
        self.assertIn(f"launcher pid {os.getpid()}", out)
        held.close()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
        self.assertEqual(out.strip(), "got it")


def switch_links():
    """Mininet switch links present on the machine, ours or not."""
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return set(re.findall(r": (s\d+-eth\d+)", links))


def launch(*args, env=None):
    return subprocess.run([sys.executable, os.path.join(HERE, "intpath_net.py"), *args],
                          capture_output=True, text=True, env=env, timeout=300)


class RealNetworks(unittest.TestCase):
    """Tests that start real Mininet networks. Mininet needs root: without
    it they fail rather than skip, so a run that could not check them never
    passes."""

    def setUp(self):
        self.assertEqual(os.geteuid(), 0, "needs root (Mininet): run as root, as scripts/test.sh does")
        self.links_before = switch_links()

    def assert_no_links_left(self):
        """None of the links this test's launchers made survives them (links
        of other networks on the machine are not ours to judge)."""
        self.assertEqual(sorted(switch_links() - self.links_before), [])


class Networks(RealNetworks):
    """Real Mininet networks with reference switches."""

    def test_small_networks_of_every_file_format_come_up(self):
        no_ports = write(json.dumps(NO_PORTS))
        self.addCleanup(os.remove, no_ports)
        specs = [no_ports, "paper-fig4"] + [
            os.path.join(TOPOLOGIES, f) for f in
            ["ring.json", "p4lang-topology.json", "p4app.json",
             "example-backbone.gml", "example-backbone.graphml"]]
        for spec in specs:
            with self.subTest(spec=spec):
                map_file = write("", ".map.json")
                out = launch("--topo", spec, "--switch-map", map_file, "--run-for", "0")
                self.assertEqual(out.returncode, 0, out.stderr)
                self.assertIn("network up", out.stdout)
                with open(map_file) as f:
                    names = [s["name"] for s in json.load(f)["switches"]]
                want = [s["name"] for s in intpath_net.load_topology(spec)["switches"]]
                self.assertEqual(sorted(names), sorted(want))
                # Hygiene: pkill parses its pattern, qdisc errors do not flood.
                self.assertNotIn("invalid session id", out.stderr)
                self.assertLessEqual(out.stderr.count("qdisc kind is unknown"), 0, out.stderr)
                self.assert_no_links_left()

    def test_missing_netem_is_one_warning(self):
        spec = os.path.join(TOPOLOGIES, "p4lang-topology.json")  # links with delays
        out = launch("--topo", spec, "--switch-map", write("", ".map.json"),
                     "--delay", "1ms", "--run-for", "0")
        self.assertEqual(out.returncode, 0, out.stderr)
        warnings = out.stderr.count("no sch_netem")
        self.assertEqual(warnings, 0 if intpath_net.netem_available() else 1, out.stderr)
        self.assertNotIn("qdisc kind is unknown", out.stderr)


FAKE_GRPC = """#!/usr/bin/python3
# Stands in for simple_switch_grpc: serves a TCP port, or fails to start.
import os, socket, sys, time
args = sys.argv[1:]
device = args[args.index("--device-id") + 1]
if device == os.environ.get("FAIL_DEVICE"):
    sys.exit("port already in use")
if os.environ.get("ARGS_DIR"):
    with open(os.path.join(os.environ["ARGS_DIR"], device), "w") as f:
        f.write(" ".join(args))
host, port = args[args.index("--grpc-server-addr") + 1].split(":")
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((host, int(port))); s.listen()
while True:
    time.sleep(1)
"""

FAKE_CLI = """#!/bin/sh
# Stands in for simple_switch_CLI: fails as a bmv2 without Thrift does, or
# reports an error on stdout and exits 0 as the real CLI does.
if [ "$CLI_MODE" = quiet-error ]; then echo "Error: Invalid queue depth"; exit 0; fi
echo "Could not connect to thrift client on port $2" >&2; exit 1
"""


class Bmv2Failures(RealNetworks):
    def setUp(self):
        super().setUp()
        self.bin = tempfile.mkdtemp()
        for name, text in [("simple_switch_grpc", FAKE_GRPC), ("simple_switch_CLI", FAKE_CLI)]:
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)

    def run_bmv2(self, *args, **env):
        full = dict(os.environ, PATH=self.bin + ":" + os.environ["PATH"], **env)
        map_path = write("", ".map.json")
        out = launch("--topo", "leafspine:spines=1,leaves=2,hosts=1", "--switch", "bmv2",
                     "--switch-map", map_path, "--run-for", "0", *args, env=full)
        out.map_path = map_path
        return out

    def assert_all_gone(self):
        self.assert_no_links_left()
        left = subprocess.run(["pgrep", "-f", os.path.join(self.bin, "simple_switch_grpc")],
                              capture_output=True, text=True).stdout
        self.assertEqual(left.strip(), "")

    def test_a_failed_cli_command_names_switch_and_command(self):
        for mode, why in [("no-thrift", "Could not connect to thrift client"),
                          ("quiet-error", "Error: Invalid queue depth")]:
            with self.subTest(mode=mode):
                out = self.run_bmv2("--queue-depth", "10", CLI_MODE=mode)
                self.assertEqual(out.returncode, 1, out.stderr)
                self.assertIn("error: s1: simple_switch_CLI 'set_queue_depth 10' failed: " + why,
                              out.stderr)
                self.assert_all_gone()

    def test_the_switch_map_gives_each_switch_its_thrift_port(self):
        args_dir = tempfile.mkdtemp()
        out = self.run_bmv2(ARGS_DIR=args_dir)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(out.map_path) as f:
            switches = json.load(f)["switches"]
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral = int(f.read().split()[0])
        self.assertEqual(len({s["thrift_port"] for s in switches}), len(switches), switches)
        for s in switches:
            with open(os.path.join(args_dir, str(s["device_id"]))) as f:
                argv = f.read().split()
            self.assertEqual(argv[argv.index("--thrift-port") + 1], str(s["thrift_port"]))
            grpc_port = int(s["grpc_addr"].rsplit(":", 1)[1])
            # Below the ephemeral range: no client connection can hold it.
            self.assertLess(max(grpc_port, s["thrift_port"]), ephemeral, s)
        self.assert_all_gone()

    def test_a_switch_that_does_not_start_tears_everything_down(self):
        out = self.run_bmv2(FAIL_DEVICE="2")
        self.assertEqual(out.returncode, 1, out.stderr)
        self.assertIn("error: s2: switch did not start", out.stderr)
        self.assert_all_gone()


if __name__ == "__main__":
    unittest.main()
