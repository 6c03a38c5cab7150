//! The program the client's tests speak to devices in: a small IPv4 router
//! (tests/data/l3_forward.p4info.txtpb), not intpath's own, because the
//! client serves any program.
#![allow(dead_code)] // each test binary uses its own part

use intpath_p4rt::client::Client;
use intpath_p4rt::p4info::{self, Match, P4InfoIndex};
use intpath_p4rt::proto::p4::v1 as p4;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// The route table (LPM on the IPv4 destination).
pub const ROUTES: &str = "Ingress.ipv4_lpm";
/// The per-port source MAC table (exact on the egress port).
pub const SMAC: &str = "Egress.smac_rewrite";

pub fn index() -> Arc<P4InfoIndex> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/l3_forward.p4info.txtpb");
    let info = p4info::load(&path).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(P4InfoIndex::new(info).unwrap_or_else(|e| panic!("{e}")))
}

/// A route to 10.0.0.`h` behind port `h`, `dst_mac` and `port` as given.
fn route(ix: &P4InfoIndex, h: u8, dst_mac: &[u8], port: &[u8]) -> p4::TableEntry {
    ix.table_entry(
        ROUTES,
        &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 0, h], 32))],
        "Ingress.ipv4_forward",
        &[("dst_mac", dst_mac), ("port", port)],
    )
    .unwrap()
}

/// A default route out of `uplink`, routes to hosts 10.0.0.1..=`hosts`
/// (host `h` behind port `h`), and port 1's source MAC: a default entry,
/// entries of two tables and of two match kinds.
pub fn sample_entries(ix: &P4InfoIndex, hosts: u8, uplink: u8) -> Vec<p4::TableEntry> {
    let mut v = vec![ix
        .default_entry(
            ROUTES,
            "Ingress.ipv4_forward",
            &[("dst_mac", &[0xee][..]), ("port", &[uplink][..])],
        )
        .unwrap()];
    v.extend((1..=hosts).map(|h| route(ix, h, &[0, 0, 0, 0, 0, h], &[h])));
    v.push(
        ix.table_entry(
            SMAC,
            &[("standard_metadata.egress_port", Match::Exact(vec![1]))],
            "Egress.set_smac",
            &[("smac", &[2, 0, 0, 0, 0, 1][..])],
        )
        .unwrap(),
    );
    v
}

/// Every entry the device holds, the route table's default included,
/// rendered by name (the form `intpath_test_support::entries::described`
/// gives the entries it was sent).
pub async fn held(c: &Client, ix: &P4InfoIndex) -> BTreeSet<String> {
    intpath_test_support::entries::held_with_defaults(c, ix, &[ROUTES]).await
}
