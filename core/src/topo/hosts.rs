//! Hosts for topology files that have none. GraphML, GML and Topology Zoo
//! files describe switches and cables only, yet the demo, the lab and a
//! synthetic workload need hosts to send from; the user says where, once,
//! as the topology is loaded, and every tool sees the same hosts.

use super::build::TopologyBuilder;
use super::gen::host_addr;
use super::{TopoError, Topology};

/// Hosts to attach while loading (kept in a lab's settings, so its
/// supervisor loads the same hosts as `lab up` was given).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum AddHosts {
    /// The topology's own hosts, if any.
    #[default]
    None,
    /// This many hosts on every switch (`--hosts-per-switch N`).
    PerSwitch(u16),
    /// One host on each of these switches, in this order (`--hosts SW,…`).
    On(Vec<String>),
}

impl Topology {
    /// This topology with the hosts `add` asks for: `h1`, `h2`, … in switch
    /// order (addresses as the generators give them), each on its switch's
    /// next free port. An error for a topology that already has hosts, a
    /// switch it does not have, or zero hosts per switch.
    pub(super) fn with_hosts(self, add: &AddHosts) -> Result<Topology, TopoError> {
        let err = |problem: String| TopoError::invalid(&self.origin, problem);
        let on: Vec<&str> = match add {
            AddHosts::None => return Ok(self),
            AddHosts::PerSwitch(0) => {
                return Err(err("--hosts-per-switch must be at least 1".into()))
            }
            AddHosts::PerSwitch(n) => self
                .switches
                .iter()
                .flat_map(|s| std::iter::repeat_n(s.name.as_str(), usize::from(*n)))
                .collect(),
            AddHosts::On(names) => {
                if let Some(unknown) = names.iter().find(|n| self.switch(n).is_none()) {
                    return Err(err(format!("--hosts: no switch {unknown}")));
                }
                names.iter().map(String::as_str).collect()
            }
        };
        if !self.hosts.is_empty() {
            return Err(err(format!(
                "it has {} hosts of its own; --hosts-per-switch and --hosts are for files without",
                self.hosts.len()
            )));
        }
        let mut b = TopologyBuilder::new(self.origin.clone());
        b.reserve(self.switches.len(), on.len(), self.links.len() + on.len());
        for s in &self.switches {
            b.labeled_switch(s.name.clone(), s.id, s.label.clone());
        }
        for l in &self.links {
            let d = b.link(l.a.clone(), Some(l.a_port), l.b.clone(), Some(l.b_port));
            d.bw_mbps = l.bw_mbps;
            d.delay_ms = l.delay_ms;
        }
        for (i, switch) in on.into_iter().enumerate() {
            let name = format!("h{}", i + 1);
            let (ip, mac) = host_addr(i + 1);
            b.host(name.clone(), ip, mac);
            b.link(name, Some(0), switch, None);
        }
        let mut t = b.build()?;
        t.warnings = self.warnings;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::LoadOptions;

    const BACKBONE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../topologies/example-backbone.graphml"
    );

    fn load(add: AddHosts) -> Result<Topology, TopoError> {
        Topology::load_with(
            BACKBONE,
            &LoadOptions {
                add_hosts: add,
                ..LoadOptions::default()
            },
        )
    }

    #[test]
    fn hosts_go_on_the_next_free_port_of_each_switch() {
        let bare = Topology::load(BACKBONE).unwrap();
        assert!(bare.hosts().is_empty());
        let t = load(AddHosts::PerSwitch(2)).unwrap();
        assert_eq!(t.hosts().len(), 2 * bare.switches().len());
        assert_eq!(t.links().len(), bare.links().len() + t.hosts().len());
        // Switches, their labels and cables unchanged.
        assert_eq!(t.switches(), bare.switches());
        let s1_ports = bare.neighbours("s1").count() as u16;
        let (h1, h2, h3) = (&t.hosts()[0], &t.hosts()[1], &t.hosts()[2]);
        assert_eq!((h1.name.as_str(), h1.switch.as_str()), ("h1", "s1"));
        assert_eq!((h1.port, h2.port), (s1_ports + 1, s1_ports + 2));
        assert_eq!((h3.name.as_str(), h3.switch.as_str()), ("h3", "s2"));
        assert_eq!(h3.ip.to_string(), "10.0.0.3");
        // The JSON every other tool reads (Mininet, the store) keeps them.
        let back = Topology::from_json(&t.to_json(), "back").unwrap();
        assert_eq!(back.hosts(), t.hosts());

        let some = load(AddHosts::On(vec!["s4".into(), "s9".into()])).unwrap();
        let on: Vec<(&str, &str)> = some
            .hosts()
            .iter()
            .map(|h| (h.name.as_str(), h.switch.as_str()))
            .collect();
        assert_eq!(on, [("h1", "s4"), ("h2", "s9")]);
    }

    #[test]
    fn impossible_placements_are_one_line_errors() {
        let e = load(AddHosts::On(vec!["s1".into(), "s99".into()])).unwrap_err();
        assert!(e.to_string().ends_with("--hosts: no switch s99"), "{e}");
        let e = load(AddHosts::PerSwitch(0)).unwrap_err();
        assert!(e.to_string().contains("at least 1"), "{e}");
        let e = Topology::load_with(
            "fattree:k=4",
            &LoadOptions {
                add_hosts: AddHosts::PerSwitch(1),
                ..LoadOptions::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("it has 16 hosts of its own"), "{e}");
    }
}
