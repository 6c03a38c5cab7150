//! The topology that is still alive: what watch plans on.

use intpath_core::topo::{TopoError, Topology, TopologyBuilder};
use std::collections::BTreeSet;

/// One end of a link: a switch and its port. A link is named by either end.
pub type LinkEnd = (String, u16);

/// `topo` without the `down` switches, their hosts and every link touching
/// them, and without the `dead` links. Ports keep their numbers, so plans
/// and routes stay valid on the real switches.
pub fn surviving(
    topo: &Topology,
    down: &BTreeSet<String>,
    dead: &BTreeSet<LinkEnd>,
) -> Result<Topology, TopoError> {
    let mut origin = topo.origin().to_owned();
    if !down.is_empty() {
        origin += &format!(" without {down:?}");
    }
    if !dead.is_empty() {
        let names: Vec<String> = dead.iter().map(|(s, p)| format!("{s}:{p}")).collect();
        origin += &format!(" without links at {}", names.join(", "));
    }
    let mut b = TopologyBuilder::new(origin);
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
        if down.contains(&l.a)
            || down.contains(&l.b)
            || dead.contains(&(l.a.clone(), l.a_port))
            || dead.contains(&(l.b.clone(), l.b_port))
        {
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
        let alive = surviving(&topo, &down, &BTreeSet::new()).unwrap();
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
        let alive = surviving(&topo, &BTreeSet::from([edge.clone()]), &BTreeSet::new()).unwrap();
        assert!(alive.hosts().iter().all(|h| h.switch != edge));
        assert_eq!(alive.hosts().len(), topo.hosts().len() - 2);
    }

    #[test]
    fn a_dead_link_is_named_by_either_end() {
        let topo = Topology::load("paper-fig4").unwrap();
        let l = topo.switch_links().next().unwrap().clone();
        for end in [(l.a.clone(), l.a_port), (l.b.clone(), l.b_port)] {
            let alive = surviving(&topo, &BTreeSet::new(), &BTreeSet::from([end])).unwrap();
            assert_eq!(alive.switches().len(), topo.switches().len());
            assert_eq!(
                alive.switch_links().count(),
                topo.switch_links().count() - 1
            );
            assert!(alive.peer(&l.a, l.a_port).is_none());
        }
    }
}
