//! The links each RPC crossed: forward (caller → callee) and reverse paths,
//! followed with the same routing function `intpath deploy` installs
//! (`intpath_core::routes`). Links are numbered densely here so per-edge
//! work indexes arrays instead of hashing names.

use intpath_core::link::DirLink;
use intpath_core::routes::{RouteError, Routes};
use intpath_core::topo::Topology;
use std::collections::HashMap;

/// Every directed link of a topology, numbered, and which ones probes
/// measure. Empty without a topology (a diagnosis from traces alone).
#[derive(Debug, Clone, Default)]
pub struct LinkIndex {
    pub links: Vec<DirLink>,
    by_link: HashMap<DirLink, u32>,
    /// `measured[l]`: some plan path crosses link `l`.
    pub measured: Vec<bool>,
    /// `host_link[l]`: one end of link `l` is a host (measured only by plans
    /// made with `--include-hosts`).
    pub host_link: Vec<bool>,
}

impl LinkIndex {
    pub fn new(topo: &Topology) -> Self {
        let mut links = Vec::with_capacity(topo.links().len() * 2);
        for l in topo.links() {
            let d = DirLink {
                src: l.a.clone(),
                src_port: l.a_port,
                dst: l.b.clone(),
                dst_port: l.b_port,
            };
            links.push(d.reversed());
            links.push(d);
        }
        links.sort();
        let by_link = links
            .iter()
            .enumerate()
            .map(|(i, l)| (l.clone(), i as u32))
            .collect();
        let measured = vec![false; links.len()];
        let host_link = links
            .iter()
            .map(|l| topo.host(&l.src).is_some() || topo.host(&l.dst).is_some())
            .collect();
        LinkIndex {
            links,
            by_link,
            measured,
            host_link,
        }
    }

    pub fn id(&self, l: &DirLink) -> Option<u32> {
        self.by_link.get(l).copied()
    }

    pub fn name(&self, id: u32) -> String {
        self.links[id as usize].to_string()
    }

    /// Whether link `l` joins a host and no probe measures it: its queue
    /// shows only as delay the end hosts see.
    pub fn unmeasured_host_link(&self, l: u32) -> bool {
        self.host_link[l as usize] && !self.measured[l as usize]
    }

    /// Marks the links of `measured` (probe-covered) as measured.
    pub fn mark_measured<'a>(&mut self, measured: impl IntoIterator<Item = &'a DirLink>) {
        for l in measured {
            if let Some(i) = self.id(l) {
                self.measured[i as usize] = true;
            }
        }
    }
}

/// Forward and reverse links of one host pair.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPath {
    pub forward: Vec<u32>,
    pub reverse: Vec<u32>,
}

impl HostPath {
    pub fn all(&self) -> impl Iterator<Item = u32> + '_ {
        self.forward.iter().chain(&self.reverse).copied()
    }
}

/// Resolves and caches host-pair paths.
#[derive(Debug)]
pub struct Resolver<'t> {
    topo: &'t Topology,
    routes: Routes,
    cache: HashMap<(u16, u16), Result<HostPath, RouteError>>,
}

impl<'t> Resolver<'t> {
    pub fn new(topo: &'t Topology) -> Self {
        Resolver {
            topo,
            routes: Routes::shortest(topo),
            cache: HashMap::new(),
        }
    }

    /// The path between hosts `a` and `b` (indices into `Topology::hosts()`).
    pub fn path(&mut self, index: &LinkIndex, a: u16, b: u16) -> Result<&HostPath, RouteError> {
        let (topo, routes) = (self.topo, &self.routes);
        self.cache
            .entry((a, b))
            .or_insert_with(|| {
                let name = |h: u16| topo.hosts()[h as usize].name.as_str();
                let ids = |p: Vec<DirLink>| p.iter().filter_map(|l| index.id(l)).collect();
                Ok(HostPath {
                    forward: ids(routes.path(topo, name(a), name(b))?),
                    reverse: ids(routes.path(topo, name(b), name(a))?),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}
