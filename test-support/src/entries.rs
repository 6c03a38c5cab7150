//! A switch's entries read back by name, so a test compares what a switch
//! holds with what it was given in one form.

use intpath_p4rt::client::Client;
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema;
use std::collections::BTreeSet;

/// Entries rendered by name, the form [`held`] reads back.
pub fn described(ix: &P4InfoIndex, entries: &[p4::TableEntry]) -> BTreeSet<String> {
    entries.iter().map(|e| ix.describe_entry(e)).collect()
}

/// Every entry an `sr_int` switch holds, its `switch_config` default
/// included, rendered by name.
pub async fn held(c: &Client, ix: &P4InfoIndex) -> BTreeSet<String> {
    held_with_defaults(c, ix, &[schema::SWITCH_CONFIG]).await
}

/// Every entry a device holds, the default entries of `defaults` included
/// (a read of all entries leaves defaults out), rendered by name.
pub async fn held_with_defaults(
    c: &Client,
    ix: &P4InfoIndex,
    defaults: &[&str],
) -> BTreeSet<String> {
    let mut all = described(ix, &c.read_table_entries(None).await.unwrap());
    for table in defaults {
        let d = c.read_default_entry(table).await.unwrap();
        all.extend(d.iter().map(|e| ix.describe_entry(e)));
    }
    all
}
