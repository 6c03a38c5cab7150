//! The `/32` IPv4 route entries deploy installs: [`Routes`] as table rows.

use super::Route;
use intpath_core::routes::Routes;
use intpath_core::topo::{NodeId, Topology};
use std::collections::BTreeMap;

/// Per switch name, a /32 route to every host it can reach. The
/// destination MAC is the host's own: switches forward by port, and the
/// last hop must deliver to the host's MAC.
pub fn host_routes(topo: &Topology) -> BTreeMap<String, Vec<Route>> {
    let routes = Routes::shortest(topo);
    topo.switches()
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let rows = routes
                .of_switch(topo, NodeId(i as u32))
                .map(|(host, port)| Route {
                    prefix: host.ip,
                    prefix_len: 32,
                    port,
                    dst_mac: host.mac.0,
                })
                .collect();
            (s.name.clone(), rows)
        })
        .collect()
}
