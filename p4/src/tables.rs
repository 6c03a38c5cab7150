//! The match-action tables of `sr_int.p4`, typed for fast lookups, and their
//! translation from and to name-based entries (bytestring values), which is how
//! P4Runtime (after id resolution) and the test vectors speak.

use crate::schema::{self, Field};
use intpath_core::wire::MAX_HOPS;
use intpath_p4rt::bytes;
use rustc_hash::FxHashMap;

/// Why an entry cannot be applied; maps onto P4Runtime status codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("entry already exists in {0}")]
    AlreadyExists(&'static str),
    #[error("no such entry in {0}")]
    NotFound(&'static str),
    #[error("{table} is full ({size} entries)")]
    Full { table: &'static str, size: u64 },
}

fn invalid(msg: impl Into<String>) -> TableError {
    TableError::InvalidArgument(msg.into())
}

/// One key field of a name-based entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedMatch {
    pub field: String,
    pub value: Vec<u8>,
    /// Present for LPM fields.
    pub prefix_len: Option<u32>,
}

/// A table entry by names, with P4Runtime bytestring values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedEntry {
    pub table: String,
    pub is_default: bool,
    pub matches: Vec<NamedMatch>,
    pub action: String,
    pub params: Vec<(String, Vec<u8>)>,
}

/// Reads a P4Runtime bytestring that must fit `width` bits (an empty one
/// is refused, as P4Runtime requires and our client does).
pub fn bytes_to_u128(what: &str, value: &[u8], width: u32) -> Result<u128, TableError> {
    bytes::canonical(value, width)
        .and_then(|c| bytes::decode_uint(&c))
        .map_err(|e| invalid(format!("{what}: {e}")))
}

/// `push_route`'s parameters: a label count and MAX_HOPS label slots.
///
/// The count is an 8-bit parameter the table accepts as is; a count over
/// MAX_HOPS makes the probe malformed when the route is pushed (as in the
/// P4 program, which cannot refuse an entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    num_labels: u8,
    labels: [u16; MAX_HOPS],
}

impl Route {
    pub fn new(num_labels: u8, labels: [u16; MAX_HOPS]) -> Self {
        Self { num_labels, labels }
    }

    /// From a label list of at most MAX_HOPS labels.
    pub fn from_labels(labels: &[u16]) -> Option<Self> {
        let mut slots = [0; MAX_HOPS];
        slots.get_mut(..labels.len())?.copy_from_slice(labels);
        Some(Self::new(labels.len() as u8, slots))
    }

    pub fn num_labels(&self) -> u8 {
        self.num_labels
    }

    /// The labels the route pushes, `None` when the count exceeds MAX_HOPS.
    pub fn labels(&self) -> Option<&[u16]> {
        self.labels.get(..usize::from(self.num_labels))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv4Action {
    Forward { dst_mac: [u8; 6], port: u16 },
    Drop,
    NoAction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratorAction {
    PushRoute(Route),
    Drop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkAction {
    ToCollector,
    ToCpu,
    Drop,
}

/// A typed table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `switch_config`'s default action `set_switch_id(switch_id)`.
    SwitchConfigDefault(u32),
    Ipv4 {
        addr: u32,
        prefix_len: u8,
        action: Ipv4Action,
    },
    Generator {
        path_id: u16,
        action: GeneratorAction,
    },
    Sink {
        path_id: u16,
        action: SinkAction,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOp {
    Insert,
    Modify,
    Delete,
}

/// Longest-prefix match over IPv4 addresses: one hash map per prefix length,
/// probed from the longest non-empty length down.
#[derive(Debug, Clone, Default)]
pub struct Lpm {
    by_len: Vec<FxHashMap<u32, Ipv4Action>>,
    /// Bit `l` set when prefix length `l` has entries.
    lengths: u64,
    count: usize,
}

fn prefix_mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

impl Lpm {
    fn new() -> Self {
        Self {
            by_len: vec![FxHashMap::default(); 33],
            lengths: 0,
            count: 0,
        }
    }

    pub fn lookup(&self, addr: u32) -> Option<&Ipv4Action> {
        let mut lengths = self.lengths;
        while lengths != 0 {
            let len = 63 - lengths.leading_zeros() as u8;
            if let Some(a) = self.by_len[usize::from(len)].get(&(addr & prefix_mask(len))) {
                return Some(a);
            }
            lengths &= !(1u64 << len);
        }
        None
    }

    fn entries(&self) -> impl Iterator<Item = (u32, u8, Ipv4Action)> + '_ {
        self.by_len
            .iter()
            .enumerate()
            .rev()
            .flat_map(|(len, m)| m.iter().map(move |(a, act)| (*a, len as u8, *act)))
    }
}

/// Everything the control plane writes: the state `sr_int.p4` reads.
#[derive(Debug, Clone)]
pub struct Tables {
    /// Set by `switch_config`'s default action `set_switch_id`.
    pub switch_id: u32,
    pub ipv4_lpm: Lpm,
    pub generator: FxHashMap<u16, GeneratorAction>,
    pub sink: FxHashMap<u16, SinkAction>,
}

impl Default for Tables {
    fn default() -> Self {
        Self {
            switch_id: 0,
            ipv4_lpm: Lpm::new(),
            generator: FxHashMap::default(),
            sink: FxHashMap::default(),
        }
    }
}

/// Insert/modify/delete on one exact-key map; `occupancy` is the whole
/// table's entry count (an LPM table spreads over several maps).
fn exact_write<K: std::hash::Hash + Eq, V>(
    map: &mut FxHashMap<K, V>,
    table: &'static str,
    occupancy: usize,
    op: WriteOp,
    key: K,
    value: V,
) -> Result<(), TableError> {
    let size = schema::table(table).map_or(u64::MAX, |t| t.size);
    match op {
        WriteOp::Insert if map.contains_key(&key) => Err(TableError::AlreadyExists(table)),
        WriteOp::Insert if occupancy as u64 >= size => Err(TableError::Full { table, size }),
        WriteOp::Modify if !map.contains_key(&key) => Err(TableError::NotFound(table)),
        WriteOp::Delete => map
            .remove(&key)
            .map(|_| ())
            .ok_or(TableError::NotFound(table)),
        _ => {
            map.insert(key, value);
            Ok(())
        }
    }
}

impl Tables {
    pub fn apply(&mut self, op: WriteOp, entry: Entry) -> Result<(), TableError> {
        match entry {
            Entry::SwitchConfigDefault(switch_id) => {
                if op != WriteOp::Modify {
                    return Err(invalid(format!(
                        "{}: the default action can only be modified",
                        schema::SWITCH_CONFIG
                    )));
                }
                self.switch_id = switch_id;
                Ok(())
            }
            Entry::Ipv4 {
                addr,
                prefix_len,
                action,
            } => {
                let lpm = &mut self.ipv4_lpm;
                let map = &mut lpm.by_len[usize::from(prefix_len)];
                let before = map.len();
                let r = exact_write(map, schema::IPV4_LPM, lpm.count, op, addr, action);
                lpm.count = lpm.count + map.len() - before;
                if map.is_empty() {
                    lpm.lengths &= !(1u64 << prefix_len);
                } else {
                    lpm.lengths |= 1u64 << prefix_len;
                }
                r
            }
            Entry::Generator { path_id, action } => {
                let n = self.generator.len();
                exact_write(
                    &mut self.generator,
                    schema::GENERATOR,
                    n,
                    op,
                    path_id,
                    action,
                )
            }
            Entry::Sink { path_id, action } => {
                let n = self.sink.len();
                exact_write(&mut self.sink, schema::SINK, n, op, path_id, action)
            }
        }
    }

    /// Every entry of `table` (for P4Runtime reads), the default action of
    /// `switch_config` included.
    pub fn entries(&self, table: &str) -> Vec<Entry> {
        match table {
            schema::SWITCH_CONFIG => vec![Entry::SwitchConfigDefault(self.switch_id)],
            schema::IPV4_LPM => self
                .ipv4_lpm
                .entries()
                .map(|(addr, prefix_len, action)| Entry::Ipv4 {
                    addr,
                    prefix_len,
                    action,
                })
                .collect(),
            schema::GENERATOR => self
                .generator
                .iter()
                .map(|(k, a)| Entry::Generator {
                    path_id: *k,
                    action: *a,
                })
                .collect(),
            schema::SINK => self
                .sink
                .iter()
                .map(|(k, a)| Entry::Sink {
                    path_id: *k,
                    action: *a,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn lpm(addr: u32, len: u32, port: u16) -> NamedEntry {
        NamedEntry {
            table: schema::IPV4_LPM.into(),
            is_default: false,
            matches: vec![NamedMatch {
                field: "hdr.ipv4.dst_addr".into(),
                value: addr.to_be_bytes().to_vec(),
                prefix_len: Some(len),
            }],
            action: schema::IPV4_FORWARD.into(),
            params: vec![
                ("dst_mac".into(), vec![0, 0, 0, 0, 0, 9]),
                ("port".into(), port.to_be_bytes().to_vec()),
            ],
        }
    }

    #[test]
    fn longest_prefix_wins_and_roundtrips() {
        let mut t = Tables::default();
        for e in [
            lpm(0x0a00_0000, 8, 1),
            lpm(0x0a00_0100, 24, 2),
            lpm(0, 0, 3),
        ] {
            t.apply(WriteOp::Insert, Entry::from_named(&e).unwrap())
                .unwrap();
        }
        let port = |t: &Tables, a| match t.ipv4_lpm.lookup(a) {
            Some(Ipv4Action::Forward { port, .. }) => *port,
            other => panic!("{other:?}"),
        };
        assert_eq!(port(&t, 0x0a00_0105), 2);
        assert_eq!(port(&t, 0x0a05_0105), 1);
        assert_eq!(port(&t, 0x0b00_0000), 3);
        let e = Entry::from_named(&lpm(0x0a00_0100, 24, 2)).unwrap();
        assert_eq!(
            t.apply(WriteOp::Insert, e),
            Err(TableError::AlreadyExists(schema::IPV4_LPM))
        );
        assert_eq!(Entry::from_named(&e.to_named()).unwrap(), e);
        t.apply(WriteOp::Delete, e).unwrap();
        assert_eq!(port(&t, 0x0a00_0105), 1);
        assert_eq!(t.entries(schema::IPV4_LPM).len(), 2);
        assert!(Entry::from_named(&lpm(0x0a00_0101, 24, 2)).is_err());
        let mut wide = lpm(0x0a00_0100, 24, 2);
        wide.params[1].1 = vec![0x02, 0x00];
        assert!(Entry::from_named(&wide).is_err(), "port over 9 bits");
    }

    #[test]
    fn routes_read_label_zero_from_the_most_significant_bits() {
        let mut labels = vec![0u8; 90];
        labels[..4].copy_from_slice(&[0, 2, 0, 3]);
        let e = NamedEntry {
            table: schema::GENERATOR.into(),
            is_default: false,
            matches: vec![NamedMatch {
                field: "hdr.sr.path_id".into(),
                value: vec![7],
                prefix_len: None,
            }],
            action: schema::PUSH_ROUTE.into(),
            params: vec![("num_labels".into(), vec![2]), ("labels".into(), labels)],
        };
        let typed = Entry::from_named(&e).unwrap();
        match typed {
            Entry::Generator {
                path_id: 7,
                action: GeneratorAction::PushRoute(r),
            } => assert_eq!(r.labels(), Some(&[2, 3][..])),
            other => panic!("{other:?}"),
        }
        assert_eq!(Entry::from_named(&typed.to_named()).unwrap(), typed);
    }
}
