//! The topology model: switches, hosts and links with explicit port numbers
//! on both ends, as every intpath component sees the network.
//!
//! A topology comes from a generator expression or a file
//! ([`Topology::load`]); whatever its origin, it passes the same validation
//! (unique names and switch ids, known link ends, no port used twice, one
//! link per host, no negative bandwidth or delay), so later stages never meet
//! a broken graph. Self-loops are skipped with a warning, or refused when
//! loading is strict.
//!
//! Ports are the numbers the data plane uses: a switch's ports start at 1 (0
//! means "run the ingress pipeline" in a packet-out); a host has a single
//! interface, port 0 (its `eth0`).

mod build;
mod dot;
mod gen;
mod gml;
mod graphml;
mod hosts;
mod json;
mod names;
mod p4app;
mod p4lang;
mod ports;

pub use build::{LinkDraft, Place, TopologyBuilder};
pub use hosts::AddHosts;

use crate::wire::MacAddr;
use petgraph::graph::UnGraph;
use rustc_hash::FxHashMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A switch: the name plans use and the numeric id the switch is known by on
/// the wire (P4Runtime device id and INT switch id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    /// The name plans, switch maps and messages use.
    pub name: String,
    /// Unique, at least 1.
    pub id: u32,
    /// A human label from the source file (Topology Zoo city names).
    pub label: Option<String>,
}

/// A host: where probes and traffic enter and leave the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// The name traffic and Mininet use.
    pub name: String,
    /// The host's address: routes to it are what `ipv4_lpm` holds.
    pub ip: Ipv4Addr,
    /// The host's MAC, which the last switch writes as destination.
    pub mac: MacAddr,
    /// The switch the host is attached to.
    pub switch: String,
    /// The port of `switch` that leads to the host.
    pub port: u16,
}

/// A bidirectional link between two nodes (switches or hosts).
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// One end's node name.
    pub a: String,
    /// `a`'s port on the link.
    pub a_port: u16,
    /// The other end's node name.
    pub b: String,
    /// `b`'s port on the link.
    pub b_port: u16,
    /// Bandwidth for emulation (Mininet `bw`), Mbit/s.
    pub bw_mbps: Option<f64>,
    /// One-way delay for emulation (Mininet `delay`), ms.
    pub delay_ms: Option<f64>,
}

/// Index of a node in a [`Topology`]: switches come first (in the order of
/// [`Topology::switches`]), then hosts. Dense, so algorithms can use arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as an index into per-node arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One end of a link as seen from a node: the local port, the link and the
/// node and port at the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRef {
    /// The local port.
    pub port: u16,
    /// Index into [`Topology::links`].
    pub link: u32,
    /// The node at the other end.
    pub peer: NodeId,
    /// The port of `peer` the link arrives on.
    pub peer_port: u16,
}

/// Why a topology could not be loaded. The message is one line naming the
/// file (or generator expression) and the offending element.
#[derive(Debug, thiserror::Error)]
pub enum TopoError {
    /// The cause is the source, so `{:#}` prints it once.
    #[error("{file}: cannot read topology")]
    Read {
        /// The file that cannot be read.
        file: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// Neither a generator expression nor a file that exists.
    #[error(
        "{spec}: no such file, and {name:?} is not a generator (known: {})",
        gen::USAGE
    )]
    Unknown {
        /// What the user gave.
        spec: String,
        /// The generator name read from it.
        name: String,
    },
    /// The source parses but breaks a rule (a name or port used twice, a
    /// link to an unknown node).
    #[error("{origin}: {problem}")]
    Invalid {
        /// The file or generator expression.
        origin: String,
        /// What is wrong, naming the element.
        problem: String,
    },
}

impl TopoError {
    pub(crate) fn invalid(origin: &str, problem: impl Into<String>) -> Self {
        TopoError::Invalid {
            origin: origin.to_owned(),
            problem: problem.into(),
        }
    }
}

/// How to load a topology.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Refuse self-loops instead of skipping them with a warning.
    pub strict: bool,
    /// Hosts to attach to a topology that has none (GraphML, GML).
    pub add_hosts: AddHosts,
}

/// A validated network topology with port-level adjacency.
#[derive(Debug, Clone)]
pub struct Topology {
    origin: String,
    switches: Vec<Switch>,
    hosts: Vec<Host>,
    links: Vec<Link>,
    names: names::Names,
    ids: FxHashMap<u32, usize>,
    /// `ends[l]` = ((node, port), (node, port)) of link `l`, a then b.
    ends: Vec<[(NodeId, u16); 2]>,
    /// Compressed adjacency: the ports of node `n` are
    /// `adj[adj_start[n]..adj_start[n + 1]]`, sorted by port.
    adj_start: Vec<u32>,
    adj: Vec<PortRef>,
    /// Built on first use: two callers need it, and loading a large file
    /// should not pay for it.
    graph: OnceLock<UnGraph<NodeId, u32>>,
    warnings: Vec<String>,
}

impl Topology {
    /// Loads a topology from a generator expression (`fattree:k=4`,
    /// `leafspine:spines=2,leaves=4,hosts=2`, `random:n=50,m=80,odd=10,seed=1`,
    /// `paper-fig4`) or a file: our JSON, the p4lang tutorials'
    /// `topology.json`, GraphML or GML.
    pub fn load(spec: &str) -> Result<Topology, TopoError> {
        Self::load_with(spec, &LoadOptions::default())
    }

    /// [`load`](Self::load) with options. What was skipped is logged as a
    /// warning and kept in [`warnings`](Self::warnings).
    pub fn load_with(spec: &str, opts: &LoadOptions) -> Result<Topology, TopoError> {
        let t = match gen::generate(spec)? {
            Some(t) => t,
            None => Self::load_file_with(Path::new(spec), opts).map_err(|e| match e {
                TopoError::Read { source, .. }
                    if source.kind() == std::io::ErrorKind::NotFound && gen::looks_like(spec) =>
                {
                    TopoError::Unknown {
                        spec: spec.to_owned(),
                        name: spec.split(':').next().unwrap_or(spec).to_owned(),
                    }
                }
                e => e,
            })?,
        };
        let t = t.with_hosts(&opts.add_hosts)?;
        for w in &t.warnings {
            tracing::warn!("{}: {w}", t.origin);
        }
        Ok(t)
    }

    /// Reads a topology written by [`to_json`](Self::to_json) (or any JSON
    /// format [`load`](Self::load) takes) from `text`; `origin` names it in
    /// errors. A store records each run's topology this way, so that the
    /// run can be read without the file it was collected with.
    pub fn from_json(text: &str, origin: &str) -> Result<Topology, TopoError> {
        json::parse_any(text, origin, &LoadOptions::default())
    }

    /// The first way `other` is a different network from this one (a
    /// switch, host or cable one has and the other lacks, or has
    /// differently), `None` for the same network whatever the order or the
    /// format it came in. What is measured on one network cannot be read
    /// against another.
    pub fn difference(&self, other: &Topology) -> Option<String> {
        let switches = |t: &Topology| -> std::collections::BTreeSet<(String, u32)> {
            t.switches.iter().map(|s| (s.name.clone(), s.id)).collect()
        };
        let hosts = |t: &Topology| -> std::collections::BTreeSet<(String, Ipv4Addr, String, u16)> {
            t.hosts
                .iter()
                .map(|h| (h.name.clone(), h.ip, h.switch.clone(), h.port))
                .collect()
        };
        let cables = |t: &Topology| -> std::collections::BTreeSet<(String, u16, String, u16)> {
            t.links
                .iter()
                .map(|l| {
                    let (x, y) = ((l.a.clone(), l.a_port), (l.b.clone(), l.b_port));
                    let (x, y) = if x <= y { (x, y) } else { (y, x) };
                    (x.0, x.1, y.0, y.1)
                })
                .collect()
        };
        let (a, b) = (switches(self), switches(other));
        if let Some((n, id)) = a.symmetric_difference(&b).next() {
            let side = if a.contains(&(n.clone(), *id)) { 1 } else { 2 };
            return Some(format!(
                "switch {n} (id {id}) is only in the {}",
                which(side)
            ));
        }
        let (a, b) = (hosts(self), hosts(other));
        if let Some((n, ip, sw, port)) = a.symmetric_difference(&b).next() {
            let side = if a.contains(&(n.clone(), *ip, sw.clone(), *port)) {
                1
            } else {
                2
            };
            return Some(format!(
                "host {n} ({ip} on {sw} port {port}) is only in the {}",
                which(side)
            ));
        }
        let (a, b) = (cables(self), cables(other));
        if let Some((x, xp, y, yp)) = a.symmetric_difference(&b).next() {
            let side = if a.contains(&(x.clone(), *xp, y.clone(), *yp)) {
                1
            } else {
                2
            };
            return Some(format!(
                "cable {x}:{xp}-{y}:{yp} is only in the {}",
                which(side)
            ));
        }
        None
    }

    /// Loads a topology file, choosing the format by extension and content.
    pub fn load_file(path: &Path) -> Result<Topology, TopoError> {
        Self::load_file_with(path, &LoadOptions::default())
    }

    fn load_file_with(path: &Path, opts: &LoadOptions) -> Result<Topology, TopoError> {
        let text = std::fs::read_to_string(path).map_err(|source| TopoError::Read {
            file: path.to_owned(),
            source,
        })?;
        let origin = path.display().to_string();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "graphml" | "xml" => graphml::parse(&text, &origin, opts),
            "gml" => gml::parse(&text, &origin, opts),
            _ => json::parse_any(&text, &origin, opts),
        }
    }

    /// What loading skipped (self-loops), one line each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Where the topology came from: the file path or generator expression.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Every switch, in the source's order.
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// Every host, each attached to one switch.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// Every link, switch-to-switch and host links alike.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Links between two switches: the ones probe paths cover by default.
    pub fn switch_links(&self) -> impl Iterator<Item = &Link> + '_ {
        self.links
            .iter()
            .zip(&self.ends)
            .filter(|(_, e)| self.is_switch(e[0].0) && self.is_switch(e[1].0))
            .map(|(l, _)| l)
    }

    /// The switch named `name` (`None` for a host or an unknown name).
    pub fn switch(&self, name: &str) -> Option<&Switch> {
        match self.node(name) {
            Some(n) if self.is_switch(n) => Some(&self.switches[n.index()]),
            _ => None,
        }
    }

    /// The switch with wire id `id`: how an INT record's switch id finds its
    /// node.
    pub fn switch_by_id(&self, id: u32) -> Option<&Switch> {
        self.ids.get(&id).map(|&i| &self.switches[i])
    }

    /// The host named `name` (`None` for a switch or an unknown name).
    pub fn host(&self, name: &str) -> Option<&Host> {
        match self.node(name) {
            Some(n) if !self.is_switch(n) => Some(&self.hosts[n.index() - self.switches.len()]),
            _ => None,
        }
    }

    /// Hosts attached to a switch.
    pub fn hosts_of<'a>(&'a self, switch: &'a str) -> impl Iterator<Item = &'a Host> + 'a {
        self.hosts.iter().filter(move |h| h.switch == switch)
    }

    /// The node at the far end of `port` of `node`: how an INT record's
    /// (switch, egress port) becomes a link.
    pub fn peer(&self, node: &str, port: u16) -> Option<(&str, u16)> {
        let p = self.port(self.node(node)?, port)?;
        Some((self.name(p.peer), p.peer_port))
    }

    /// Like [`peer`](Self::peer), keyed by switch id as INT records carry it.
    pub fn peer_of_switch_id(&self, switch_id: u32, port: u16) -> Option<(&str, u16)> {
        let s = self.switch_by_id(switch_id)?;
        self.peer(&s.name, port)
    }

    /// `(local port, neighbour, neighbour's port)` for every link of `node`,
    /// sorted by local port.
    pub fn neighbours<'a>(&'a self, node: &str) -> impl Iterator<Item = (u16, &'a str, u16)> + 'a {
        let ports = self.node(node).map(|n| self.ports(n)).unwrap_or(&[]);
        ports
            .iter()
            .map(move |p| (p.port, self.name(p.peer), p.peer_port))
    }

    /// The links of `node`, in port order.
    pub fn links_of<'a>(&'a self, node: &str) -> impl Iterator<Item = &'a Link> + 'a {
        let ports = self.node(node).map(|n| self.ports(n)).unwrap_or(&[]);
        ports.iter().map(move |p| &self.links[p.link as usize])
    }

    // ---- index-based access, for algorithms ----

    /// Switches plus hosts: the size of per-node arrays.
    pub fn node_count(&self) -> usize {
        self.switches.len() + self.hosts.len()
    }

    /// The node named `name`, for index-based algorithms.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.names.find(name)
    }

    /// The name of node `n`, for results of index-based algorithms.
    pub fn name(&self, n: NodeId) -> &str {
        self.names.get(n)
    }

    /// Whether `n` is a switch (switches have the low ids).
    pub fn is_switch(&self, n: NodeId) -> bool {
        n.index() < self.switches.len()
    }

    /// The ports of a node, sorted by port number.
    pub fn ports(&self, n: NodeId) -> &[PortRef] {
        let (s, e) = (
            self.adj_start[n.index()] as usize,
            self.adj_start[n.index() + 1] as usize,
        );
        &self.adj[s..e]
    }

    /// The link end at `port` of `n`, if the port is used.
    pub fn port(&self, n: NodeId, port: u16) -> Option<&PortRef> {
        let ports = self.ports(n);
        ports
            .binary_search_by_key(&port, |p| p.port)
            .ok()
            .map(|i| &ports[i])
    }

    /// Both ends of link `l` as (node, port), in the link's a, b order.
    pub fn link_ends(&self, l: usize) -> [(NodeId, u16); 2] {
        self.ends[l]
    }

    /// The graph underneath: node weights are [`NodeId`]s (equal to the
    /// petgraph index), edge weights are link indices.
    pub fn graph(&self) -> &UnGraph<NodeId, u32> {
        self.graph.get_or_init(|| {
            let mut g = UnGraph::with_capacity(self.node_count(), self.ends.len());
            for i in 0..self.node_count() {
                g.add_node(NodeId(i as u32));
            }
            for (l, [(a, _), (b, _)]) in self.ends.iter().enumerate() {
                g.add_edge(
                    petgraph::graph::NodeIndex::new(a.index()),
                    petgraph::graph::NodeIndex::new(b.index()),
                    l as u32,
                );
            }
            g
        })
    }

    /// Degree of a node counting only switch-to-switch links.
    pub fn switch_degree(&self, n: NodeId) -> usize {
        self.ports(n)
            .iter()
            .filter(|p| self.is_switch(p.peer))
            .count()
    }

    /// Whether a switch can inject and collect probes itself: it has a host.
    pub fn has_host(&self, n: NodeId) -> bool {
        self.ports(n).iter().any(|p| !self.is_switch(p.peer))
    }

    /// Our JSON format (see `topologies/README.md`); reads back losslessly.
    pub fn to_json(&self) -> String {
        json::write(self)
    }

    /// Graphviz DOT with port numbers on the edges.
    pub fn to_dot(&self) -> String {
        dot::write(self)
    }
}

/// "first" or "second" topology of a [`Topology::difference`].
fn which(side: u8) -> &'static str {
    match side {
        1 => "first",
        _ => "second",
    }
}

/// Formats a link for error messages and reports: `s1:2-s4:1`.
impl std::fmt::Display for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}-{}:{}", self.a, self.a_port, self.b, self.b_port)
    }
}

#[cfg(test)]
mod load_tests;
#[cfg(test)]
mod tests;
