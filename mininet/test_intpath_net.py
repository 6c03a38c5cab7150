"""Tests of the launcher's input handling (run with /usr/bin/python3, which
sees mininet). Building networks is exercised end to end by `intpath demo`
in scripts/test.sh."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import intpath_net  # noqa: E402

TOPO = {
    "switches": [{"name": "s1", "id": 1}, {"name": "s2", "id": 2}],
    "hosts": [
        {"name": "h1", "ip": "10.0.0.1", "mac": "00:00:0a:00:00:01", "switch": "s1", "port": 1},
        {"name": "h2", "ip": "10.0.0.2", "mac": "00:00:0a:00:00:02"},
    ],
    "links": [
        {"a": "s1", "a_port": 2, "b": "s2", "b_port": 1},
        {"a": "s2", "a_port": 2, "b": "h2", "b_port": 0},
    ],
}


class LoadTopology(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.remove, f.name)
        return f.name

    def error(self, text):
        path = self.write(text)
        with self.assertRaises(intpath_net.TopologyError) as cm:
            intpath_net.load_topology(path)
        msg = str(cm.exception)
        self.assertTrue(msg.startswith(path), msg)
        return msg

    def test_reads_the_export(self):
        topo = intpath_net.load_topology(self.write(json.dumps(TOPO)))
        self.assertEqual([s["name"] for s in topo["switches"]], ["s1", "s2"])

    def test_broken_files_name_the_problem(self):
        self.assertIn("not JSON", self.error("{"))
        self.assertIn("missing list 'links'", self.error('{"switches": [], "hosts": []}'))
        bad = dict(TOPO, links=[{"a": "s1", "a_port": 1, "b": "s9", "b_port": 1}])
        self.assertIn("unknown node 's9'", self.error(json.dumps(bad)))

    def test_missing_file(self):
        with self.assertRaises(intpath_net.TopologyError) as cm:
            intpath_net.load_topology("/nonexistent/topo.json")
        self.assertIn("cannot read", str(cm.exception))


class HostLinks(unittest.TestCase):
    def test_hosts_as_fields_and_as_links(self):
        got = sorted((h, s, p) for h, s, p, _ in intpath_net.host_links(TOPO))
        self.assertEqual(got, [("h1", "s1", 1), ("h2", "s2", 2)])


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
        code = probe % (os.path.dirname(os.path.abspath(__file__)), intpath_net.RUN_DIR)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
        self.assertIn(f"launcher pid {os.getpid()}", out)
        held.close()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
        self.assertEqual(out.strip(), "got it")


if __name__ == "__main__":
    unittest.main()
