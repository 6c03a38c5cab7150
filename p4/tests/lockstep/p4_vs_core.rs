//! The P4 program against `intpath_core::wire`: constants, stack sizes,
//! header sizes and every field's place in the bytes.

use crate::p4_source::*;
use intpath_core::wire::*;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

#[test]
fn constants_and_stacks_match_core() {
    let p = program();
    assert_eq!(p.define("MAX_HOPS"), MAX_HOPS);
    assert_eq!(MAX_HOPS, max_hops(DEFAULT_MTU));
    assert_eq!(p.constant("SRINT_UDP_PORT"), u64::from(SRINT_UDP_PORT));
    assert_eq!(p.constant("SR_FLAG_DONE"), u64::from(SR_FLAG_DONE));
    assert_eq!(p.constant("INT_RECORD_WORDS"), u64::from(INT_RECORD_WORDS));
    assert_eq!(p.constant("IPV4_HEADER_LEN"), IPV4_HEADER_LEN as u64);
    assert_eq!(p.constant("IP_PROTO_UDP"), u64::from(IP_PROTO_UDP));
    assert_eq!(
        p.constant("PROBE_UDP_FIXED") as usize,
        UDP_HEADER_LEN + SR_HEADER_LEN + INT_HEADER_LEN + PROBE_PAYLOAD_LEN
    );
    // intpath's default CPU port (p4/README.md).
    assert_eq!(p.constant("CPU_PORT"), 255);

    let hdrs = &p.structs["headers_t"];
    for (field, elem) in [("labels", "sr_label_t"), ("records", "int_record_t")] {
        assert_eq!(hdrs[field].type_name, elem);
        assert_eq!(hdrs[field].stack.as_deref(), Some("MAX_HOPS"), "{field}");
    }
    let route_bits = (MAX_HOPS * SR_LABEL_LEN * 8) as u32;
    assert_eq!(p.structs["metadata_t"]["route"].width, Some(route_bits));
    let ingress = p
        .controls
        .iter()
        .find(|c| c.name == "SrIntIngress")
        .unwrap();
    let push = &ingress
        .actions
        .iter()
        .find(|(n, _)| n == "push_route")
        .unwrap()
        .1;
    assert_eq!(push[1], ("labels".to_string(), route_bits));
}

/// The unrolled push_route block must set label i from the i-th 16-bit slice,
/// most significant first, for every i below MAX_HOPS.
#[test]
fn push_route_unroll_covers_every_label() {
    let begin = P4_SOURCE
        .find("BEGIN push_route unroll")
        .expect("unroll start");
    let end = P4_SOURCE.find("END push_route unroll").expect("unroll end");
    let lines: Vec<&str> = P4_SOURCE[begin..end]
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .collect();
    assert_eq!(lines.len(), MAX_HOPS);
    for (i, line) in lines.iter().enumerate() {
        let hi = (MAX_HOPS - i) * 16 - 1;
        let want = format!(
            "if (hdr.sr.num_labels > {i}) {{ hdr.labels[{i}].setValid(); \
             hdr.labels[{i}].port = meta.route[{hi}:{}]; }}",
            hi - 15
        );
        assert_eq!(*line, want, "label {i}");
    }
}

#[test]
fn header_sizes_match_core() {
    let p = program();
    for (h, len) in [
        ("ethernet_t", ETHERNET_HEADER_LEN),
        ("ipv4_t", IPV4_HEADER_LEN),
        ("udp_t", UDP_HEADER_LEN),
        ("sr_t", SR_HEADER_LEN),
        ("sr_label_t", SR_LABEL_LEN),
        ("int_t", INT_HEADER_LEN),
        ("int_record_t", INT_RECORD_LEN),
        ("probe_payload_t", PROBE_PAYLOAD_LEN),
        ("packet_in_header_t", CPU_HEADER_LEN),
        ("packet_out_header_t", CPU_HEADER_LEN),
    ] {
        assert_eq!(p.header(h).bits() as usize, len * 8, "{h}");
    }
}

fn fields(pairs: &[(&str, u128)]) -> BTreeMap<String, u128> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Bytes written by intpath_core, read back with the P4 header layouts: every
/// field sits where the P4 program expects it.
#[test]
fn field_layouts_match_core() {
    let p = program();

    let rec = IntRecordRepr {
        switch_id: 0x0102_0304,
        ingress_port: 0x0506,
        egress_port: 0x0708,
        ingress_ts: 0x1112_1314_1516_1718,
        egress_ts: 0x2122_2324_2526_2728,
        enq_qdepth: 0x3132_3334,
        deq_timedelta: 0x4142_4344,
    };
    let mut buf = [0u8; INT_RECORD_LEN];
    rec.emit(&mut IntRecord::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("int_record_t").decode(&buf),
        fields(&[
            ("switch_id", 0x0102_0304),
            ("ingress_port", 0x0506),
            ("egress_port", 0x0708),
            ("ingress_ts", 0x1112_1314_1516_1718),
            ("egress_ts", 0x2122_2324_2526_2728),
            ("enq_qdepth", 0x3132_3334),
            ("deq_timedelta", 0x4142_4344),
        ])
    );

    let sr = SrRepr {
        path_id: 0xabcd,
        flags: SR_FLAG_DONE,
        labels: vec![0x0102, 0x0304],
    };
    let mut buf = vec![0u8; sr.buffer_len()];
    sr.emit(&mut SrHeader::new_unchecked(&mut buf[..])).unwrap();
    assert_eq!(
        p.header("sr_t").decode(&buf),
        fields(&[
            ("path_id", 0xabcd),
            ("num_labels", 2),
            ("flags", u128::from(SR_FLAG_DONE))
        ])
    );
    for (i, label) in sr.labels.iter().enumerate() {
        let at = SR_HEADER_LEN + i * SR_LABEL_LEN;
        assert_eq!(
            p.header("sr_label_t").decode(&buf[at..]),
            fields(&[("port", u128::from(*label))])
        );
    }

    let int = IntRepr {
        remaining_hops: 0x21,
        records: vec![rec],
    };
    let mut buf = vec![0u8; int.buffer_len()];
    int.emit(&mut IntHeader::new_unchecked(&mut buf[..]))
        .unwrap();
    assert_eq!(
        p.header("int_t").decode(&buf),
        fields(&[
            ("hop_count", 1),
            ("remaining_hops", 0x21),
            ("record_words", u128::from(INT_RECORD_WORDS)),
            ("reserved", 0)
        ])
    );

    let pl = PayloadRepr {
        path_id: 0x0a0b,
        sequence: 0x0c0d_0e0f,
        send_ts: 0x1011_1213_1415_1617,
    };
    let mut buf = [0u8; PROBE_PAYLOAD_LEN];
    pl.emit(&mut ProbePayload::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("probe_payload_t").decode(&buf),
        fields(&[
            ("path_id", 0x0a0b),
            ("reserved", 0),
            ("sequence", 0x0c0d_0e0f),
            ("send_ts", 0x1011_1213_1415_1617)
        ])
    );

    let mut buf = [0xffu8; CPU_HEADER_LEN];
    PacketInRepr {
        ingress_port: 0x0102,
    }
    .emit(&mut PacketIn::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("packet_in_header_t").decode(&buf),
        fields(&[("ingress_port", 0x0102), ("_pad", 0)])
    );
    let mut buf = [0xffu8; CPU_HEADER_LEN];
    PacketOutRepr {
        egress_port: 0x0304,
    }
    .emit(&mut PacketOut::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("packet_out_header_t").decode(&buf),
        fields(&[("egress_port", 0x0304), ("_pad", 0)])
    );

    let mut buf = [0u8; ETHERNET_HEADER_LEN];
    EthernetRepr {
        dst: MacAddr([1, 2, 3, 4, 5, 6]),
        src: MacAddr([7, 8, 9, 10, 11, 12]),
        ethertype: EtherType::Ipv4,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("ethernet_t").decode(&buf),
        fields(&[
            ("dst_addr", 0x0102_0304_0506),
            ("src_addr", 0x0708_090a_0b0c),
            ("ether_type", 0x0800)
        ])
    );

    let mut buf = [0u8; IPV4_HEADER_LEN];
    Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 1, 1),
        dst: Ipv4Addr::new(10, 0, 9, 9),
        protocol: IP_PROTO_UDP,
        ttl: 63,
        payload_len: 100,
    }
    .emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]))
    .unwrap();
    let ip = p.header("ipv4_t").decode(&buf);
    let checksum = u128::from(Ipv4Packet::new_unchecked(&buf[..]).header_checksum());
    assert_eq!(
        ip,
        fields(&[
            ("version", 4),
            ("ihl", 5),
            ("diffserv", 0),
            ("total_len", 120),
            ("identification", 0),
            ("flags", 0b010),
            ("frag_offset", 0),
            ("ttl", 63),
            ("protocol", u128::from(IP_PROTO_UDP)),
            ("hdr_checksum", checksum),
            ("src_addr", 0x0a00_0101),
            ("dst_addr", 0x0a00_0909),
        ])
    );

    let mut buf = [0xffu8; UDP_HEADER_LEN];
    UdpRepr {
        src_port: 0x1234,
        dst_port: SRINT_UDP_PORT,
        payload_len: 24,
    }
    .emit(&mut UdpPacket::new_unchecked(&mut buf[..]))
    .unwrap();
    assert_eq!(
        p.header("udp_t").decode(&buf),
        fields(&[
            ("src_port", 0x1234),
            ("dst_port", u128::from(SRINT_UDP_PORT)),
            ("len", 32),
            ("checksum", 0)
        ])
    );
}
