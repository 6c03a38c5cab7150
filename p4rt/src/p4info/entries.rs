//! Building and describing entries by name: values checked against their
//! widths and canonicalised, so a diff compares what the device stores.

use super::{MatchType, P4InfoError, P4InfoIndex, TableInfo};
use crate::bytes::{self, ValueError};
use crate::proto::p4::v1 as p4;

impl P4InfoIndex {
    /// An `Action` with every parameter of `action` given by name, values
    /// checked against their widths and canonicalised.
    pub fn action_call(
        &self,
        action: &str,
        params: &[(&str, &[u8])],
    ) -> Result<p4::Action, P4InfoError> {
        let info = self.action(action)?;
        for (name, _) in params {
            info.param(name)?;
        }
        let params = info
            .params
            .iter()
            .map(|p| {
                let (_, value) = params.iter().find(|(n, _)| *n == p.name).ok_or_else(|| {
                    P4InfoError::MissingParam {
                        action: info.name.clone(),
                        param: p.name.clone(),
                    }
                })?;
                Ok(p4::action::Param {
                    param_id: p.id,
                    value: canonical_for(value, p.bitwidth, || {
                        format!("action {} parameter {}", info.name, p.name)
                    })?,
                })
            })
            .collect::<Result<_, P4InfoError>>()?;
        Ok(p4::Action {
            action_id: info.id,
            params,
        })
    }

    /// A table entry from names: key fields (wildcards left out, as
    /// P4Runtime requires), the action and its parameters. Checks that the
    /// action belongs to the table and every value fits its field.
    pub fn table_entry(
        &self,
        table: &str,
        matches: &[(&str, Match)],
        action: &str,
        params: &[(&str, &[u8])],
    ) -> Result<p4::TableEntry, P4InfoError> {
        let t = self.table(table)?;
        let call = self.action_call(action, params)?;
        if !t.action_ids.contains(&call.action_id) {
            return Err(P4InfoError::ActionNotInTable {
                table: t.name.clone(),
                action: action.to_owned(),
            });
        }
        let mut fields = matches
            .iter()
            .map(|(name, m)| self.field_match(t, name, m))
            .filter(|f| !f.as_ref().is_ok_and(is_wildcard))
            .collect::<Result<Vec<_>, _>>()?;
        fields.sort_by_key(|f| f.field_id);
        Ok(p4::TableEntry {
            table_id: t.id,
            r#match: fields,
            action: Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::Action(call)),
            }),
            ..Default::default()
        })
    }

    /// The entry that sets `table`'s default action.
    pub fn default_entry(
        &self,
        table: &str,
        action: &str,
        params: &[(&str, &[u8])],
    ) -> Result<p4::TableEntry, P4InfoError> {
        let mut entry = self.table_entry(table, &[], action, params)?;
        entry.is_default_action = true;
        Ok(entry)
    }

    fn field_match(
        &self,
        table: &TableInfo,
        name: &str,
        m: &Match,
    ) -> Result<p4::FieldMatch, P4InfoError> {
        use p4::field_match::{self as fm, FieldMatchType as K};
        let info = table.match_field(name)?;
        if info.match_type != m.kind() {
            return Err(P4InfoError::MatchKind {
                table: table.name.clone(),
                field: name.to_owned(),
                actual: info.match_type,
                requested: m.kind(),
            });
        }
        let width = info.field.bitwidth;
        let what = || format!("table {} field {}", table.name, name);
        let value = |v: &[u8]| canonical_for(v, width, what);
        let check = |r: Result<(), ValueError>| {
            r.map_err(|source| P4InfoError::Value {
                what: what(),
                cause: source,
            })
        };
        let kind = match m {
            Match::Exact(v) => K::Exact(fm::Exact { value: value(v)? }),
            Match::Lpm(v, prefix_len) => {
                check(bytes::check_lpm(v, *prefix_len, width))?;
                K::Lpm(fm::Lpm {
                    value: value(v)?,
                    prefix_len: *prefix_len,
                })
            }
            Match::Ternary(v, mask) => {
                check(bytes::check_ternary(v, mask, width))?;
                K::Ternary(fm::Ternary {
                    value: value(v)?,
                    mask: value(mask)?,
                })
            }
            Match::Range(low, high) => {
                check(bytes::check_range(low, high, width))?;
                K::Range(fm::Range {
                    low: value(low)?,
                    high: value(high)?,
                })
            }
            Match::Optional(v) => K::Optional(fm::Optional { value: value(v)? }),
        };
        Ok(p4::FieldMatch {
            field_id: info.field.id,
            field_match_type: Some(kind),
        })
    }

    /// A one-line, name-based rendering of an entry, for logs, dry runs and
    /// error messages (falls back to ids for anything the P4Info lacks).
    pub fn describe_entry(&self, entry: &p4::TableEntry) -> String {
        use p4::field_match::FieldMatchType as K;
        let Ok(table) = self.table_by_id(entry.table_id) else {
            return format!("table {:#x} {:?}", entry.table_id, entry);
        };
        let mut s = table.name.clone();
        if entry.is_default_action {
            s.push_str(" default");
        }
        for f in &entry.r#match {
            let name = table
                .match_field_by_id(f.field_id)
                .map_or_else(|_| format!("#{}", f.field_id), |m| m.field.name.clone());
            let v = match &f.field_match_type {
                Some(K::Exact(e)) => bytes::hex(&e.value),
                Some(K::Lpm(l)) => format!("{}/{}", bytes::hex(&l.value), l.prefix_len),
                Some(K::Ternary(t)) => {
                    format!("{}&&&{}", bytes::hex(&t.value), bytes::hex(&t.mask))
                }
                Some(K::Range(r)) => format!("{}..{}", bytes::hex(&r.low), bytes::hex(&r.high)),
                Some(K::Optional(o)) => format!("{}?", bytes::hex(&o.value)),
                Some(K::Other(_)) | None => "?".into(),
            };
            s.push_str(&format!(" {name}={v}"));
        }
        if entry.priority != 0 {
            s.push_str(&format!(" priority={}", entry.priority));
        }
        if let Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(a)),
        }) = &entry.action
        {
            s.push_str(&format!(" -> {}", self.describe_action(a)));
        }
        s
    }

    pub fn describe_action(&self, action: &p4::Action) -> String {
        let Ok(info) = self.action_by_id(action.action_id) else {
            return format!("action {:#x}", action.action_id);
        };
        let params: Vec<String> = action
            .params
            .iter()
            .map(|p| {
                let name = info
                    .param_by_id(p.param_id)
                    .map_or_else(|_| format!("#{}", p.param_id), |f| f.name.clone());
                format!("{name}={}", bytes::hex(&p.value))
            })
            .collect();
        format!("{}({})", info.name, params.join(", "))
    }
}

fn canonical_for(
    value: &[u8],
    width: u32,
    what: impl FnOnce() -> String,
) -> Result<Vec<u8>, P4InfoError> {
    bytes::canonical(value, width).map_err(|source| P4InfoError::Value {
        what: what(),
        cause: source,
    })
}

/// A field that matches everything, which P4Runtime requires to be left
/// out of the entry: an LPM prefix of length 0, a ternary mask of zeros.
fn is_wildcard(f: &p4::FieldMatch) -> bool {
    use p4::field_match::FieldMatchType as K;
    match &f.field_match_type {
        Some(K::Lpm(l)) => l.prefix_len == 0,
        Some(K::Ternary(t)) => t.mask.iter().all(|b| *b == 0),
        _ => false,
    }
}

/// A key field value by match kind (values big-endian, any length that fits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    Exact(Vec<u8>),
    Lpm(Vec<u8>, i32),
    Ternary(Vec<u8>, Vec<u8>),
    Range(Vec<u8>, Vec<u8>),
    Optional(Vec<u8>),
}

impl Match {
    pub fn kind(&self) -> MatchType {
        match self {
            Match::Exact(_) => MatchType::Exact,
            Match::Lpm(..) => MatchType::Lpm,
            Match::Ternary(..) => MatchType::Ternary,
            Match::Range(..) => MatchType::Range,
            Match::Optional(_) => MatchType::Optional,
        }
    }
}
