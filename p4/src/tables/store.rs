//! The typed table store: LPM and exact-match maps, and the writes and
//! reads on them.

use super::{invalid, Entry, GeneratorAction, Ipv4Action, SinkAction, TableError, WriteOp};
use intpath_sr_int::schema;
use rustc_hash::FxHashMap;

/// Longest-prefix match over IPv4 addresses: one hash map per prefix length,
/// probed from the longest non-empty length down.
#[derive(Debug, Clone, Default)]
pub struct Lpm {
    by_len: Vec<FxHashMap<u32, Ipv4Action>>,
    /// Bit `l` set when prefix length `l` has entries.
    lengths: u64,
    count: usize,
}

pub(super) fn prefix_mask(len: u8) -> u32 {
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
