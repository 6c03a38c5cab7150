#!/usr/bin/env python3
"""Writes the packet test vectors in p4/tests/vectors/ from the specification.

The byte layouts below are an independent re-implementation of the SR-INT wire
format (p4/README.md), written from the spec and NOT from the Rust
code, so that the vectors check the reference switch and bmv2 against the
specification rather than against themselves. Standard library only.

    python3 p4/tests/make_vectors.py           # (re)write the vectors
    python3 p4/tests/make_vectors.py --check   # fail if a vector file is stale

Every vector starts from a fresh switch: empty tables, zero counters.
"""

import argparse
import json
import struct
import sys
from pathlib import Path

VECTOR_DIR = Path(__file__).resolve().parent / "vectors"

MAX_HOPS = 45
CPU_PORT = 255
SRINT_UDP_PORT = 9555
SR_FLAG_DONE = 0x01
RECORD_WORDS = 8
RECORD_LEN = 32
DROP_REASONS = 6  # 0 malformed .. 5 TTL expired
MALFORMED, PATH_MISS, ROUTE_EXHAUSTED, HOP_LIMIT, NO_ROUTE, TTL_EXPIRED = range(6)

# Addresses used throughout: a sending host, the collector, a far host, and the
# MAC the hosts use as their gateway (the switch has no MAC of its own:
# ipv4_forward moves the old destination MAC into the source field).
H1_MAC = "00:00:0a:00:01:01"
H1_IP = "10.0.1.1"
GW_MAC = "00:00:00:00:00:fe"
COLLECTOR_MAC = "00:00:0a:00:09:09"
COLLECTOR_IP = "10.0.9.9"
H2_MAC = "00:00:0a:00:02:02"
H2_IP = "10.0.2.2"
H3_MAC = "00:00:0a:00:03:03"
H3_IP = "10.0.3.3"


# ---------------------------------------------------------------- bytes with masks

class Frame:
    """Bytes plus a per-byte mask (0xff = compare, 0x00 = ignore)."""

    def __init__(self):
        self.data = bytearray()
        self.mask = bytearray()

    def add(self, data, mask_byte=0xFF):
        self.data += data
        self.mask += bytes([mask_byte]) * len(data)
        return self

    def ignore(self, n):
        """n bytes the switch fills with values no vector can predict."""
        return self.add(bytes(n), 0x00)

    def extend(self, other):
        self.data += other.data
        self.mask += other.mask
        return self


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip(s):
    return bytes(int(x) for x in s.split("."))


def inet_checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return (~total) & 0xFFFF


def ethernet(dst, src, ethertype=0x0800):
    return mac(dst) + mac(src) + struct.pack("!H", ethertype)


def ipv4(src, dst, payload_len, proto=17, ttl=64, options=b"", bad_checksum=False):
    """IPv4 header as intpath sends it: no DSCP, id 0, DF, valid checksum."""
    ihl = 5 + len(options) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + payload_len, 0, 0x4000,
                      ttl, proto, 0, ip(src), ip(dst)) + options
    csum = inet_checksum(hdr)
    if bad_checksum:
        csum ^= 0x5A5A
    return hdr[:10] + struct.pack("!H", csum) + hdr[12:]


def udp(payload_len, dst_port=SRINT_UDP_PORT, src_port=SRINT_UDP_PORT):
    return struct.pack("!HHHH", src_port, dst_port, 8 + payload_len, 0)


def sr(path_id, labels, flags=0, num_labels=None):
    n = len(labels) if num_labels is None else num_labels
    return struct.pack("!HBB", path_id, n, flags) + b"".join(struct.pack("!H", l) for l in labels)


def int_header(hop_count, remaining_hops, record_words=RECORD_WORDS):
    return struct.pack("!BBBB", hop_count, remaining_hops, record_words, 0)


def record(switch_id, ingress_port, egress_port, ingress_ts=0, egress_ts=0, qdepth=0, delay=0):
    return struct.pack("!IHHQQII", switch_id, ingress_port, egress_port,
                       ingress_ts, egress_ts, qdepth, delay)


def payload(path_id, sequence, send_ts):
    return struct.pack("!HHIQ", path_id, 0, sequence, send_ts)


def old_record(i):
    """A record some earlier switch on the path pushed (arbitrary, fixed values)."""
    sid = 10 + i
    return record(sid, 1 + i, 2 + i, 1_000_000 + 100 * i, 1_000_050 + 100 * i, i, 7 * i)


def probe(*, path_id=7, labels=(), records=(), new_record=None, remaining=MAX_HOPS, flags=0,
          ttl=64, eth_dst=GW_MAC, eth_src=H1_MAC, sequence=1, ip_src=H1_IP,
          ip_dst=COLLECTOR_IP, packet_in_port=None, record_words=RECORD_WORDS,
          hop_count=None, num_labels=None, trailing=b"", bad_checksum=False):
    """A whole probe frame. `records` are earlier records (bytes, newest first);
    `new_record` = (switch_id, in, out) is a record this switch pushes, whose
    timing fields are masked. `trailing` bytes count in the IPv4/UDP lengths."""
    n_records = len(records) + (new_record is not None)
    sr_bytes = sr(path_id, list(labels), flags, num_labels)
    body_len = (len(sr_bytes) + 4 + RECORD_LEN * n_records + 16 + len(trailing))
    f = Frame()
    if packet_in_port is not None:
        f.add(struct.pack("!HH", packet_in_port, 0))
    f.add(ethernet(eth_dst, eth_src))
    f.add(ipv4(ip_src, ip_dst, 8 + body_len, ttl=ttl, bad_checksum=bad_checksum))
    f.add(udp(body_len))
    f.add(sr_bytes)
    f.add(int_header(n_records if hop_count is None else hop_count, remaining, record_words))
    if new_record is not None:
        f.add(record(*new_record)[:8]).ignore(24)
    for r in records:
        f.add(r)
    f.add(payload(path_id, sequence, 1_700_000_000_123_456_789 + sequence))
    f.add(trailing)
    return f


def plain_ipv4(dst, *, ttl=64, proto=17, eth_dst=GW_MAC, eth_src=H1_MAC, src=H1_IP,
               options=b""):
    """An ordinary datagram: UDP to port 53 (or another protocol) with a small body."""
    body = b"intpath plain ipv4"
    if proto == 17:
        body = udp(len(body), dst_port=53, src_port=40000) + body
    f = Frame()
    f.add(ethernet(eth_dst, eth_src))
    f.add(ipv4(src, dst, len(body), proto=proto, ttl=ttl, options=options))
    f.add(body)
    return f


def packet_out(egress_port, frame):
    return Frame().add(struct.pack("!HH", egress_port, 0)).extend(frame)


def arp_request():
    body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, mac(H1_MAC), ip(H1_IP),
                       bytes(6), ip(H2_IP))
    return Frame().add(ethernet("ff:ff:ff:ff:ff:ff", H1_MAC, 0x0806)).add(body + bytes(18))


# ---------------------------------------------------------------- table entries

def hexval(value, bits):
    return "0x" + format(value, f"0{(bits + 3) // 4}x")


def mac_int(s):
    return int.from_bytes(mac(s), "big")


def ip_int(s):
    return int.from_bytes(ip(s), "big")


def switch_config(switch_id):
    return {"table": "SrIntIngress.switch_config", "default": True,
            "action": "SrIntIngress.set_switch_id",
            "params": {"switch_id": hexval(switch_id, 32)}}


def generator(path_id, labels, num_labels=None):
    packed = 0
    for i, label in enumerate(labels):
        packed |= label << (16 * (MAX_HOPS - 1 - i))
    n = len(labels) if num_labels is None else num_labels
    return {"table": "SrIntIngress.generator",
            "match": [{"field": "hdr.sr.path_id", "exact": hexval(path_id, 16)}],
            "action": "SrIntIngress.push_route",
            "params": {"num_labels": hexval(n, 8), "labels": hexval(packed, 16 * MAX_HOPS)}}


def sink(path_id, action):
    return {"table": "SrIntIngress.sink",
            "match": [{"field": "hdr.sr.path_id", "exact": hexval(path_id, 16)}],
            "action": f"SrIntIngress.{action}", "params": {}}


def route(prefix, prefix_len, dst_mac, port):
    return {"table": "SrIntIngress.ipv4_lpm",
            "match": [{"field": "hdr.ipv4.dst_addr", "lpm": hexval(ip_int(prefix), 32),
                       "prefix_len": prefix_len}],
            "action": "SrIntIngress.ipv4_forward",
            "params": {"dst_mac": hexval(mac_int(dst_mac), 48), "port": hexval(port, 9)}}


COLLECTOR_ROUTE = route("10.0.9.0", 24, COLLECTOR_MAC, 5)


# ---------------------------------------------------------------- vectors

def counters(rx=None, tx=None, drops=None):
    """Expected counter values: rx/tx {port: packets}; drops {reason: packets},
    every reason not named must stay 0."""
    out = []
    for port, n in sorted((rx or {}).items()):
        out.append({"name": "SrIntIngress.rx_port_counter", "index": port, "packets": n})
    for port, n in sorted((tx or {}).items()):
        out.append({"name": "SrIntEgress.tx_port_counter", "index": port, "packets": n})
    for reason in range(DROP_REASONS):
        out.append({"name": "SrIntIngress.drop_counter", "index": reason,
                    "packets": (drops or {}).get(reason, 0)})
    return out


def counted_bytes(name, index, packets, frames):
    """A counter expected to hold `packets` packets and the bytes of `frames`
    as they arrived: bmv2 adds a packet's ingress length to every counter,
    tx and drop included, whatever the pipeline did to the packet since."""
    return {"name": name, "index": index, "packets": packets,
            "bytes": sum(len(f.data) for f in frames)}


def vector(name, about, entries, packets, expect, counter_list, ports=None):
    """`ports`: the ports with an interface, when not just those the packets
    and expected frames name."""
    out = {
        "name": name,
        "about": about,
        "cpu_port": CPU_PORT,
    }
    if ports is not None:
        out["ports"] = sorted(ports)
    return out | {
        "entries": entries,
        "packets": [{"port": port, "data": f.data.hex()} for port, f in packets],
        "expect": [{"port": port, "data": f.data.hex(), "mask": f.mask.hex()}
                   for port, f in expect],
        "counters": counter_list,
    }


def vectors():
    v = []
    old = [old_record(i) for i in range(3)]

    # --- generator ---------------------------------------------------------
    v.append(vector(
        "generator_push",
        "A fresh probe from a host port gets its route pushed, the first label popped as the "
        "egress port and this switch's record pushed.",
        [switch_config(1), generator(7, [2, 3, 1]), generator(8, [4]), COLLECTOR_ROUTE],
        [(1, probe())],
        [(2, probe(labels=[3, 1], new_record=(1, 1, 2), remaining=MAX_HOPS - 1))],
        counters(rx={1: 1}, tx={2: 1})))

    full_route = [(i % 6) + 1 for i in range(MAX_HOPS)]
    v.append(vector(
        "generator_push_full_route",
        "push_route with all 45 labels: label 0 is the most significant 16 bits of the "
        "720-bit parameter, 44 labels remain after the pop.",
        [switch_config(3), generator(300, full_route)],
        [(4, probe(path_id=300))],
        [(full_route[0], probe(path_id=300, labels=full_route[1:], new_record=(3, 4, full_route[0]),
                               remaining=MAX_HOPS - 1))],
        counters(rx={4: 1}, tx={full_route[0]: 1})))

    v.append(vector(
        "generator_single_switch",
        "A route of zero labels makes the generator its own sink: DONE set, one record, "
        "IPv4 forwarding to the collector (TTL-1, MACs rewritten).",
        [switch_config(5), generator(9, []), sink(9, "sink_to_collector"), COLLECTOR_ROUTE],
        [(1, probe(path_id=9))],
        [(5, probe(path_id=9, flags=SR_FLAG_DONE, new_record=(5, 1, 5),
                   remaining=MAX_HOPS - 1, ttl=63, eth_dst=COLLECTOR_MAC, eth_src=GW_MAC))],
        counters(rx={1: 1}, tx={5: 1})))

    v.append(vector(
        "generator_path_id_miss",
        "A fresh probe whose path id has no generator entry is dropped and counted (reason 1).",
        [switch_config(1), generator(7, [2, 3])],
        [(1, probe(path_id=9))],
        [],
        counters(rx={1: 1}, drops={PATH_MISS: 1})))

    v.append(vector(
        "generator_route_too_long",
        "A generator entry announcing more labels than MAX_HOPS drops the probe as malformed "
        "(reason 0).",
        [switch_config(1), generator(7, [2] * MAX_HOPS, num_labels=MAX_HOPS + 1)],
        [(1, probe())],
        [],
        counters(rx={1: 1}, drops={MALFORMED: 1})))

    # --- forwarder ---------------------------------------------------------
    v.append(vector(
        "forward_multi_hop",
        "Mid-path switches pop one label each and push their record in front of the earlier "
        "ones; no table is consulted (the generator entry for the path is not used), TTL and "
        "MACs stay.",
        [switch_config(2), generator(7, [9, 9])],
        [(1, probe(labels=[3, 1], records=old[:1], remaining=44)),
         (3, probe(labels=[1], records=old[:2], remaining=43, sequence=2))],
        [(3, probe(labels=[1], records=old[:1], new_record=(2, 1, 3), remaining=43)),
         (1, probe(labels=[], records=old[:2], new_record=(2, 3, 1), remaining=42, sequence=2))],
        counters(rx={1: 1, 3: 1}, tx={1: 1, 3: 1})))

    v.append(vector(
        "forward_high_port",
        "Labels are 16 bits wide: port 300 (beyond 8 bits) is a valid egress port.",
        [switch_config(2)],
        [(1, probe(labels=[300, 2], records=old[:1], remaining=44))],
        [(300, probe(labels=[2], records=old[:1], new_record=(2, 1, 300), remaining=43))],
        counters(rx={1: 1}, tx={300: 1})))

    # --- sink --------------------------------------------------------------
    v.append(vector(
        "sink_to_collector",
        "At the end of the route the sink sets DONE, pushes its record and forwards by "
        "ipv4_lpm towards the collector (TTL-1, MACs rewritten).",
        [switch_config(4), sink(7, "sink_to_collector"), COLLECTOR_ROUTE,
         route("10.0.0.0", 8, H2_MAC, 6)],
        [(2, probe(records=old, remaining=42))],
        [(5, probe(records=old, flags=SR_FLAG_DONE, new_record=(4, 2, 5), remaining=41, ttl=63,
                   eth_dst=COLLECTOR_MAC, eth_src=GW_MAC))],
        counters(rx={2: 1}, tx={5: 1})))

    v.append(vector(
        "sink_to_cpu",
        "sink_to_cpu sends the probe to the CPU port with a packet_in header (ingress port); "
        "the record's egress port is the CPU port, TTL and MACs stay.",
        [switch_config(4), sink(7, "sink_to_cpu"), COLLECTOR_ROUTE],
        [(2, probe(records=old, remaining=42))],
        [(CPU_PORT, probe(records=old, flags=SR_FLAG_DONE, new_record=(4, 2, CPU_PORT),
                          remaining=41, packet_in_port=2))],
        counters(rx={2: 1}, tx={CPU_PORT: 1})))

    # A finished route with no usable way out: dropped, counted.
    for name, doc, entries, reason in [
        ("sink_route_exhausted",
         "No labels left, records present and no sink entry: dropped, counted (reason 2).",
         [switch_config(4), generator(7, [1]), COLLECTOR_ROUTE], ROUTE_EXHAUSTED),
        ("sink_no_ipv4_route",
         "sink_to_collector without an IPv4 route to the collector: dropped, counted "
         "(reason 4).",
         [switch_config(4), sink(7, "sink_to_collector"), route("10.0.2.0", 24, H2_MAC, 2)],
         NO_ROUTE),
    ]:
        v.append(vector(name, doc, entries, [(2, probe(records=old[:2], remaining=43))], [],
                        counters(rx={2: 1}, drops={reason: 1})))

    # --- hop limit ---------------------------------------------------------
    v.append(vector(
        "hop_limit_exhausted",
        "remaining_hops 0 when a record is due: dropped, counted (reason 3); the same probe "
        "with a budget of 1 passes and leaves with 0.",
        [switch_config(2)],
        [(1, probe(labels=[2], records=old[:1], remaining=0)),
         (1, probe(labels=[2], records=old[:1], remaining=1, sequence=2))],
        [(2, probe(labels=[], records=old[:1], new_record=(2, 1, 2), remaining=0, sequence=2))],
        counters(rx={1: 2}, tx={2: 1}, drops={HOP_LIMIT: 1})))

    full_stack = [old_record(i % 40) for i in range(MAX_HOPS)]
    v.append(vector(
        "hop_limit_full_stack",
        "A probe already carrying MAX_HOPS records cannot take another one even with budget "
        "left: dropped, counted (reason 3).",
        [switch_config(4), sink(7, "sink_to_collector"), COLLECTOR_ROUTE],
        [(2, probe(records=full_stack, remaining=5))],
        [],
        counters(rx={2: 1}, drops={HOP_LIMIT: 1})))

    # --- malformed probes ---------------------------------------------------
    truncated = probe(labels=[2, 3, 1], remaining=45)
    cut = 14 + 20 + 8 + 4 + 2  # headers up to the first label
    trunc_frame = Frame().add(bytes(truncated.data[:cut]))
    # Keep the IPv4 and UDP lengths and checksum consistent with the bytes sent,
    # so only the SR label stack is short.
    ip_total = cut - 14
    hdr = bytearray(trunc_frame.data[14:34])
    hdr[2:4] = struct.pack("!H", ip_total)
    hdr[10:12] = b"\0\0"
    hdr[10:12] = struct.pack("!H", inet_checksum(bytes(hdr)))
    trunc_frame.data[14:34] = hdr
    trunc_frame.data[38:40] = struct.pack("!H", ip_total - 20)
    v.append(vector(
        "malformed_truncated_sr",
        "An SR header announcing 3 labels in a frame that ends after the first: parser "
        "error, dropped, counted (reason 0).",
        [switch_config(1), generator(7, [2])],
        [(1, trunc_frame)],
        [],
        counters(rx={1: 1}, drops={MALFORMED: 1})))

    v.append(vector(
        "malformed_probes",
        "Each malformed probe is dropped and counted as reason 0: label count 46, hop count "
        "46, record size 4 words, bytes after the payload, bad IPv4 checksum, payload cut "
        "short.",
        [switch_config(1), generator(7, [2]), sink(7, "sink_to_collector"), COLLECTOR_ROUTE],
        [(1, probe(labels=[2] * (MAX_HOPS + 1), remaining=45)),
         (1, probe(labels=[2], records=old[:1], hop_count=MAX_HOPS + 1)),
         (1, probe(labels=[2], records=old[:1], record_words=4)),
         (1, probe(labels=[2], records=old[:1], trailing=b"\0\0\0\0")),
         (1, probe(labels=[2], records=old[:1], bad_checksum=True)),
         (1, truncate_payload(probe(labels=[2], records=old[:1])))],
        [],
        counters(rx={1: 6}, drops={MALFORMED: 6})))

    # --- plain IPv4 ---------------------------------------------------------
    v.append(vector(
        "ipv4_forward",
        "Ordinary IPv4 (UDP and ICMP) takes the longest matching prefix: TTL-1, destination "
        "MAC from the entry, source MAC := old destination MAC, checksum updated.",
        [switch_config(1), route("10.0.0.0", 16, H3_MAC, 3), route("10.0.2.0", 24, H2_MAC, 2)],
        [(1, plain_ipv4(H2_IP)), (1, plain_ipv4(H3_IP, proto=1, ttl=2))],
        [(2, plain_ipv4(H2_IP, ttl=63, eth_dst=H2_MAC, eth_src=GW_MAC)),
         (3, plain_ipv4(H3_IP, proto=1, ttl=1, eth_dst=H3_MAC, eth_src=GW_MAC))],
        counters(rx={1: 2}, tx={2: 1, 3: 1})))

    v.append(vector(
        "ipv4_no_route",
        "No matching prefix (default action drop): dropped, counted (reason 4).",
        [switch_config(1), route("10.0.2.0", 24, H2_MAC, 2)],
        [(1, plain_ipv4(H3_IP))],
        [],
        counters(rx={1: 1}, drops={NO_ROUTE: 1})))

    v.append(vector(
        "ipv4_ttl_expired",
        "TTL 1 or 0 cannot be forwarded: dropped, counted (reason 5).",
        [switch_config(1), route("10.0.2.0", 24, H2_MAC, 2)],
        [(1, plain_ipv4(H2_IP, ttl=1)), (1, plain_ipv4(H2_IP, ttl=0))],
        [],
        counters(rx={1: 2}, drops={TTL_EXPIRED: 2})))

    v.append(vector(
        "ipv4_options_dropped",
        "IPv4 with options (IHL 6) is not supported: parser error, dropped, counted "
        "(reason 0).",
        [switch_config(1), route("10.0.2.0", 24, H2_MAC, 2)],
        [(1, plain_ipv4(H2_IP, options=b"\x01\x01\x01\x00"))],
        [],
        counters(rx={1: 1}, drops={MALFORMED: 1})))

    v.append(vector(
        "non_ipv4_dropped",
        "A non-IPv4 frame (ARP) is dropped without a drop reason; only rx counts it.",
        [switch_config(1), route("10.0.2.0", 24, H2_MAC, 2)],
        [(1, arp_request())],
        [],
        counters(rx={1: 1})))

    v.append(vector(
        "done_probe_ipv4",
        "A probe with DONE set travels by IPv4 to the collector: TTL-1, MACs rewritten, no "
        "record, labels untouched.",
        [switch_config(6), generator(7, [2]), sink(7, "sink_to_cpu"), COLLECTOR_ROUTE],
        [(3, probe(records=old, flags=SR_FLAG_DONE, remaining=42, eth_dst=GW_MAC)),
         (3, probe(labels=[2], records=old[:1], flags=SR_FLAG_DONE, remaining=0, sequence=2))],
        [(5, probe(records=old, flags=SR_FLAG_DONE, remaining=42, ttl=63,
                   eth_dst=COLLECTOR_MAC, eth_src=GW_MAC)),
         (5, probe(labels=[2], records=old[:1], flags=SR_FLAG_DONE, remaining=0, ttl=63,
                   eth_dst=COLLECTOR_MAC, eth_src=GW_MAC, sequence=2))],
        counters(rx={3: 2}, tx={5: 2})))

    # --- packet-out ----------------------------------------------------------
    v.append(vector(
        "packet_out_generator",
        "A packet-out with egress_port 0 runs the pipeline: the fresh probe meets the "
        "generator; its record's ingress port is the CPU port.",
        [switch_config(1), generator(7, [2, 3])],
        [(CPU_PORT, packet_out(0, probe()))],
        [(2, probe(labels=[3], new_record=(1, CPU_PORT, 2), remaining=MAX_HOPS - 1))],
        counters(rx={CPU_PORT: 1}, tx={2: 1})))

    v.append(vector(
        "packet_out_direct",
        "A packet-out with egress_port != 0 leaves on that port unchanged, whatever it holds "
        "(a probe is neither routed nor recorded, ARP is not dropped).",
        [switch_config(1), generator(7, [2, 3])],
        [(CPU_PORT, packet_out(3, probe())), (CPU_PORT, packet_out(3, arp_request())),
         (CPU_PORT, packet_out(4, plain_ipv4(H2_IP, ttl=1)))],
        [(3, probe()), (3, arp_request()), (4, plain_ipv4(H2_IP, ttl=1))],
        counters(rx={CPU_PORT: 3}, tx={3: 2, 4: 1})))

    v.extend(bmv2_fidelity())
    return v


def bmv2_fidelity():
    """Where v1model leaves room and simple_switch_grpc decides: each of these
    was seen on bmv2 and pins its behaviour."""
    v = []
    old = [old_record(i) for i in range(3)]
    rx, tx, drop = ("SrIntIngress.rx_port_counter", "SrIntEgress.tx_port_counter",
                    "SrIntIngress.drop_counter")

    direct = probe()
    v.append(vector(
        "packet_out_port_wraps_after_compare",
        "The packet-out header's 16-bit egress_port is compared with 0 before the cast to "
        "bit<9>: 0x0200 is not 0, so the frame leaves unchanged on port 0x0200 & 0x1ff = 0 "
        "(the generator entry is not consulted).",
        [switch_config(1), generator(7, [2, 3])],
        [(CPU_PORT, packet_out(0x0200, direct))],
        [(0, direct)],
        counters(rx={CPU_PORT: 1}, tx={0: 1}),
        ports=[0, 2]))

    to_7 = probe(labels=[7], records=old[:1], remaining=44)
    to_512 = probe(labels=[512], records=old[:1], remaining=44, sequence=2)
    out_7 = packet_out(7, arp_request())
    v.append(vector(
        "egress_port_without_interface",
        "On a switch with ports 1-3, a label 7, a label 512 (bit<9>: port 0) and a packet-out "
        "to port 7 all run egress and count a transmission on that port; the frames go "
        "nowhere.",
        [switch_config(3)],
        [(1, to_7), (1, to_512), (CPU_PORT, out_7)],
        [],
        counters(rx={1: 2, CPU_PORT: 1}, tx={0: 1, 7: 2}),
        ports=[1, 2, 3]))

    v.append(vector(
        "egress_drop_port",
        "egress_spec 511 is simple_switch's drop port (what mark_to_drop sets): a label 511 "
        "ends the packet after ingress, with no transmission counted and no drop reason.",
        [switch_config(3)],
        [(1, probe(labels=[511], records=old[:1], remaining=44))],
        [],
        counters(rx={1: 1}, tx={511: 0}),
        ports=[1, 2]))

    fresh = probe()
    fresh_cpu = packet_out(0, probe(path_id=9, sequence=2))
    no_budget = probe(path_id=8, remaining=0, sequence=3)
    v.append(vector(
        "byte_counts_use_ingress_length",
        "Byte counters add the length the packet had on arrival: a probe that grows by a "
        "label and a record counts its fresh size on tx; a packet-out counts its CPU header "
        "on rx and drop; labels pushed before a hop-limit drop do not count.",
        [switch_config(1), generator(7, [2, 3]), generator(8, [2, 3])],
        [(1, fresh), (CPU_PORT, fresh_cpu), (1, no_budget)],
        [(2, probe(labels=[3], new_record=(1, 1, 2), remaining=MAX_HOPS - 1))],
        [counted_bytes(rx, 1, 2, [fresh, no_budget]),
         counted_bytes(rx, CPU_PORT, 1, [fresh_cpu]),
         counted_bytes(tx, 2, 1, [fresh]),
         counted_bytes(drop, PATH_MISS, 1, [fresh_cpu]),
         counted_bytes(drop, HOP_LIMIT, 1, [no_budget])]))
    return v


def truncate_payload(f):
    """Cuts the last 8 payload bytes, with IPv4/UDP lengths and checksum matching."""
    data = bytearray(f.data[:-8])
    ip_total = len(data) - 14
    hdr = bytearray(data[14:34])
    hdr[2:4] = struct.pack("!H", ip_total)
    hdr[10:12] = b"\0\0"
    hdr[10:12] = struct.pack("!H", inet_checksum(bytes(hdr)))
    data[14:34] = hdr
    data[38:40] = struct.pack("!H", ip_total - 20)
    return Frame().add(bytes(data))


def render(vec):
    return json.dumps(vec, indent=2) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in p4/tests/vectors instead of writing them")
    args = ap.parse_args()
    vecs = vectors()
    names = [x["name"] for x in vecs]
    assert len(names) == len(set(names)), "duplicate vector names"
    stale = []
    for vec in vecs:
        path = VECTOR_DIR / f"{vec['name']}.json"
        text = render(vec)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            VECTOR_DIR.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    extra = sorted(p.name for p in VECTOR_DIR.glob("*.json")) if VECTOR_DIR.exists() else []
    extra = [n for n in extra if n[:-5] not in names]
    if args.check:
        if stale:
            print(f"stale vectors: {stale}; run python3 p4/tests/make_vectors.py",
                  file=sys.stderr)
            return 1
        print(f"{len(vecs)} vectors up to date")
    else:
        print(f"wrote {len(vecs)} vectors to {VECTOR_DIR}")
    for n in extra:
        print(f"note: {n} is not written by this script (kept as is)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
