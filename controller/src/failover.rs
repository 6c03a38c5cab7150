//! Keeping coverage when switches fail: the topology that is still alive,
//! and the links a failure takes down (what `intpath watch` reports as
//! suspects and plans around).

use intpath_core::topo::{TopoError, Topology, TopologyBuilder};
use std::collections::BTreeSet;

/// `topo` without the `down` switches, their hosts and every link touching
/// them. Ports keep their numbers, so plans and routes stay valid on the
/// real switches.
pub fn surviving(topo: &Topology, down: &BTreeSet<String>) -> Result<Topology, TopoError> {
    let mut b = TopologyBuilder::new(format!("{} without {down:?}", topo.origin()));
    for s in topo.switches().iter().filter(|s| !down.contains(&s.name)) {
        b.labeled_switch(s.name.clone(), s.id, s.label.clone());
    }
    let alive_hosts: BTreeSet<&str> = topo
        .hosts()
        .iter()
        .filter(|h| !down.contains(&h.switch))
        .map(|h| h.name.as_str())
        .collect();
    for h in topo
        .hosts()
        .iter()
        .filter(|h| alive_hosts.contains(h.name.as_str()))
    {
        b.host(h.name.clone(), h.ip, h.mac);
    }
    for l in topo.links() {
        if down.contains(&l.a) || down.contains(&l.b) {
            continue;
        }
        let d = b.link(l.a.clone(), Some(l.a_port), l.b.clone(), Some(l.b_port));
        d.bw_mbps = l.bw_mbps;
        d.delay_ms = l.delay_ms;
    }
    b.build()
}

/// The switch-to-switch links of `switch`, as `a:port-b:port`.
pub fn links_of(topo: &Topology, switch: &str) -> Vec<String> {
    topo.neighbours(switch)
        .filter(|(_, peer, _)| topo.switch(peer).is_some())
        .map(|(port, peer, peer_port)| format!("{switch}:{port}-{peer}:{peer_port}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_a_core_switch_keeps_ports_and_drops_its_links() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let core = topo.switches()[0].name.clone();
        let down = BTreeSet::from([core.clone()]);
        let alive = surviving(&topo, &down).unwrap();
        assert_eq!(alive.switches().len(), topo.switches().len() - 1);
        assert_eq!(alive.hosts().len(), topo.hosts().len());
        let lost = links_of(&topo, &core);
        assert_eq!(
            alive.switch_links().count(),
            topo.switch_links().count() - lost.len()
        );
        for l in alive.links() {
            let (peer, port) = topo.peer(&l.a, l.a_port).unwrap();
            assert_eq!((peer, port), (l.b.as_str(), l.b_port));
        }
    }

    #[test]
    fn an_edge_switch_takes_its_hosts_along() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let edge = topo.hosts()[0].switch.clone();
        let alive = surviving(&topo, &BTreeSet::from([edge.clone()])).unwrap();
        assert!(alive.hosts().iter().all(|h| h.switch != edge));
        assert_eq!(alive.hosts().len(), topo.hosts().len() - 2);
    }
}
