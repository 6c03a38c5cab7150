//! Between P4Runtime's numeric world and the switch's named tables: a
//! pushed P4Info is checked against [`intpath_sr_int::schema`] (every name and bit
//! width must match, so that ids can be resolved by name without surprises),
//! and entries, counters and packet metadata are translated with its ids.

use crate::tables::{NamedEntry, NamedMatch};
use intpath_p4rt::p4info::{FieldInfo, MatchType, P4InfoIndex};
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema::{self, MatchKind};
use std::collections::BTreeSet;

fn match_type(kind: MatchKind) -> MatchType {
    match kind {
        MatchKind::Exact => MatchType::Exact,
        MatchKind::Lpm => MatchType::Lpm,
    }
}

/// Every way `index` differs from the switch's pipeline, one line each
/// (empty = it describes this pipeline).
pub fn mismatches(index: &P4InfoIndex) -> Vec<String> {
    let mut out = Vec::new();
    let ours: BTreeSet<&str> = schema::TABLES.iter().map(|t| t.name).collect();
    for t in index.tables() {
        if !ours.contains(t.name.as_str()) {
            out.push(format!("table {}: not in the switch's pipeline", t.name));
        }
    }
    let mut actions_used = BTreeSet::new();
    for ts in schema::TABLES {
        let Ok(t) = index.table(ts.name) else {
            out.push(format!("table {}: missing from the P4Info", ts.name));
            continue;
        };
        let theirs: Vec<String> = t
            .match_fields
            .iter()
            .map(|m| m.field.name.clone())
            .collect();
        let want: Vec<&str> = ts.keys.iter().map(|k| k.field.name).collect();
        if theirs != want {
            out.push(format!(
                "table {}: key fields {theirs:?}, the switch has {want:?}",
                ts.name
            ));
        } else {
            for (m, k) in t.match_fields.iter().zip(ts.keys) {
                if m.field.bitwidth != k.field.bitwidth {
                    out.push(format!(
                        "table {} field {}: {} bits, the switch has {}",
                        ts.name, k.field.name, m.field.bitwidth, k.field.bitwidth
                    ));
                }
                if m.match_type != match_type(k.kind) {
                    out.push(format!(
                        "table {} field {}: match {:?}, the switch has {}",
                        ts.name,
                        k.field.name,
                        m.match_type,
                        k.kind.as_str()
                    ));
                }
            }
        }
        let theirs: BTreeSet<String> = t
            .action_ids
            .iter()
            .map(|id| {
                index
                    .action_by_id(*id)
                    .map_or_else(|_| format!("#{id:#x}"), |a| a.name.clone())
            })
            .collect();
        let want: BTreeSet<String> = ts.actions.iter().map(|a| a.to_string()).collect();
        if theirs != want {
            out.push(format!(
                "table {}: actions {theirs:?}, the switch has {want:?}",
                ts.name
            ));
        }
        actions_used.extend(ts.actions.iter().copied());
    }
    for name in actions_used {
        let (Some(ours), Ok(theirs)) = (schema::action(name), index.action(name)) else {
            out.push(format!("action {name}: missing from the P4Info"));
            continue;
        };
        let got: Vec<(String, u32)> = theirs
            .params
            .iter()
            .map(|p| (p.name.clone(), p.bitwidth))
            .collect();
        let want: Vec<(String, u32)> = ours
            .params
            .iter()
            .map(|p| (p.name.to_string(), p.bitwidth))
            .collect();
        if got != want {
            out.push(format!(
                "action {name}: parameters {got:?}, the switch has {want:?}"
            ));
        }
    }
    for c in schema::COUNTERS {
        match index.counter(c.name) {
            Err(_) => out.push(format!("counter {}: missing from the P4Info", c.name)),
            Ok(info) if info.size as u64 != c.size => out.push(format!(
                "counter {}: size {}, the switch has {}",
                c.name, info.size, c.size
            )),
            Ok(_) => {}
        }
    }
    for h in schema::CONTROLLER_HEADERS {
        let Ok(info) = index.packet_metadata(h.name) else {
            out.push(format!(
                "controller header {}: missing from the P4Info",
                h.name
            ));
            continue;
        };
        let got: Vec<(String, u32)> = info
            .metadata
            .iter()
            .map(|m| (m.name.clone(), m.bitwidth))
            .collect();
        let want: Vec<(String, u32)> = h
            .metadata
            .iter()
            .map(|m| (m.name.to_string(), m.bitwidth))
            .collect();
        if got != want {
            out.push(format!(
                "controller header {}: fields {got:?}, the switch has {want:?}",
                h.name
            ));
        }
    }
    out
}

/// A P4Runtime table entry by names (ids resolved with `index`). A delete
/// may leave out the action: the key is all it needs.
///
/// P4Runtime's key rules: an LPM field is left out for a wildcard (it then
/// reads as /0) and never sent with prefix length 0; exact fields are never
/// left out; no field twice.
pub fn entry_from_p4(index: &P4InfoIndex, e: &p4::TableEntry) -> Result<NamedEntry, String> {
    decode(index, e, Key::Complete)
}

/// A Read filter by names: as [`entry_from_p4`], but a filter on the action
/// alone has no key, so missing fields are left missing instead of refused.
pub fn filter_from_p4(index: &P4InfoIndex, e: &p4::TableEntry) -> Result<NamedEntry, String> {
    decode(index, e, Key::AsGiven)
}

/// Whether a key must name every field (a write) or may name none (a read
/// filter).
#[derive(Clone, Copy, PartialEq)]
enum Key {
    Complete,
    AsGiven,
}

fn decode(index: &P4InfoIndex, e: &p4::TableEntry, key: Key) -> Result<NamedEntry, String> {
    use p4::field_match::FieldMatchType as K;
    let t = index.table_by_id(e.table_id).map_err(|x| x.to_string())?;
    let mut matches = Vec::with_capacity(t.match_fields.len());
    for m in &e.r#match {
        let field = t.match_field_by_id(m.field_id).map_err(|x| x.to_string())?;
        let name = &field.field.name;
        if matches.iter().any(|n: &NamedMatch| n.field == *name) {
            return Err(format!("table {}: field {name} given twice", t.name));
        }
        let (value, prefix_len) = match &m.field_match_type {
            Some(K::Exact(x)) => (x.value.clone(), None),
            Some(K::Lpm(x)) if x.prefix_len == 0 => {
                return Err(format!(
                "table {} field {name}: prefix length 0 (a wildcard LPM field must be left out)",
                t.name
            ))
            }
            Some(K::Lpm(x)) => (
                x.value.clone(),
                Some(
                    u32::try_from(x.prefix_len)
                        .map_err(|_| format!("{name}: negative prefix length"))?,
                ),
            ),
            _ => {
                return Err(format!(
                    "table {} field {name}: only exact and LPM matches exist here",
                    t.name
                ))
            }
        };
        matches.push(NamedMatch {
            field: name.clone(),
            value: canonical(&field.field, &value)?,
            prefix_len,
        });
    }
    let complete = key == Key::Complete || !e.r#match.is_empty();
    if !e.is_default_action && complete {
        for f in &t.match_fields {
            if matches.iter().any(|n| n.field == f.field.name) {
                continue;
            }
            if f.match_type != MatchType::Lpm {
                return Err(format!(
                    "table {}: exact field {} missing (exact fields cannot be left out)",
                    t.name, f.field.name
                ));
            }
            matches.push(NamedMatch {
                field: f.field.name.clone(),
                value: vec![0],
                prefix_len: Some(0),
            });
        }
    }
    let (action, params) = match &e.action {
        Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(a)),
        }) => {
            let info = index.action_by_id(a.action_id).map_err(|x| x.to_string())?;
            let params = a
                .params
                .iter()
                .map(|p| {
                    let f = info.param_by_id(p.param_id).map_err(|x| x.to_string())?;
                    Ok((f.name.clone(), canonical(f, &p.value)?))
                })
                .collect::<Result<Vec<_>, String>>()?;
            (info.name.clone(), params)
        }
        Some(_) => return Err("only direct actions exist here (no action profiles)".into()),
        None => (schema::DROP.to_string(), Vec::new()),
    };
    Ok(NamedEntry {
        table: t.name.clone(),
        is_default: e.is_default_action,
        matches,
        action,
        params,
    })
}

/// A value in canonical form, refused when empty or wider than its field
/// (P4Runtime's rules, the same check the client makes before sending).
fn canonical(field: &FieldInfo, value: &[u8]) -> Result<Vec<u8>, String> {
    intpath_p4rt::bytes::canonical(value, field.bitwidth)
        .map_err(|e| format!("{}: {e}", field.name))
}

/// The P4Runtime form of a named entry, with `index`'s ids.
pub fn entry_to_p4(index: &P4InfoIndex, e: &NamedEntry) -> Result<p4::TableEntry, String> {
    use intpath_p4rt::p4info::Match;
    let params: Vec<(&str, &[u8])> = e
        .params
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_slice()))
        .collect();
    let r = if e.is_default {
        index.default_entry(&e.table, &e.action, &params)
    } else {
        let matches: Vec<(&str, Match)> = e
            .matches
            .iter()
            .map(|m| {
                let v = m.value.clone();
                let kind = match m.prefix_len {
                    Some(len) => Match::Lpm(v, len as i32),
                    None => Match::Exact(v),
                };
                (m.field.as_str(), kind)
            })
            .collect();
        index.table_entry(&e.table, &matches, &e.action, &params)
    };
    r.map_err(|x| x.to_string())
}

/// Packet metadata field `name` of controller header `header`, by id.
pub fn metadata_id(index: &P4InfoIndex, header: &str, name: &str) -> Option<u32> {
    index
        .packet_metadata(header)
        .ok()?
        .field(name)
        .ok()
        .map(|f| f.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_p4info_describes_this_switch() {
        let index = intpath_sr_int::p4info().unwrap();
        assert_eq!(mismatches(&index), Vec::<String>::new());
    }

    #[test]
    fn a_renamed_parameter_and_a_narrower_key_are_named() {
        let text = intpath_sr_int::P4INFO
            .replace("name: \"dst_mac\"", "name: \"mac\"")
            .replacen(
                "bitwidth: 16\n    match_type: EXACT",
                "bitwidth: 8\n    match_type: EXACT",
                1,
            );
        let index = P4InfoIndex::new(intpath_p4rt::p4info::from_text(&text).unwrap()).unwrap();
        let m = mismatches(&index).join("\n");
        assert!(
            m.contains("SrIntIngress.ipv4_forward") && m.contains("mac"),
            "{m}"
        );
        assert!(m.contains("hdr.sr.path_id: 8 bits"), "{m}");
    }
}
