//! Loading rules that real files exercise: self-loops, negative emulation
//! parameters, misspelt generators, deep GML nesting, p4-utils' p4app.json.

use super::*;

fn file(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(name);
    std::fs::write(&f, text).unwrap();
    (dir, f.to_str().unwrap().to_owned())
}

const STRICT: LoadOptions = LoadOptions {
    strict: true,
    add_hosts: AddHosts::None,
};

#[test]
fn self_loops_are_skipped_with_a_warning_or_refused_when_strict() {
    let cases = [
        (
            "loop.json",
            r#"{"switches":[{"name":"s1","id":1},{"name":"s2","id":2}],
                "links":[{"a":"s1","a_port":1,"b":"s2","b_port":1},
                         {"a":"s2","a_port":2,"b":"s2","b_port":3}]}"#,
            "link #2 (s2-s2, links[1]): self-loop at \"s2\"",
        ),
        (
            "loop.gml",
            "graph [\n node [ id 7 ]\n node [ id 8 ]\n edge [ source 7 target 8 ]\n edge [ source 8 target 8 ]\n]\n",
            "(s2-s2, line 5): self-loop",
        ),
        (
            "loop.graphml",
            "<graphml><graph>\n<node id=\"a\"/><node id=\"b\"/>\n<edge source=\"a\" target=\"b\"/>\n<edge source=\"b\" target=\"b\"/>\n</graph></graphml>",
            "(s2-s2, line 4): self-loop",
        ),
    ];
    for (name, text, want) in cases {
        let (_dir, path) = file(name, text);
        let t = Topology::load(&path).unwrap();
        assert_eq!(t.links().len(), 1, "{name}");
        let [w] = t.warnings() else {
            panic!("{name}: {:?}", t.warnings())
        };
        assert!(w.contains(want) && w.contains("skipped"), "{name}: {w}");
        let e = Topology::load_with(&path, &STRICT).unwrap_err().to_string();
        assert!(e.contains(want) && !e.contains("skipped"), "{name}: {e}");
    }
}

#[test]
fn negative_bandwidth_or_delay_is_refused() {
    let sw = r#""switches":[{"name":"s1","id":1},{"name":"s2","id":2}]"#;
    for (field, value, want) in [
        ("bw_mbps", "-5", "bw_mbps -5 must be a positive number"),
        ("bw_mbps", "0", "bw_mbps 0 must be a positive number"),
        ("delay_ms", "-1.5", "delay_ms -1.5 must not be negative"),
    ] {
        let text = format!(
            r#"{{{sw},"links":[{{"a":"s1","a_port":1,"b":"s2","b_port":1,"{field}":{value}}}]}}"#
        );
        let (_dir, path) = file("neg.json", &text);
        let e = Topology::load(&path).unwrap_err().to_string();
        assert!(e.contains(want) && e.contains("links[0]"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let (_dir, path) = file(
        "topology.json",
        r#"{"switches":{"s1":{},"s2":{}},"links":[["s1-p1","s2-p1","-2ms"]]}"#,
    );
    let e = Topology::load(&path).unwrap_err().to_string();
    assert!(e.contains("delay_ms -2 must not be negative"), "{e}");
}

#[test]
fn a_misspelt_generator_names_the_known_ones() {
    let e = Topology::load("fatree:k=4").unwrap_err().to_string();
    assert!(
        e.contains("\"fatree\" is not a generator") && e.contains("fattree:k=K"),
        "{e}"
    );
    // A missing file stays a missing file, its cause given once.
    let e = Topology::load("/nonexistent/t.json").unwrap_err();
    assert_eq!(e.to_string(), "/nonexistent/t.json: cannot read topology");
    let cause = std::error::Error::source(&e).unwrap().to_string();
    assert!(cause.contains("os error 2"), "{cause}");
}

#[test]
fn deep_gml_nesting_is_an_error_not_a_stack_overflow() {
    let deep = format!("graph [\n{}", "x [\n".repeat(1_000_000));
    let (_dir, path) = file("deep.gml", &deep);
    let e = Topology::load(&path).unwrap_err().to_string();
    assert!(e.contains("line 1000001: [ without a closing ]"), "{e}");
    let close = format!(
        "graph [ {} ]",
        "x [ ".repeat(100_000) + &"] ".repeat(100_000)
    );
    let (_dir, path) = file("ok.gml", &close);
    let t = Topology::load(&path).unwrap();
    assert_eq!(t.switches().len(), 0);
}

#[test]
fn p4utils_p4app_topology_section() {
    let (_dir, path) = file(
        "p4app.json",
        r#"{
          "p4_src": "p4src/ecmp.p4",
          "cli": true,
          "topology": {
            "assignment_strategy": "l3",
            "default": {"bw": 10},
            "links": [["h1", "s1", {"port2": 3}], ["s1", "s2", {"delay": "5ms", "port1": 1}],
                      ["s2", "h2"], ["s2", "s3", {"bw": 5}]],
            "hosts": {"h1": {}, "h2": {"ip": "10.9.0.2/24"}},
            "switches": {"s1": {"cli_input": "s1-commands.txt"}, "s2": {}, "s3": {}}
          }
        }"#,
    );
    let t = Topology::load(&path).unwrap();
    assert_eq!(t.switches().len(), 3);
    assert_eq!(t.host("h1").unwrap().port, 3);
    assert_eq!(t.host("h1").unwrap().switch, "s1");
    assert_eq!(t.host("h2").unwrap().ip.to_string(), "10.9.0.2");
    assert_eq!(t.peer("s1", 1), Some(("s2", 1)));
    let s1s2 = &t.links()[1];
    assert_eq!((s1s2.delay_ms, s1s2.bw_mbps), (Some(5.0), Some(10.0)));
    assert_eq!(t.links()[3].bw_mbps, Some(5.0));
    let (_dir, path) = file("p4app.json", r#"{"topology": {"switches": []}}"#);
    let e = Topology::load(&path).unwrap_err().to_string();
    assert!(e.contains("topology.switches must be an object"), "{e}");
}
