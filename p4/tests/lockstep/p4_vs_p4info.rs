//! The P4 program against its P4Info: tables, actions, counters, controller
//! headers and the ids p4c assigns.

use crate::p4_source::*;
use crate::p4info_text::*;
use std::collections::BTreeMap;

#[test]
fn p4_parser_sees_the_whole_program() {
    let p = program();
    let names: Vec<&str> = p.controls.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"SrIntIngress") && names.contains(&"SrIntEgress"));
    assert_eq!(p.controls.iter().map(|c| c.tables.len()).sum::<usize>(), 4);
    assert_eq!(
        p.controls.iter().map(|c| c.counters.len()).sum::<usize>(),
        3
    );
    assert_eq!(
        p.headers
            .values()
            .filter(|h| h.controller.is_some())
            .count(),
        2
    );
}

#[test]
fn tables_match_p4info() {
    let (p, info) = (program(), p4info());
    let mut declared = Vec::new();
    for ctl in &p.controls {
        for t in &ctl.tables {
            let full = format!("{}.{}", ctl.name, t.name);
            let it = info.by_name("tables", &full);
            let keys: Vec<(u64, String, u32)> = (1..)
                .zip(&t.keys)
                .map(|(i, (expr, _))| (i, expr.clone(), p.width_of(ctl, expr)))
                .collect();
            assert_eq!(members(it, "match_fields"), keys, "{full} key");
            let kinds: Vec<String> = it
                .all("match_fields")
                .map(|m| m.get("match_type").expect("match_type").to_string())
                .collect();
            let want: Vec<String> = t.keys.iter().map(|(_, k)| k.to_uppercase()).collect();
            assert_eq!(kinds, want, "{full} match kinds");
            let refs: Vec<(u64, bool)> = it
                .all("action_refs")
                .map(|r| (r.num("id"), r.get("scope") == Some("DEFAULT_ONLY")))
                .collect();
            let want: Vec<(u64, bool)> = t
                .actions
                .iter()
                .map(|(a, d)| (p4c_id(0x01, &qualified(ctl, a)), *d))
                .collect();
            assert_eq!(refs, want, "{full} action refs");
            assert!(
                t.actions.iter().any(|(a, _)| *a == t.default_action),
                "{full}: default action {} not in its action list",
                t.default_action
            );
            let schema = intpath_sr_int::schema::table(&full).expect("table in the switch schema");
            assert_eq!(
                schema.default_action,
                qualified(ctl, &t.default_action),
                "{full}: default action in the switch schema"
            );
            assert_eq!(it.num("size"), t.size, "{full} size");
            assert!(it.get("const_default_action_id").is_none(), "{full}");
            declared.push(full);
        }
    }
    let in_info: Vec<&str> = info.all("tables").map(Message::name).collect();
    assert_eq!(in_info, declared, "tables in P4Info vs sr_int.p4");
}

#[test]
fn actions_match_p4info() {
    let (p, info) = (program(), p4info());
    let mut declared = BTreeMap::new();
    for ctl in &p.controls {
        for (name, params) in &ctl.actions {
            declared.insert(format!("{}.{name}", ctl.name), params.clone());
        }
        for t in &ctl.tables {
            if t.actions.iter().any(|(a, _)| a == "NoAction") {
                declared.insert("NoAction".to_string(), Vec::new());
            }
        }
    }
    let in_info: BTreeMap<String, Vec<(u64, String, u32)>> = info
        .all("actions")
        .map(|a| (a.name().to_string(), members(a, "params")))
        .collect();
    let want: BTreeMap<String, Vec<(u64, String, u32)>> = declared
        .iter()
        .map(|(n, ps)| (n.clone(), numbered(ps)))
        .collect();
    assert_eq!(in_info, want, "actions and parameters");
}

#[test]
fn counters_match_p4info() {
    let (p, info) = (program(), p4info());
    let mut n = 0;
    for ctl in &p.controls {
        for c in &ctl.counters {
            let full = format!("{}.{}", ctl.name, c.name);
            let ic = info.by_name("counters", &full);
            assert_eq!(ic.num("size"), c.size, "{full} size");
            let unit = match c.kind.as_str() {
                "packets_and_bytes" => "BOTH",
                "packets" => "PACKETS",
                "bytes" => "BYTES",
                other => panic!("counter type {other}"),
            };
            assert_eq!(ic.msg("spec").get("unit"), Some(unit), "{full} unit");
            n += 1;
        }
    }
    assert_eq!(info.all("counters").count(), n, "counters in P4Info");
}

#[test]
fn controller_headers_match_p4info() {
    let (p, info) = (program(), p4info());
    let mut n = 0;
    for h in p.headers.values() {
        let Some(name) = &h.controller else { continue };
        let im = info.by_name("controller_packet_metadata", name);
        assert_eq!(members(im, "metadata"), numbered(&h.fields), "{name}");
        let ann = format!("@controller_header(\"{name}\")");
        assert_eq!(im.msg("preamble").get("annotations"), Some(ann.as_str()));
        n += 1;
    }
    assert_eq!(info.all("controller_packet_metadata").count(), n);
}

#[test]
fn p4info_ids_are_the_ones_p4c_assigns() {
    let (p, info) = (program(), p4info());
    let mut seen = BTreeMap::new();
    let mut check = |kind: &str, prefix: u32, hashed: &dyn Fn(&str) -> String| {
        for m in info.all(kind) {
            let pre = m.msg("preamble");
            let id = pre.num("id");
            assert_eq!(id, p4c_id(prefix, &hashed(m.name())), "{kind} {}", m.name());
            let alias = m.name().rsplit('.').next().expect("alias");
            assert_eq!(pre.get("alias"), Some(alias), "{kind} alias");
            assert!(
                seen.insert(id, m.name().to_string()).is_none(),
                "id {id} twice"
            );
        }
    };
    check("actions", 0x01, &|n| n.to_string());
    check("tables", 0x02, &|n| n.to_string());
    check("counters", 0x12, &|n| n.to_string());
    // Controller headers are hashed by their header type's name.
    let type_of = |name: &str| {
        p.headers
            .iter()
            .find(|(_, h)| h.controller.as_deref() == Some(name))
            .map(|(t, _)| t.clone())
            .expect("controller header type")
    };
    check("controller_packet_metadata", 0x04, &type_of);
    assert_eq!(info.msg("pkg_info").get("arch"), Some("v1model"));
}
