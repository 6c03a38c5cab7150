//! The Read RPC: table entries and counters as P4Runtime entities.
//!
//! Reads need no arbitration, so any client can ask for anything: a request's
//! work is bounded before anything is sent. Identical filters count once;
//! at most [`MAX_FILTERS`] distinct ones and [`MAX_ENTRIES`] entries (counted
//! before the action and priority filters narrow them) are served, beyond
//! that the request fails with `RESOURCE_EXHAUSTED`. The answer streams as
//! `ReadResponse`s of about [`MAX_RESPONSE_BYTES`], each built when gRPC flow
//! control takes the previous one, so the switch holds one filter's entries
//! at a time, not the whole answer.

use super::Service;
use crate::p4info_map;
use crate::switch::SwitchCore;
use crate::tables::{NamedEntry, NamedMatch, Tables};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema::{self, CounterSchema, TableSchema};
use prost::Message;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use tonic::Status;

/// Distinct filter entities per request (a full dump needs two).
pub const MAX_FILTERS: usize = 1024;
/// Entries per request: 16 times everything the program can hold (three
/// tables of 1024 entries, their default entries, 1032 counter cells).
pub const MAX_ENTRIES: usize = 1 << 16;
/// A response is closed once it holds this many encoded bytes (one entity
/// more at most).
pub const MAX_RESPONSE_BYTES: usize = 64 << 10;

/// What one filter entity selects.
enum Selection {
    Tables {
        tables: Vec<&'static TableSchema>,
        defaults: bool,
        /// The filter's key, canonical.
        key: Option<Vec<NamedMatch>>,
        action: Option<ActionFilter>,
        priority: i32,
    },
    /// Counter cells: (counter, its id, indices).
    Counters(Vec<(&'static CounterSchema, u32, std::ops::Range<usize>)>),
}

impl Selection {
    /// How many entries it yields at most.
    fn bound(&self, tables: &Tables) -> usize {
        match self {
            Selection::Tables {
                tables: ts,
                defaults,
                key,
                ..
            } => ts
                .iter()
                .map(|t| match (defaults, key) {
                    (true, _) | (false, Some(_)) => 1,
                    (false, None) => tables.entries(t.name).len(),
                })
                .sum(),
            Selection::Counters(cells) => cells.iter().map(|(_, _, i)| i.len()).sum(),
        }
    }
}

/// Resolves a request's filters, refusing more work than the bounds allow.
fn plan(
    index: &P4InfoIndex,
    tables: &Tables,
    filters: &[p4::Entity],
) -> Result<Vec<Selection>, Status> {
    let mut seen = HashSet::new();
    let mut plan = Vec::new();
    let mut total = 0usize;
    for f in filters {
        if !seen.insert(f.encode_to_vec()) {
            continue;
        }
        if seen.len() > MAX_FILTERS {
            return Err(Status::resource_exhausted(format!(
                "read request has more than {MAX_FILTERS} distinct entities"
            )));
        }
        let s = select(index, f)?;
        total += s.bound(tables);
        if total > MAX_ENTRIES {
            return Err(Status::resource_exhausted(format!(
                "read request selects more than {MAX_ENTRIES} entries: use fewer or narrower filters"
            )));
        }
        plan.push(s);
    }
    Ok(plan)
}

fn select(index: &P4InfoIndex, f: &p4::Entity) -> Result<Selection, Status> {
    match &f.entity {
        Some(p4::entity::Entity::TableEntry(t)) => select_tables(index, t),
        Some(p4::entity::Entity::CounterEntry(c)) => select_counter(index, c),
        _ => Err(Status::unimplemented(
            "only table entries and counters can be read",
        )),
    }
}

fn select_tables(index: &P4InfoIndex, filter: &p4::TableEntry) -> Result<Selection, Status> {
    let tables = if filter.table_id == 0 {
        schema::TABLES.iter().collect()
    } else {
        let t = index
            .table_by_id(filter.table_id)
            .map_err(|e| Status::not_found(e.to_string()))?;
        vec![schema::table(&t.name)
            .ok_or_else(|| Status::not_found(format!("no table {}", t.name)))?]
    };
    if filter.is_default_action && !filter.r#match.is_empty() {
        return Err(Status::invalid_argument(
            "a default entry has no key: leave the match out",
        ));
    }
    let parsed = if filter.r#match.is_empty() && filter.action.is_none() {
        None
    } else if filter.table_id == 0 {
        return Err(Status::invalid_argument(
            "a key or action filter needs a table id",
        ));
    } else {
        Some(p4info_map::filter_from_p4(index, filter).map_err(Status::invalid_argument)?)
    };
    let key = parsed
        .as_ref()
        .filter(|_| !filter.r#match.is_empty())
        .map(|e| e.matches.clone());
    let action = parsed
        .filter(|_| filter.action.is_some())
        .map(|e| ActionFilter {
            action: e.action,
            params: e.params,
        });
    Ok(Selection::Tables {
        tables,
        defaults: filter.is_default_action,
        key,
        action,
        priority: filter.priority,
    })
}

fn select_counter(index: &P4InfoIndex, filter: &p4::CounterEntry) -> Result<Selection, Status> {
    let counters: Vec<&'static CounterSchema> = if filter.counter_id == 0 {
        schema::COUNTERS.iter().collect()
    } else {
        let name = &index
            .counter_by_id(filter.counter_id)
            .map_err(|e| Status::not_found(e.to_string()))?
            .name;
        vec![schema::COUNTERS
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| Status::not_found(format!("no counter {name}")))?]
    };
    let cells = counters
        .into_iter()
        .map(|counter| {
            let id = index
                .counter(counter.name)
                .map_err(|e| Status::internal(e.to_string()))?
                .id;
            let size = counter.size as usize;
            let indices = match filter.index {
                Some(p4::Index { index }) => {
                    let i = usize::try_from(index)
                        .ok()
                        .filter(|i| *i < size)
                        .ok_or_else(|| {
                            Status::out_of_range(format!(
                                "{}: index {index} >= size {size}",
                                counter.name
                            ))
                        })?;
                    i..i + 1
                }
                None => 0..size,
            };
            Ok((counter, id, indices))
        })
        .collect::<Result<_, Status>>()?;
    Ok(Selection::Counters(cells))
}

/// Builds a planned read's responses one at a time.
pub(super) struct Cursor {
    core: Arc<SwitchCore>,
    index: Arc<P4InfoIndex>,
    tables: Arc<Tables>,
    plan: VecDeque<Selection>,
    /// Entities of the selection being sent.
    pending: VecDeque<p4::Entity>,
    sent_any: bool,
    failed: bool,
}

impl Service {
    /// Plans a read of `filters` against the tables as they are now.
    pub(super) fn read_cursor(&self, filters: &[p4::Entity]) -> Result<Cursor, Status> {
        let index = self.index();
        let tables = arc_swap::Guard::into_inner(self.core.tables());
        let plan = plan(&index, &tables, filters)?;
        Ok(Cursor {
            core: self.core.clone(),
            index,
            tables,
            plan: plan.into(),
            pending: VecDeque::new(),
            sent_any: false,
            failed: false,
        })
    }
}

impl Iterator for Cursor {
    type Item = Result<p4::ReadResponse, Status>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let mut entities = Vec::new();
        let mut bytes = 0;
        while bytes < MAX_RESPONSE_BYTES {
            if let Some(e) = self.pending.pop_front() {
                // The entity, its length and its field tag.
                let len = e.encoded_len();
                bytes += len + prost::length_delimiter_len(len) + 1;
                entities.push(e);
            } else if let Some(s) = self.plan.pop_front() {
                if let Err(e) = self.expand(s) {
                    self.failed = true;
                    return Some(Err(e));
                }
            } else {
                break;
            }
        }
        if entities.is_empty() && self.sent_any {
            return None;
        }
        self.sent_any = true;
        Some(Ok(p4::ReadResponse { entities }))
    }
}

impl Cursor {
    /// Queues the entities one selection yields.
    fn expand(&mut self, s: Selection) -> Result<(), Status> {
        match s {
            Selection::Tables {
                tables,
                defaults,
                key,
                action,
                priority,
            } => {
                // Entries here have no priority (no ternary or range keys).
                if priority != 0 {
                    return Ok(());
                }
                for t in tables {
                    let named: Vec<NamedEntry> = if defaults {
                        vec![default_entry(&self.tables, t)]
                    } else {
                        self.tables
                            .entries(t.name)
                            .iter()
                            .map(|e| e.to_named())
                            .filter(|n| !n.is_default)
                            .collect()
                    };
                    for n in named {
                        if key.as_ref().is_some_and(|k| *k != n.matches)
                            || action.as_ref().is_some_and(|a| !a.matches(&n))
                        {
                            continue;
                        }
                        let entry =
                            p4info_map::entry_to_p4(&self.index, &n).map_err(Status::internal)?;
                        self.pending.push_back(p4::Entity {
                            entity: Some(p4::entity::Entity::TableEntry(entry)),
                        });
                    }
                }
            }
            Selection::Counters(cells) => {
                for (counter, id, indices) in cells {
                    for i in indices {
                        let (packets, bytes) =
                            self.core.counters.read(counter.name, i).unwrap_or((0, 0));
                        self.pending.push_back(p4::Entity {
                            entity: Some(p4::entity::Entity::CounterEntry(p4::CounterEntry {
                                counter_id: id,
                                index: Some(p4::Index { index: i as i64 }),
                                data: Some(p4::CounterData {
                                    byte_count: bytes as i64,
                                    packet_count: packets as i64,
                                }),
                            })),
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

/// A table's default entry: `switch_config`'s as the controller set it,
/// the others' as the program declares them (they cannot be modified).
fn default_entry(tables: &Tables, t: &TableSchema) -> NamedEntry {
    tables
        .entries(t.name)
        .iter()
        .map(|e| e.to_named())
        .find(|n| n.is_default)
        .unwrap_or_else(|| NamedEntry {
            table: t.name.to_string(),
            is_default: true,
            matches: Vec::new(),
            action: t.default_action.to_string(),
            params: Vec::new(),
        })
}

/// A read filter's action, by name, with its parameters if it gave some.
struct ActionFilter {
    action: String,
    params: Vec<(String, Vec<u8>)>,
}

impl ActionFilter {
    /// Whether `entry` runs this action (with these parameters, if any).
    fn matches(&self, entry: &NamedEntry) -> bool {
        if self.action != entry.action {
            return false;
        }
        self.params.is_empty() || {
            let mut want = self.params.clone();
            let mut have = entry.params.clone();
            want.sort();
            have.sort();
            want == have
        }
    }
}
