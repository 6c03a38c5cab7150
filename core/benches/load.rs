//! Loading topology files of every format at 10^3..10^5 switches: the time
//! per element must stay flat (linear loading).
//!
//! The graph is the same in every format: switch i linked to i+1 (a ring)
//! and to (7i + 3) mod n, so 2n links; the JSON variants give one host to
//! every tenth switch.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use intpath_core::topo::Topology;
use std::fmt::Write;
use std::path::PathBuf;

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

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    for n in [1_000, 10_000, 100_000] {
        let p4 = dir.path().join(format!("p4lang-{n}.json"));
        std::fs::write(&p4, p4lang(n)).unwrap();
        // Our JSON, ports assigned: the export of the p4lang file.
        let ours = dir.path().join(format!("intpath-{n}.json"));
        let t = Topology::load(p4.to_str().unwrap()).unwrap();
        std::fs::write(&ours, t.to_json()).unwrap();
        let files: [(&str, PathBuf, String); 4] = [
            ("gml", dir.path().join(format!("t{n}.gml")), gml(n)),
            (
                "graphml",
                dir.path().join(format!("t{n}.graphml")),
                graphml(n),
            ),
            ("p4lang", p4, String::new()),
            ("json", ours, String::new()),
        ];
        // Elements: switches and links (hosts count as links' ends).
        group.throughput(Throughput::Elements((n + edges(n).len()) as u64));
        for (format, path, text) in files {
            if !text.is_empty() {
                std::fs::write(&path, text).unwrap();
            }
            let spec = path.to_str().unwrap().to_owned();
            group.bench_with_input(BenchmarkId::new(format, n), &spec, |b, spec| {
                b.iter(|| Topology::load(spec).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
