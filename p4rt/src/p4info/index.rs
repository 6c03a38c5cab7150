//! [`P4InfoIndex`]: every table, action, counter and controller header of a
//! P4Info, found by fully qualified name, alias or id.

use super::{MatchType, P4Info, P4InfoError};
use crate::proto::p4::config::v1 as cfg;
use std::collections::HashMap;

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
}
