//! Graphviz DOT export: switches as boxes, hosts as ellipses, port numbers
//! at both ends of each edge.

use super::Topology;
use std::fmt::Write;

pub(super) fn write(t: &Topology) -> String {
    let mut out = String::from("graph topology {\n  node [shape=box];\n");
    for s in t.switches() {
        let label = s
            .label
            .as_deref()
            .map_or(String::new(), |l| format!("\\n{}", esc(l)));
        let _ = writeln!(
            out,
            "  \"{}\" [label=\"{} ({}){}\"];",
            esc(&s.name),
            esc(&s.name),
            s.id,
            label
        );
    }
    for h in t.hosts() {
        let _ = writeln!(
            out,
            "  \"{}\" [shape=ellipse, label=\"{}\\n{}\"];",
            esc(&h.name),
            esc(&h.name),
            h.ip
        );
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

/// Escapes a string for a DOT double-quoted id.
pub(crate) fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
