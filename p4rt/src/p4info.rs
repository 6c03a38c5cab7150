//! P4Info files and name resolution.
//!
//! People and plans speak of `SrIntIngress.ipv4_lpm` and `hdr.ipv4.dst_addr`;
//! the wire speaks of numeric ids and exact bit widths. [`P4InfoIndex`] is the
//! single place that maps one to the other, so that a program and controller
//! that disagree fail with the name that is missing rather than with a
//! switch rejecting an id.

use crate::bytes::{self, ValueError};
use crate::proto::p4::config::v1 as cfg;
use crate::proto::p4::v1 as p4;
use prost::Message;
use prost_reflect::DynamicMessage;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use cfg::match_field::MatchType;
pub use cfg::P4Info;

/// What went wrong reading a P4Info or resolving a name in it.
#[derive(Debug, thiserror::Error)]
pub enum P4InfoError {
    #[error("{path}: cannot read P4Info: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("P4Info text format: {0}")]
    Text(String),
    #[error("P4Info binary: {0}")]
    Binary(#[from] prost::DecodeError),
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        source: Box<P4InfoError>,
    },
    #[error("P4Info has two {kind}s named {name:?}")]
    Duplicate { kind: &'static str, name: String },
    #[error("P4Info has no {kind} named {name:?}")]
    Unknown { kind: &'static str, name: String },
    #[error("P4Info has no {kind} with id {id:#x}")]
    UnknownId { kind: &'static str, id: u32 },
    #[error("table {table}: no match field named {field:?}")]
    UnknownField { table: String, field: String },
    #[error("table {table}: no match field with id {id}")]
    UnknownFieldId { table: String, id: u32 },
    #[error("action {action}: no parameter named {param:?}")]
    UnknownParam { action: String, param: String },
    #[error("action {action}: no parameter with id {id}")]
    UnknownParamId { action: String, id: u32 },
    #[error("action {action}: parameter {param} not given")]
    MissingParam { action: String, param: String },
    #[error("table {table}: action {action} is not one of its actions")]
    ActionNotInTable { table: String, action: String },
    #[error("table {table}: field {field} is {actual:?}, not {requested:?}")]
    MatchKind {
        table: String,
        field: String,
        actual: MatchType,
        requested: MatchType,
    },
    #[error("{what}: {source}")]
    Value { what: String, source: ValueError },
}

fn p4info_descriptor() -> prost_reflect::MessageDescriptor {
    crate::proto::descriptor_pool()
        .get_message_by_name("p4.config.v1.P4Info")
        .expect("P4Info is in the descriptor set")
}

/// Parses the protobuf text format p4c writes (`--p4runtime-files x.p4info.txtpb`).
pub fn from_text(text: &str) -> Result<P4Info, P4InfoError> {
    let dynamic = DynamicMessage::parse_text_format(p4info_descriptor(), text)
        .map_err(|e| P4InfoError::Text(e.to_string()))?;
    dynamic
        .transcode_to::<P4Info>()
        .map_err(P4InfoError::Binary)
}

/// Parses the binary protobuf encoding.
pub fn from_binary(bytes: &[u8]) -> Result<P4Info, P4InfoError> {
    Ok(P4Info::decode(bytes)?)
}

/// Writes the text format (what [`from_text`] reads).
pub fn to_text(info: &P4Info) -> String {
    let dynamic = DynamicMessage::decode(p4info_descriptor(), info.encode_to_vec().as_slice())
        .expect("a P4Info re-decodes with its own descriptor");
    dynamic
        .to_text_format_with_options(&prost_reflect::text_format::FormatOptions::new().pretty(true))
}

/// Reads a P4Info file: binary for `.bin`/`.pb`/`.binpb`, text otherwise.
pub fn load(path: &Path) -> Result<P4Info, P4InfoError> {
    let data = std::fs::read(path).map_err(|source| P4InfoError::Read {
        path: path.to_owned(),
        source,
    })?;
    let binary = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("bin" | "pb" | "binpb")
    );
    let parsed = if binary {
        from_binary(&data)
    } else {
        match std::str::from_utf8(&data) {
            Ok(text) => from_text(text),
            Err(_) => from_binary(&data),
        }
    };
    parsed.map_err(|e| P4InfoError::File {
        path: path.to_owned(),
        source: Box::new(e),
    })
}

/// A key field or action parameter: the parts needed to encode a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldInfo {
    pub id: u32,
    pub name: String,
    pub bitwidth: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchFieldInfo {
    pub field: FieldInfo,
    pub match_type: MatchType,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    pub id: u32,
    pub name: String,
    pub match_fields: Vec<MatchFieldInfo>,
    /// Actions the table may run (entries or default).
    pub action_ids: Vec<u32>,
    pub const_default_action_id: u32,
    pub size: i64,
}

impl TableInfo {
    pub fn match_field(&self, name: &str) -> Result<&MatchFieldInfo, P4InfoError> {
        self.match_fields
            .iter()
            .find(|m| m.field.name == name)
            .ok_or_else(|| P4InfoError::UnknownField {
                table: self.name.clone(),
                field: name.to_owned(),
            })
    }

    pub fn match_field_by_id(&self, id: u32) -> Result<&MatchFieldInfo, P4InfoError> {
        self.match_fields
            .iter()
            .find(|m| m.field.id == id)
            .ok_or_else(|| P4InfoError::UnknownFieldId {
                table: self.name.clone(),
                id,
            })
    }

    /// Entries of tables with ternary, range or optional keys need a priority.
    pub fn needs_priority(&self) -> bool {
        self.match_fields.iter().any(|m| {
            matches!(
                m.match_type,
                MatchType::Ternary | MatchType::Range | MatchType::Optional
            )
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionInfo {
    pub id: u32,
    pub name: String,
    pub params: Vec<FieldInfo>,
}

impl ActionInfo {
    pub fn param(&self, name: &str) -> Result<&FieldInfo, P4InfoError> {
        self.params
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| P4InfoError::UnknownParam {
                action: self.name.clone(),
                param: name.to_owned(),
            })
    }

    pub fn param_by_id(&self, id: u32) -> Result<&FieldInfo, P4InfoError> {
        self.params
            .iter()
            .find(|p| p.id == id)
            .ok_or_else(|| P4InfoError::UnknownParamId {
                action: self.name.clone(),
                id,
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterInfo {
    pub id: u32,
    pub name: String,
    pub size: i64,
    pub unit: cfg::counter_spec::Unit,
}

/// A `@controller_header` (`packet_in` / `packet_out`) and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketMetadataInfo {
    pub id: u32,
    pub name: String,
    pub metadata: Vec<FieldInfo>,
}

impl PacketMetadataInfo {
    pub fn field(&self, name: &str) -> Result<&FieldInfo, P4InfoError> {
        self.metadata
            .iter()
            .find(|m| m.name == name)
            .ok_or_else(|| P4InfoError::UnknownParam {
                action: self.name.clone(),
                param: name.to_owned(),
            })
    }
}

/// One kind of P4Info object, found by fully qualified name, alias or id.
#[derive(Debug, Clone)]
struct Named<T> {
    kind: &'static str,
    items: Vec<T>,
    by_name: HashMap<String, usize>,
    by_id: HashMap<u32, usize>,
}

impl<T> Named<T> {
    fn build<'a>(
        kind: &'static str,
        items: impl IntoIterator<Item = (Option<&'a cfg::Preamble>, T)>,
    ) -> Result<Self, P4InfoError> {
        let mut named = Named {
            kind,
            items: Vec::new(),
            by_name: HashMap::new(),
            by_id: HashMap::new(),
        };
        let mut aliases = Vec::new();
        for (preamble, item) in items {
            let preamble = preamble.cloned().unwrap_or_default();
            let i = named.items.len();
            named.items.push(item);
            if named.by_name.insert(preamble.name.clone(), i).is_some()
                || named.by_id.insert(preamble.id, i).is_some()
            {
                return Err(P4InfoError::Duplicate {
                    kind,
                    name: preamble.name,
                });
            }
            if !preamble.alias.is_empty() && preamble.alias != preamble.name {
                aliases.push((preamble.alias, i));
            }
        }
        // Aliases never shadow a full name.
        for (alias, i) in aliases {
            named.by_name.entry(alias).or_insert(i);
        }
        Ok(named)
    }

    fn get(&self, name: &str) -> Result<&T, P4InfoError> {
        self.by_name
            .get(name)
            .map(|&i| &self.items[i])
            .ok_or_else(|| P4InfoError::Unknown {
                kind: self.kind,
                name: name.to_owned(),
            })
    }

    fn get_id(&self, id: u32) -> Result<&T, P4InfoError> {
        self.by_id
            .get(&id)
            .map(|&i| &self.items[i])
            .ok_or(P4InfoError::UnknownId {
                kind: self.kind,
                id,
            })
    }
}

fn field(id: u32, name: &str, bitwidth: i32) -> FieldInfo {
    FieldInfo {
        id,
        name: name.to_owned(),
        bitwidth: bitwidth.max(0) as u32,
    }
}

/// A P4Info with its objects resolvable by name and id.
#[derive(Debug, Clone)]
pub struct P4InfoIndex {
    info: P4Info,
    tables: Named<TableInfo>,
    actions: Named<ActionInfo>,
    counters: Named<CounterInfo>,
    packet_metadata: Named<PacketMetadataInfo>,
}

impl P4InfoIndex {
    pub fn new(info: P4Info) -> Result<Self, P4InfoError> {
        let tables = Named::build(
            "table",
            info.tables.iter().map(|t| {
                let p = t.preamble.as_ref();
                let table = TableInfo {
                    id: p.map_or(0, |p| p.id),
                    name: p.map_or_else(String::new, |p| p.name.clone()),
                    match_fields: t
                        .match_fields
                        .iter()
                        .map(|m| MatchFieldInfo {
                            field: field(m.id, &m.name, m.bitwidth),
                            match_type: match m.r#match {
                                Some(cfg::match_field::Match::MatchType(k)) => {
                                    MatchType::try_from(k).unwrap_or(MatchType::Unspecified)
                                }
                                _ => MatchType::Unspecified,
                            },
                        })
                        .collect(),
                    action_ids: t.action_refs.iter().map(|a| a.id).collect(),
                    const_default_action_id: t.const_default_action_id,
                    size: t.size,
                };
                (p, table)
            }),
        )?;
        let actions = Named::build(
            "action",
            info.actions.iter().map(|a| {
                let p = a.preamble.as_ref();
                let action = ActionInfo {
                    id: p.map_or(0, |p| p.id),
                    name: p.map_or_else(String::new, |p| p.name.clone()),
                    params: a
                        .params
                        .iter()
                        .map(|x| field(x.id, &x.name, x.bitwidth))
                        .collect(),
                };
                (p, action)
            }),
        )?;
        let counters = Named::build(
            "counter",
            info.counters.iter().map(|c| {
                let p = c.preamble.as_ref();
                let counter = CounterInfo {
                    id: p.map_or(0, |p| p.id),
                    name: p.map_or_else(String::new, |p| p.name.clone()),
                    size: c.size,
                    unit: c
                        .spec
                        .as_ref()
                        .and_then(|s| cfg::counter_spec::Unit::try_from(s.unit).ok())
                        .unwrap_or(cfg::counter_spec::Unit::Unspecified),
                };
                (p, counter)
            }),
        )?;
        let packet_metadata = Named::build(
            "controller packet metadata",
            info.controller_packet_metadata.iter().map(|c| {
                let p = c.preamble.as_ref();
                let cpm = PacketMetadataInfo {
                    id: p.map_or(0, |p| p.id),
                    name: p.map_or_else(String::new, |p| p.name.clone()),
                    metadata: c
                        .metadata
                        .iter()
                        .map(|m| field(m.id, &m.name, m.bitwidth))
                        .collect(),
                };
                (p, cpm)
            }),
        )?;
        Ok(P4InfoIndex {
            info,
            tables,
            actions,
            counters,
            packet_metadata,
        })
    }

    pub fn p4info(&self) -> &P4Info {
        &self.info
    }

    pub fn table(&self, name: &str) -> Result<&TableInfo, P4InfoError> {
        self.tables.get(name)
    }

    pub fn table_by_id(&self, id: u32) -> Result<&TableInfo, P4InfoError> {
        self.tables.get_id(id)
    }

    pub fn tables(&self) -> &[TableInfo] {
        &self.tables.items
    }

    pub fn action(&self, name: &str) -> Result<&ActionInfo, P4InfoError> {
        self.actions.get(name)
    }

    pub fn action_by_id(&self, id: u32) -> Result<&ActionInfo, P4InfoError> {
        self.actions.get_id(id)
    }

    pub fn counter(&self, name: &str) -> Result<&CounterInfo, P4InfoError> {
        self.counters.get(name)
    }

    pub fn counter_by_id(&self, id: u32) -> Result<&CounterInfo, P4InfoError> {
        self.counters.get_id(id)
    }

    /// `packet_in` or `packet_out`.
    pub fn packet_metadata(&self, name: &str) -> Result<&PacketMetadataInfo, P4InfoError> {
        self.packet_metadata.get(name)
    }

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

    /// A table entry from names: key fields (don't-care fields left out),
    /// the action and its parameters. Checks that the action belongs to the
    /// table and every value fits its field.
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
                source,
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
        source,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape p4c gives a v1model program's P4Info, reduced to what the
    /// tests touch.
    const SAMPLE: &str = r#"
pkg_info {
  arch: "v1model"
}
tables {
  preamble {
    id: 33574068
    name: "SrIntIngress.ipv4_lpm"
    alias: "ipv4_lpm"
  }
  match_fields {
    id: 1
    name: "hdr.ipv4.dst_addr"
    bitwidth: 32
    match_type: LPM
  }
  action_refs {
    id: 16799317
  }
  action_refs {
    id: 16805608
    annotations: "@defaultonly"
    scope: DEFAULT_ONLY
  }
  size: 1024
}
actions {
  preamble {
    id: 16799317
    name: "SrIntIngress.ipv4_forward"
    alias: "ipv4_forward"
  }
  params {
    id: 1
    name: "dst_mac"
    bitwidth: 48
  }
  params {
    id: 2
    name: "port"
    bitwidth: 9
  }
}
actions {
  preamble {
    id: 16805608
    name: "SrIntIngress.drop"
    alias: "drop"
  }
}
counters {
  preamble {
    id: 302003525
    name: "SrIntIngress.drop_counter"
    alias: "drop_counter"
  }
  spec {
    unit: BOTH
  }
  size: 8
}
controller_packet_metadata {
  preamble {
    id: 67146229
    name: "packet_in"
    alias: "packet_in"
    annotations: "@controller_header(\"packet_in\")"
  }
  metadata {
    id: 1
    name: "ingress_port"
    bitwidth: 16
  }
}
type_info {
}
"#;

    fn index() -> P4InfoIndex {
        P4InfoIndex::new(from_text(SAMPLE).unwrap()).unwrap()
    }

    #[test]
    fn text_and_binary_forms_agree() {
        let info = from_text(SAMPLE).unwrap();
        assert_eq!(info.tables[0].size, 1024);
        assert_eq!(from_binary(&info.encode_to_vec()).unwrap(), info);
        assert_eq!(from_text(&to_text(&info)).unwrap(), info);
    }

    #[test]
    fn text_errors_are_reported() {
        let e = from_text("tables { preamble { idd: 1 } }").unwrap_err();
        assert!(e.to_string().contains("idd"), "{e}");
    }

    #[test]
    fn resolves_names_and_aliases() {
        let ix = index();
        let t = ix.table("SrIntIngress.ipv4_lpm").unwrap();
        assert_eq!(t.id, 33574068);
        assert_eq!(ix.table("ipv4_lpm").unwrap().id, t.id);
        assert_eq!(
            t.match_field("hdr.ipv4.dst_addr").unwrap().field.bitwidth,
            32
        );
        assert_eq!(ix.counter("SrIntIngress.drop_counter").unwrap().size, 8);
        assert_eq!(ix.packet_metadata("packet_in").unwrap().metadata[0].id, 1);
        let e = ix.table("SrIntIngress.generator").unwrap_err();
        assert_eq!(
            e.to_string(),
            "P4Info has no table named \"SrIntIngress.generator\""
        );
    }

    #[test]
    fn builds_entries_with_canonical_values() {
        let ix = index();
        let e = ix
            .table_entry(
                "SrIntIngress.ipv4_lpm",
                &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 1, 0], 24))],
                "SrIntIngress.ipv4_forward",
                &[
                    ("port", &[0, 0, 0, 2][..]),
                    ("dst_mac", &[0, 0, 0, 0, 0, 0x0a, 0, 1, 1][..]),
                ],
            )
            .unwrap();
        assert_eq!(
            ix.describe_entry(&e),
            "SrIntIngress.ipv4_lpm hdr.ipv4.dst_addr=0x0a000100/24 -> \
             SrIntIngress.ipv4_forward(dst_mac=0x0a000101, port=0x02)"
        );
    }

    #[test]
    fn entry_errors_name_the_culprit() {
        let ix = index();
        let lpm = |v: Vec<u8>, l| [("hdr.ipv4.dst_addr", Match::Lpm(v, l))];
        let fwd = [("dst_mac", &[1u8][..]), ("port", &[1u8][..])];
        let err = |m: &[(&str, Match)], a: &str, p: &[(&str, &[u8])]| {
            ix.table_entry("SrIntIngress.ipv4_lpm", m, a, p)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(
                &lpm(vec![10, 0, 1, 1], 24),
                "SrIntIngress.ipv4_forward",
                &fwd
            ),
            "table SrIntIngress.ipv4_lpm field hdr.ipv4.dst_addr: \
             value 0x0a000101 has bits set beyond its /24 prefix"
        );
        assert_eq!(
            err(
                &lpm(vec![10, 0, 1, 1], 32),
                "SrIntIngress.ipv4_forward",
                &[("dst_mac", &[1u8][..]), ("port", &[2, 0][..])]
            ),
            "action SrIntIngress.ipv4_forward parameter port: \
             value 0x0200 needs 10 bits, the field has 9"
        );
        assert_eq!(
            err(
                &lpm(vec![1], 32),
                "SrIntIngress.ipv4_forward",
                &[("dst_mac", &[1u8][..])]
            ),
            "action SrIntIngress.ipv4_forward: parameter port not given"
        );
        assert_eq!(
            err(
                &[("hdr.ipv4.dst_addr", Match::Exact(vec![1]))],
                "SrIntIngress.ipv4_forward",
                &fwd
            ),
            "table SrIntIngress.ipv4_lpm: field hdr.ipv4.dst_addr is Lpm, not Exact"
        );
        assert_eq!(
            err(
                &[("hdr.ipv4.src_addr", Match::Exact(vec![1]))],
                "SrIntIngress.drop",
                &[]
            ),
            "table SrIntIngress.ipv4_lpm: no match field named \"hdr.ipv4.src_addr\""
        );
        assert!(ix
            .table_entry(
                "SrIntIngress.ipv4_lpm",
                &lpm(vec![1], 32),
                "SrIntIngress.nope",
                &[]
            )
            .is_err());
    }

    #[test]
    fn duplicate_names_are_rejected() {
        let mut info = from_text(SAMPLE).unwrap();
        let t = info.tables[0].clone();
        info.tables.push(t);
        let e = P4InfoIndex::new(info).unwrap_err();
        assert!(e.to_string().contains("two tables"), "{e}");
    }
}
