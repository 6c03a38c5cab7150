//! Pirate on capture files: link types, snap-length cuts, and files that
//! are broken in every way a capture can be (an error or a counted skip,
//! never a panic).

use intpath_diagnose::latency::{analyse, Config, LatencyError};
use intpath_test_support::pcap::{ethernet_frame, sll_frame, write, write_ethernet, Tcp};
use pcap_file::DataLink;
use std::io::Write;

const T0: i64 = 1_700_000_000_000_000_000;

/// A client sending batches of 3 requests (5 µs apart) every 1.5 ms, the
/// server's responses in between, for one second.
fn batches() -> Vec<Tcp> {
    let mut v = Vec::new();
    for b in 0..600 {
        let t = T0 + b * 1_500_000;
        for k in 0..3 {
            v.push(Tcp::data(
                t + k * 5_000,
                "10.0.0.1:40000",
                "10.0.0.2:80",
                200,
            ));
        }
        v.push(Tcp::data(
            t + 700_000,
            "10.0.0.2:80",
            "10.0.0.1:40000",
            1400,
        ));
    }
    v
}

fn estimate_us(path: &std::path::Path) -> f64 {
    let a = analyse(path, &Config::default()).expect("the capture reads");
    assert_eq!(a.connections, 1);
    a.rows[0].result.estimate.expect("an estimate").latency_ns / 1e3
}

#[test]
fn ethernet_sll_and_snap_cut_captures_give_the_batch_period() {
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let segs = batches();
    let eth = dir.path().join("eth.pcap");
    write_ethernet(&eth, &segs);
    let e = estimate_us(&eth);
    assert!((e - 1500.0).abs() < 1.0, "{e}");

    // Cut at 80 bytes: headers only; payload lengths still from IP.
    let cut = dir.path().join("cut.pcap");
    let frames: Vec<(i64, Vec<u8>)> = segs.iter().map(|t| (t.at_ns, ethernet_frame(t))).collect();
    write(&cut, DataLink::ETHERNET, 80, &frames);
    assert!((estimate_us(&cut) - e).abs() < 1e-9);

    let sll = dir.path().join("sll.pcap");
    let frames: Vec<(i64, Vec<u8>)> = segs.iter().map(|t| (t.at_ns, sll_frame(t))).collect();
    write(&sll, DataLink::LINUX_SLL, 65535, &frames);
    assert!((estimate_us(&sll) - e).abs() < 1e-9);
}

#[test]
fn non_tcp_records_and_a_cut_last_record_are_counted_skips() {
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let segs = batches();
    let mut frames: Vec<(i64, Vec<u8>)> =
        segs.iter().map(|t| (t.at_ns, ethernet_frame(t))).collect();
    // An ARP frame and an Ethernet frame cut inside its IP header.
    let mut arp = vec![0xff; 12];
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    frames.insert(1, (T0 + 1, arp));
    frames.insert(2, (T0 + 2, ethernet_frame(&segs[0])[..20].to_vec()));
    let p = dir.path().join("mixed.pcap");
    write(&p, DataLink::ETHERNET, 65535, &frames);
    // Chop the last record in half, as a capture killed mid-write leaves it.
    let bytes = std::fs::read(&p).expect("read back");
    std::fs::write(&p, &bytes[..bytes.len() - 30]).expect("rewrite");
    let a = analyse(&p, &Config::default()).expect("still reads");
    assert_eq!(a.records as usize, frames.len() - 1);
    assert_eq!(a.skipped.values().sum::<u64>(), 3, "{:?}", a.skipped);
    assert_eq!(
        a.skipped.get("record cut off by the end of the file"),
        Some(&1)
    );
}

#[test]
fn broken_files_are_one_line_errors() {
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::File::create(&p)
            .and_then(|mut f| f.write_all(bytes))
            .expect("written");
        p
    };
    let cfg = Config::default();
    let missing = analyse(&dir.path().join("nope.pcap"), &cfg).expect_err("missing");
    assert!(matches!(missing, LatencyError::Open(..)), "{missing}");
    for (name, bytes) in [
        ("empty.pcap", &b""[..]),
        (
            "text.pcap",
            &b"this is not a capture at all, just words"[..],
        ),
        ("short.pcap", &[0xd4, 0xc3, 0xb2, 0xa1, 2, 0][..]),
    ] {
        let e = analyse(&file(name, bytes), &cfg).expect_err(name);
        assert!(matches!(e, LatencyError::NotPcap(..)), "{name}: {e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    let ng = analyse(
        &file("x.pcapng", &[0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0]),
        &cfg,
    )
    .expect_err("pcapng");
    assert!(ng.to_string().contains("editcap"), "{ng}");
    // Link type 147 (user-defined): refused by name.
    let user = dir.path().join("user.pcap");
    write(&user, DataLink::from(147), 65535, &[]);
    let e = analyse(&user, &cfg).expect_err("link type");
    assert!(matches!(e, LatencyError::LinkType(..)), "{e}");
}

#[test]
fn random_bytes_after_a_valid_header_never_panic() {
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let p = dir.path().join("noise.pcap");
    let mut rng = intpath_test_support::rng::Rng(7);
    let mut valid = Vec::new();
    write_ethernet(&p, &batches()[..10]);
    valid.extend(std::fs::read(&p).expect("read back"));
    for round in 0..200 {
        let mut bytes = valid.clone();
        // Flip bytes past the file header, or append noise.
        for _ in 0..1 + round % 8 {
            let i = 24 + rng.below(bytes.len() - 24);
            bytes[i] = rng.below(256) as u8;
        }
        if round % 3 == 0 {
            bytes.extend((0..rng.below(64)).map(|_| rng.below(256) as u8));
        }
        std::fs::write(&p, &bytes).expect("rewrite");
        // Either outcome is fine; a panic fails the test.
        let _ = analyse(&p, &Config::default());
    }
}
