//! Small `sr_int` programs and a switch's entries read back by name, so a
//! test compares what a switch holds with what it was given in one form.

use intpath_p4rt::client::Client;
use intpath_p4rt::p4info::{Match, P4InfoIndex};
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema;
use std::collections::BTreeSet;

/// A switch id, routes to hosts 10.0.0.1..=`hosts` (host `h` behind port
/// `h`), and one generator entry (path 7, labels 2 then 3).
pub fn sample_entries(ix: &P4InfoIndex, hosts: u8, switch_id: u8) -> Vec<p4::TableEntry> {
    let mut v = vec![ix
        .default_entry(
            schema::SWITCH_CONFIG,
            "SrIntIngress.set_switch_id",
            &[("switch_id", &[switch_id][..])],
        )
        .unwrap()];
    for h in 1..=hosts {
        v.push(
            ix.table_entry(
                "SrIntIngress.ipv4_lpm",
                &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 0, h], 32))],
                "SrIntIngress.ipv4_forward",
                &[("dst_mac", &[0, 0, 0, 0, 0, h][..]), ("port", &[h][..])],
            )
            .unwrap(),
        );
    }
    let labels = intpath_sr_int::label_stack(&[2, 3]).unwrap();
    v.push(
        ix.table_entry(
            "SrIntIngress.generator",
            &[("hdr.sr.path_id", Match::Exact(vec![7]))],
            "SrIntIngress.push_route",
            &[("num_labels", &[2][..]), ("labels", &labels[..])],
        )
        .unwrap(),
    );
    v
}

/// Entries rendered by name, the form [`held`] reads back.
pub fn described(ix: &P4InfoIndex, entries: &[p4::TableEntry]) -> BTreeSet<String> {
    entries.iter().map(|e| ix.describe_entry(e)).collect()
}

/// Every entry the switch holds, its `switch_config` default included,
/// rendered by name.
pub async fn held(c: &Client, ix: &P4InfoIndex) -> BTreeSet<String> {
    let mut all = described(ix, &c.read_table_entries(None).await.unwrap());
    let d = c.read_default_entry(schema::SWITCH_CONFIG).await.unwrap();
    all.extend(d.iter().map(|e| ix.describe_entry(e)));
    all
}
