//! Everything dropped on the way from spans to verdicts, counted by reason
//! with the first example of each, so a user sees what was lost and why.

use std::collections::BTreeMap;

#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejects {
    /// Reason → (count, first example).
    by_reason: BTreeMap<&'static str, (u64, Option<String>)>,
}

impl Rejects {
    pub fn add(&mut self, reason: &'static str) {
        self.by_reason.entry(reason).or_default().0 += 1;
    }

    /// Counts `reason`, keeping `example()` if it is the first of its kind.
    pub fn add_with(&mut self, reason: &'static str, example: impl FnOnce() -> String) {
        let e = self.by_reason.entry(reason).or_default();
        e.0 += 1;
        if e.1.is_none() {
            e.1 = Some(example());
        }
    }

    pub fn merge(&mut self, other: Rejects) {
        for (reason, (n, example)) in other.by_reason {
            let e = self.by_reason.entry(reason).or_default();
            e.0 += n;
            if e.1.is_none() {
                e.1 = example;
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.by_reason.values().map(|(n, _)| n).sum()
    }

    pub fn count(&self, reason: &str) -> u64 {
        self.by_reason.get(reason).map_or(0, |(n, _)| *n)
    }

    /// The most frequent reason.
    pub fn main_reason(&self) -> Option<&'static str> {
        self.by_reason
            .iter()
            .max_by_key(|(_, (n, _))| *n)
            .map(|(r, _)| *r)
    }

    /// Reasons, most frequent first, with count and first example.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64, Option<&str>)> + '_ {
        let mut v: Vec<_> = self
            .by_reason
            .iter()
            .map(|(r, (n, e))| (*r, *n, e.as_deref()))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.into_iter()
    }
}
