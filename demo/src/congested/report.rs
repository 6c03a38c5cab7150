//! What the demo prints while it runs and at the end, and what it judges.
//!
//! A run succeeds when the collector names the congested link as the
//! hottest and every planned path delivered probes; paths that avoid the
//! congested link should lose (next to) nothing, so their loss is reported
//! apart from the loss of the paths that queue behind the bottleneck.

use crate::bottleneck::Egress;
use crate::collector::Stored;
use crate::telemetry::Snapshot;
use intpath_core::plan::Plan;
use intpath_store::query::PathSummary;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::time::Duration;

/// Up to this many paths the summary lists each; beyond, the paths through
/// the congested link and the worst of the others.
const LIST_ALL_UP_TO: usize = 16;
/// Paths avoiding the congested link listed by loss when not all are.
const WORST_LISTED: usize = 3;

/// The run's probes, split by whether their path crosses the congested link.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    /// Ids of the paths that cross the congested link.
    pub congested_paths: BTreeSet<u16>,
    /// Ids of planned paths no probe of which was stored.
    pub silent_paths: Vec<u16>,
    /// Sequence loss of the paths through the congested link, percent.
    pub congested_loss_pct: f64,
    /// Sequence loss of every other path together, percent.
    pub other_loss_pct: f64,
    /// Planned paths that avoid the congested link.
    pub other_paths: usize,
    /// Whether the hottest measured link is the congested one.
    pub hottest_found: bool,
}

impl Assessment {
    pub fn new(plan: &Plan, snap: &Snapshot, hot: &Egress) -> Self {
        let congested_paths: BTreeSet<u16> = plan
            .paths
            .iter()
            .filter(|p| {
                p.nodes
                    .iter()
                    .zip(&p.egress_ports)
                    .any(|(n, &e)| *n == hot.link.src && e == hot.link.src_port)
            })
            .map(|p| p.id)
            .collect();
        let stored = |id: u16| snap.paths.iter().any(|s| s.path == id && s.probes > 0);
        let silent_paths = plan
            .paths
            .iter()
            .map(|p| p.id)
            .filter(|&id| !stored(id))
            .collect();
        let (congested, other): (Vec<&PathSummary>, Vec<&PathSummary>) = snap
            .paths
            .iter()
            .partition(|s| congested_paths.contains(&s.path));
        Self {
            other_paths: plan.paths.len() - congested_paths.len(),
            congested_paths,
            silent_paths,
            congested_loss_pct: loss_pct(&congested),
            other_loss_pct: loss_pct(&other),
            hottest_found: snap.by_qdepth.first().map(|h| &h.link) == Some(&hot.link),
        }
    }
}

/// Probes lost in sequence over probes expected, percent.
fn loss_pct(paths: &[&PathSummary]) -> f64 {
    let lost: i64 = paths.iter().map(|p| p.lost).sum();
    let expected = lost + paths.iter().map(|p| p.probes).sum::<i64>();
    if expected == 0 {
        0.0
    } else {
        100.0 * lost as f64 / expected as f64
    }
}

/// One line of progress; the clock stops at the run's length, which the
/// senders' last probes and the final count may outlast.
pub fn progress(elapsed: Duration, total: f64, s: &Snapshot, hot: &Egress) -> String {
    let at = s
        .by_qdepth
        .iter()
        .find(|h| h.link == hot.link)
        .map_or(0.0, |h| h.value);
    let top = s
        .by_qdepth
        .first()
        .map_or("-".to_owned(), |h| format!("{} ({:.1})", h.link, h.value));
    format!(
        "[{:>5.1}/{total:.0} s] probes stored {:>6}  mean queue depth at {} {at:>5.1}  hottest {top}",
        elapsed.as_secs_f64().min(total),
        s.probes(),
        hot.link
    )
}

/// The closing summary: probes, loss, the hottest links and the verdict.
pub fn summary(plan: &Plan, s: &Snapshot, sent: u64, hot: &Egress, a: &Assessment) -> String {
    let received = s.probes();
    let loss = if sent > 0 {
        100.0 * (sent as f64 - received as f64).max(0.0) / sent as f64
    } else {
        0.0
    };
    let mut out = String::from("summary\n");
    let _ = writeln!(
        out,
        "  paths           {} ({} through the congested link)",
        plan.paths.len(),
        a.congested_paths.len()
    );
    let _ = writeln!(
        out,
        "  probes sent     {sent}\n  probes received {received}"
    );
    let others = match a.other_paths {
        0 => "no other path".to_owned(),
        _ => format!("{:.2}% on the other paths", a.other_loss_pct),
    };
    let _ = writeln!(
        out,
        "  loss            {loss:.1}% (in sequence: {:.1}% through the congested link, {others})",
        a.congested_loss_pct
    );
    for p in listed(s, a) {
        let _ = writeln!(
            out,
            "    path {:>3}{}: {:>6} probes, {:>5.1}% lost in sequence, e2e mean {:.0} µs",
            p.path,
            if a.congested_paths.contains(&p.path) {
                "*"
            } else {
                " "
            },
            p.probes,
            p.loss_pct,
            p.e2e_mean_us
        );
    }
    if !a.silent_paths.is_empty() {
        let _ = writeln!(out, "  paths without probes: {:?}", a.silent_paths);
    }
    let _ = writeln!(out, "  congested link  {} (* paths cross it)", hot.link);
    let _ = writeln!(
        out,
        "  hottest links (mean queue depth, packets; mean queueing delay, µs):"
    );
    for h in s.by_qdepth.iter().take(3) {
        let delay = s
            .by_qdelay
            .iter()
            .find(|d| d.link == h.link)
            .map_or(0.0, |d| d.value);
        let _ = writeln!(
            out,
            "    {:<16} {:>6.1} pkts {:>9.0} µs",
            h.link.to_string(),
            h.value,
            delay
        );
    }
    let verdict = match s.by_qdepth.first() {
        Some(_) if a.hottest_found => "the hottest link is the congested one".to_owned(),
        Some(h) => format!("MISMATCH: the hottest link is {}", h.link),
        None => "MISMATCH: no measured link queued".to_owned(),
    };
    let _ = write!(out, "  verdict         {verdict}");
    out
}

/// What each collector says it stored, and their sum beside what the run
/// holds in the database (the union every query reads); the demo fails when
/// the two differ.
pub fn collected(stored: &[Stored], s: &Snapshot) -> String {
    let mut out = String::from("collectors (probes stored)\n");
    for c in stored {
        let _ = writeln!(out, "  {:<16} {:>8}", c.host, c.probes);
    }
    let sum: u64 = stored.iter().map(|c| c.probes).sum();
    let _ = write!(
        out,
        "  {:<16} {sum:>8} (the run in the database: {})",
        "together",
        s.probes()
    );
    out
}

/// The paths the summary lists: all of them for a small plan, else those
/// through the congested link and the worst few others.
fn listed<'s>(s: &'s Snapshot, a: &Assessment) -> Vec<&'s PathSummary> {
    if s.paths.len() <= LIST_ALL_UP_TO {
        return s.paths.iter().collect();
    }
    let mut others: Vec<&PathSummary> = s
        .paths
        .iter()
        .filter(|p| !a.congested_paths.contains(&p.path))
        .collect();
    others.sort_by(|x, y| y.loss_pct.total_cmp(&x.loss_pct));
    others.truncate(WORST_LISTED);
    let mut out: Vec<&PathSummary> = s
        .paths
        .iter()
        .filter(|p| a.congested_paths.contains(&p.path))
        .chain(others)
        .collect();
    out.sort_by_key(|p| p.path);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::Hot;
    use intpath_core::link::DirLink;
    use intpath_core::plan::{PlanStats, ProbePath};

    fn link(src: &str, src_port: u16, dst: &str) -> DirLink {
        DirLink {
            src: src.into(),
            src_port,
            dst: dst.into(),
            dst_port: 1,
        }
    }

    fn path(id: u16, nodes: &[&str], egress_ports: &[u16]) -> ProbePath {
        ProbePath {
            id,
            nodes: nodes.iter().map(|&n| n.into()).collect(),
            egress_ports: egress_ports.to_vec(),
        }
    }

    fn summary_of(path: u16, probes: i64, lost: i64) -> PathSummary {
        PathSummary {
            path,
            probes,
            lost,
            loss_pct: 100.0 * lost as f64 / (probes + lost) as f64,
            duplicates: 0,
            reordered: 0,
            e2e_mean_us: 100.0,
            e2e_max_us: 200.0,
        }
    }

    /// Three paths, the first two through s1:2->s2; path 3 stored nothing.
    fn run(hottest: DirLink) -> (Plan, Snapshot, Egress) {
        let plan = Plan {
            topology: "test".into(),
            algo: "test".into(),
            paths: vec![
                path(1, &["s1", "s2", "s3"], &[2, 3]),
                path(2, &["s4", "s1", "s2"], &[1, 2]),
                path(3, &["s3", "s4"], &[1]),
                path(4, &["s2", "s1"], &[1]),
            ],
            stats: PlanStats::default(),
        };
        let snap = Snapshot {
            paths: vec![
                summary_of(1, 90, 10),
                summary_of(2, 70, 30),
                summary_of(4, 999, 1),
            ],
            by_qdepth: vec![Hot {
                link: hottest,
                value: 30.0,
            }],
            by_qdelay: Vec::new(),
        };
        let hot = Egress {
            link: link("s1", 2, "s2"),
            routes: 8,
        };
        (plan, snap, hot)
    }

    #[test]
    fn loss_is_split_by_the_congested_link() {
        let (plan, snap, hot) = run(link("s1", 2, "s2"));
        let a = Assessment::new(&plan, &snap, &hot);
        assert_eq!(a.congested_paths, BTreeSet::from([1, 2]));
        assert_eq!(a.silent_paths, vec![3]);
        assert!((a.congested_loss_pct - 20.0).abs() < 1e-9);
        assert!((a.other_loss_pct - 0.1).abs() < 1e-9);
        assert!(a.hottest_found);
        let text = summary(&plan, &snap, 1200, &hot, &a);
        assert!(text.contains("4 (2 through the congested link)"), "{text}");
        assert!(text.contains("paths without probes: [3]"), "{text}");
        assert!(text.contains("path   1*"), "{text}");
        assert!(
            text.ends_with("the hottest link is the congested one"),
            "{text}"
        );
    }

    #[test]
    fn collectors_are_listed_with_their_sum_beside_the_database() {
        let (_, snap, _) = run(link("s1", 2, "s2"));
        let stored = [("h15", 700), ("h16", 459)].map(|(host, probes)| Stored {
            host: host.into(),
            probes,
        });
        let text = collected(&stored, &snap);
        assert_eq!(
            text,
            "collectors (probes stored)\n  h15                   700\n  h16                   459\n  \
             together             1159 (the run in the database: 1159)"
        );
    }

    #[test]
    fn one_path_has_no_other_paths_and_the_clock_stops_at_the_end() {
        let (mut plan, mut snap, hot) = run(link("s1", 2, "s2"));
        plan.paths.truncate(1);
        snap.paths.truncate(1);
        let a = Assessment::new(&plan, &snap, &hot);
        assert_eq!(a.other_paths, 0);
        let text = summary(&plan, &snap, 100, &hot, &a);
        assert!(
            text.contains("(in sequence: 10.0% through the congested link, no other path)"),
            "{text}"
        );
        let (_, snap, _) = run(link("s1", 2, "s2"));
        let line = progress(Duration::from_secs_f64(20.4), 20.0, &snap, &hot);
        assert!(
            line.starts_with("[ 20.0/20 s] probes stored   1159"),
            "{line}"
        );
    }

    #[test]
    fn another_hottest_link_is_a_mismatch() {
        let (plan, snap, hot) = run(link("s2", 1, "s1"));
        let a = Assessment::new(&plan, &snap, &hot);
        assert!(!a.hottest_found);
        let text = summary(&plan, &snap, 1200, &hot, &a);
        assert!(
            text.ends_with("MISMATCH: the hottest link is s2:1->s1"),
            "{text}"
        );
    }
}
