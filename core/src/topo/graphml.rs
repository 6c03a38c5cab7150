//! GraphML as the Internet Topology Zoo publishes it: every node is a
//! switch (named `s1`, `s2`, … in document order, its `label` kept), every
//! edge a link with ports assigned in edge order.

use super::{LoadOptions, Place, TopoError, Topology, TopologyBuilder};
use rustc_hash::FxHashMap;

/// A Zoo node: its id in the file and its human label.
pub(super) struct ZooNode<'a> {
    pub id: &'a str,
    pub label: Option<String>,
}

/// A Zoo edge by node ids, with where in the file it is (for messages).
pub(super) struct ZooEdge<'a> {
    pub source: &'a str,
    pub target: &'a str,
    pub at: Place,
}

pub(super) fn parse(text: &str, origin: &str, opts: &LoadOptions) -> Result<Topology, TopoError> {
    let err = |m: String| TopoError::invalid(origin, m);
    let doc = roxmltree::Document::parse(text).map_err(|e| err(format!("not valid XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "graphml" {
        return Err(err(format!(
            "not GraphML: root element is <{}>",
            root.tag_name().name()
        )));
    }
    let label_key = root
        .children()
        .filter(|n| n.has_tag_name("key"))
        .find(|k| k.attribute("attr.name") == Some("label") && k.attribute("for") != Some("edge"))
        .and_then(|k| k.attribute("id"));
    let graph = root
        .children()
        .find(|n| n.has_tag_name("graph"))
        .ok_or_else(|| err("no <graph> element".into()))?;
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    // Elements come in document order, so the line count only moves forward
    // (roxmltree's `text_pos_at` would rescan from the start every time).
    let (mut pos, mut line) = (0, 1);
    for n in graph.children().filter(|n| n.is_element()) {
        let start = n.range().start;
        line += text.as_bytes()[pos..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        pos = start;
        match n.tag_name().name() {
            "node" => {
                let id = n
                    .attribute("id")
                    .ok_or_else(|| err(format!("line {line}: <node> without id")))?;
                let label = n
                    .children()
                    .find(|d| {
                        d.has_tag_name("data")
                            && d.attribute("key") == label_key
                            && label_key.is_some()
                    })
                    .and_then(|d| d.text())
                    .map(|s| s.trim().to_owned());
                nodes.push(ZooNode { id, label });
            }
            "edge" => {
                let end = |a: &str| {
                    n.attribute(a)
                        .ok_or_else(|| err(format!("line {line}: <edge> without {a}")))
                };
                edges.push(ZooEdge {
                    source: end("source")?,
                    target: end("target")?,
                    at: Place::Line(line),
                });
            }
            _ => {}
        }
    }
    build_zoo(origin, nodes, edges, opts)
}

/// Builds a switch-only topology from Zoo nodes and edges. Self-loops are
/// left to the builder, which skips them unless loading is strict.
pub(super) fn build_zoo(
    origin: &str,
    nodes: Vec<ZooNode>,
    edges: Vec<ZooEdge>,
    opts: &LoadOptions,
) -> Result<Topology, TopoError> {
    let err = |m: String| TopoError::invalid(origin, m);
    let index = ZooIds::new(&nodes).map_err(|id| err(format!("node id {id:?} appears twice")))?;
    // Switch i is `s{i+1}`: names are made from the index, never looked up.
    let name = |i: u32| format!("s{}", i + 1);
    let mut b = TopologyBuilder::new(origin);
    b.strict(opts.strict);
    b.reserve(nodes.len(), 0, edges.len());
    for e in edges {
        let lookup = |id: &str| {
            index.get(id).map(|i| (i, name(i))).ok_or_else(|| {
                err(format!(
                    "edge {:?}-{:?} ({}): unknown node {id:?}",
                    e.source, e.target, e.at
                ))
            })
        };
        let (a, c) = (lookup(e.source)?, lookup(e.target)?);
        b.link_switches(a, c).at = Some(e.at);
    }
    for (i, node) in nodes.into_iter().enumerate() {
        b.labeled_switch(name(i as u32), i as u32 + 1, node.label);
    }
    b.build()
}

/// Node id → index in the file. Zoo files number their nodes 0, 1, 2, …, so
/// decimal ids go to a plain array (cached at any size, no hashing) and only
/// other ids to a hash map.
struct ZooIds<'a> {
    /// `dense[k]` = index of the node whose id is the decimal `k`, or `u32::MAX`.
    dense: Vec<u32>,
    other: FxHashMap<&'a str, u32>,
}

impl<'a> ZooIds<'a> {
    /// Fails with an id that appears twice.
    fn new(nodes: &[ZooNode<'a>]) -> Result<Self, &'a str> {
        // Ids far beyond the node count would make the array mostly holes.
        let cap = 4 * nodes.len() + 16;
        let mut dense = Vec::new();
        let mut other = FxHashMap::default();
        for (i, node) in nodes.iter().enumerate() {
            let i = i as u32;
            let fresh = match decimal(node.id).filter(|&k| k < cap) {
                Some(k) => {
                    if dense.len() <= k {
                        dense.resize(k + 1, u32::MAX);
                    }
                    std::mem::replace(&mut dense[k], i) == u32::MAX
                }
                None => other.insert(node.id, i).is_none(),
            };
            if !fresh {
                return Err(node.id);
            }
        }
        Ok(ZooIds { dense, other })
    }

    fn get(&self, id: &str) -> Option<u32> {
        decimal(id)
            .and_then(|k| self.dense.get(k).copied())
            .filter(|&i| i != u32::MAX)
            .or_else(|| self.other.get(id).copied())
    }
}

/// `id` as a number when it is written the one canonical way (no sign, no
/// leading zero), so that distinct strings never share a slot.
fn decimal(id: &str) -> Option<usize> {
    let canonical = !id.is_empty()
        && id.len() <= 9
        && id.bytes().all(|c| c.is_ascii_digit())
        && (id == "0" || !id.starts_with('0'));
    canonical.then(|| id.parse().ok()).flatten()
}
