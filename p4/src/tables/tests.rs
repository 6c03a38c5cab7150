use super::*;
use intpath_sr_int::schema;

fn lpm(addr: u32, len: u32, port: u16) -> NamedEntry {
    NamedEntry {
        table: schema::IPV4_LPM.into(),
        is_default: false,
        matches: vec![NamedMatch {
            field: "hdr.ipv4.dst_addr".into(),
            value: addr.to_be_bytes().to_vec(),
            prefix_len: Some(len),
        }],
        action: schema::IPV4_FORWARD.into(),
        params: vec![
            ("dst_mac".into(), vec![0, 0, 0, 0, 0, 9]),
            ("port".into(), port.to_be_bytes().to_vec()),
        ],
    }
}

#[test]
fn longest_prefix_wins_and_roundtrips() {
    let mut t = Tables::default();
    for e in [
        lpm(0x0a00_0000, 8, 1),
        lpm(0x0a00_0100, 24, 2),
        lpm(0, 0, 3),
    ] {
        t.apply(WriteOp::Insert, Entry::from_named(&e).unwrap())
            .unwrap();
    }
    let port = |t: &Tables, a| match t.ipv4_lpm.lookup(a) {
        Some(Ipv4Action::Forward { port, .. }) => *port,
        other => panic!("{other:?}"),
    };
    assert_eq!(port(&t, 0x0a00_0105), 2);
    assert_eq!(port(&t, 0x0a05_0105), 1);
    assert_eq!(port(&t, 0x0b00_0000), 3);
    let e = Entry::from_named(&lpm(0x0a00_0100, 24, 2)).unwrap();
    assert_eq!(
        t.apply(WriteOp::Insert, e),
        Err(TableError::AlreadyExists(schema::IPV4_LPM))
    );
    assert_eq!(Entry::from_named(&e.to_named()).unwrap(), e);
    t.apply(WriteOp::Delete, e).unwrap();
    assert_eq!(port(&t, 0x0a00_0105), 1);
    assert_eq!(t.entries(schema::IPV4_LPM).len(), 2);
    assert!(Entry::from_named(&lpm(0x0a00_0101, 24, 2)).is_err());
    let mut wide = lpm(0x0a00_0100, 24, 2);
    wide.params[1].1 = vec![0x02, 0x00];
    assert!(Entry::from_named(&wide).is_err(), "port over 9 bits");
}

#[test]
fn routes_read_label_zero_from_the_most_significant_bits() {
    let mut labels = vec![0u8; 90];
    labels[..4].copy_from_slice(&[0, 2, 0, 3]);
    let e = NamedEntry {
        table: schema::GENERATOR.into(),
        is_default: false,
        matches: vec![NamedMatch {
            field: "hdr.sr.path_id".into(),
            value: vec![7],
            prefix_len: None,
        }],
        action: schema::PUSH_ROUTE.into(),
        params: vec![("num_labels".into(), vec![2]), ("labels".into(), labels)],
    };
    let typed = Entry::from_named(&e).unwrap();
    match typed {
        Entry::Generator {
            path_id: 7,
            action: GeneratorAction::PushRoute(r),
        } => assert_eq!(r.labels(), Some(&[2, 3][..])),
        other => panic!("{other:?}"),
    }
    assert_eq!(Entry::from_named(&typed.to_named()).unwrap(), typed);
}
