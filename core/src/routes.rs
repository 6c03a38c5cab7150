//! Host routing: the one next hop every switch takes towards every host.
//!
//! `sr_int.p4` has no action selector, so each switch forwards a host's
//! traffic by exactly one port even where several shortest paths exist (a
//! fat tree has many). `intpath deploy` installs these routes and everything
//! that must know where a packet went (the demo's bottleneck choice, trace
//! diagnosis) follows the same table, so it is computed in one place. The
//! choice is deterministic so reruns produce identical entries: among the
//! neighbours one hop closer to the host's switch, the one behind the lowest
//! port number.

use crate::link::DirLink;
use crate::topo::{Host, NodeId, Topology};
use std::collections::VecDeque;

/// Why a host-to-host path cannot be followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// The host is not in the topology.
    #[error("no host named {0}")]
    UnknownHost(String),
    /// Forwarding at `switch` leads nowhere towards `host`: the topology
    /// is disconnected there.
    #[error("switch {switch} has no route to host {host}")]
    NoRoute {
        /// Where forwarding stops.
        switch: String,
        /// The host it cannot reach.
        host: String,
    },
}

/// Next hops towards every switch that has hosts, over switch-to-switch
/// links. Hosts on one switch share their routes but for the last hop.
#[derive(Debug, Clone)]
pub struct Routes {
    /// `slot[switch]`: the column of a switch that has hosts.
    slot: Vec<Option<u32>>,
    columns: usize,
    /// `next[switch * columns + column]`: egress port, 0 for none.
    next: Vec<u16>,
}

impl Routes {
    /// Shortest-path routes (hop count) with the lowest-port tie break.
    pub fn shortest(topo: &Topology) -> Routes {
        let switches = topo.switches().len();
        let mut slot = vec![None; switches];
        let mut targets = Vec::new();
        for h in topo.hosts() {
            if let Some(n) = topo.node(&h.switch) {
                if slot[n.index()].is_none() {
                    slot[n.index()] = Some(targets.len() as u32);
                    targets.push(n);
                }
            }
        }
        let columns = targets.len();
        let mut next = vec![0u16; switches * columns];
        let mut dist = vec![u32::MAX; switches];
        let mut queue = VecDeque::new();
        for (column, &target) in targets.iter().enumerate() {
            dist.fill(u32::MAX);
            dist[target.index()] = 0;
            queue.push_back(target);
            while let Some(n) = queue.pop_front() {
                for p in topo.ports(n) {
                    if topo.is_switch(p.peer) && dist[p.peer.index()] == u32::MAX {
                        dist[p.peer.index()] = dist[n.index()] + 1;
                        queue.push_back(p.peer);
                    }
                }
            }
            for s in 0..switches {
                let d = dist[s];
                if d == 0 || d == u32::MAX {
                    continue;
                }
                // ports() is sorted by port number: the first match is the lowest.
                next[s * columns + column] = topo
                    .ports(NodeId(s as u32))
                    .iter()
                    .find(|p| topo.is_switch(p.peer) && dist[p.peer.index()] == d - 1)
                    .map_or(0, |p| p.port);
            }
        }
        Routes {
            slot,
            columns,
            next,
        }
    }

    /// The port `switch` sends `host`'s packets out of.
    pub fn next_port(&self, topo: &Topology, switch: NodeId, host: &Host) -> Option<u16> {
        let edge = topo.node(&host.switch)?;
        if edge == switch {
            return Some(host.port);
        }
        let column = self.slot.get(edge.index()).copied().flatten()? as usize;
        let port = *self.next.get(switch.index() * self.columns + column)?;
        (port != 0).then_some(port)
    }

    /// Every host `switch` can reach and the port towards it, in topology
    /// order: what deploy writes as `/32` routes.
    pub fn of_switch<'a>(
        &'a self,
        topo: &'a Topology,
        switch: NodeId,
    ) -> impl Iterator<Item = (&'a Host, u16)> + 'a {
        topo.hosts()
            .iter()
            .filter_map(move |h| Some((h, self.next_port(topo, switch, h)?)))
    }

    /// The directed links a packet from host `from` to host `to` crosses,
    /// the two host links included.
    pub fn path(&self, topo: &Topology, from: &str, to: &str) -> Result<Vec<DirLink>, RouteError> {
        let unknown = |h: &str| RouteError::UnknownHost(h.to_owned());
        let src = topo.host(from).ok_or_else(|| unknown(from))?;
        let dst = topo.host(to).ok_or_else(|| unknown(to))?;
        let no_route = |switch: &str| RouteError::NoRoute {
            switch: switch.to_owned(),
            host: to.to_owned(),
        };
        let src_node = topo.node(from).ok_or_else(|| unknown(from))?;
        let up = topo
            .ports(src_node)
            .first()
            .and_then(|p| DirLink::leaving(topo, from, p.port))
            .ok_or_else(|| no_route(from))?;
        let mut at = topo
            .node(&src.switch)
            .ok_or_else(|| no_route(&src.switch))?;
        let mut links = vec![up];
        // Every switch at most once: a longer walk is a loop, which the
        // shortest-path construction cannot produce but a topology edit could.
        for _ in 0..=topo.switches().len() {
            let name = topo.name(at);
            let port = self
                .next_port(topo, at, dst)
                .ok_or_else(|| no_route(name))?;
            let link = DirLink::leaving(topo, name, port).ok_or_else(|| no_route(name))?;
            let reached = link.dst == to;
            at = topo.node(&link.dst).ok_or_else(|| no_route(name))?;
            links.push(link);
            if reached {
                return Ok(links);
            }
        }
        Err(no_route(&src.switch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_reaches_every_host_of_a_fat_tree_by_the_lowest_port() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let routes = Routes::shortest(&topo);
        for s in 0..topo.switches().len() {
            let n = NodeId(s as u32);
            assert_eq!(routes.of_switch(&topo, n).count(), topo.hosts().len());
        }
        // A core switch reaches pod 1 through its first pod's aggregation
        // switch; of the ports one hop closer, the lowest wins.
        let h1 = topo.host("h1").unwrap();
        let core = topo.node("s1").unwrap();
        let port = routes.next_port(&topo, core, h1).unwrap();
        let closer: Vec<u16> = topo
            .neighbours("s1")
            .filter(|(_, peer, _)| {
                routes
                    .path(&topo, "h2", "h1")
                    .unwrap()
                    .iter()
                    .any(|l| &l.src == peer)
            })
            .map(|(p, _, _)| p)
            .collect();
        assert!(closer.iter().all(|&p| p >= port), "{closer:?} vs {port}");
    }

    #[test]
    fn following_the_routes_takes_the_fewest_hops() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let routes = Routes::shortest(&topo);
        for host in topo.hosts() {
            // Hop counts to the host's switch over switch-to-switch links,
            // by petgraph (independent of the BFS under test).
            let switches = petgraph::visit::NodeFiltered::from_fn(topo.graph(), |n| {
                topo.is_switch(NodeId(n.index() as u32))
            });
            let target = topo.node(&host.switch).unwrap();
            let dist = petgraph::algo::dijkstra(
                &switches,
                petgraph::graph::NodeIndex::new(target.index()),
                None,
                |_| 1usize,
            );
            for (i, s) in topo.switches().iter().enumerate() {
                let (mut at, mut hops) = (NodeId(i as u32), 0);
                while topo.name(at) != host.switch {
                    let port = routes.next_port(&topo, at, host).unwrap();
                    at = topo.port(at, port).unwrap().peer;
                    hops += 1;
                }
                let want = dist[&petgraph::graph::NodeIndex::new(i)];
                assert_eq!(hops, want, "{} -> {}", s.name, host.name);
                assert_eq!(routes.next_port(&topo, at, host), Some(host.port));
            }
        }
    }

    #[test]
    fn a_path_starts_and_ends_on_host_links_and_is_connected() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let routes = Routes::shortest(&topo);
        let path = routes.path(&topo, "h1", "h16").unwrap();
        assert_eq!(path.first().unwrap().src, "h1");
        assert_eq!(path.last().unwrap().dst, "h16");
        for w in path.windows(2) {
            assert_eq!(w[0].dst, w[1].src);
        }
        // Edge, aggregation, core, aggregation, edge: 6 links across pods.
        assert_eq!(path.len(), 6);
        // Same edge switch: up and down only.
        let h2_on_h1s_switch = topo
            .hosts_of(&topo.host("h1").unwrap().switch)
            .nth(1)
            .unwrap();
        assert_eq!(
            routes
                .path(&topo, "h1", &h2_on_h1s_switch.name)
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn unknown_hosts_and_partitions_are_errors() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let routes = Routes::shortest(&topo);
        assert_eq!(
            routes.path(&topo, "h1", "nope"),
            Err(RouteError::UnknownHost("nope".into()))
        );
        // Two switches, a host on each, no link between them.
        let mut b = crate::topo::TopologyBuilder::new("split");
        b.switch("s1", 1).switch("s2", 2);
        b.host(
            "h1",
            [10, 0, 0, 1].into(),
            crate::wire::MacAddr([0, 0, 10, 0, 0, 1]),
        );
        b.host(
            "h2",
            [10, 0, 0, 2].into(),
            crate::wire::MacAddr([0, 0, 10, 0, 0, 2]),
        );
        b.link("h1", Some(0), "s1", Some(1));
        b.link("h2", Some(0), "s2", Some(1));
        let split = b.build().unwrap();
        let routes = Routes::shortest(&split);
        assert!(matches!(
            routes.path(&split, "h1", "h2"),
            Err(RouteError::NoRoute { .. })
        ));
    }
}
