//! `intpath demo`: the whole telemetry loop in one command.
//!
//! Topology → plan → Mininet network with one throttled egress port →
//! deploy → collector, probes and background traffic for a set time →
//! heatmaps ([`heatmaps`]) and a summary ([`report`]) that must name the
//! throttled port as the hottest link. Every artefact lands in the output
//! directory, so the run can be inspected with `intpath query` / `intpath
//! heatmap` afterwards.

pub mod heatmaps;
pub mod report;

use crate::bottleneck::{busiest_probed, MIN_QUEUE_PPS};
use crate::counters::{last_round, poll, CounterPoller};
use crate::setup::{interrupted_before, launch, prepare, start_senders, Live};
use crate::telemetry::Snapshot;
use crate::DemoConfig;
use anyhow::{bail, Result};
use intpath_core::routes::Routes;
use report::{collected, progress, summary, Assessment};
use std::time::{Duration, Instant};

/// The congested run; an error unless the congested port comes out as
/// the hottest link and every path delivered.
pub fn run(a: &DemoConfig) -> Result<()> {
    let prep = prepare(a)?;
    let (topo, plan) = (&prep.topo, &prep.plan);
    // The port to congest, and how hard.
    let hot = busiest_probed(topo, &Routes::shortest(topo), plan)?;
    let pairs = topo.hosts().len() * (topo.hosts().len() - 1);
    let offered = a.traffic_pps * hot.routes as f64 / (topo.hosts().len() - 1) as f64;
    let rate = a
        .bottleneck_pps
        .unwrap_or_else(|| ((offered / 3.0).round() as u32).max(MIN_QUEUE_PPS));
    println!(
        "bottleneck: {} carries {} of {pairs} host pairs' routes: ≈{offered:.0} pps offered, egress limited to {rate} pps",
        hot.link,
        hot.routes
    );

    let live = launch(
        a,
        &prep,
        vec![format!("{}:{}={rate}", hot.link.src, hot.link.src_port)],
        false,
    )?;
    let Live {
        mut net,
        rt,
        mut collectors,
        db,
        ..
    } = live;
    let run = collectors.run;
    let poller = rt.block_on(CounterPoller::open(&db, run, topo))?;
    poll(&rt, &poller, &net.switch_map);
    let t0 = Instant::now();
    let mut senders = start_senders(a, &prep, &collectors, &net, Some(a.duration))?;
    let (probe_senders, traffic_senders) = senders.counts();
    println!(
        "running {:.0} s: {probe_senders} probe senders ({} pps per path), {traffic_senders} traffic senders ({} pps each), started in {:.1} s",
        a.duration,
        a.probe_pps,
        a.traffic_pps,
        t0.elapsed().as_secs_f64()
    );

    // Progress, once a second, until the senders are done or Ctrl-C.
    let started = Instant::now();
    let mut next = started;
    let interrupted = loop {
        next += Duration::from_secs(1);
        if interrupted_before(&prep.stop, next) {
            break true;
        }
        collectors.check()?;
        poll(&rt, &poller, &net.switch_map);
        if senders.running()? == 0 {
            break false;
        }
        let snap = rt.block_on(Snapshot::read(&db, run)).unwrap_or_default();
        println!("{}", progress(started.elapsed(), a.duration, &snap, &hot));
    };
    if interrupted {
        println!("interrupted: stopping the senders and storing what arrived");
    }
    let sent = senders.stop()?;
    last_round(&rt, poller, &net.switch_map);
    let stored = collectors.stop()?;
    // The last line counts every probe stored, as the summary does.
    let snap = rt.block_on(Snapshot::read(&db, run))?;
    let ran = started.elapsed().min(Duration::from_secs_f64(a.duration));
    println!("{}", progress(ran, a.duration, &snap, &hot));
    net.stop_timed()?;

    // Pictures and the verdict.
    println!("heatmaps:");
    for png in rt.block_on(heatmaps::render_all(&db, run, &a.out))? {
        println!("{}", png.display());
    }
    let assessment = Assessment::new(plan, &snap, &hot);
    println!();
    println!("{}", summary(plan, &snap, sent, &hot, &assessment));
    println!("{}", collected(&stored, &snap));
    // Commands to paste as they are: this program as it was called, one per line.
    let me = std::env::args().next().unwrap_or_else(|| "intpath".into());
    println!("explore: {me} query --db {db} hottest\n         {me} query --db {db} paths");
    if interrupted {
        bail!("interrupted before the end of the run");
    }
    anyhow::ensure!(snap.probes() > 0, "no probe reached the collector");
    let by_collectors: u64 = stored.iter().map(|s| s.probes).sum();
    anyhow::ensure!(
        by_collectors == snap.probes() as u64,
        "the collectors stored {by_collectors} probes between them, the database holds {}",
        snap.probes()
    );
    anyhow::ensure!(
        assessment.hottest_found,
        "the hottest link is {}, not the congested {}",
        snap.by_qdepth
            .first()
            .map_or("(none)".to_owned(), |h| h.link.to_string()),
        hot.link
    );
    anyhow::ensure!(
        assessment.silent_paths.is_empty(),
        "no probe of path(s) {:?} reached the collector",
        assessment.silent_paths
    );
    if let Some(max) = a.max_loss {
        anyhow::ensure!(
            assessment.other_loss_pct <= max,
            "the paths avoiding the congested link lost {:.2}% of their probes (limit {max}%)",
            assessment.other_loss_pct
        );
    }
    Ok(())
}
