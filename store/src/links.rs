//! Which link an INT record measured.
//!
//! A record says "switch `id` sent me out of port `p`"; queue depth and
//! queueing delay belong to that egress queue, so links here are *directed*:
//! each cable of the topology gives two, one per sending end.

pub use intpath_core::link::DirLink;
use intpath_core::topo::Topology;
use std::collections::HashMap;

/// A cable as the topology lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cable {
    pub a: String,
    pub a_port: u16,
    pub b: String,
    pub b_port: u16,
}

impl Cable {
    pub fn new(a: &str, a_port: u16, b: &str, b_port: u16) -> Self {
        Self {
            a: a.into(),
            a_port,
            b: b.into(),
            b_port,
        }
    }
}

/// Switch ids and directed links of a topology, indexed for the collector's
/// lookups.
#[derive(Debug, Clone, Default)]
pub struct LinkMap {
    switches: Vec<(String, u32)>,
    switch_by_id: HashMap<u32, usize>,
    switch_by_name: HashMap<String, usize>,
    links: Vec<DirLink>,
    by_egress: HashMap<(String, u16), u32>,
    /// Looked up once per hop record on the store's path: Fx hashing, not SipHash.
    by_switch_egress: rustc_hash::FxHashMap<(u32, u16), u32>,
    /// The topology the map was made from, in `intpath_core`'s JSON: a run
    /// records it, so that its telemetry and spans can be read later
    /// without the file (and checked against the one a reader is given).
    topology: Option<String>,
}

/// Why switches and cables do not make a usable map.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LinkMapError {
    #[error("switch id {0} is used twice")]
    DuplicateSwitchId(u32),
    #[error("switch name {0} is used twice")]
    DuplicateSwitchName(String),
    #[error("port {1} of {0} has two links")]
    PortReused(String, u16),
}

impl LinkMap {
    /// Builds the map; switch order is kept (it is the heatmap axis order).
    pub fn new(
        switches: impl IntoIterator<Item = (String, u32)>,
        cables: impl IntoIterator<Item = Cable>,
    ) -> Result<Self, LinkMapError> {
        let mut m = LinkMap::default();
        for (name, id) in switches {
            let idx = m.switches.len();
            if m.switch_by_id.insert(id, idx).is_some() {
                return Err(LinkMapError::DuplicateSwitchId(id));
            }
            if m.switch_by_name.insert(name.clone(), idx).is_some() {
                return Err(LinkMapError::DuplicateSwitchName(name));
            }
            m.switches.push((name, id));
        }
        for c in cables {
            m.add(DirLink {
                src: c.a.clone(),
                src_port: c.a_port,
                dst: c.b.clone(),
                dst_port: c.b_port,
            })?;
            m.add(DirLink {
                src: c.b,
                src_port: c.b_port,
                dst: c.a,
                dst_port: c.a_port,
            })?;
        }
        Ok(m)
    }

    fn add(&mut self, l: DirLink) -> Result<(), LinkMapError> {
        let id = self.links.len() as u32;
        if self
            .by_egress
            .insert((l.src.clone(), l.src_port), id)
            .is_some()
        {
            return Err(LinkMapError::PortReused(l.src, l.src_port));
        }
        if let Some(&sw) = self.switch_by_name.get(&l.src) {
            self.by_switch_egress
                .insert((self.switches[sw].1, l.src_port), id);
        }
        self.links.push(l);
        Ok(())
    }

    /// The map of a topology: its switches, and every link (host links too:
    /// a sink's record measures its egress towards the collector host).
    pub fn from_topology(t: &Topology) -> Self {
        let switches = t.switches().iter().map(|s| (s.name.clone(), s.id));
        let cables = t.links().iter().map(|l| Cable {
            a: l.a.clone(),
            a_port: l.a_port,
            b: l.b.clone(),
            b_port: l.b_port,
        });
        // A validated topology has unique names, ids and ports.
        let mut m = Self::new(switches, cables).unwrap_or_default();
        m.topology = Some(t.to_json());
        m
    }

    /// The topology [`LinkMap::from_topology`] was given, as JSON.
    pub fn topology_json(&self) -> Option<&str> {
        self.topology.as_deref()
    }

    /// Switches in topology order, with their INT switch ids.
    pub fn switches(&self) -> &[(String, u32)] {
        &self.switches
    }

    pub fn links(&self) -> &[DirLink] {
        &self.links
    }

    pub fn link(&self, id: u32) -> Option<&DirLink> {
        self.links.get(id as usize)
    }

    pub fn switch_id(&self, name: &str) -> Option<u32> {
        self.switch_by_name.get(name).map(|&i| self.switches[i].1)
    }

    pub fn switch_name(&self, id: u32) -> Option<&str> {
        self.switch_by_id
            .get(&id)
            .map(|&i| self.switches[i].0.as_str())
    }

    /// The link a node sends on through `port`.
    pub fn egress_link(&self, node: &str, port: u16) -> Option<u32> {
        self.by_egress.get(&(node.to_owned(), port)).copied()
    }

    /// The link an INT record's queue belongs to.
    pub fn record_link(&self, switch_id: u32, egress_port: u16) -> Option<u32> {
        self.by_switch_egress
            .get(&(switch_id, egress_port))
            .copied()
    }
}

/// s1 (id 101) port 2 —— port 1 s2 (id 102): the unit tests' smallest fabric.
#[cfg(test)]
pub(crate) fn two_switches() -> LinkMap {
    LinkMap::new(
        [("s1".into(), 101), ("s2".into(), 102)],
        [Cable::new("s1", 2, "s2", 1)],
    )
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// s1 —— s2 —— s3, with host h1 on s1 and the collector host c on s3.
    fn line3() -> LinkMap {
        let cable = Cable::new;
        LinkMap::new(
            [("s1".into(), 1), ("s2".into(), 2), ("s3".into(), 3)],
            [
                cable("s1", 2, "s2", 1),
                cable("s2", 2, "s3", 1),
                cable("h1", 0, "s1", 1),
                cable("s3", 3, "c", 0),
            ],
        )
        .unwrap()
    }

    #[test]
    fn records_map_to_directed_links() {
        let m = line3();
        let fwd = m.record_link(1, 2).unwrap();
        assert_eq!(m.link(fwd).unwrap().to_string(), "s1:2->s2");
        let back = m.record_link(2, 1).unwrap();
        assert_eq!(m.link(back).unwrap().to_string(), "s2:1->s1");
        assert_eq!(m.record_link(3, 3), m.egress_link("s3", 3));
        assert_eq!(m.record_link(9, 1), None);
        assert_eq!(m.switch_name(2), Some("s2"));
    }

    #[test]
    fn fat_tree_topology_maps_every_port() {
        let t = Topology::load("fattree:k=4").unwrap();
        let m = LinkMap::from_topology(&t);
        assert_eq!(m.switches().len(), 20);
        assert_eq!(m.links().len(), 2 * t.links().len());
        for l in t.switch_links() {
            let id = t.switch(&l.a).unwrap().id;
            let d = m.link(m.record_link(id, l.a_port).unwrap()).unwrap();
            assert_eq!((d.dst.as_str(), d.dst_port), (l.b.as_str(), l.b_port));
        }
    }

    #[test]
    fn reused_port_is_an_error() {
        let e = LinkMap::new(
            [("s1".into(), 1)],
            [Cable::new("s1", 1, "x", 0), Cable::new("s1", 1, "y", 0)],
        )
        .unwrap_err();
        assert_eq!(e, LinkMapError::PortReused("s1".into(), 1));
    }
}
