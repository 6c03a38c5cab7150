//! Graphviz DOT export: switches as boxes, hosts as ellipses, port numbers
//! at both ends of each edge.

use super::Topology;
use std::fmt::Write;

pub(super) fn write(t: &Topology) -> String {
    let mut out = String::from("graph topology {\n  node [shape=box];\n");
    for s in t.switches() {
        let extra = s
            .label
            .as_deref()
            .map_or(String::new(), |l| format!("\\n{}", esc(l)));
        let attrs = format!("label=\"{} ({}){extra}\"", esc(&s.name), s.id);
        node(&mut out, &s.name, &attrs);
    }
    for h in t.hosts() {
        let attrs = format!("shape=ellipse, label=\"{}\\n{}\"", esc(&h.name), h.ip);
        node(&mut out, &h.name, &attrs);
    }
    for l in t.links() {
        let _ = writeln!(
            out,
            "  \"{}\" -- \"{}\" [taillabel=\"{}\", headlabel=\"{}\"];",
            esc(&l.a),
            esc(&l.b),
            l.a_port,
            l.b_port
        );
    }
    out.push_str("}\n");
    out
}

fn node(out: &mut String, name: &str, attrs: &str) {
    let _ = writeln!(out, "  \"{}\" [{attrs}];", esc(name));
}

/// Escapes a string for a DOT double-quoted id.
pub(crate) fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
