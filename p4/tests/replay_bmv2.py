#!/usr/bin/env python3
"""Replays the packet test vectors (p4/tests/vectors/*.json) on bmv2.

For each vector: a fresh simple_switch_grpc inside a private network namespace
(`ipp4-replay`), one veth pair per port the vector uses, the compiled program
and the vector's table entries pushed over P4Runtime with the official
`p4runtime` Python package, the input frames sent with raw sockets (or as
PacketOut on the CPU port), the output frames captured (raw sockets and
PacketIn) and compared under the masks, and the counters read back.

    sudo python3 p4/tests/replay_bmv2.py --json build/sr_int.json \\
         --p4info build/sr_int.p4info.txtpb [VECTOR.json ...]
    python3 p4/tests/replay_bmv2.py --dry-run     # no bmv2: translate only

Where simple_switch_grpc is not installed it says so and exits with code 2;
--dry-run still checks that every vector turns into valid P4Runtime messages.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NETNS = "ipp4-replay"
GRPC_ADDR = "127.0.0.1:9559"
DEVICE_ID = 1
ETH_P_ALL = 0x0003


def load_p4runtime():
    """Imports the official bindings; older generated code needs the pure-Python
    protobuf implementation with newer protobuf runtimes."""
    os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
    try:
        from google.protobuf import text_format
        from p4.config.v1 import p4info_pb2
        from p4.v1 import p4runtime_pb2
    except ImportError as e:
        sys.exit(f"the p4runtime Python package is missing ({e}): pip install p4runtime")
    return text_format, p4info_pb2, p4runtime_pb2


def load_vectors(paths):
    out = []
    for path in paths:
        doc = json.loads(Path(path).read_text())
        out.extend(doc["vectors"] if "vectors" in doc else [doc])
    return out


class P4Info:
    """Name -> id lookups over a parsed P4Info."""

    def __init__(self, path):
        text_format, p4info_pb2, _ = load_p4runtime()
        self.msg = text_format.Parse(Path(path).read_text(), p4info_pb2.P4Info())
        self.tables = {t.preamble.name: t for t in self.msg.tables}
        self.actions = {a.preamble.name: a for a in self.msg.actions}
        self.counters = {c.preamble.name: c for c in self.msg.counters}
        self.cpm = {c.preamble.name: c for c in self.msg.controller_packet_metadata}


def bytestring(hex_value, bitwidth):
    """A vector value ("0x...") as a full-width big-endian bytestring."""
    value = int(hex_value, 16)
    if value >> bitwidth:
        raise ValueError(f"{hex_value} does not fit {bitwidth} bits")
    return value.to_bytes((bitwidth + 7) // 8, "big")


def table_entry(info, entry):
    """One vector entry as a P4Runtime TableEntry."""
    _, _, p4runtime_pb2 = load_p4runtime()
    table = info.tables[entry["table"]]
    action = info.actions[entry["action"]]
    te = p4runtime_pb2.TableEntry(table_id=table.preamble.id)
    fields = {f.name: f for f in table.match_fields}
    for m in entry.get("match", []):
        f = fields[m["field"]]
        fm = te.match.add(field_id=f.id)
        if "exact" in m:
            fm.exact.value = bytestring(m["exact"], f.bitwidth)
        elif "lpm" in m:
            fm.lpm.value = bytestring(m["lpm"], f.bitwidth)
            fm.lpm.prefix_len = m["prefix_len"]
        else:
            raise ValueError(f"unsupported match {m}")
    params = {p.name: p for p in action.params}
    te.action.action.action_id = action.preamble.id
    for name, value in entry.get("params", {}).items():
        p = params[name]
        te.action.action.params.add(param_id=p.id, value=bytestring(value, p.bitwidth))
    if entry.get("default"):
        te.is_default_action = True
    return te


def write_request(info, entries):
    _, _, p4runtime_pb2 = load_p4runtime()
    req = p4runtime_pb2.WriteRequest(device_id=DEVICE_ID)
    req.election_id.low = 1
    for e in entries:
        u = req.updates.add()
        u.type = p4runtime_pb2.Update.MODIFY if e.get("default") else p4runtime_pb2.Update.INSERT
        u.entity.table_entry.CopyFrom(table_entry(info, e))
    return req


def matches(got, want_hex, mask_hex):
    want = bytes.fromhex(want_hex)
    mask = bytes.fromhex(mask_hex) if mask_hex else b"\xff" * len(want)
    return len(got) == len(want) and all((g & m) == (w & m) for g, w, m in zip(got, want, mask))


# ---------------------------------------------------------------- bmv2 run

def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


def iface(port):
    return f"ipp4-{port}"


def peer(port):
    return f"ipp4-{port}p"


class Bmv2:
    """simple_switch_grpc with one veth pair per port, in our namespace."""

    def __init__(self, binary, ports, cpu_port, log):
        self.ports = ports
        for p in ports:
            sh("ip", "link", "add", iface(p), "type", "veth", "peer", "name", peer(p))
            for name in (iface(p), peer(p)):
                sh("ip", "link", "set", name, "up")
        args = [binary, "--device-id", str(DEVICE_ID), "--no-p4"]
        for p in ports:
            args += ["-i", f"{p}@{iface(p)}"]
        args += ["--", "--grpc-server-addr", GRPC_ADDR, "--cpu-port", str(cpu_port)]
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        for p in self.ports:
            sh("ip", "link", "del", iface(p), check=False)


class Controller:
    """The P4Runtime side: arbitration, pipeline, writes, counters, packet I/O."""

    def __init__(self, info, p4info_path, json_path):
        import grpc
        from p4.v1 import p4runtime_pb2_grpc
        _, _, self.pb = load_p4runtime()
        self.info = info
        deadline = time.time() + 10
        self.channel = grpc.insecure_channel(GRPC_ADDR)
        grpc.channel_ready_future(self.channel).result(timeout=max(1, deadline - time.time()))
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.outgoing = []
        self.cond = threading.Condition()
        self.packet_ins = []
        self.stream = self.stub.StreamChannel(self._requests())
        self.reader = threading.Thread(target=self._read, daemon=True)
        arb = self.pb.StreamMessageRequest()
        arb.arbitration.device_id = DEVICE_ID
        arb.arbitration.election_id.low = 1
        self._send(arb)
        self.reader.start()
        self._wait_for(lambda: self.arbitrated, 5, "arbitration")
        req = self.pb.SetForwardingPipelineConfigRequest(
            device_id=DEVICE_ID,
            action=self.pb.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.election_id.low = 1
        req.config.p4info.CopyFrom(info.msg)
        req.config.p4_device_config = Path(json_path).read_bytes()
        self.stub.SetForwardingPipelineConfig(req)

    arbitrated = False

    def _requests(self):
        while True:
            with self.cond:
                while not self.outgoing:
                    self.cond.wait()
                msg = self.outgoing.pop(0)
            if msg is None:
                return
            yield msg

    def _send(self, msg):
        with self.cond:
            self.outgoing.append(msg)
            self.cond.notify_all()

    def _read(self):
        for resp in self.stream:
            with self.cond:
                if resp.HasField("arbitration"):
                    self.arbitrated = True
                elif resp.HasField("packet"):
                    self.packet_ins.append(resp.packet)
                self.cond.notify_all()

    def _wait_for(self, pred, timeout, what):
        with self.cond:
            if not self.cond.wait_for(pred, timeout):
                raise RuntimeError(f"timed out waiting for {what}")

    def write(self, entries):
        if entries:
            self.stub.Write(write_request(self.info, entries))

    def packet_out(self, data):
        """data starts with the 4-byte packet_out header, as in the vectors."""
        meta = {m.name: m for m in self.info.cpm["packet_out"].metadata}
        msg = self.pb.StreamMessageRequest()
        msg.packet.payload = data[4:]
        msg.packet.metadata.add(metadata_id=meta["egress_port"].id, value=data[0:2])
        msg.packet.metadata.add(metadata_id=meta["_pad"].id, value=data[2:4])
        self._send(msg)

    def packet_ins_as_frames(self):
        """PacketIn messages with their 4-byte packet_in header put back."""
        ids = {m.id: m for m in self.info.cpm["packet_in"].metadata}
        frames = []
        with self.cond:
            for p in self.packet_ins:
                hdr = b""
                for m in sorted(p.metadata, key=lambda m: m.metadata_id):
                    width = (ids[m.metadata_id].bitwidth + 7) // 8
                    hdr += m.value.rjust(width, b"\0")[-width:]
                frames.append(hdr + p.payload)
        return frames

    def counter(self, name, index):
        req = self.pb.ReadRequest(device_id=DEVICE_ID)
        ce = req.entities.add().counter_entry
        ce.counter_id = self.info.counters[name].preamble.id
        ce.index.index = index
        for resp in self.stub.Read(req):
            for e in resp.entities:
                data = e.counter_entry.data
                return data.packet_count, data.byte_count
        return 0, 0

    def close(self):
        self._send(None)
        self.channel.close()


def open_capture(port):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((peer(port), 0))
    s.setblocking(False)
    return s


def drain(sock):
    frames = []
    while True:
        try:
            data, addr = sock.recvfrom(65535)
        except BlockingIOError:
            return frames
        if addr[2] != socket.PACKET_OUTGOING:
            frames.append(data)


def vec_ports(vec):
    """Ports that get an interface: the vector's `ports`, else every port its
    packets and expected frames name (the CPU port is never an interface)."""
    cpu = vec.get("cpu_port", 255)
    named = vec.get("ports")
    if named is None:
        named = {p["port"] for p in vec["packets"] + vec["expect"]}
    return sorted(set(named) - {cpu})


def run_vector(vec, args, info, log):
    cpu = vec.get("cpu_port", 255)
    ports = vec_ports(vec)
    sw = Bmv2(args.switch, ports, cpu, log)
    ctl = None
    try:
        ctl = Controller(info, args.p4info, args.json)
        ctl.write(vec["entries"])
        caps = {p: open_capture(p) for p in ports}
        for p in caps.values():
            drain(p)
        for pkt in vec["packets"]:
            data = bytes.fromhex(pkt["data"])
            if pkt["port"] == cpu:
                ctl.packet_out(data)
            else:
                caps[pkt["port"]].send(data)
        time.sleep(args.settle)
        got = {p: drain(s) for p, s in caps.items()}
        got[cpu] = ctl.packet_ins_as_frames()
        problems = compare(vec, got)
        for c in vec.get("counters", []):
            n, b = ctl.counter(c["name"], c["index"])
            if n != c["packets"] or c.get("bytes", b) != b:
                problems.append(f"{c['name']}[{c['index']}] = {n} packets / {b} bytes, "
                                f"expected {c['packets']} / {c.get('bytes', 'any')}")
        for s in caps.values():
            s.close()
        return problems
    finally:
        if ctl:
            ctl.close()
        sw.close()


def compare(vec, got):
    problems = []
    want_by_port = {}
    for e in vec["expect"]:
        want_by_port.setdefault(e["port"], []).append(e)
    for port in sorted(set(want_by_port) | {p for p, f in got.items() if f}):
        wants, frames = want_by_port.get(port, []), got.get(port, [])
        if len(frames) != len(wants):
            problems.append(f"port {port}: {len(frames)} frames, expected {len(wants)}")
        for i, (w, f) in enumerate(zip(wants, frames)):
            if not matches(f, w["data"], w.get("mask")):
                problems.append(f"port {port} frame {i} differs:\n  got  {f.hex()}\n"
                                f"  want {w['data']}\n  mask {w.get('mask', '')}")
    return problems


# ---------------------------------------------------------------- entry points

def dry_run(vectors, info):
    """Everything short of bmv2: each entry becomes a WriteRequest, each counter
    and controller header resolves, each mask has its frame's length."""
    n = 0
    for vec in vectors:
        write_request(info, vec["entries"]).SerializeToString()
        for c in vec.get("counters", []):
            size = info.counters[c["name"]].size
            assert 0 <= c["index"] < size, f"{vec['name']}: {c['name']}[{c['index']}]"
        wired = set(vec_ports(vec)) | {vec.get("cpu_port", 255)}
        for e in vec["expect"]:
            assert e["port"] in wired, f"{vec['name']}: a frame expected on unwired port {e['port']}"
            assert len(e["data"]) == len(e.get("mask", e["data"])), vec["name"]
            assert matches(bytes.fromhex(e["data"]), e["data"], e.get("mask")), vec["name"]
        assert {"packet_in", "packet_out"} <= set(info.cpm), "controller headers"
        n += 1
    print(f"dry run: {n} vectors translate into P4Runtime messages")


def compare_p4info(a_path, b_path):
    """Order-insensitive equality of two P4Info text files (p4c's vs ours)."""
    text_format, p4info_pb2, _ = load_p4runtime()
    norm = []
    for path in (a_path, b_path):
        m = text_format.Parse(Path(path).read_text(), p4info_pb2.P4Info())
        for field in ("tables", "actions", "counters", "controller_packet_metadata"):
            items = sorted(getattr(m, field), key=lambda x: x.preamble.name)
            del getattr(m, field)[:]
            getattr(m, field).extend(items)
        m.ClearField("type_info")
        for a in m.actions:
            del a.preamble.annotations[:]
        norm.append(text_format.MessageToString(m))
    if norm[0] != norm[1]:
        import difflib
        sys.stdout.writelines(difflib.unified_diff(
            norm[1].splitlines(True), norm[0].splitlines(True), str(b_path), str(a_path)))
        return 1
    print(f"{a_path} and {b_path} describe the same pipeline")
    return 0


def enter_netns():
    """Re-runs this script inside a fresh private namespace (veths, loopback
    gRPC and raw sockets then touch nothing outside it)."""
    if os.environ.get("IPP4_REPLAY_IN_NETNS"):
        sh("ip", "link", "set", "lo", "up")
        sh("sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", check=False)
        sh("sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1", check=False)
        return None
    sh("ip", "netns", "del", NETNS, check=False)
    sh("ip", "netns", "add", NETNS)
    try:
        env = dict(os.environ, IPP4_REPLAY_IN_NETNS="1")
        return subprocess.call(["ip", "netns", "exec", NETNS, sys.executable, *sys.argv], env=env)
    finally:
        sh("ip", "netns", "del", NETNS, check=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vectors", nargs="*", help="vector files (default: p4/tests/vectors/*.json)")
    ap.add_argument("--json", default=str(HERE.parent / "build/sr_int.json"),
                    help="bmv2 JSON from p4c-bm2-ss (make)")
    ap.add_argument("--p4info", default=str(HERE.parent / "sr_int.p4info.txtpb"),
                    help="P4Info text file matching --json")
    ap.add_argument("--switch", default="simple_switch_grpc", help="bmv2 binary")
    ap.add_argument("--settle", type=float, default=1.0,
                    help="seconds to wait for output after the last input")
    ap.add_argument("--dry-run", action="store_true",
                    help="translate the vectors into P4Runtime messages; no bmv2 needed")
    ap.add_argument("--compare-p4info", nargs=2, metavar=("COMPILED", "COMMITTED"),
                    help="compare two P4Info files ignoring order")
    args = ap.parse_args()
    if args.compare_p4info:
        return compare_p4info(*args.compare_p4info)
    paths = args.vectors or sorted(str(p) for p in (HERE / "vectors").glob("*.json"))
    vectors = load_vectors(paths)
    info = P4Info(args.p4info)
    if args.dry_run:
        dry_run(vectors, info)
        return 0
    binary = shutil.which(args.switch)
    if not binary:
        print(f"bmv2 is missing: '{args.switch}' is not installed, so nothing was replayed. "
              "Install bmv2 with P4Runtime support (simple_switch_grpc) and p4c, run `make` "
              "in p4/, then run this again as root. The same vectors run on the Rust reference "
              "switch in `cargo test -p intpath-switch`.", file=sys.stderr)
        return 2
    args.switch = binary
    if not Path(args.json).exists():
        print(f"{args.json} does not exist: run `make` in p4/ first", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("replaying on bmv2 needs root (network namespace, veth pairs)", file=sys.stderr)
        return 2
    rc = enter_netns()
    if rc is not None:
        return rc
    failed = 0
    log_path = Path(args.json).resolve().parent / "replay-bmv2.log"
    with open(log_path, "w") as log:
        for vec in vectors:
            problems = run_vector(vec, args, info, log)
            status = "ok" if not problems else "FAILED"
            print(f"{vec['name']}: {status}")
            for p in problems:
                print(f"  {p}")
            failed += bool(problems)
    print(f"{len(vectors) - failed} of {len(vectors)} vectors passed on bmv2")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
