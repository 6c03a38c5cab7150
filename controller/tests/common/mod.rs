//! Reading deployed switches back, for the deploy tests.
#![allow(dead_code)] // each test binary uses its own part

use intpath_controller::deploy::{self, SwitchIntent};
use intpath_core::switch_map::SwitchMap;
use intpath_p4rt::client::{Client, ClientConfig, Target};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_test_support::entries::{described, held};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub fn sr_int() -> Arc<P4InfoIndex> {
    Arc::new(intpath_sr_int::p4info().expect("built-in P4Info"))
}

/// Every entry each switch holds, its switch_config default included,
/// rendered by name.
pub async fn read_back(
    map: &SwitchMap,
    ix: &Arc<P4InfoIndex>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for s in &map.switches {
        let mut c = Client::connect_observer(ClientConfig::new(Target {
            name: s.name.clone(),
            addr: s.grpc_addr.clone(),
            device_id: s.device_id,
        }))
        .await
        .unwrap();
        c.use_p4info(ix.clone());
        out.insert(s.name.clone(), held(&c, ix).await);
    }
    out
}

/// What the intents imply, in the form of [`read_back`].
pub fn implied(
    ix: &P4InfoIndex,
    intents: &BTreeMap<String, SwitchIntent>,
) -> BTreeMap<String, BTreeSet<String>> {
    intents
        .iter()
        .map(|(n, i)| {
            let e = deploy::entries(ix, i).unwrap();
            (n.clone(), described(ix, &e))
        })
        .collect()
}
