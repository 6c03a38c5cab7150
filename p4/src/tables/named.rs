//! Conversion of typed entries from and to name-based entries (P4Runtime
//! bytestring values after id resolution).

use super::store::prefix_mask;
use super::{
    bytes_to_u128, invalid, Entry, GeneratorAction, Ipv4Action, NamedEntry, NamedMatch, Route,
    SinkAction, TableError,
};
use intpath_p4rt::bytes;
use intpath_sr_int::schema::{self, Field};

/// Checked access to the parameters of a name-based entry.
struct Params<'a> {
    action: &'static schema::ActionSchema,
    given: &'a [(String, Vec<u8>)],
}

impl<'a> Params<'a> {
    fn new(entry: &'a NamedEntry) -> Result<Self, TableError> {
        let action = schema::action(&entry.action)
            .ok_or_else(|| invalid(format!("unknown action {}", entry.action)))?;
        for (name, _) in &entry.params {
            if !action.params.iter().any(|p| p.name == name) {
                return Err(invalid(format!(
                    "{}: unknown parameter {name}",
                    action.name
                )));
            }
        }
        if entry.params.len() != action.params.len() {
            return Err(invalid(format!(
                "{}: expects {} parameters, got {}",
                action.name,
                action.params.len(),
                entry.params.len()
            )));
        }
        Ok(Self {
            action,
            given: &entry.params,
        })
    }

    fn field(&self, name: &str) -> &'static Field {
        self.action
            .params
            .iter()
            .find(|p| p.name == name)
            .expect("parameter names come from the schema")
    }

    fn bytes(&self, name: &str) -> Result<&'a [u8], TableError> {
        self.given
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
            .ok_or_else(|| invalid(format!("{}: missing parameter {name}", self.action.name)))
    }

    fn int(&self, name: &str) -> Result<u128, TableError> {
        let f = self.field(name);
        bytes_to_u128(
            &format!("{}.{name}", self.action.name),
            self.bytes(name)?,
            f.bitwidth,
        )
    }
}

/// Labels of `push_route`, in sr_int's label-stack encoding.
fn route_from_param(num_labels: u128, value: &[u8]) -> Result<Route, TableError> {
    let what = "push_route.labels";
    bytes::canonical(value, schema::LABELS_BITS).map_err(|e| invalid(format!("{what}: {e}")))?;
    let labels =
        intpath_sr_int::labels_from_stack(value).map_err(|e| invalid(format!("{what}: {e}")))?;
    Ok(Route::new(num_labels as u8, labels))
}

fn route_to_param(route: &Route) -> Vec<u8> {
    let stack = intpath_sr_int::label_stack(&route.labels).expect("a route holds MAX_HOPS slots");
    bytes::canonical(&stack, schema::LABELS_BITS).expect("a full stack fits LABELS_BITS")
}

fn exact_key(entry: &NamedEntry, t: &schema::TableSchema) -> Result<u16, TableError> {
    let key = &t.keys[0];
    let m = single_match(entry, t)?;
    if m.prefix_len.is_some() {
        return Err(invalid(format!(
            "{}: {} is an exact match",
            t.name, key.field.name
        )));
    }
    Ok(bytes_to_u128(key.field.name, &m.value, key.field.bitwidth)? as u16)
}

fn single_match<'a>(
    entry: &'a NamedEntry,
    t: &schema::TableSchema,
) -> Result<&'a NamedMatch, TableError> {
    let key = &t.keys[0];
    match entry.matches.as_slice() {
        [m] if m.field == key.field.name => Ok(m),
        [m] => Err(invalid(format!(
            "{}: unknown key field {}",
            t.name, m.field
        ))),
        ms => Err(invalid(format!(
            "{}: expects 1 key field, got {}",
            t.name,
            ms.len()
        ))),
    }
}

impl Entry {
    /// Checks a name-based entry against the schema and types it.
    pub fn from_named(e: &NamedEntry) -> Result<Self, TableError> {
        let t =
            schema::table(&e.table).ok_or_else(|| invalid(format!("unknown table {}", e.table)))?;
        if !t.actions.contains(&e.action.as_str()) {
            return Err(invalid(format!(
                "{}: action {} not allowed",
                t.name, e.action
            )));
        }
        if e.is_default != (t.name == schema::SWITCH_CONFIG) {
            return Err(invalid(if e.is_default {
                format!("{}: the default action is constant", t.name)
            } else {
                format!("{}: only the default action can be written", t.name)
            }));
        }
        if t.default_only.contains(&e.action.as_str()) && !e.is_default {
            return Err(invalid(format!("{}: {} is default-only", t.name, e.action)));
        }
        let p = Params::new(e)?;
        Ok(match t.name {
            schema::SWITCH_CONFIG => Entry::SwitchConfigDefault(p.int("switch_id")? as u32),
            schema::IPV4_LPM => {
                let m = single_match(e, t)?;
                let addr = bytes_to_u128("hdr.ipv4.dst_addr", &m.value, 32)? as u32;
                let len = m
                    .prefix_len
                    .ok_or_else(|| invalid(format!("{}: LPM key needs a prefix length", t.name)))?;
                if len > 32 {
                    return Err(invalid(format!("{}: prefix length {len} > 32", t.name)));
                }
                let len = len as u8;
                if addr & !prefix_mask(len) != 0 {
                    return Err(invalid(format!(
                        "{}: address has bits set beyond prefix length {len}",
                        t.name
                    )));
                }
                let action = match e.action.as_str() {
                    schema::IPV4_FORWARD => {
                        let mac = p.int("dst_mac")? as u64;
                        let mut dst_mac = [0u8; 6];
                        dst_mac.copy_from_slice(&mac.to_be_bytes()[2..]);
                        Ipv4Action::Forward {
                            dst_mac,
                            port: p.int("port")? as u16,
                        }
                    }
                    schema::DROP => Ipv4Action::Drop,
                    _ => Ipv4Action::NoAction,
                };
                Entry::Ipv4 {
                    addr,
                    prefix_len: len,
                    action,
                }
            }
            schema::GENERATOR => Entry::Generator {
                path_id: exact_key(e, t)?,
                action: match e.action.as_str() {
                    schema::PUSH_ROUTE => GeneratorAction::PushRoute(route_from_param(
                        p.int("num_labels")?,
                        p.bytes("labels")?,
                    )?),
                    _ => GeneratorAction::Drop,
                },
            },
            _ => Entry::Sink {
                path_id: exact_key(e, t)?,
                action: match e.action.as_str() {
                    schema::SINK_TO_COLLECTOR => SinkAction::ToCollector,
                    schema::SINK_TO_CPU => SinkAction::ToCpu,
                    _ => SinkAction::Drop,
                },
            },
        })
    }

    /// The entry by names with canonical bytestrings (P4Runtime reads).
    pub fn to_named(&self) -> NamedEntry {
        let named = |table: &str, is_default, matches, action: &str, params| NamedEntry {
            table: table.to_string(),
            is_default,
            matches,
            action: action.to_string(),
            params,
        };
        let exact = |v: u16| {
            vec![NamedMatch {
                field: "hdr.sr.path_id".into(),
                value: bytes::uint_bytes(v.into()),
                prefix_len: None,
            }]
        };
        let p = |name: &str, v: Vec<u8>| (name.to_string(), v);
        match *self {
            Entry::SwitchConfigDefault(id) => named(
                schema::SWITCH_CONFIG,
                true,
                vec![],
                schema::SET_SWITCH_ID,
                vec![p("switch_id", bytes::uint_bytes(id.into()))],
            ),
            Entry::Ipv4 {
                addr,
                prefix_len,
                action,
            } => {
                let m = vec![NamedMatch {
                    field: "hdr.ipv4.dst_addr".into(),
                    value: bytes::uint_bytes(addr.into()),
                    prefix_len: Some(prefix_len.into()),
                }];
                match action {
                    Ipv4Action::Forward { dst_mac, port } => {
                        let mut mac = [0u8; 8];
                        mac[2..].copy_from_slice(&dst_mac);
                        named(
                            schema::IPV4_LPM,
                            false,
                            m,
                            schema::IPV4_FORWARD,
                            vec![
                                p("dst_mac", bytes::uint_bytes(u64::from_be_bytes(mac).into())),
                                p("port", bytes::uint_bytes(port.into())),
                            ],
                        )
                    }
                    Ipv4Action::Drop => named(schema::IPV4_LPM, false, m, schema::DROP, vec![]),
                    Ipv4Action::NoAction => {
                        named(schema::IPV4_LPM, false, m, schema::NO_ACTION, vec![])
                    }
                }
            }
            Entry::Generator { path_id, action } => match action {
                GeneratorAction::PushRoute(route) => named(
                    schema::GENERATOR,
                    false,
                    exact(path_id),
                    schema::PUSH_ROUTE,
                    vec![
                        p("num_labels", bytes::uint_bytes(route.num_labels().into())),
                        p("labels", route_to_param(&route)),
                    ],
                ),
                GeneratorAction::Drop => named(
                    schema::GENERATOR,
                    false,
                    exact(path_id),
                    schema::DROP,
                    vec![],
                ),
            },
            Entry::Sink { path_id, action } => {
                let a = match action {
                    SinkAction::ToCollector => schema::SINK_TO_COLLECTOR,
                    SinkAction::ToCpu => schema::SINK_TO_CPU,
                    SinkAction::Drop => schema::DROP,
                };
                named(schema::SINK, false, exact(path_id), a, vec![])
            }
        }
    }

    pub fn table_name(&self) -> &'static str {
        match self {
            Entry::SwitchConfigDefault(_) => schema::SWITCH_CONFIG,
            Entry::Ipv4 { .. } => schema::IPV4_LPM,
            Entry::Generator { .. } => schema::GENERATOR,
            Entry::Sink { .. } => schema::SINK,
        }
    }
}
