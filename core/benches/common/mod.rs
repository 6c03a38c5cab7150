//! The files both loading benches read: the same graph in every format.
//!
//! n switches, switch i linked to i+1 (a ring) and to (7i + 3) mod n, so 2n
//! links; the JSON variants give one host to every tenth switch.

use intpath_core::topo::Topology;
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// Elements loaded: switches and links (hosts count as links' ends).
pub fn elements(n: usize) -> usize {
    n + edges(n).len()
}

/// Writes the graph of `n` switches in every format under `dir`: (format,
/// file) pairs.
pub fn write_files(dir: &Path, n: usize) -> Vec<(&'static str, PathBuf)> {
    let p4 = dir.join(format!("p4lang-{n}.json"));
    std::fs::write(&p4, p4lang(n)).expect("write p4lang file");
    // Our JSON, ports assigned: the export of the p4lang file.
    let ours = dir.join(format!("intpath-{n}.json"));
    let t = Topology::load(p4.to_str().expect("utf-8 path")).expect("load p4lang file");
    std::fs::write(&ours, t.to_json()).expect("write json file");
    let gml_file = dir.join(format!("t{n}.gml"));
    std::fs::write(&gml_file, gml(n)).expect("write gml file");
    let graphml_file = dir.join(format!("t{n}.graphml"));
    std::fs::write(&graphml_file, graphml(n)).expect("write graphml file");
    vec![
        ("gml", gml_file),
        ("graphml", graphml_file),
        ("p4lang", p4),
        ("json", ours),
    ]
}

fn edges(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|i| [(i, (i + 1) % n), (i, (7 * i + 3) % n)])
        .filter(|(a, b)| a != b)
        .collect()
}

fn gml(n: usize) -> String {
    let mut s = String::from("graph [\n  directed 0\n");
    for i in 0..n {
        let _ = writeln!(s, "  node [\n    id {i}\n    label \"City {i}\"\n  ]");
    }
    for (a, b) in edges(n) {
        let _ = writeln!(s, "  edge [\n    source {a}\n    target {b}\n  ]");
    }
    s + "]\n"
}

fn graphml(n: usize) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n  <key attr.name=\"label\" attr.type=\"string\" for=\"node\" id=\"d0\"/>\n  <graph edgedefault=\"undirected\">\n",
    );
    for i in 0..n {
        let _ = writeln!(
            s,
            "    <node id=\"{i}\">\n      <data key=\"d0\">City {i}</data>\n    </node>"
        );
    }
    for (a, b) in edges(n) {
        let _ = writeln!(s, "    <edge source=\"{a}\" target=\"{b}\"/>");
    }
    s + "  </graph>\n</graphml>\n"
}

/// p4lang tutorials' topology.json, ports left to the loader.
fn p4lang(n: usize) -> String {
    let switches: Vec<String> = (1..=n).map(|i| format!("\"s{i}\": {{}}")).collect();
    let hosts: Vec<String> = (1..=n / 10).map(|i| format!("\"h{i}\": {{}}")).collect();
    let mut links: Vec<String> = edges(n)
        .into_iter()
        .map(|(a, b)| format!("[\"s{}\", \"s{}\"]", a + 1, b + 1))
        .collect();
    links.extend((1..=n / 10).map(|i| format!("[\"h{i}\", \"s{}\"]", 10 * i)));
    format!(
        "{{\"switches\": {{{}}}, \"hosts\": {{{}}}, \"links\": [{}]}}",
        switches.join(","),
        hosts.join(","),
        links.join(",")
    )
}
