//! The indices of `SrIntIngress.drop_counter`.

/// Why a packet was dropped: the index the program counts it under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum DropReason {
    /// Parser error, truncated probe, label or hop count over MAX_HOPS, wrong record size.
    Malformed = 0,
    /// A fresh probe whose path id the generator table does not hold.
    PathMiss = 1,
    /// No labels left and no sink entry.
    RouteExhausted = 2,
    /// A record is due but `remaining_hops` is 0.
    HopLimit = 3,
    /// No IPv4 route (miss or the `drop` action).
    NoRoute = 4,
    /// IPv4 TTL reached zero: a forwarding loop ends here.
    TtlExpired = 5,
}

impl DropReason {
    /// Every reason in index order, so that status views list them all.
    pub const ALL: [DropReason; 6] = [
        DropReason::Malformed,
        DropReason::PathMiss,
        DropReason::RouteExhausted,
        DropReason::HopLimit,
        DropReason::NoRoute,
        DropReason::TtlExpired,
    ];

    /// A few words for people (status views).
    pub fn describe(self) -> &'static str {
        match self {
            DropReason::Malformed => "malformed",
            DropReason::PathMiss => "unknown path id",
            DropReason::RouteExhausted => "route exhausted without sink",
            DropReason::HopLimit => "hop limit reached",
            DropReason::NoRoute => "no IPv4 route",
            DropReason::TtlExpired => "TTL expired",
        }
    }

    /// The reason counted at `index`, `None` for an unused index.
    pub fn from_index(index: u64) -> Option<Self> {
        Self::ALL.into_iter().find(|r| *r as u64 == index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::NUM_DROP_REASONS;

    #[test]
    fn every_reason_has_a_counter_slot_and_round_trips() {
        for r in DropReason::ALL {
            assert!((r as usize) < NUM_DROP_REASONS);
            assert_eq!(DropReason::from_index(r as u64), Some(r));
        }
        assert_eq!(DropReason::from_index(6), None);
    }
}
