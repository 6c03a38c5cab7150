//! The P4Info against the reference switch's pipeline schema.

use crate::p4info_text::*;
use intpath_sr_int::schema;

#[test]
fn reference_switch_schema_matches_p4info() {
    let info = p4info();
    let action_name = |id: u64| {
        info.all("actions")
            .find(|a| a.msg("preamble").num("id") == id)
            .map(|a| a.name().to_string())
            .unwrap_or_else(|| panic!("action id {id} not in P4Info"))
    };
    assert_eq!(schema::TABLES.len(), info.all("tables").count(), "tables");
    for t in schema::TABLES {
        let it = info.by_name("tables", t.name);
        let keys: Vec<(u64, String, u32)> = (1..)
            .zip(t.keys)
            .map(|(i, k)| (i, k.field.name.to_string(), k.field.bitwidth))
            .collect();
        assert_eq!(members(it, "match_fields"), keys, "{} keys", t.name);
        let kinds: Vec<&str> = it
            .all("match_fields")
            .map(|m| m.get("match_type").expect("match_type"))
            .collect();
        let want: Vec<&str> = t.keys.iter().map(|k| k.kind.as_str()).collect();
        assert_eq!(kinds, want, "{} match kinds", t.name);
        let refs: Vec<(String, bool)> = it
            .all("action_refs")
            .map(|r| {
                (
                    action_name(r.num("id")),
                    r.get("scope") == Some("DEFAULT_ONLY"),
                )
            })
            .collect();
        let want: Vec<(String, bool)> = t
            .actions
            .iter()
            .map(|a| (a.to_string(), t.default_only.contains(a)))
            .collect();
        assert_eq!(refs, want, "{} actions", t.name);
        assert_eq!(it.num("size"), t.size, "{} size", t.name);
    }
    assert_eq!(
        schema::ACTIONS.len(),
        info.all("actions").count(),
        "actions"
    );
    for a in schema::ACTIONS {
        let params: Vec<(String, u32)> = a
            .params
            .iter()
            .map(|f| (f.name.to_string(), f.bitwidth))
            .collect();
        assert_eq!(
            members(info.by_name("actions", a.name), "params"),
            numbered(&params),
            "{}",
            a.name
        );
    }
    assert_eq!(schema::COUNTERS.len(), info.all("counters").count());
    for c in schema::COUNTERS {
        assert_eq!(
            info.by_name("counters", c.name).num("size"),
            c.size,
            "{}",
            c.name
        );
    }
    for h in schema::CONTROLLER_HEADERS {
        let md: Vec<(String, u32)> = h
            .metadata
            .iter()
            .map(|f| (f.name.to_string(), f.bitwidth))
            .collect();
        assert_eq!(
            members(
                info.by_name("controller_packet_metadata", h.name),
                "metadata"
            ),
            numbered(&md),
            "{}",
            h.name
        );
    }
}
