//! Where the demo congests its network.
//!
//! Background traffic goes from every host to every other host at the same
//! rate, so the egress port crossed by the most host-to-host routes carries
//! the most load. Throttling that port makes one queue clearly the hottest,
//! and only if probes measure it can the collector find it again, so the
//! choice is restricted to hops of the plan.

use intpath_core::link::DirLink;
use intpath_core::plan::Plan;
use intpath_core::routes::{RouteError, Routes};
use intpath_core::topo::Topology;
use std::collections::{BTreeMap, HashSet};

/// The lowest egress rate the demo sets: `intpath-switch` refuses a rate at
/// which a full queue of the default depth (64) would take over 60 s to
/// drain (`p4/README.md`, "Limits the reference switch enforces").
pub const MIN_QUEUE_PPS: u32 = 2;

/// One directed link and how many host pairs' routes cross it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Egress {
    pub link: DirLink,
    /// Ordered host pairs whose route crosses this link.
    pub routes: usize,
}

/// Why no bottleneck could be chosen.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BottleneckError {
    #[error(transparent)]
    Route(#[from] RouteError),
    #[error("no probed switch-to-switch link carries host-to-host traffic")]
    NoneLoaded,
}

/// Per (switch, egress port), the number of ordered host pairs whose route
/// leaves there, following the routes deploy installs; host-facing ports
/// are not counted.
pub fn route_load(
    topo: &Topology,
    routes: &Routes,
) -> Result<BTreeMap<(String, u16), usize>, BottleneckError> {
    let mut load = BTreeMap::new();
    for src in topo.hosts() {
        for dst in topo.hosts() {
            if src.name == dst.name {
                continue;
            }
            for link in routes.path(topo, &src.name, &dst.name)? {
                if topo.switch(&link.src).is_some() && topo.switch(&link.dst).is_some() {
                    *load.entry((link.src, link.src_port)).or_insert(0) += 1;
                }
            }
        }
    }
    Ok(load)
}

/// The probed egress port carrying the most routes; ties go to the lowest
/// switch id, then port, so that reruns congest the same link.
pub fn busiest_probed(
    topo: &Topology,
    routes: &Routes,
    plan: &Plan,
) -> Result<Egress, BottleneckError> {
    let probed: HashSet<(&str, u16)> = plan
        .paths
        .iter()
        .flat_map(|p| {
            p.nodes
                .iter()
                .map(|n| n.as_str())
                .zip(p.egress_ports.iter().copied())
        })
        .collect();
    let id = |name: &str| topo.switch(name).map_or(u32::MAX, |s| s.id);
    route_load(topo, routes)?
        .into_iter()
        .filter(|((s, p), _)| probed.contains(&(s.as_str(), *p)))
        .max_by(|((s1, p1), n1), ((s2, p2), n2)| {
            n1.cmp(n2)
                .then_with(|| id(s2).cmp(&id(s1)))
                .then_with(|| p2.cmp(p1))
        })
        .and_then(|((switch, port), routes)| {
            Some(Egress {
                link: DirLink::leaving(topo, &switch, port)?,
                routes,
            })
        })
        .ok_or(BottleneckError::NoneLoaded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_planner::{plan, PlanOptions};

    #[test]
    fn load_counts_every_pair_once_per_hop() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let routes = Routes::shortest(&topo);
        let load = route_load(&topo, &routes).unwrap();
        // Shortest fat-tree routes, host ports not counted: each of the 16
        // hosts has 1 peer on its edge switch (no switch-to-switch hop), 2
        // elsewhere in its pod (2 hops) and 12 in other pods (4 hops).
        let total: usize = load.values().sum();
        assert_eq!(total, 16 * (2 * 2 + 12 * 4));
        // Every counted port leads to a switch.
        for (s, p) in load.keys() {
            let (peer, _) = topo.peer(s, *p).unwrap();
            assert!(topo.switch(peer).is_some(), "{s}:{p} leads to a host");
        }
    }

    #[test]
    fn busiest_is_probed_maximal_and_stable() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let routes = Routes::shortest(&topo);
        let load = route_load(&topo, &routes).unwrap();
        let opts = PlanOptions {
            directed: true,
            ..PlanOptions::default()
        };
        let p = plan(&topo, &opts).unwrap();
        let b = busiest_probed(&topo, &routes, &p).unwrap();
        assert_eq!(b.routes, *load.values().max().unwrap());
        assert_eq!(load[&(b.link.src.clone(), b.link.src_port)], b.routes);
        assert_eq!(
            topo.peer(&b.link.src, b.link.src_port).unwrap(),
            (b.link.dst.as_str(), b.link.dst_port)
        );
        assert_eq!(busiest_probed(&topo, &routes, &p).unwrap(), b);
    }

    #[test]
    fn unprobed_ports_are_never_chosen() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let routes = Routes::shortest(&topo);
        let opts = PlanOptions::default();
        let mut p = plan(&topo, &opts).unwrap();
        let all = busiest_probed(&topo, &routes, &p).unwrap();
        // Drop the path holding the busiest hop: another port must win.
        p.paths.retain(|path| {
            !path
                .nodes
                .iter()
                .zip(&path.egress_ports)
                .any(|(n, &e)| *n == all.link.src && e == all.link.src_port)
        });
        match busiest_probed(&topo, &routes, &p) {
            Ok(other) => assert_ne!(other.link, all.link),
            Err(e) => assert_eq!(e, BottleneckError::NoneLoaded),
        }
    }

    #[test]
    fn a_missing_route_is_named() {
        let topo = Topology::load("fattree:k=4").unwrap();
        // Cut h16's edge switch off the rest of the fabric.
        let edge = topo.host("h16").unwrap().switch.clone();
        let mut json: serde_json::Value = serde_json::from_str(&topo.to_json()).unwrap();
        json["links"].as_array_mut().unwrap().retain(|l| {
            let touches = |end: &str| l[end] == edge.as_str();
            let to_switch = |end: &str| topo.switch(l[end].as_str().unwrap()).is_some();
            !(touches("a") && to_switch("b") || touches("b") && to_switch("a"))
        });
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), json.to_string()).unwrap();
        let topo = Topology::load_file(file.path()).unwrap();
        let routes = Routes::shortest(&topo);
        let err = route_load(&topo, &routes).unwrap_err();
        assert!(
            matches!(err, BottleneckError::Route(RouteError::NoRoute { ref host, .. }) if host == "h15" || host == "h16"),
            "{err}"
        );
    }
}
