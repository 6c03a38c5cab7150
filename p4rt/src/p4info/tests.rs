use super::*;

/// A small IPv4 router's P4Info, shared with the integration tests: the
/// library knows no particular program.
const SAMPLE: &str = include_str!("../../tests/data/l3_forward.p4info.txtpb");

fn index() -> P4InfoIndex {
    P4InfoIndex::new(from_text(SAMPLE).unwrap()).unwrap()
}

#[test]
fn text_and_binary_forms_agree() {
    let info = from_text(SAMPLE).unwrap();
    assert_eq!(info.tables[0].size, 1024);
    assert_eq!(from_binary(&info.encode_to_vec()).unwrap(), info);
    assert_eq!(from_text(&to_text(&info)).unwrap(), info);
}

#[test]
fn text_errors_are_reported() {
    let e = from_text("tables { preamble { idd: 1 } }").unwrap_err();
    assert!(e.to_string().contains("idd"), "{e}");
}

#[test]
fn resolves_names_and_aliases() {
    let ix = index();
    let t = ix.table("Ingress.ipv4_lpm").unwrap();
    assert_eq!(t.id, 0x0200_0001);
    assert_eq!(ix.table("ipv4_lpm").unwrap().id, t.id);
    assert_eq!(
        t.match_field("hdr.ipv4.dst_addr").unwrap().field.bitwidth,
        32
    );
    assert_eq!(ix.counter("Ingress.drop_counter").unwrap().size, 8);
    assert_eq!(ix.packet_metadata("packet_in").unwrap().metadata[0].id, 1);
    let e = ix.table("Ingress.acl").unwrap_err();
    assert_eq!(e.to_string(), "P4Info has no table named \"Ingress.acl\"");
}

#[test]
fn builds_entries_with_canonical_values() {
    let ix = index();
    let e = ix
        .table_entry(
            "Ingress.ipv4_lpm",
            &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 1, 0], 24))],
            "Ingress.ipv4_forward",
            &[
                ("port", &[0, 0, 0, 2][..]),
                ("dst_mac", &[0, 0, 0, 0, 0, 0x0a, 0, 1, 1][..]),
            ],
        )
        .unwrap();
    assert_eq!(
        ix.describe_entry(&e),
        "Ingress.ipv4_lpm hdr.ipv4.dst_addr=0x0a000100/24 -> \
         Ingress.ipv4_forward(dst_mac=0x0a000101, port=0x02)"
    );
    // A /0 prefix is a wildcard: left out, as P4Runtime requires; its host
    // bits are still checked.
    let lpm0 = |v: Vec<u8>| [("hdr.ipv4.dst_addr", Match::Lpm(v, 0))];
    let drop = "Ingress.drop";
    let e = ix
        .table_entry("Ingress.ipv4_lpm", &lpm0(vec![0]), drop, &[])
        .unwrap();
    assert!(e.r#match.is_empty(), "{e:?}");
    assert!(ix
        .table_entry("Ingress.ipv4_lpm", &lpm0(vec![10, 0, 0, 0]), drop, &[])
        .is_err());
}

#[test]
fn entry_errors_name_the_culprit() {
    let ix = index();
    let lpm = |v: Vec<u8>, l| [("hdr.ipv4.dst_addr", Match::Lpm(v, l))];
    let fwd = [("dst_mac", &[1u8][..]), ("port", &[1u8][..])];
    let err = |m: &[(&str, Match)], a: &str, p: &[(&str, &[u8])]| {
        ix.table_entry("Ingress.ipv4_lpm", m, a, p)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(&lpm(vec![10, 0, 1, 1], 24), "Ingress.ipv4_forward", &fwd),
        "table Ingress.ipv4_lpm field hdr.ipv4.dst_addr: \
         value 0x0a000101 has bits set beyond its /24 prefix"
    );
    assert_eq!(
        err(
            &lpm(vec![10, 0, 1, 1], 32),
            "Ingress.ipv4_forward",
            &[("dst_mac", &[1u8][..]), ("port", &[2, 0][..])]
        ),
        "action Ingress.ipv4_forward parameter port: \
         value 0x0200 needs 10 bits, the field has 9"
    );
    assert_eq!(
        err(
            &lpm(vec![1], 32),
            "Ingress.ipv4_forward",
            &[("dst_mac", &[1u8][..])]
        ),
        "action Ingress.ipv4_forward: parameter port not given"
    );
    assert_eq!(
        err(
            &[("hdr.ipv4.dst_addr", Match::Exact(vec![1]))],
            "Ingress.ipv4_forward",
            &fwd
        ),
        "table Ingress.ipv4_lpm: field hdr.ipv4.dst_addr is Lpm, not Exact"
    );
    assert_eq!(
        err(
            &[("hdr.ipv4.src_addr", Match::Exact(vec![1]))],
            "Ingress.drop",
            &[]
        ),
        "table Ingress.ipv4_lpm: no match field named \"hdr.ipv4.src_addr\""
    );
    assert!(ix
        .table_entry("Ingress.ipv4_lpm", &lpm(vec![1], 32), "Ingress.nope", &[])
        .is_err());
}

#[test]
fn duplicate_names_are_rejected() {
    let mut info = from_text(SAMPLE).unwrap();
    let t = info.tables[0].clone();
    info.tables.push(t);
    let e = P4InfoIndex::new(info).unwrap_err();
    assert!(e.to_string().contains("two tables"), "{e}");
}
