use super::*;

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("intpath-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f
}

fn load_err(name: &str, text: &str) -> String {
    let f = tmp(name, text);
    let e = Topology::load(f.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains(name), "error does not name the file: {e}");
    assert!(!e.contains('\n'), "error is not one line: {e}");
    e
}

fn odd_switches(t: &Topology) -> usize {
    (0..t.switches().len())
        .filter(|&i| t.switch_degree(NodeId(i as u32)) % 2 == 1)
        .count()
}

#[test]
fn fattree_has_the_textbook_shape() {
    for k in [2, 4, 6, 8] {
        let t = Topology::load(&format!("fattree:k={k}")).unwrap();
        assert_eq!(t.switches().len(), 5 * k * k / 4);
        assert_eq!(t.hosts().len(), k * k * k / 4);
        assert_eq!(t.switch_links().count(), k * k * k / 2);
        for (i, s) in t.switches().iter().enumerate() {
            assert_eq!(s.name, format!("s{}", i + 1));
            assert_eq!(s.id, i as u32 + 1);
            // Every switch of a fat tree has k ports, numbered 1..=k.
            let ports: Vec<u16> = t.ports(NodeId(i as u32)).iter().map(|p| p.port).collect();
            assert_eq!(ports, (1..=k as u16).collect::<Vec<_>>(), "{}", s.name);
        }
    }
    let t = Topology::load("fattree:k=4").unwrap();
    // s5 is pod 0's first aggregation switch: down to s7, s8, up to s1, s2.
    let n: Vec<_> = t.neighbours("s5").collect();
    assert_eq!(
        n,
        vec![(1, "s7", 3), (2, "s8", 3), (3, "s1", 1), (4, "s2", 1)]
    );
    let h1 = t.host("h1").unwrap();
    assert_eq!((h1.switch.as_str(), h1.port), ("s7", 1));
    assert_eq!(h1.ip.to_string(), "10.0.0.1");
    assert_eq!(h1.mac.to_string(), "00:00:0a:00:00:01");
    assert_eq!(t.peer("s7", 1), Some(("h1", 0)));
    assert_eq!(t.peer("h1", 0), Some(("s7", 1)));
    assert_eq!(t.peer_of_switch_id(5, 3), Some(("s1", 1)));
    assert_eq!(t.peer("s7", 9), None);
    assert_eq!(t.switch_by_id(20).unwrap().name, "s20");
    assert!(t.switch_by_id(21).is_none());
    assert!(t.switch("h1").is_none() && t.host("s1").is_none());
    assert_eq!(t.hosts_of("s7").count(), 2);
    assert_eq!(t.links_of("s7").count(), 4);
}

#[test]
fn host_addresses_are_unique_past_one_subnet() {
    let t = Topology::load("fattree:k=16").unwrap();
    let ips: std::collections::HashSet<_> = t.hosts().iter().map(|h| h.ip).collect();
    let macs: std::collections::HashSet<_> = t.hosts().iter().map(|h| h.mac).collect();
    assert_eq!(ips.len(), 1024);
    assert_eq!(macs.len(), 1024);
    assert_eq!(gen::host_addr(255).0.to_string(), "10.0.1.1");
    assert_eq!(gen::host_addr(254 * 256 + 1).0.to_string(), "10.1.0.1");
}

#[test]
fn leafspine_and_paper_fig4() {
    let t = Topology::load("leafspine:spines=2,leaves=4,hosts=3").unwrap();
    assert_eq!(
        (
            t.switches().len(),
            t.hosts().len(),
            t.switch_links().count()
        ),
        (6, 12, 8)
    );
    assert_eq!(t.peer("s3", 4), Some(("s1", 1)));
    assert_eq!(t.peer("s6", 5), Some(("s2", 4)));
    let t = Topology::load("paper-fig4").unwrap();
    assert_eq!((t.switches().len(), t.switch_links().count()), (7, 10));
    assert_eq!(odd_switches(&t), 4);
    assert!((0..7).all(|i| t.has_host(NodeId(i))));
}

#[test]
fn random_graphs_are_connected_with_the_asked_odd_count() {
    for seed in 0..20 {
        for (n, m, odd) in [
            (10, 15, 0),
            (10, 15, 4),
            (30, 60, 12),
            (30, 29, 2),
            (50, 400, 50),
            (6, 15, 6),
        ] {
            let spec = format!("random:n={n},m={m},odd={odd},seed={seed}");
            let t = match Topology::load(&spec) {
                Ok(t) => t,
                // A tree cannot have every parity; say so rather than hang.
                Err(e) if m == n - 1 => {
                    assert!(e.to_string().contains("could not reach"), "{e}");
                    continue;
                }
                Err(e) => panic!("{e}"),
            };
            assert_eq!((t.switches().len(), t.links().len()), (n, m), "{spec}");
            assert_eq!(odd_switches(&t), odd, "{spec}");
            assert_eq!(petgraph::algo::connected_components(t.graph()), 1, "{spec}");
        }
    }
    let a = Topology::load("random:n=40,m=90,seed=7").unwrap();
    let b = Topology::load("random:n=40,m=90,seed=7").unwrap();
    assert_eq!(a.links(), b.links());
    let c = Topology::load("random:n=5,m=4,hosts=2").unwrap();
    assert_eq!(c.hosts().len(), 10);
}

#[test]
fn generator_errors_name_the_expression() {
    for (spec, what) in [
        ("fattree:k=3", "k must be even"),
        ("fattree", "missing parameter k="),
        ("fattree:k=x", "not a whole number"),
        ("fattree:k=4,z=1", "unknown parameter \"z\""),
        ("leafspine:spines=0,leaves=2", "at least 1"),
        ("random:n=5,m=11", "n(n-1)/2"),
        ("random:n=5,m=6,odd=3", "odd must be even"),
    ] {
        let e = Topology::load(spec).unwrap_err().to_string();
        assert!(e.starts_with(spec) && e.contains(what), "{spec}: {e}");
    }
}

#[test]
fn json_export_reads_back_losslessly() {
    for spec in [
        "fattree:k=4",
        "leafspine:spines=2,leaves=3,hosts=2",
        "random:n=12,m=20,odd=4,hosts=1",
        "paper-fig4",
    ] {
        let t = Topology::load(spec).unwrap();
        let f = tmp("export.json", &t.to_json());
        let back = Topology::load(f.to_str().unwrap()).unwrap();
        assert_eq!(back.switches(), t.switches(), "{spec}");
        assert_eq!(back.hosts(), t.hosts(), "{spec}");
        assert_eq!(back.links(), t.links(), "{spec}");
        assert_eq!(back.to_json(), t.to_json(), "{spec}");
    }
}

#[test]
fn json_accepts_hosts_without_links_and_link_parameters() {
    let f = tmp(
        "hosts.json",
        r#"{"switches":[{"name":"a","id":7},{"name":"b","id":9}],
            "hosts":[{"name":"x","ip":"10.0.0.5/24","mac":"00:00:00:00:00:05","switch":"b"}],
            "links":[{"a":"a","a_port":null,"b":"b","b_port":4,"bw_mbps":10,"delay_ms":2.5}]}"#,
    );
    let t = Topology::load(f.to_str().unwrap()).unwrap();
    assert_eq!(t.peer("a", 1), Some(("b", 4)));
    assert_eq!(t.peer("b", 1), Some(("x", 0)));
    assert_eq!(t.links()[0].bw_mbps, Some(10.0));
    assert_eq!(t.links()[0].delay_ms, Some(2.5));
    assert_eq!(t.host("x").unwrap().ip.to_string(), "10.0.0.5");
}

#[test]
fn bad_files_get_one_line_errors_naming_the_element() {
    let sw = r#"{"name":"s1","id":1},{"name":"s2","id":2}"#;
    let cases = [
        (
            "unknown.json",
            format!(
                r#"{{"switches":[{sw}],"links":[{{"a":"s1","a_port":1,"b":"s9","b_port":1}}]}}"#
            ),
            "link #1 (s1-s9, links[0]): unknown node \"s9\"",
        ),
        (
            "twice.json",
            format!(
                r#"{{"switches":[{sw}],"links":[{{"a":"s1","a_port":1,"b":"s2","b_port":1}},{{"a":"s1","a_port":1,"b":"s2","b_port":2}}]}}"#
            ),
            "link #2 (s1-s2, links[1]): port s1:1 already used by link #1 (s1-s2, links[0])",
        ),
        (
            "dupid.json",
            r#"{"switches":[{"name":"s1","id":1},{"name":"s2","id":1}]}"#.into(),
            "switch \"s2\": id 1 already used by \"s1\"",
        ),
        (
            "zero.json",
            format!(
                r#"{{"switches":[{sw}],"links":[{{"a":"s1","a_port":0,"b":"s2","b_port":1}}]}}"#
            ),
            "switch \"s1\" port 0",
        ),
        (
            "lonely.json",
            format!(
                r#"{{"switches":[{sw}],"hosts":[{{"name":"h","ip":"10.0.0.1","mac":"00:00:00:00:00:01"}}]}}"#
            ),
            "host \"h\" has 0 links",
        ),
        (
            "badip.json",
            format!(
                r#"{{"switches":[{sw}],"hosts":[{{"name":"h","ip":"10.0.0","mac":"00:00:00:00:00:01"}}]}}"#
            ),
            "host \"h\": bad IPv4 address",
        ),
        (
            "shape.json",
            r#"{"switches":[{"name":"s1"}]}"#.into(),
            "missing field `id`",
        ),
        ("syntax.json", "{\"switches\": [".into(), "not valid JSON"),
        (
            "p4bad.json",
            r#"{"switches":{"s1":{}},"links":[["s1-p1"]]}"#.into(),
            "links[0]: invalid length 1, expected [end, end, latency?, bandwidth?] at line 1",
        ),
        (
            "p4end.json",
            r#"{"switches":{"s1":{}},"links":[["s1-p1", 2]]}"#.into(),
            "links[0][1]: invalid type: integer `2`, expected a string",
        ),
        (
            "p4latency.json",
            r#"{"switches":{"s1":{},"s2":{}},"links":[["s1-p1","s2-p1","fast"]]}"#.into(),
            "links[0][2]: invalid value: string \"fast\", expected a latency in ms",
        ),
        (
            "p4host.json",
            r#"{"switches":{"s1":{}},"hosts":{"h1":{"ip":7}}}"#.into(),
            "hosts.h1.ip: invalid type: integer `7`",
        ),
        (
            "p4port.json",
            r#"{"switches":{"s1":{},"s2":{}},"links":[["s1-p1","s2-pX"]]}"#.into(),
            "links[0]: bad port in \"s2-pX\"",
        ),
        (
            "z.graphml",
            "<graphml><graph><node id=\"a\"/><edge source=\"a\" target=\"b\"/></graph></graphml>"
                .into(),
            "unknown node \"b\"",
        ),
        ("y.graphml", "<graphml><graph>".into(), "not valid XML"),
        (
            "x.gml",
            "graph [ node [ id 1 ] edge [ source 1 target 2 ] ]".into(),
            "(line 1): unknown node \"2\"",
        ),
        (
            "w.gml",
            "graph [\n node [ id 1 ".into(),
            "line 2: [ without a closing ]",
        ),
        (
            "hostport.json",
            format!(
                r#"{{"switches":[{sw}],"hosts":[{{"name":"h","ip":"10.0.0.1","mac":"00:00:00:00:00:01"}}],
                   "links":[{{"a":"h","a_port":null,"b":"s1","b_port":null}},{{"a":"h","a_port":null,"b":"s2","b_port":null}}]}}"#
            ),
            "link #2 (h-s2, links[1]): host \"h\" already has a link",
        ),
        (
            "dupgml.gml",
            "graph [ node [ id 1 ] node [ id 1 ] ]".into(),
            "node id \"1\" appears twice",
        ),
    ];
    for (name, text, want) in cases {
        let e = load_err(name, &text);
        assert!(e.contains(want), "{name}: {e}");
    }
}

#[test]
fn p4lang_tutorial_format() {
    let f = tmp(
        "topology.json",
        r#"{
        "hosts": {
            "h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11", "commands": []},
            "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:02:22"}
        },
        "switches": {"s1": {"runtime_json": "s1-runtime.json"}, "s2": {}, "s10": {}},
        "links": [["h1", "s1-p1"], ["h2", "s2-p1"], ["s1-p2", "s2-p2", "5ms", 10],
                  ["s1-p3", "s10-p1"], ["s2", "s10"]]
    }"#,
    );
    let t = Topology::load(f.to_str().unwrap()).unwrap();
    let ids: Vec<_> = t
        .switches()
        .iter()
        .map(|s| (s.name.as_str(), s.id))
        .collect();
    assert_eq!(ids, vec![("s1", 1), ("s2", 2), ("s10", 10)]);
    assert_eq!(t.host("h2").unwrap().mac.to_string(), "08:00:00:00:02:22");
    assert_eq!(t.peer("s1", 2), Some(("s2", 2)));
    assert_eq!(t.links()[2].delay_ms, Some(5.0));
    assert_eq!(t.links()[2].bw_mbps, Some(10.0));
    // Ports left out get the lowest free one.
    assert_eq!(t.peer("s2", 3), Some(("s10", 2)));
}

#[test]
fn p4lang_names_with_escapes_match_their_plain_spelling() {
    // An escaped name is decoded into its own string, not borrowed from
    // the text: it must still meet the plain spelling of the same name.
    let f = tmp(
        "topology.json",
        r#"{"switches": {"s\u0031": {}, "s2": {}}, "hosts": ["h\u00e9"],
            "links": [["s1-p4", "s\u0032-p7"], ["h\u00e9", "s2"]]}"#,
    );
    let t = Topology::load(f.to_str().unwrap()).unwrap();
    assert_eq!(t.peer("s1", 4), Some(("s2", 7)));
    assert_eq!(t.host("hé").unwrap().switch, "s2");
}

#[test]
fn zoo_formats_agree() {
    let graphml = r#"<?xml version="1.0"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="label" attr.type="string" for="node" id="d1"/>
  <graph edgedefault="undirected">
    <node id="0"><data key="d1">Aachen</data></node>
    <node id="1"><data key="d1">Bonn</data></node>
    <node id="2"><data key="d1">Cologne</data></node>
    <edge source="0" target="1"/><edge source="1" target="2"/><edge source="2" target="0"/><edge source="0" target="1"/>
  </graph>
</graphml>"#;
    let gml = "# comment\ngraph [\n directed 0\n node [ id 0 label \"Aachen\" ]\n node [ id 1 label \"Bonn\" ]\n node [ id 2 label \"Cologne\" ]\n edge [ source 0 target 1 ]\n edge [ source 1 target 2 ]\n edge [ source 2 target 0 ]\n edge [ source 0 target 1 ]\n]\n";
    let a = Topology::load(tmp("n.graphml", graphml).to_str().unwrap()).unwrap();
    let b = Topology::load(tmp("n.gml", gml).to_str().unwrap()).unwrap();
    assert_eq!(a.switches(), b.switches());
    assert_eq!(a.links(), b.links());
    assert_eq!(a.switches()[2].label.as_deref(), Some("Cologne"));
    // Parallel links are kept, on distinct ports.
    assert_eq!(a.peer("s1", 3), Some(("s2", 3)));
    assert!(a
        .to_dot()
        .contains("\"s1\" -- \"s2\" [taillabel=\"1\", headlabel=\"1\"]"));
}

#[test]
fn automatic_ports_skip_explicit_ones_whatever_the_link_order() {
    // s1's explicit port 2 comes after the links that get automatic ports.
    let f = tmp(
        "auto.json",
        r#"{"switches":[{"name":"s1","id":1},{"name":"s2","id":2},{"name":"s3","id":3},{"name":"s4","id":4}],
            "links":[{"a":"s1","a_port":null,"b":"s2","b_port":null},
                     {"a":"s1","a_port":null,"b":"s3","b_port":null},
                     {"a":"s1","a_port":2,"b":"s4","b_port":7}]}"#,
    );
    let t = Topology::load(f.to_str().unwrap()).unwrap();
    let ports: Vec<(u16, &str, u16)> = t.neighbours("s1").collect();
    assert_eq!(ports, vec![(1, "s2", 1), (2, "s4", 7), (3, "s3", 1)]);
    // The first problem in link order is reported, whichever switch has it.
    let e = load_err(
        "first.json",
        r#"{"switches":[{"name":"s1","id":1},{"name":"s2","id":2},{"name":"s3","id":3}],
            "links":[{"a":"s2","a_port":1,"b":"s3","b_port":1},
                     {"a":"s1","a_port":1,"b":"s3","b_port":1},
                     {"a":"s1","a_port":1,"b":"s2","b_port":1}]}"#,
    );
    assert!(
        e.contains("link #2 (s1-s3, links[1]): port s3:1 already used by link #1"),
        "{e}"
    );
}

#[test]
fn zoo_ids_are_strings_even_when_they_look_like_numbers() {
    // "01" and "1" are different nodes; ids far apart and words mix freely.
    let f = tmp(
        "ids.gml",
        "graph [ node [ id 1 ] node [ id 01 ] node [ id 4000000000 ] node [ id x ]\n\
         edge [ source 1 target 01 ] edge [ source 01 target 4000000000 ]\n\
         edge [ source 4000000000 target x ] ]",
    );
    let t = Topology::load(f.to_str().unwrap()).unwrap();
    let links: Vec<String> = t
        .links()
        .iter()
        .map(|l| format!("{}-{}", l.a, l.b))
        .collect();
    assert_eq!(links, ["s1-s2", "s2-s3", "s3-s4"]);
}

#[test]
fn p4lang_names_sort_naturally_with_long_and_unicode_stems() {
    let long_a = "spine\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}";
    let names = [
        "s10".to_owned(),
        "s2".into(),
        "s01".into(),
        "s1".into(),
        "leaf-switch-of-rack10".into(),
        "leaf-switch-of-rack9".into(),
        "leaf-switch-of-rack-b1".into(),
        format!("{long_a}2"),
        format!("{long_a}10"),
    ];
    let switches: Vec<String> = names.iter().map(|n| format!("{n:?}: {{}}")).collect();
    let f = tmp(
        "natural.json",
        &format!(r#"{{"switches": {{{}}}, "links": []}}"#, switches.join(",")),
    );
    let t = Topology::load(f.to_str().unwrap()).unwrap();
    let order: Vec<&str> = t.switches().iter().map(|s| s.name.as_str()).collect();
    // By stem first: "…rack" is a prefix of "…rack-b", so it sorts first.
    let want = [
        "leaf-switch-of-rack9".to_owned(),
        "leaf-switch-of-rack10".into(),
        "leaf-switch-of-rack-b1".into(),
        "s01".into(),
        "s1".into(),
        "s2".into(),
        "s10".into(),
        format!("{long_a}2"),
        format!("{long_a}10"),
    ];
    assert_eq!(order, want);
}

#[test]
fn a_topology_reads_back_from_its_json_and_a_different_one_is_named() {
    let fat = Topology::load("fattree:k=4").unwrap();
    let back = Topology::from_json(&fat.to_json(), "run 1").unwrap();
    assert_eq!(fat.difference(&back), None);
    let leaf = Topology::load("leafspine:spines=4,leaves=8,hosts=4").unwrap();
    let why = fat.difference(&leaf).unwrap();
    assert!(why.contains("only in the"), "{why}");
    assert!(Topology::from_json("{", "broken").is_err());
}
