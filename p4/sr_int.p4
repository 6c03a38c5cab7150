/* -*- P4_16 -*- */
// sr_int.p4: source-routed in-band network telemetry (INT-path), one program
// for every role a switch plays on a probe path: generator (pushes the route),
// forwarder (pops a label, pushes a record) and sink (hands the probe to the
// collector). Target: v1model on bmv2 simple_switch_grpc.
//
// Every header here is byte for byte `intpath_core::wire`; the semantics are
// those of ARCHITECTURE.md ("Data-plane semantics"), which the Rust reference
// switch (`intpath-switch`) implements too. The tests in `p4/tests/lockstep/`
// keep this file, `sr_int.p4info.txtpb` and the Rust wire sizes in step, and
// the packet vectors in `p4/tests/vectors/` pin the behaviour of both.

#include <core.p4>
#include <v1model.p4>

// Capacity of the label and record stacks: the most switches a probe can visit
// with a 1500-byte IPv4 MTU (`intpath_core::wire::max_hops(1500)`). A #define
// because header stack sizes must be compile-time constants.
#define MAX_HOPS 45

const bit<9>  CPU_PORT         = 255;
const bit<16> ETHERTYPE_IPV4   = 0x0800;
const bit<8>  IP_PROTO_UDP     = 17;
const bit<16> SRINT_UDP_PORT   = 9555;
const bit<8>  SR_FLAG_DONE     = 0x01;
const bit<8>  INT_RECORD_WORDS = 8;
// UDP length of a probe without labels or records: UDP 8 + SR 4 + INT 4 + payload 16.
const bit<16> PROBE_UDP_FIXED  = 32;
const bit<16> IPV4_HEADER_LEN  = 20;

// drop_counter indices (p4/README.md).
const bit<32> DROP_MALFORMED       = 0;
const bit<32> DROP_PATH_MISS       = 1;
const bit<32> DROP_ROUTE_EXHAUSTED = 2;
const bit<32> DROP_HOP_LIMIT       = 3;
const bit<32> DROP_NO_ROUTE        = 4;
const bit<32> DROP_TTL             = 5;

error {
    SrLabelOverflow,  // num_labels > MAX_HOPS
    IntHopOverflow,   // hop_count > MAX_HOPS
    IntRecordSize,    // record_words != 8
    Ipv4Version,      // version != 4
    Ipv4Options       // ihl != 5: options are not supported
}

/*************************************************************************
 * Headers (intpath_core::wire)
 *************************************************************************/

// Prepended to frames sent to the CPU port (P4Runtime PacketIn metadata).
@controller_header("packet_in")
header packet_in_header_t {
    bit<16> ingress_port;
    bit<16> _pad;
}

// Prepended by the controller to injected frames (P4Runtime PacketOut
// metadata). egress_port 0: run the ingress pipeline; otherwise: send the
// frame out of that port unchanged.
@controller_header("packet_out")
header packet_out_header_t {
    bit<16> egress_port;
    bit<16> _pad;
}

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> len;
    bit<16> checksum;
}

// SR header (4 bytes), followed by num_labels labels.
header sr_t {
    bit<16> path_id;
    bit<8>  num_labels;
    bit<8>  flags;
}

// One label: the egress port to take at the next switch.
header sr_label_t {
    bit<16> port;
}

// INT header (4 bytes), followed by hop_count records, newest first.
header int_t {
    bit<8> hop_count;
    bit<8> remaining_hops;
    bit<8> record_words;
    bit<8> reserved;
}

// One INT record (32 bytes = 8 words).
header int_record_t {
    bit<32> switch_id;
    bit<16> ingress_port;
    bit<16> egress_port;
    bit<64> ingress_ts;     // µs
    bit<64> egress_ts;      // µs
    bit<32> enq_qdepth;     // packets
    bit<32> deq_timedelta;  // µs
}

// Probe payload (16 bytes), written by the probe generator.
header probe_payload_t {
    bit<16> path_id;
    bit<16> reserved;
    bit<32> sequence;
    bit<64> send_ts;        // ns since the Unix epoch
}

struct headers_t {
    packet_out_header_t     packet_out;
    packet_in_header_t      packet_in;
    ethernet_t              ethernet;
    ipv4_t                  ipv4;
    udp_t                   udp;
    sr_t                    sr;
    sr_label_t[MAX_HOPS]    labels;
    int_t                   int_hdr;
    int_record_t[MAX_HOPS]  records;
    probe_payload_t         payload;
}

struct metadata_t {
    bit<8>   labels_left;   // parser loop counters
    bit<8>   records_left;
    bit<32>  switch_id;     // from switch_config
    bit<720> route;         // push_route's labels, unpacked in the apply block
    bit<1>   route_ipv4;    // forward by ipv4_lpm
    bit<1>   push_record;   // egress pushes an INT record
}

/*************************************************************************
 * Parser
 *************************************************************************/

parser SrIntParser(packet_in packet,
                   out headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    // A packet-out to a port other than 0 leaves unparsed: it goes out as is.
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition select(hdr.packet_out.egress_port) {
            0: parse_ethernet;
            default: accept;
        }
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.Ipv4Version);
        verify(hdr.ipv4.ihl == 5, error.Ipv4Options);
        transition select(hdr.ipv4.protocol) {
            IP_PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            SRINT_UDP_PORT: parse_sr;
            default: accept;
        }
    }

    state parse_sr {
        packet.extract(hdr.sr);
        verify(hdr.sr.num_labels <= MAX_HOPS, error.SrLabelOverflow);
        meta.labels_left = hdr.sr.num_labels;
        transition parse_labels;
    }

    // Count-driven loop: exactly num_labels labels.
    state parse_labels {
        transition select(meta.labels_left) {
            0: parse_int;
            default: parse_label;
        }
    }

    state parse_label {
        packet.extract(hdr.labels.next);
        meta.labels_left = meta.labels_left - 1;
        transition parse_labels;
    }

    state parse_int {
        packet.extract(hdr.int_hdr);
        verify(hdr.int_hdr.record_words == INT_RECORD_WORDS, error.IntRecordSize);
        verify(hdr.int_hdr.hop_count <= MAX_HOPS, error.IntHopOverflow);
        meta.records_left = hdr.int_hdr.hop_count;
        transition parse_records;
    }

    // Count-driven loop: exactly hop_count records.
    state parse_records {
        transition select(meta.records_left) {
            0: parse_payload;
            default: parse_record;
        }
    }

    state parse_record {
        packet.extract(hdr.records.next);
        meta.records_left = meta.records_left - 1;
        transition parse_records;
    }

    state parse_payload {
        packet.extract(hdr.payload);
        transition accept;
    }
}

/*************************************************************************
 * Checksum verification
 *************************************************************************/

control SrIntVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
              hdr.ipv4.total_len, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

/*************************************************************************
 * Ingress: generator, forwarder, sink, IPv4
 *************************************************************************/

control SrIntIngress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets_and_bytes) rx_port_counter;
    counter(8, CounterType.packets_and_bytes) drop_counter;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    // The switch id comes from a table default action because bmv2's
    // P4Runtime server cannot write registers.
    action set_switch_id(bit<32> switch_id) {
        meta.switch_id = switch_id;
    }

    action ipv4_forward(bit<48> dst_mac, bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    // labels: label 0 in the most significant 16 bits; the apply block
    // unpacks the first num_labels of them into the label stack.
    action push_route(bit<8> num_labels, bit<720> labels) {
        hdr.sr.num_labels = num_labels;
        meta.route = labels;
    }

    action sink_to_collector() {
        hdr.sr.flags = hdr.sr.flags | SR_FLAG_DONE;
        meta.push_record = 1;
        meta.route_ipv4 = 1;
    }

    action sink_to_cpu() {
        hdr.sr.flags = hdr.sr.flags | SR_FLAG_DONE;
        meta.push_record = 1;
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = (bit<16>) standard_metadata.ingress_port;
        hdr.packet_in._pad = 0;
    }

    // Keyless: only its default action is ever set (by the controller).
    table switch_config {
        actions = { @defaultonly set_switch_id; }
        default_action = set_switch_id(0);
        size = 1;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { ipv4_forward; drop; NoAction; }
        default_action = drop();
        size = 1024;
    }

    table generator {
        key = { hdr.sr.path_id: exact; }
        actions = { push_route; drop; }
        default_action = drop();
        size = 1024;
    }

    table sink {
        key = { hdr.sr.path_id: exact; }
        actions = { sink_to_collector; sink_to_cpu; drop; }
        default_action = drop();
        size = 1024;
    }

    apply {
        meta.route_ipv4 = 0;
        meta.push_record = 0;
        rx_port_counter.count((bit<32>) standard_metadata.ingress_port);

        if (standard_metadata.parser_error != error.NoError) {
            mark_to_drop(standard_metadata);
            drop_counter.count(DROP_MALFORMED);
            return;
        }
        if (hdr.packet_out.isValid()) {
            if (hdr.packet_out.egress_port != 0) {
                // Sent out as is; the parser left the frame unparsed.
                standard_metadata.egress_spec = (bit<9>) hdr.packet_out.egress_port;
                hdr.packet_out.setInvalid();
                return;
            }
            // Port 0: the frame runs the pipeline like one from a host port.
            hdr.packet_out.setInvalid();
        }
        switch_config.apply();
        if (!hdr.ipv4.isValid()) {
            // Not IPv4 (ARP, IPv6, ...): nothing here routes it.
            mark_to_drop(standard_metadata);
            return;
        }
        if (standard_metadata.checksum_error == 1) {
            mark_to_drop(standard_metadata);
            drop_counter.count(DROP_MALFORMED);
            return;
        }

        if (!hdr.sr.isValid()) {
            meta.route_ipv4 = 1;
        } else {
            // The probe must fill its UDP datagram and IPv4 packet exactly.
            bit<16> udp_len = PROBE_UDP_FIXED
                + (((bit<16>) hdr.sr.num_labels) << 1)
                + (((bit<16>) hdr.int_hdr.hop_count) << 5);
            if (hdr.udp.len != udp_len || hdr.ipv4.total_len != udp_len + IPV4_HEADER_LEN) {
                mark_to_drop(standard_metadata);
                drop_counter.count(DROP_MALFORMED);
                return;
            }
            if ((hdr.sr.flags & SR_FLAG_DONE) != 0) {
                // Route finished: plain IPv4 towards the collector, no record.
                meta.route_ipv4 = 1;
            } else {
                if (hdr.sr.num_labels == 0 && hdr.int_hdr.hop_count == 0) {
                    // Generator: a fresh probe gets the route for its path.
                    switch (generator.apply().action_run) {
                        push_route: {
                            if (hdr.sr.num_labels > MAX_HOPS) {
                                mark_to_drop(standard_metadata);
                                drop_counter.count(DROP_MALFORMED);
                                return;
                            }
                            // BEGIN push_route unroll (label i = route[719-16i : 704-16i])
                            if (hdr.sr.num_labels > 0) { hdr.labels[0].setValid(); hdr.labels[0].port = meta.route[719:704]; }
                            if (hdr.sr.num_labels > 1) { hdr.labels[1].setValid(); hdr.labels[1].port = meta.route[703:688]; }
                            if (hdr.sr.num_labels > 2) { hdr.labels[2].setValid(); hdr.labels[2].port = meta.route[687:672]; }
                            if (hdr.sr.num_labels > 3) { hdr.labels[3].setValid(); hdr.labels[3].port = meta.route[671:656]; }
                            if (hdr.sr.num_labels > 4) { hdr.labels[4].setValid(); hdr.labels[4].port = meta.route[655:640]; }
                            if (hdr.sr.num_labels > 5) { hdr.labels[5].setValid(); hdr.labels[5].port = meta.route[639:624]; }
                            if (hdr.sr.num_labels > 6) { hdr.labels[6].setValid(); hdr.labels[6].port = meta.route[623:608]; }
                            if (hdr.sr.num_labels > 7) { hdr.labels[7].setValid(); hdr.labels[7].port = meta.route[607:592]; }
                            if (hdr.sr.num_labels > 8) { hdr.labels[8].setValid(); hdr.labels[8].port = meta.route[591:576]; }
                            if (hdr.sr.num_labels > 9) { hdr.labels[9].setValid(); hdr.labels[9].port = meta.route[575:560]; }
                            if (hdr.sr.num_labels > 10) { hdr.labels[10].setValid(); hdr.labels[10].port = meta.route[559:544]; }
                            if (hdr.sr.num_labels > 11) { hdr.labels[11].setValid(); hdr.labels[11].port = meta.route[543:528]; }
                            if (hdr.sr.num_labels > 12) { hdr.labels[12].setValid(); hdr.labels[12].port = meta.route[527:512]; }
                            if (hdr.sr.num_labels > 13) { hdr.labels[13].setValid(); hdr.labels[13].port = meta.route[511:496]; }
                            if (hdr.sr.num_labels > 14) { hdr.labels[14].setValid(); hdr.labels[14].port = meta.route[495:480]; }
                            if (hdr.sr.num_labels > 15) { hdr.labels[15].setValid(); hdr.labels[15].port = meta.route[479:464]; }
                            if (hdr.sr.num_labels > 16) { hdr.labels[16].setValid(); hdr.labels[16].port = meta.route[463:448]; }
                            if (hdr.sr.num_labels > 17) { hdr.labels[17].setValid(); hdr.labels[17].port = meta.route[447:432]; }
                            if (hdr.sr.num_labels > 18) { hdr.labels[18].setValid(); hdr.labels[18].port = meta.route[431:416]; }
                            if (hdr.sr.num_labels > 19) { hdr.labels[19].setValid(); hdr.labels[19].port = meta.route[415:400]; }
                            if (hdr.sr.num_labels > 20) { hdr.labels[20].setValid(); hdr.labels[20].port = meta.route[399:384]; }
                            if (hdr.sr.num_labels > 21) { hdr.labels[21].setValid(); hdr.labels[21].port = meta.route[383:368]; }
                            if (hdr.sr.num_labels > 22) { hdr.labels[22].setValid(); hdr.labels[22].port = meta.route[367:352]; }
                            if (hdr.sr.num_labels > 23) { hdr.labels[23].setValid(); hdr.labels[23].port = meta.route[351:336]; }
                            if (hdr.sr.num_labels > 24) { hdr.labels[24].setValid(); hdr.labels[24].port = meta.route[335:320]; }
                            if (hdr.sr.num_labels > 25) { hdr.labels[25].setValid(); hdr.labels[25].port = meta.route[319:304]; }
                            if (hdr.sr.num_labels > 26) { hdr.labels[26].setValid(); hdr.labels[26].port = meta.route[303:288]; }
                            if (hdr.sr.num_labels > 27) { hdr.labels[27].setValid(); hdr.labels[27].port = meta.route[287:272]; }
                            if (hdr.sr.num_labels > 28) { hdr.labels[28].setValid(); hdr.labels[28].port = meta.route[271:256]; }
                            if (hdr.sr.num_labels > 29) { hdr.labels[29].setValid(); hdr.labels[29].port = meta.route[255:240]; }
                            if (hdr.sr.num_labels > 30) { hdr.labels[30].setValid(); hdr.labels[30].port = meta.route[239:224]; }
                            if (hdr.sr.num_labels > 31) { hdr.labels[31].setValid(); hdr.labels[31].port = meta.route[223:208]; }
                            if (hdr.sr.num_labels > 32) { hdr.labels[32].setValid(); hdr.labels[32].port = meta.route[207:192]; }
                            if (hdr.sr.num_labels > 33) { hdr.labels[33].setValid(); hdr.labels[33].port = meta.route[191:176]; }
                            if (hdr.sr.num_labels > 34) { hdr.labels[34].setValid(); hdr.labels[34].port = meta.route[175:160]; }
                            if (hdr.sr.num_labels > 35) { hdr.labels[35].setValid(); hdr.labels[35].port = meta.route[159:144]; }
                            if (hdr.sr.num_labels > 36) { hdr.labels[36].setValid(); hdr.labels[36].port = meta.route[143:128]; }
                            if (hdr.sr.num_labels > 37) { hdr.labels[37].setValid(); hdr.labels[37].port = meta.route[127:112]; }
                            if (hdr.sr.num_labels > 38) { hdr.labels[38].setValid(); hdr.labels[38].port = meta.route[111:96]; }
                            if (hdr.sr.num_labels > 39) { hdr.labels[39].setValid(); hdr.labels[39].port = meta.route[95:80]; }
                            if (hdr.sr.num_labels > 40) { hdr.labels[40].setValid(); hdr.labels[40].port = meta.route[79:64]; }
                            if (hdr.sr.num_labels > 41) { hdr.labels[41].setValid(); hdr.labels[41].port = meta.route[63:48]; }
                            if (hdr.sr.num_labels > 42) { hdr.labels[42].setValid(); hdr.labels[42].port = meta.route[47:32]; }
                            if (hdr.sr.num_labels > 43) { hdr.labels[43].setValid(); hdr.labels[43].port = meta.route[31:16]; }
                            if (hdr.sr.num_labels > 44) { hdr.labels[44].setValid(); hdr.labels[44].port = meta.route[15:0]; }
                            // END push_route unroll
                        }
                        default: {
                            // Miss (or a drop entry): no route for this path.
                            mark_to_drop(standard_metadata);
                            drop_counter.count(DROP_PATH_MISS);
                            return;
                        }
                    }
                }
                if (hdr.sr.num_labels != 0) {
                    // Forwarder: the first label is this switch's egress port.
                    standard_metadata.egress_spec = (bit<9>) hdr.labels[0].port;
                    hdr.labels.pop_front(1);
                    hdr.sr.num_labels = hdr.sr.num_labels - 1;
                    meta.push_record = 1;
                } else {
                    // Sink: the route is used up.
                    switch (sink.apply().action_run) {
                        sink_to_collector: {}
                        sink_to_cpu: {}
                        default: {
                            mark_to_drop(standard_metadata);
                            drop_counter.count(DROP_ROUTE_EXHAUSTED);
                            return;
                        }
                    }
                }
            }
        }

        if (meta.route_ipv4 == 1) {
            if (hdr.ipv4.ttl <= 1) {
                mark_to_drop(standard_metadata);
                drop_counter.count(DROP_TTL);
                return;
            }
            switch (ipv4_lpm.apply().action_run) {
                ipv4_forward: {}
                default: {
                    // drop() or NoAction: no usable route.
                    mark_to_drop(standard_metadata);
                    drop_counter.count(DROP_NO_ROUTE);
                    return;
                }
            }
        }

        // A record is due at egress: the hop budget and the stack must allow
        // it. Decided here so that one drop counter holds every reason.
        if (meta.push_record == 1
                && (hdr.int_hdr.remaining_hops == 0 || hdr.int_hdr.hop_count >= MAX_HOPS)) {
            mark_to_drop(standard_metadata);
            drop_counter.count(DROP_HOP_LIMIT);
            return;
        }
    }
}

/*************************************************************************
 * Egress: push the INT record, fix the lengths
 *************************************************************************/

control SrIntEgress(inout headers_t hdr,
                    inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets_and_bytes) tx_port_counter;

    apply {
        tx_port_counter.count((bit<32>) standard_metadata.egress_port);
        if (meta.push_record == 1) {
            hdr.records.push_front(1);
            hdr.records[0].setValid();
            hdr.records[0].switch_id = meta.switch_id;
            hdr.records[0].ingress_port = (bit<16>) standard_metadata.ingress_port;
            hdr.records[0].egress_port = (bit<16>) standard_metadata.egress_port;
            hdr.records[0].ingress_ts = (bit<64>) standard_metadata.ingress_global_timestamp;
            hdr.records[0].egress_ts = (bit<64>) standard_metadata.egress_global_timestamp;
            hdr.records[0].enq_qdepth = (bit<32>) standard_metadata.enq_qdepth;
            hdr.records[0].deq_timedelta = standard_metadata.deq_timedelta;
            hdr.int_hdr.hop_count = hdr.int_hdr.hop_count + 1;
            hdr.int_hdr.remaining_hops = hdr.int_hdr.remaining_hops - 1;
        }
        if (hdr.sr.isValid()) {
            // Labels were pushed or popped, a record may have been added.
            hdr.udp.len = PROBE_UDP_FIXED
                + (((bit<16>) hdr.sr.num_labels) << 1)
                + (((bit<16>) hdr.int_hdr.hop_count) << 5);
            hdr.ipv4.total_len = hdr.udp.len + IPV4_HEADER_LEN;
            hdr.udp.checksum = 0;
        }
    }
}

/*************************************************************************
 * Checksum update and deparser
 *************************************************************************/

control SrIntComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
              hdr.ipv4.total_len, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control SrIntDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.sr);
        packet.emit(hdr.labels);
        packet.emit(hdr.int_hdr);
        packet.emit(hdr.records);
        packet.emit(hdr.payload);
    }
}

V1Switch(
    SrIntParser(),
    SrIntVerifyChecksum(),
    SrIntIngress(),
    SrIntEgress(),
    SrIntComputeChecksum(),
    SrIntDeparser()
) main;
