//! Making a device's tables equal a desired set of entries with the fewest
//! writes.
//!
//! A deploy is idempotent and a changed intent touches only what changed
//! because the controller never writes blindly: it reads what the device
//! holds, keys every entry by (table, match, priority) and derives inserts,
//! modifies (same key, other action) and deletes. The same step re-syncs a
//! switch that restarted empty.

use crate::client::{self, Client, ClientError};
use crate::proto::p4::v1::{self as p4, update::Type};
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};

/// Updates that turn the device's state into the desired one, in a safe
/// order: deletes (free capacity), modifies, inserts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncPlan {
    pub updates: Vec<p4::Update>,
    pub inserts: usize,
    pub modifies: usize,
    pub deletes: usize,
    /// Desired entries already present as wanted.
    pub unchanged: usize,
}

impl SyncPlan {
    pub fn is_noop(&self) -> bool {
        self.updates.is_empty()
    }
}

/// Identity of an entry on a device: two entries with the same key cannot
/// coexist, so a different action under the same key is a MODIFY.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct EntryKey {
    table_id: u32,
    is_default: bool,
    priority: i32,
    /// Match fields sorted by id, each protobuf-encoded: values are
    /// canonical bytestrings, so equal keys encode equally.
    matches: Vec<Vec<u8>>,
}

fn key(e: &p4::TableEntry) -> EntryKey {
    let mut matches: Vec<&p4::FieldMatch> = e.r#match.iter().collect();
    matches.sort_by_key(|m| m.field_id);
    EntryKey {
        table_id: e.table_id,
        is_default: e.is_default_action,
        priority: e.priority,
        matches: matches.iter().map(|m| m.encode_to_vec()).collect(),
    }
}

/// The action with parameters in id order, so that devices returning them
/// in another order still compare equal.
fn action_of(e: &p4::TableEntry) -> Option<p4::TableAction> {
    let mut action = e.action.clone()?;
    if let Some(p4::table_action::Type::Action(a)) = &mut action.r#type {
        a.params.sort_by_key(|p| p.param_id);
    }
    Some(action)
}

/// What is written: key, action and the fields we set (not counters or
/// other state the device reports back).
fn writable(e: &p4::TableEntry) -> p4::TableEntry {
    p4::TableEntry {
        table_id: e.table_id,
        r#match: e.r#match.clone(),
        action: e.action.clone(),
        priority: e.priority,
        is_default_action: e.is_default_action,
        ..Default::default()
    }
}

/// The plan from `desired` to `actual`. `actual` holds every entry of the
/// managed tables plus their current default entries; defaults present in
/// `actual` but not desired are left alone (a default cannot be deleted).
/// Duplicate keys in `desired`: the last one wins.
pub fn diff(desired: &[p4::TableEntry], actual: &[p4::TableEntry]) -> SyncPlan {
    let want: BTreeMap<EntryKey, &p4::TableEntry> = desired.iter().map(|e| (key(e), e)).collect();
    let have: BTreeMap<EntryKey, &p4::TableEntry> = actual.iter().map(|e| (key(e), e)).collect();
    let mut plan = SyncPlan::default();
    let entry = |kind: Type, e: &p4::TableEntry| {
        client::update(kind, p4::entity::Entity::TableEntry(writable(e)))
    };
    for (k, e) in &have {
        if !k.is_default && !want.contains_key(k) {
            plan.updates.push(entry(Type::Delete, e));
            plan.deletes += 1;
        }
    }
    let mut inserts = Vec::new();
    for (k, e) in &want {
        match have.get(k) {
            Some(current) if action_of(current) == action_of(e) => plan.unchanged += 1,
            // A default entry always exists: setting it is a MODIFY.
            Some(_) => {
                plan.updates.push(entry(Type::Modify, e));
                plan.modifies += 1;
            }
            None if k.is_default => {
                plan.updates.push(entry(Type::Modify, e));
                plan.modifies += 1;
            }
            None => inserts.push(entry(Type::Insert, e)),
        }
    }
    plan.inserts = inserts.len();
    plan.updates.extend(inserts);
    plan
}

impl Client {
    /// Reads the managed tables (every table a desired entry names, plus
    /// `also`) and their default entries, and returns the plan to reach
    /// `desired`.
    pub async fn plan_sync(
        &self,
        desired: &[p4::TableEntry],
        also: &[u32],
    ) -> Result<SyncPlan, ClientError> {
        let tables: BTreeSet<u32> = desired
            .iter()
            .map(|e| e.table_id)
            .chain(also.iter().copied())
            .collect();
        let mut filters = Vec::new();
        for &table_id in &tables {
            for is_default_action in [false, true] {
                filters.push(client::entity(p4::entity::Entity::TableEntry(
                    p4::TableEntry {
                        table_id,
                        is_default_action,
                        ..Default::default()
                    },
                )));
            }
        }
        let actual: Vec<p4::TableEntry> = self
            .read(filters)
            .await?
            .into_iter()
            .filter_map(|e| match e.entity {
                Some(p4::entity::Entity::TableEntry(t)) => Some(t),
                _ => None,
            })
            .collect();
        Ok(diff(desired, &actual))
    }

    /// Makes the device hold exactly `desired` in the managed tables;
    /// returns what it changed.
    pub async fn sync(
        &self,
        desired: &[p4::TableEntry],
        also: &[u32],
    ) -> Result<SyncPlan, ClientError> {
        let plan = self.plan_sync(desired, also).await?;
        if !plan.is_noop() {
            self.write(plan.updates.clone()).await?;
        }
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p4::field_match::{Exact, FieldMatchType};

    fn entry(table_id: u32, key: u8, action_id: u32, param: u8) -> p4::TableEntry {
        p4::TableEntry {
            table_id,
            r#match: vec![p4::FieldMatch {
                field_id: 1,
                field_match_type: Some(FieldMatchType::Exact(Exact { value: vec![key] })),
            }],
            action: Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::Action(p4::Action {
                    action_id,
                    params: vec![p4::action::Param {
                        param_id: 1,
                        value: vec![param],
                    }],
                })),
            }),
            ..Default::default()
        }
    }

    fn kinds(plan: &SyncPlan) -> Vec<(i32, u8)> {
        plan.updates
            .iter()
            .map(|u| {
                let Some(p4::entity::Entity::TableEntry(t)) =
                    u.entity.as_ref().and_then(|e| e.entity.clone())
                else {
                    panic!("not a table entry")
                };
                let key = match &t.r#match.first().and_then(|m| m.field_match_type.clone()) {
                    Some(FieldMatchType::Exact(e)) => e.value[0],
                    _ => 0,
                };
                (u.r#type, key)
            })
            .collect()
    }

    #[test]
    fn same_state_is_a_noop() {
        let want = vec![entry(1, 1, 10, 1), entry(1, 2, 10, 2)];
        let mut have = want.clone();
        have.reverse();
        have[0].counter_data = Some(p4::CounterData::default());
        let plan = diff(&want, &have);
        assert!(plan.is_noop());
        assert_eq!(plan.unchanged, 2);
    }

    #[test]
    fn minimal_diff_orders_deletes_modifies_inserts() {
        let have = vec![entry(1, 1, 10, 1), entry(1, 2, 10, 2), entry(1, 3, 10, 3)];
        let want = vec![entry(1, 1, 10, 1), entry(1, 2, 10, 9), entry(1, 4, 10, 4)];
        let plan = diff(&want, &have);
        let (i, m, d) = (
            Type::Insert as i32,
            Type::Modify as i32,
            Type::Delete as i32,
        );
        assert_eq!(kinds(&plan), vec![(d, 3), (m, 2), (i, 4)]);
        assert_eq!(
            (plan.inserts, plan.modifies, plan.deletes, plan.unchanged),
            (1, 1, 1, 1)
        );
    }

    #[test]
    fn defaults_are_modified_never_deleted() {
        let mut default = entry(2, 0, 20, 5);
        default.r#match.clear();
        default.is_default_action = true;
        let mut other = default.clone();
        other.action = entry(2, 0, 21, 0).action;
        // Unwanted default: left alone. Wanted and different: modified.
        assert!(diff(&[], std::slice::from_ref(&other)).is_noop());
        let plan = diff(std::slice::from_ref(&default), &[other]);
        assert_eq!(plan.modifies, 1);
        // Not reported by the device at all: still a modify.
        assert_eq!(diff(&[default], &[]).modifies, 1);
    }

    #[test]
    fn param_order_does_not_matter() {
        let mut a = entry(1, 1, 10, 1);
        let extra = p4::action::Param {
            param_id: 2,
            value: vec![7],
        };
        if let Some(p4::table_action::Type::Action(x)) =
            a.action.as_mut().and_then(|t| t.r#type.as_mut())
        {
            x.params.push(extra);
        }
        let mut b = a.clone();
        if let Some(p4::table_action::Type::Action(x)) =
            b.action.as_mut().and_then(|t| t.r#type.as_mut())
        {
            x.params.reverse();
        }
        assert!(diff(&[a], &[b]).is_noop());
    }
}
