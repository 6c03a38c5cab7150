//! IPv4 routes to every host along shortest paths.
//!
//! `sr_int.p4` has no action selector, so each switch gets exactly one next
//! hop per host even where several shortest paths exist (a fat tree has
//! many). The choice is deterministic so that reruns produce identical
//! entries: among the neighbours one hop closer to the host, the one behind
//! the switch's lowest port number.

use crate::deploy::Route;
use intpath_core::topo::{NodeId, Topology};
use std::collections::{BTreeMap, VecDeque};

/// Per switch name, a /32 route to every host it can reach. The
/// destination MAC is the host's own: switches forward by port, and the
/// last hop must deliver to the host's MAC.
pub fn host_routes(topo: &Topology) -> BTreeMap<String, Vec<Route>> {
    let mut out: BTreeMap<String, Vec<Route>> = topo
        .switches()
        .iter()
        .map(|s| (s.name.clone(), Vec::new()))
        .collect();
    for host in topo.hosts() {
        let Some(edge) = topo.node(&host.switch) else {
            continue;
        };
        let dist = distances_from(topo, edge);
        for s in topo.switches() {
            let Some(n) = topo.node(&s.name) else {
                continue;
            };
            let port = if n == edge {
                Some(host.port)
            } else {
                next_hop_port(topo, &dist, n)
            };
            if let (Some(port), Some(routes)) = (port, out.get_mut(&s.name)) {
                routes.push(Route {
                    prefix: host.ip,
                    prefix_len: 32,
                    port,
                    dst_mac: host.mac.0,
                });
            }
        }
    }
    out
}

/// Hop counts from `from` to every switch over switch-to-switch links.
fn distances_from(topo: &Topology, from: NodeId) -> Vec<Option<u32>> {
    let mut dist = vec![None; topo.node_count()];
    dist[from.index()] = Some(0);
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        let d = dist[n.index()].unwrap_or(0);
        for p in topo.ports(n) {
            if topo.is_switch(p.peer) && dist[p.peer.index()].is_none() {
                dist[p.peer.index()] = Some(d + 1);
                queue.push_back(p.peer);
            }
        }
    }
    dist
}

/// The lowest port of `n` leading one hop closer; None when unreachable.
fn next_hop_port(topo: &Topology, dist: &[Option<u32>], n: NodeId) -> Option<u16> {
    let closer = dist[n.index()]?.checked_sub(1)?;
    // ports() is sorted by port number, so the first match is the lowest.
    topo.ports(n)
        .iter()
        .find(|p| topo.is_switch(p.peer) && dist[p.peer.index()] == Some(closer))
        .map(|p| p.port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fattree_routes_are_shortest_and_deterministic() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let routes = host_routes(&topo);
        assert_eq!(routes.len(), topo.switches().len());
        for (switch, r) in &routes {
            assert_eq!(r.len(), topo.hosts().len(), "{switch} routes every host");
        }
        // Following the routes from any switch reaches the host's edge
        // switch in exactly the shortest number of hops.
        for host in topo.hosts() {
            let edge = topo.node(&host.switch).unwrap();
            let dist = distances_from(&topo, edge);
            for s in topo.switches() {
                let mut at = s.name.clone();
                let mut hops = 0;
                loop {
                    let route = routes[&at].iter().find(|r| r.prefix == host.ip).unwrap();
                    if at == host.switch {
                        assert_eq!(route.port, host.port);
                        assert_eq!(route.dst_mac, host.mac.0);
                        break;
                    }
                    let (next, _) = topo.peer(&at, route.port).unwrap();
                    at = next.to_owned();
                    hops += 1;
                }
                let n = topo.node(&s.name).unwrap();
                assert_eq!(Some(hops), dist[n.index()], "{} -> {}", s.name, host.name);
            }
        }
        assert_eq!(host_routes(&topo), routes);
    }
}
