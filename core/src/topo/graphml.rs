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
    let mut index = FxHashMap::with_capacity_and_hasher(nodes.len(), Default::default());
    let mut names = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        if index.insert(node.id, i).is_some() {
            return Err(err(format!("node id {:?} appears twice", node.id)));
        }
        names.push(format!("s{}", i + 1));
    }
    let mut b = TopologyBuilder::new(origin);
    b.strict(opts.strict);
    b.reserve(nodes.len(), 0, edges.len());
    for e in edges {
        let lookup = |id: &str| {
            index.get(id).map(|&i| names[i].clone()).ok_or_else(|| {
                err(format!(
                    "edge {:?}-{:?} ({}): unknown node {id:?}",
                    e.source, e.target, e.at
                ))
            })
        };
        let (a, c) = (lookup(e.source)?, lookup(e.target)?);
        b.link(a, None, c, None).at = Some(e.at);
    }
    for (i, (node, name)) in nodes.into_iter().zip(names).enumerate() {
        b.labeled_switch(name, i as u32 + 1, node.label);
    }
    b.build()
}
