//! `intpath demo --workload hotel --fault …`: the demo's network, probes
//! and background traffic, plus the HotelReservation services exporting
//! spans to the collector's OTLP receiver under Poisson load
//! ([`services`]); one fault ([`fault`]) is switched on halfway, and the
//! run ends in `intpath diagnose culprits` on what was collected
//! (`intpath_diagnose::run`), which must name the injected fault first.

pub mod fault;
pub mod services;

pub use fault::{Fault, FaultSpec};

use crate::bottleneck::{route_load, MIN_QUEUE_PPS};
use crate::counters::{last_round, poll, CounterPoller};
use crate::lab::LinkFault;
use crate::setup::{interrupted_before, launch, prepare, start_senders, Live, Prepared};
use crate::telemetry::Snapshot;
use crate::{DemoConfig, WorkloadConfig};
use anyhow::{bail, Result};
use intpath_core::routes::Routes;
use intpath_diagnose::culprits::{blamed_links, Method};
use intpath_diagnose::{report, Options, Request, SpanWindow};
use intpath_plot::heatmap::culprit_heatmaps;
use services::{DelayFault, Load, Placement, Services, ServicesSpec};
use std::time::{Duration, Instant};

/// The workload run; an error unless the diagnosis names the injected
/// fault first.
pub fn run(a: &DemoConfig, w: &WorkloadConfig) -> Result<()> {
    anyhow::ensure!(w.request_rate > 0.0, "--request-rate must be positive");
    refuse_unsupported(a, w)?;
    let binary = services::binary()?;
    let prep = prepare(a)?;
    let Live {
        mut net,
        rt,
        mut collectors,
        collector_host,
        collector_ip,
        db,
    } = launch(a, &prep, Vec::new(), true)?;
    let (topo, logs) = (&prep.topo, &prep.logs);
    let hosts: Vec<String> = topo.hosts().iter().map(|h| h.name.clone()).collect();
    let placement = Placement::spread(&hosts, &collector_host)?;
    let placed: Vec<String> = placement
        .services
        .iter()
        .map(|(s, h)| format!("{s}@{h}"))
        .collect();
    println!(
        "services: {}, load from {}",
        placed.join(" "),
        placement.load
    );
    let fault = match &w.fault {
        Some(spec) => Some(fault::resolve(spec, topo, &placement)?),
        None => None,
    };
    let half = a.duration / 2.0;
    if let Some(f) = &fault {
        println!("fault: {f}, switched on at {half:.0} s");
    }
    let delay = match &fault {
        Some(Fault::Service(s)) => Some(DelayFault {
            service: s.clone(),
            ms: w.fault_delay_ms,
            pct: w.fault_delay_pct,
            // The services start within a second of the load.
            after: half + 1.0,
        }),
        _ => None,
    };
    let t0 = Instant::now();
    let mut services = Services::start(
        &ServicesSpec {
            binary: &binary,
            collector_ip,
            delay: delay.as_ref(),
            logs,
        },
        &placement,
        &net,
    )?;
    println!(
        "services up in {:.1} s, frontend at {}",
        t0.elapsed().as_secs_f64(),
        services.frontend
    );
    // The first reading before any probe, background packet or request:
    // the two ends of a link read a moment apart agree while nothing flows.
    let poller = rt.block_on(CounterPoller::open(&db, collectors.run, &prep.topo))?;
    poll(&rt, &poller, &net.switch_map);
    let mut senders = start_senders(a, &prep, &collectors, &net, Some(a.duration))?;
    let mut load = Load::start(
        &binary,
        &net,
        &placement.load,
        services.frontend,
        w.request_rate,
        a.duration,
        &logs.join("load.log"),
    )?;
    println!(
        "running {:.0} s: {} requests/s, probes {} pps per path, background {} pps per host",
        a.duration, w.request_rate, a.probe_pps, a.traffic_pps
    );

    let started = Instant::now();
    let (mut next, mut injected) = (started, fault.is_none());
    let interrupted = loop {
        next += Duration::from_secs(1);
        if interrupted_before(&prep.stop, next) {
            break true;
        }
        collectors.check()?;
        let elapsed = started.elapsed().as_secs_f64();
        if !injected && elapsed >= half {
            if let Some(f) = &fault {
                inject(f, a, w, &prep, &net)?;
                println!("[{elapsed:>5.1} s] fault on: {f}");
            }
            injected = true;
        }
        poll(&rt, &poller, &net.switch_map);
        let running = senders.running()? + usize::from(load.running()?);
        let snap = rt
            .block_on(Snapshot::read(&db, collectors.run))
            .unwrap_or_default();
        println!(
            "[{elapsed:>5.1}/{:.0} s] probes stored {:>6}  fault {}",
            a.duration,
            snap.probes(),
            match (&fault, injected) {
                (None, _) => "none",
                (Some(_), false) => "pending",
                (Some(_), true) => "on",
            }
        );
        if running == 0 {
            break false;
        }
    };
    senders.stop()?;
    let summary = if interrupted {
        println!("interrupted: stopping the load, the services and the collector");
        load.stop()?;
        None
    } else {
        Some(load.finish()?)
    };
    // Services flush their spans to the receiver as they exit.
    services.stop()?;
    last_round(&rt, poller, &net.switch_map);
    collectors.stop()?;
    net.stop_timed()?;
    if let Some(s) = &summary {
        println!(
            "load: {} requests, {} errors, p50 {:.1} ms, p99 {:.1} ms{}",
            s.requests,
            s.errors,
            s.p50_ms,
            s.p99_ms,
            s.first_error
                .as_ref()
                .map_or(String::new(), |e| format!(" (first error: {e})"))
        );
    }
    if interrupted {
        bail!("interrupted before the end of the run");
    }

    println!(
        "diagnosis (intpath diagnose culprits --db {db} --run {}):",
        collectors.run
    );
    let request = Request {
        window: SpanWindow::Run(collectors.run),
        ..Request::of_db(db.clone())
    };
    let dg = intpath_diagnose::run(&request, &Options::default())?;
    let ranking = dg.culprits(Method::Diagnose);
    if let Some(topo) = &dg.topo {
        let links = blamed_links(&ranking, topo, 3);
        crate::setup::runtime()?.block_on(culprit_heatmaps(&db, dg.run, &links, &a.out))?;
    }
    print!("{}", report::summary(&dg, &ranking, 5));
    let Some(f) = fault else {
        return Ok(());
    };
    match ranking.first() {
        Some(top) if f.named_by(top.kind.name(), &top.name) => {
            println!("verdict: the top culprit is the injected {f}");
            Ok(())
        }
        Some(top) => bail!(
            "the top culprit is {} {}, not the injected {f}",
            top.kind,
            top.name
        ),
        None => bail!("the diagnosis names no culprit; the injected fault was {f}"),
    }
}

/// Combinations the workload run cannot do, refused before anything
/// starts: its spans go to one collector on a Mininet host, which cannot
/// reach a PostgreSQL server on the machine's loopback.
fn refuse_unsupported(a: &DemoConfig, w: &WorkloadConfig) -> Result<()> {
    if matches!(a.db, Some(intpath_store::Db::Postgres(_))) {
        bail!("--workload receives spans on a Mininet host, which cannot reach a PostgreSQL server on the machine's loopback; leave out --db");
    }
    if a.collectors.unwrap_or(1) > 1 || a.collector_hosts.len() > 1 {
        bail!("--workload sends its spans to one collector; leave out --collectors");
    }
    if let Some(f) = &w.fault {
        f.check(&services::START_ORDER)?;
    }
    Ok(())
}

/// Switches a link, loss or delay fault on (a service fault is already
/// armed).
fn inject(
    f: &Fault,
    a: &DemoConfig,
    w: &WorkloadConfig,
    prep: &Prepared,
    net: &crate::network::Network,
) -> Result<()> {
    match f {
        Fault::Service(_) => Ok(()),
        Fault::Loss(link) => {
            crate::lab::fault::apply(&net.switch_map, link, LinkFault::LossPct(w.fault_loss_pct))
        }
        Fault::Delay(link) => crate::lab::fault::apply(
            &net.switch_map,
            link,
            LinkFault::DelayMs(w.fault_link_delay_ms),
        ),
        Fault::Link(link) => {
            let pps = match w.fault_pps {
                Some(p) => p,
                None => {
                    let (topo, plan) = (&prep.topo, &prep.plan);
                    let routes = route_load(topo, &Routes::shortest(topo))?;
                    let crossing = routes.get(&(link.src.clone(), link.src_port)).copied();
                    let background = a.traffic_pps * crossing.unwrap_or(0) as f64
                        / (topo.hosts().len() - 1) as f64;
                    let probes = a.probe_pps * plan_crossings(plan, link) as f64;
                    (((background + probes) * 0.8).round() as u32).max(MIN_QUEUE_PPS)
                }
            };
            println!("throttling {link} to {pps} pps");
            crate::lab::fault::apply(&net.switch_map, link, LinkFault::RatePps(pps))
        }
    }
}

/// How many times the plan's paths leave through `link`.
fn plan_crossings(plan: &intpath_core::plan::Plan, link: &intpath_core::link::DirLink) -> usize {
    plan.paths
        .iter()
        .flat_map(|p| p.nodes.iter().zip(&p.egress_ports))
        .filter(|(n, &port)| **n == link.src && port == link.src_port)
        .count()
}
