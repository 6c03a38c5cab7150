//! The names the controller programs by (p4/README.md) must all resolve in
//! the switch's P4Info with the agreed kinds and widths.

use intpath_p4rt::p4info::{self, MatchType, P4InfoIndex};

#[test]
fn sr_int_p4info_has_every_agreed_name() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/sr_int.p4info.txtpb");
    let ix = P4InfoIndex::new(p4info::load(&path).unwrap()).unwrap();
    let key = |table: &str, field: &str| {
        let m = ix.table(table).unwrap().match_field(field).unwrap().clone();
        (m.match_type, m.field.bitwidth)
    };
    assert_eq!(
        key("SrIntIngress.ipv4_lpm", "hdr.ipv4.dst_addr"),
        (MatchType::Lpm, 32)
    );
    assert_eq!(
        key("SrIntIngress.generator", "hdr.sr.path_id"),
        (MatchType::Exact, 16)
    );
    assert_eq!(
        key("SrIntIngress.sink", "hdr.sr.path_id"),
        (MatchType::Exact, 16)
    );
    assert!(ix
        .table("SrIntIngress.switch_config")
        .unwrap()
        .match_fields
        .is_empty());
    let param = |action: &str, p: &str| ix.action(action).unwrap().param(p).unwrap().bitwidth;
    assert_eq!(param("SrIntIngress.set_switch_id", "switch_id"), 32);
    assert_eq!(param("SrIntIngress.ipv4_forward", "dst_mac"), 48);
    assert_eq!(param("SrIntIngress.ipv4_forward", "port"), 9);
    assert_eq!(param("SrIntIngress.push_route", "num_labels"), 8);
    assert_eq!(param("SrIntIngress.push_route", "labels"), 720);
    for a in [
        "SrIntIngress.drop",
        "SrIntIngress.sink_to_collector",
        "SrIntIngress.sink_to_cpu",
    ] {
        assert!(ix.action(a).unwrap().params.is_empty(), "{a}");
    }
    for (c, size) in [
        ("SrIntIngress.rx_port_counter", 512),
        ("SrIntEgress.tx_port_counter", 512),
        ("SrIntIngress.drop_counter", 8),
    ] {
        assert_eq!(ix.counter(c).unwrap().size, size, "{c}");
    }
    for header in ["packet_in", "packet_out"] {
        let h = ix.packet_metadata(header).unwrap();
        let fields: Vec<_> = h.metadata.iter().map(|m| (m.id, m.bitwidth)).collect();
        assert_eq!(fields, vec![(1, 16), (2, 16)], "{header}");
    }
}
