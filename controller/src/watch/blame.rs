//! Reading the collector's evidence against the plan in force: whether a
//! run measures that plan at all, and which links explain the paths whose
//! probes stopped arriving.

use super::{LinkEnd, LossyLink};
use intpath_core::plan::{Plan, ProbePath};
use intpath_store::query::PathProgress;
use std::collections::BTreeSet;

/// Whether a collector run's paths are exactly `plan`'s: a run on the
/// previous plan says nothing about this one.
pub fn follows_plan(plan: &Plan, progress: &[PathProgress]) -> bool {
    progress.len() == plan.paths.len()
        && progress
            .iter()
            .all(|p| plan.path(p.path).is_some_and(|q| q.nodes == p.nodes))
}

/// The silent paths of `plan` that have not delivered one probe in the
/// collector's run: nobody sends on them (no host at the first switch and
/// no packet-out sender, or a sender that died), which no replan can fix
/// and no port counter explains.
pub fn unsent<'p>(
    plan: &'p Plan,
    silent: &BTreeSet<u16>,
    progress: &[PathProgress],
) -> Vec<&'p ProbePath> {
    progress
        .iter()
        .filter(|p| p.received.is_none() && silent.contains(&p.path))
        .filter_map(|p| plan.path(p.path))
        .collect()
}

/// A lossy link and the silent path it lies on (`None`: on no silent path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    pub path: Option<u16>,
    pub link: LossyLink,
}

impl Suspect {
    /// The end to plan around: the sending switch's port.
    pub fn end(&self) -> LinkEnd {
        (self.link.link.src.clone(), self.link.link.src_port)
    }
}

/// What the counters say about the silent paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blame {
    pub suspects: Vec<Suspect>,
    /// Silent paths no lossy link explains.
    pub unexplained: BTreeSet<u16>,
}

/// Lossy links (in either direction) that a silent path crosses. A probe's
/// last leg, from the sink to the collector, follows the IPv4 routes instead
/// of the path, so when no lossy link lies on any silent path, lossy links
/// elsewhere take the blame. A silent path that no counter explains (a
/// switch dropping probes, a collector that no longer hears them) is nothing
/// a replan can fix.
pub fn blame(plan: &Plan, silent: &BTreeSet<u16>, lossy: &[LossyLink]) -> Blame {
    let mut b = Blame::default();
    for p in plan.paths.iter().filter(|p| silent.contains(&p.id)) {
        let hops: BTreeSet<(&str, u16)> = p
            .nodes
            .iter()
            .zip(&p.egress_ports)
            .map(|(n, &port)| (n.as_str(), port))
            .collect();
        let on_path = lossy.iter().filter(|l| {
            hops.contains(&(l.link.src.as_str(), l.link.src_port))
                || hops.contains(&(l.link.dst.as_str(), l.link.dst_port))
        });
        let before = b.suspects.len();
        b.suspects.extend(on_path.map(|l| Suspect {
            path: Some(p.id),
            link: l.clone(),
        }));
        if b.suspects.len() == before {
            b.unexplained.insert(p.id);
        }
    }
    if b.suspects.is_empty() && !silent.is_empty() && !lossy.is_empty() {
        b.suspects.extend(lossy.iter().map(|l| Suspect {
            path: None,
            link: l.clone(),
        }));
        b.unexplained.clear();
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_core::link::DirLink;
    use intpath_core::plan::{PlanStats, ProbePath};

    /// Path 1: s1 -2-> s2 -2-> s3; path 2: s3 -1-> s2 -1-> s1.
    fn plan() -> Plan {
        let path = |id, nodes: [&str; 3], port| ProbePath {
            id,
            nodes: nodes.iter().map(|&n| n.into()).collect(),
            egress_ports: vec![port, port],
        };
        Plan {
            topology: "line:3".into(),
            algo: "test".into(),
            paths: vec![
                path(1, ["s1", "s2", "s3"], 2),
                path(2, ["s3", "s2", "s1"], 1),
            ],
            stats: PlanStats::default(),
        }
    }

    fn lossy(src: &str, src_port: u16, dst: &str, dst_port: u16) -> LossyLink {
        LossyLink {
            link: DirLink {
                src: src.into(),
                src_port,
                dst: dst.into(),
                dst_port,
            },
            sent: 50,
            received: 0,
        }
    }

    fn progress(plan: &Plan) -> Vec<PathProgress> {
        plan.paths
            .iter()
            .map(|p| PathProgress {
                path: p.id,
                nodes: p.nodes.clone(),
                received: None,
            })
            .collect()
    }

    #[test]
    fn a_lossy_link_on_a_silent_path_is_blamed_for_that_path() {
        let l = lossy("s2", 2, "s3", 1);
        let b = blame(&plan(), &BTreeSet::from([1]), std::slice::from_ref(&l));
        assert_eq!(
            b.suspects,
            vec![Suspect {
                path: Some(1),
                link: l
            }]
        );
        assert_eq!(b.suspects[0].end(), ("s2".to_owned(), 2));
        assert!(b.unexplained.is_empty());
    }

    #[test]
    fn a_link_is_on_a_path_by_either_end() {
        // Path 2 leaves s3 by port 1, the far end of s2 -2-> s3.
        let b = blame(&plan(), &BTreeSet::from([2]), &[lossy("s2", 2, "s3", 1)]);
        assert_eq!(b.suspects.len(), 1);
        assert_eq!(b.suspects[0].path, Some(2));
    }

    #[test]
    fn silent_paths_without_a_lossy_link_are_unexplained_unless_one_lies_elsewhere() {
        let silent = BTreeSet::from([1, 2]);
        let b = blame(&plan(), &silent, &[]);
        assert!(b.suspects.is_empty());
        assert_eq!(b.unexplained, silent);
        // A lossy link off every path (towards the collector) takes the blame.
        let off = lossy("s3", 3, "c", 0);
        let b = blame(&plan(), &silent, std::slice::from_ref(&off));
        assert_eq!(
            b.suspects,
            vec![Suspect {
                path: None,
                link: off
            }]
        );
        assert!(b.unexplained.is_empty());
        // Nothing silent: nothing blamed, however lossy.
        assert_eq!(
            blame(&plan(), &BTreeSet::new(), &[lossy("s3", 3, "c", 0)]),
            Blame::default()
        );
    }

    #[test]
    fn silent_paths_that_never_delivered_are_unsent() {
        let p = plan();
        let mut runs = progress(&p);
        runs[0].received = Some(7);
        let ids = |v: Vec<&ProbePath>| v.iter().map(|p| p.id).collect::<Vec<_>>();
        assert_eq!(ids(unsent(&p, &BTreeSet::from([1, 2]), &runs)), [2]);
        // Not yet silent: still within the grace of a fresh run.
        assert!(unsent(&p, &BTreeSet::from([1]), &runs).is_empty());
    }

    #[test]
    fn a_run_follows_the_plan_only_with_the_same_paths() {
        let p = plan();
        assert!(follows_plan(&p, &progress(&p)));
        let mut other = progress(&p);
        other[1].nodes.reverse();
        assert!(!follows_plan(&p, &other));
        assert!(!follows_plan(&p, &progress(&p)[..1]));
    }
}
