//! Assembling and validating a [`Topology`]: every reader and generator goes
//! through [`TopologyBuilder`], so they all enforce the same rules.

use super::names::Names;
use super::ports::{self, Ports, Problem};
use super::{Host, Link, NodeId, PortRef, Switch, TopoError, Topology};
use crate::wire::MacAddr;
use rustc_hash::FxHashMap;
use std::net::Ipv4Addr;
use std::sync::OnceLock;

/// A link as a source describes it; a missing port gets the node's lowest
/// free one.
#[derive(Debug, Clone)]
pub struct LinkDraft {
    /// One end's node name.
    pub a: String,
    /// `a`'s port, `None` for the lowest free one.
    pub a_port: Option<u16>,
    /// The other end's node name.
    pub b: String,
    /// `b`'s port, `None` for the lowest free one.
    pub b_port: Option<u16>,
    /// Bandwidth for emulation (Mininet `bw`), Mbit/s.
    pub bw_mbps: Option<f64>,
    /// One-way delay for emulation (Mininet `delay`), ms.
    pub delay_ms: Option<f64>,
    /// Where the source describes the link, for messages.
    pub at: Option<Place>,
    /// The ends' node ids when the reader knows them already (Zoo files
    /// number their switches): no name lookup for these ends.
    nodes: Option<[NodeId; 2]>,
}

/// Where a source describes a link. Kept for every link, so it is a number
/// rather than a formatted string: a million links would otherwise cost a
/// million allocations that only an error message ever reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A line of the file (GML, GraphML).
    Line(usize),
    /// An index into a JSON list, named by its path (`links`, `topology.links`).
    Index(&'static str, usize),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Line(n) => write!(f, "line {n}"),
            Place::Index(list, i) => write!(f, "{list}[{i}]"),
        }
    }
}

/// Collects switches, hosts and links, then checks them all at once.
#[derive(Debug, Clone)]
pub struct TopologyBuilder {
    origin: String,
    switches: Vec<Switch>,
    hosts: Vec<(String, Ipv4Addr, MacAddr)>,
    links: Vec<LinkDraft>,
    strict: bool,
}

impl TopologyBuilder {
    /// `origin` names the file or generator expression in error messages.
    pub fn new(origin: impl Into<String>) -> Self {
        TopologyBuilder {
            origin: origin.into(),
            switches: Vec::new(),
            hosts: Vec::new(),
            links: Vec::new(),
            strict: false,
        }
    }

    /// Strict: a self-loop is an error. Otherwise it is skipped with a
    /// warning (it has no link to probe; Topology Zoo files have some).
    pub fn strict(&mut self, strict: bool) -> &mut Self {
        self.strict = strict;
        self
    }

    /// Room for this many more switches, hosts and links.
    pub fn reserve(&mut self, switches: usize, hosts: usize, links: usize) -> &mut Self {
        self.switches.reserve(switches);
        self.hosts.reserve(hosts);
        self.links.reserve(links);
        self
    }

    /// A switch with its name and wire id.
    pub fn switch(&mut self, name: impl Into<String>, id: u32) -> &mut Self {
        self.labeled_switch(name, id, None)
    }

    /// A switch with a human label from the source (Topology Zoo city
    /// names), kept for displays.
    pub fn labeled_switch(
        &mut self,
        name: impl Into<String>,
        id: u32,
        label: Option<String>,
    ) -> &mut Self {
        self.switches.push(Switch {
            name: name.into(),
            id,
            label,
        });
        self
    }

    /// A host; attach it with a [`link`](Self::link) to its switch.
    pub fn host(&mut self, name: impl Into<String>, ip: Ipv4Addr, mac: MacAddr) -> &mut Self {
        self.hosts.push((name.into(), ip, mac));
        self
    }

    /// Adds a link; returns it so emulation parameters can be set.
    pub fn link(
        &mut self,
        a: impl Into<String>,
        a_port: Option<u16>,
        b: impl Into<String>,
        b_port: Option<u16>,
    ) -> &mut LinkDraft {
        self.links.push(LinkDraft {
            a: a.into(),
            a_port,
            b: b.into(),
            b_port,
            bw_mbps: None,
            delay_ms: None,
            at: None,
            nodes: None,
        });
        self.links.last_mut().expect("just pushed")
    }

    /// A link between the `a`-th and `b`-th switches added (counting from
    /// 0, in the order they were or will be added), named `a_name` and
    /// `b_name`, ports assigned: for readers that number switches
    /// themselves, so ends need no lookup by name.
    pub(super) fn link_switches(
        &mut self,
        (a, a_name): (u32, String),
        (b, b_name): (u32, String),
    ) -> &mut LinkDraft {
        let l = self.link(a_name, None, b_name, None);
        l.nodes = Some([NodeId(a), NodeId(b)]);
        l
    }

    /// Hosts added so far, so that generators can number the next one.
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }

    /// Validates and indexes everything.
    pub fn build(mut self) -> Result<Topology, TopoError> {
        let origin = self.origin;
        let err = |problem: String| TopoError::invalid(&origin, problem);
        let describe = |i: usize, l: &LinkDraft| match &l.at {
            Some(at) => format!("link #{} ({}-{}, {at})", i + 1, l.a, l.b),
            None => format!("link #{} ({}-{})", i + 1, l.a, l.b),
        };
        let mut warnings = Vec::new();
        let mut index = 0;
        let mut loop_error = None;
        self.links.retain(|l| {
            index += 1;
            if l.a != l.b {
                return true;
            }
            let what = format!("{}: self-loop at {:?}", describe(index - 1, l), l.a);
            if self.strict {
                loop_error.get_or_insert(what);
            } else {
                warnings.push(format!("{what} skipped (it has no link to probe)"));
            }
            false
        });
        if let Some(e) = loop_error {
            return Err(err(e));
        }
        for (i, l) in self.links.iter().enumerate() {
            let bad = |v: Option<f64>, ok: fn(f64) -> bool| v.is_some_and(|v| !ok(v));
            if bad(l.bw_mbps, |v| v.is_finite() && v > 0.0) {
                return Err(err(format!(
                    "{}: bw_mbps {} must be a positive number",
                    describe(i, l),
                    l.bw_mbps.unwrap_or_default()
                )));
            }
            if bad(l.delay_ms, |v| v.is_finite() && v >= 0.0) {
                return Err(err(format!(
                    "{}: delay_ms {} must not be negative",
                    describe(i, l),
                    l.delay_ms.unwrap_or_default()
                )));
            }
        }
        let n_sw = self.switches.len();
        let n = n_sw + self.hosts.len();
        if n > u32::MAX as usize || self.links.len() > u32::MAX as usize {
            return Err(err("too many nodes or links".into()));
        }

        let bytes = self.switches.iter().map(|s| s.name.len()).sum::<usize>()
            + self.hosts.iter().map(|h| h.0.len()).sum::<usize>();
        let mut names = Names::with_capacity(n, bytes);
        let mut ids = FxHashMap::with_capacity_and_hasher(n_sw, Default::default());
        for (i, s) in self.switches.iter().enumerate() {
            if s.name.is_empty() {
                return Err(err(format!("switch #{}: empty name", i + 1)));
            }
            if s.id == 0 {
                return Err(err(format!("switch {:?}: id must be at least 1", s.name)));
            }
            if names.insert(&s.name).is_err() {
                return Err(err(format!("switch {:?} appears twice", s.name)));
            }
            if let Some(prev) = ids.insert(s.id, i) {
                return Err(err(format!(
                    "switch {:?}: id {} already used by {:?}",
                    s.name, s.id, self.switches[prev].name
                )));
            }
        }
        for (i, (name, _, _)) in self.hosts.iter().enumerate() {
            if name.is_empty() {
                return Err(err(format!("host #{}: empty name", i + 1)));
            }
            if names.insert(name).is_err() {
                return Err(err(format!("node {name:?} appears twice")));
            }
        }

        // Resolve ends; ports are checked per node below.
        let is_switch = |id: NodeId| id.index() < n_sw;
        let mut resolved = Vec::with_capacity(self.links.len());
        for (i, l) in self.links.iter().enumerate() {
            let end = |name: &str,
                       known: Option<NodeId>,
                       port: Option<u16>|
             -> Result<(NodeId, Option<u16>), TopoError> {
                let id = known
                    .filter(|id| id.index() < n_sw)
                    .or_else(|| names.find(name))
                    .ok_or_else(|| err(format!("{}: unknown node {name:?}", describe(i, l))))?;
                match port {
                    Some(0) if is_switch(id) => Err(err(format!(
                        "{}: switch {name:?} port 0 (switch ports start at 1)",
                        describe(i, l)
                    ))),
                    Some(p) if !is_switch(id) && p != 0 => Err(err(format!(
                        "{}: host {name:?} port {p} (a host has one interface, port 0)",
                        describe(i, l)
                    ))),
                    _ => Ok((id, port)),
                }
            };
            let a = end(&l.a, l.nodes.map(|n| n[0]), l.a_port)?;
            let b = end(&l.b, l.nodes.map(|n| n[1]), l.b_port)?;
            if !is_switch(a.0) && !is_switch(b.0) {
                return Err(err(format!("{}: links two hosts", describe(i, l))));
            }
            resolved.push([a, b]);
        }

        let Ports {
            ends,
            start: adj_start,
            slots,
        } = match ports::assign(&resolved, n, n_sw) {
            Ok(done) => done,
            Err(problem) => {
                let what = |l: usize| describe(l, &self.links[l]);
                return Err(err(match problem {
                    Problem::Twice {
                        link,
                        side,
                        port,
                        first,
                    } => {
                        let l = &self.links[link];
                        let name = if side == 0 { &l.a } else { &l.b };
                        format!(
                            "{}: port {name}:{port} already used by {}",
                            what(link),
                            what(first)
                        )
                    }
                    Problem::NoneFree { link } => format!("{}: no free port left", what(link)),
                    Problem::HostTaken { link, host } => format!(
                        "{}: host {:?} already has a link (a host has one interface)",
                        what(link),
                        self.hosts[host.index() - n_sw].0
                    ),
                }));
            }
        };

        // Compressed adjacency, sorted by port.
        let mut adj: Vec<PortRef> = slots
            .iter()
            .map(|&(l, side)| {
                let e = ends[l as usize];
                let (me, other) = if side == 0 {
                    (e[0], e[1])
                } else {
                    (e[1], e[0])
                };
                PortRef {
                    port: me.1,
                    link: l,
                    peer: other.0,
                    peer_port: other.1,
                }
            })
            .collect();
        for i in 0..n {
            adj[adj_start[i] as usize..adj_start[i + 1] as usize].sort_unstable_by_key(|p| p.port);
        }

        // Every host hangs off exactly one switch.
        let mut hosts = Vec::with_capacity(self.hosts.len());
        for (i, (name, ip, mac)) in self.hosts.into_iter().enumerate() {
            let id = n_sw + i;
            let ports = &adj[adj_start[id] as usize..adj_start[id + 1] as usize];
            let [p] = ports else {
                return Err(err(format!(
                    "host {name:?} has {} links; it needs exactly one, to a switch",
                    ports.len()
                )));
            };
            hosts.push(Host {
                name,
                ip,
                mac,
                switch: self.switches[p.peer.index()].name.clone(),
                port: p.peer_port,
            });
        }

        let links: Vec<Link> = self
            .links
            .into_iter()
            .zip(&ends)
            .map(|(d, e)| Link {
                a: d.a,
                a_port: e[0].1,
                b: d.b,
                b_port: e[1].1,
                bw_mbps: d.bw_mbps,
                delay_ms: d.delay_ms,
            })
            .collect();

        Ok(Topology {
            origin,
            switches: self.switches,
            hosts,
            links,
            names,
            ids,
            ends,
            adj_start,
            adj,
            graph: OnceLock::new(),
            warnings,
        })
    }
}
