//! Node names interned back to back in one string, found through a table of
//! node ids.
//!
//! Resolving link ends by name is the hottest step of loading a large file.
//! A `HashMap<String, NodeId>` keeps every key in an allocation of its own,
//! so at 10^5 nodes each lookup compares against a string at a random place
//! in a heap much larger than the cache, and loading slowed per element as
//! files grew. Here the table holds 4-byte ids and the names sit in one
//! arena: both stay small enough to be cached at every size we load.

use super::NodeId;
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

#[derive(Debug, Clone, Default)]
pub(super) struct Names {
    text: String,
    /// Name `i` is `text[ends[i - 1]..ends[i]]` (from 0 for the first).
    ends: Vec<usize>,
    table: HashTable<u32>,
}

fn hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

impl Names {
    /// Room for `n` names of `bytes` bytes in all.
    pub fn with_capacity(n: usize, bytes: usize) -> Self {
        Names {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(n),
            table: HashTable::with_capacity(n),
        }
    }

    /// The name of node `n`.
    pub fn get(&self, n: NodeId) -> &str {
        slice(&self.text, &self.ends, n.0)
    }

    pub fn find(&self, name: &str) -> Option<NodeId> {
        let Names { text, ends, table } = self;
        table
            .find(hash(name), |&i| slice(text, ends, i) == name)
            .map(|&i| NodeId(i))
    }

    /// Gives `name` the next node id, or returns the id it already has.
    /// Callers keep the count below `u32::MAX`.
    pub fn insert(&mut self, name: &str) -> Result<NodeId, NodeId> {
        // One hash per name: this runs once per node of a large file.
        let h = hash(name);
        let Names { text, ends, table } = self;
        if let Some(&id) = table.find(h, |&i| slice(text, ends, i) == name) {
            return Err(NodeId(id));
        }
        let id = ends.len() as u32;
        text.push_str(name);
        ends.push(text.len());
        table.insert_unique(h, id, |&i| hash(slice(text, ends, i)));
        Ok(NodeId(id))
    }
}

fn slice<'a>(text: &'a str, ends: &[usize], i: u32) -> &'a str {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &text[start..ends[i]]
}
