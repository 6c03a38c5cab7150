//! Deploy reports and switch statuses as the text `intpath deploy` and
//! `intpath switches status` print.

use super::{Pipeline, SwitchReport, SwitchStatus};
use intpath_p4rt::client::Arbitration;

/// One line per switch (and each change on a dry run), then the totals.
pub fn reports(reports: &[SwitchReport], dry_run: bool) -> String {
    let mut out = String::new();
    let verb = if dry_run { "would change" } else { "changed" };
    let (mut i, mut m, mut d) = (0, 0, 0);
    for r in reports {
        out.push_str(&format!(
            "{:<8} +{} ~{} -{} ({} unchanged){}\n",
            r.name,
            r.inserts,
            r.modifies,
            r.deletes,
            r.unchanged,
            if r.pipeline_pushed {
                ", pipeline pushed"
            } else {
                ""
            }
        ));
        if dry_run {
            for c in &r.changes {
                out.push_str(&format!("    {c}\n"));
            }
        }
        (i, m, d) = (i + r.inserts, m + r.modifies, d + r.deletes);
    }
    if i + m + d == 0 {
        out.push_str(&format!("{} switches already up to date\n", reports.len()));
    } else {
        out.push_str(&format!(
            "{verb}: {i} inserts, {m} modifies, {d} deletes on {} switches\n",
            reports.len()
        ));
    }
    out
}

/// One line per switch (reachability, ids, pipeline, primary, entries
/// against the plan's), then its port and drop counters.
pub fn statuses(st: &[SwitchStatus]) -> String {
    let mut out = String::new();
    for s in st {
        if let Some(e) = &s.error {
            out.push_str(&format!("{:<8} {:<21} DOWN: {e}\n", s.name, s.addr));
            continue;
        }
        let primary = match &s.arbitration {
            Some(Ok(Arbitration::Backup { primary: 0 } | Arbitration::Primary)) => {
                "no controller".to_owned()
            }
            Some(Ok(Arbitration::Backup { primary })) => format!("primary election id {primary}"),
            Some(Err(e)) => format!("primary unknown ({e})"),
            _ => "arbitration unknown".to_owned(),
        };
        let pipeline = match &s.pipeline {
            Some(Pipeline::Ours { cookie: 0 }) => {
                "sr_int pipeline (built in, no cookie)".to_owned()
            }
            Some(Pipeline::Ours { cookie }) => format!("sr_int pipeline (cookie {cookie})"),
            Some(Pipeline::Other) => "ANOTHER pipeline".to_owned(),
            Some(Pipeline::None) | None => "NO pipeline".to_owned(),
        };
        let switch_id = s
            .switch_id
            .map_or("switch id UNSET".to_owned(), |id| format!("switch id {id}"));
        let entries: Vec<String> = s
            .entries
            .iter()
            .enumerate()
            .map(|(i, (t, n))| {
                let short = t.rsplit('.').next().unwrap_or(t);
                match s.planned.get(i) {
                    Some((_, want)) => format!("{short}={n}/{want}"),
                    None => format!("{short}={n}"),
                }
            })
            .collect();
        out.push_str(&format!(
            "{:<8} {:<21} up, device {}, {switch_id}, {pipeline}, {primary}, entries {}{}\n",
            s.name,
            s.addr,
            s.device_id,
            entries.join(" "),
            if s.differs_from_plan() {
                " (NOT AS PLANNED: restarted or not deployed?)"
            } else {
                ""
            }
        ));
        for (port, rx, tx) in &s.ports {
            out.push_str(&format!("    port {port:>3}: rx {rx} tx {tx} packets\n"));
        }
        for (reason, packets) in &s.drops {
            let why = u64::try_from(*reason)
                .ok()
                .and_then(intpath_sr_int::DropReason::from_index)
                .map_or("unused index", |r| r.describe());
            out.push_str(&format!(
                "    drops reason {reason} ({why}): {packets} packets\n"
            ));
        }
    }
    out
}
