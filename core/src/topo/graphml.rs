//! GraphML as the Internet Topology Zoo publishes it: every node is a
//! switch (named `s1`, `s2`, … in document order, its `label` kept), every
//! edge a link with ports assigned in edge order.

use super::{TopoError, Topology, TopologyBuilder};

pub(super) fn parse(text: &str, origin: &str) -> Result<Topology, TopoError> {
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
    for n in graph.children().filter(|n| n.is_element()) {
        let line = doc.text_pos_at(n.range().start).row;
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
                nodes.push((id.to_owned(), label));
            }
            "edge" => {
                let end = |a: &str| {
                    n.attribute(a)
                        .map(str::to_owned)
                        .ok_or_else(|| err(format!("line {line}: <edge> without {a}")))
                };
                edges.push((end("source")?, end("target")?, format!("line {line}")));
            }
            _ => {}
        }
    }
    build_zoo(origin, nodes, edges)
}

/// Builds a switch-only topology from Zoo-style nodes `(id, label)` and
/// edges `(source id, target id, where in the file)`.
pub(super) fn build_zoo(
    origin: &str,
    nodes: Vec<(String, Option<String>)>,
    edges: Vec<(String, String, String)>,
) -> Result<Topology, TopoError> {
    let err = |m: String| TopoError::invalid(origin, m);
    let mut index = std::collections::HashMap::new();
    let mut b = TopologyBuilder::new(origin);
    for (i, (id, label)) in nodes.into_iter().enumerate() {
        let name = format!("s{}", i + 1);
        if index.insert(id.clone(), name.clone()).is_some() {
            return Err(err(format!("node id {id:?} appears twice")));
        }
        b.labeled_switch(name, i as u32 + 1, label);
    }
    for (src, dst, at) in edges {
        let lookup = |id: &str| {
            index
                .get(id)
                .cloned()
                .ok_or_else(|| err(format!("edge {src:?}-{dst:?} ({at}): unknown node {id:?}")))
        };
        let (a, c) = (lookup(&src)?, lookup(&dst)?);
        if a == c {
            return Err(err(format!("edge {src:?}-{dst:?} ({at}): self-loop")));
        }
        b.link(a, None, c, None);
    }
    b.build()
}
