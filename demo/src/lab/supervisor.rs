//! The lab's supervisor: the one long-lived process of a lab, started by
//! `intpath lab up` in a session of its own. It runs the demo's stages
//! (network, deploy, collector with its OTLP receiver, probes, background
//! traffic, the switches' port counters read once a second into the run,
//! as the demo reads them) and keeps them: every child dies with it (the kernel's
//! parent-death signal), and on SIGTERM (`intpath lab down`) it stops them
//! in the order that loses nothing: senders, the collector once the last
//! probes and spans are stored, the network.

use super::state::{write_json, LabConfig, LabDir, LabHost, LabState, LabSwitch};
use crate::counters::{last_round, poll, CounterPoller};
use crate::setup::{launch, prepare, start_senders, Live, OTLP_PORT};
use crate::telemetry::Snapshot;
use crate::DemoConfig;
use anyhow::{Context, Result};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long the supervisor waits for the first probe before it calls the
/// lab ready anyway (and says so in its log).
const FIRST_PROBE_WAIT: Duration = Duration::from_secs(15);

/// Runs the lab in `dir` until SIGTERM or SIGINT; `config.json` must be
/// there. Holds the lab's lock throughout. `web`: the address of the web
/// view the caller serves for the lab's lifetime, recorded in its state.
pub fn run(dir: &LabDir, web: Option<String>) -> Result<()> {
    let _lock = dir.try_lock()?.with_context(|| {
        format!(
            "a lab already runs in {}; `intpath lab down --dir {}` first",
            dir.path.display(),
            dir.path.display()
        )
    })?;
    let config: LabConfig = super::state::read_json(&dir.config())?;
    let demo = DemoConfig {
        topo: config.topo.clone(),
        add_hosts: config.add_hosts.clone(),
        // The lab runs until stopped; the demo's checks want a duration.
        duration: f64::MAX,
        out: dir.path.clone(),
        traffic_pps: config.traffic_pps,
        probe_pps: config.probe_pps,
        bottleneck_pps: None,
        queue_depth: config.queue_depth,
        db: None,
        collectors: None,
        collector_hosts: config.collector_host.iter().cloned().collect(),
        switch: config.switch,
        device_config: config.device_config.clone(),
        max_loss: None,
        workload: None,
    };
    let prep = prepare(&demo)?;
    let Live {
        mut net,
        rt,
        mut collectors,
        collector_host,
        db,
        ..
    } = launch(&demo, &prep, Vec::new(), true)?;
    let run = collectors.run;
    // The first reading before any probe or background packet: the two
    // ends of a link read a moment apart agree while nothing flows.
    let poller = rt.block_on(CounterPoller::open(&db, run, &prep.topo))?;
    poll(&rt, &poller, &net.switch_map);
    let mut senders = start_senders(&demo, &prep, &collectors, &net, None)?;

    let deadline = Instant::now() + FIRST_PROBE_WAIT;
    while rt
        .block_on(Snapshot::read(&db, run))
        .map_or(0, |s| s.probes())
        == 0
    {
        collectors.check()?;
        if Instant::now() > deadline {
            tracing::warn!("no probe stored within {FIRST_PROBE_WAIT:?}; the lab is up regardless");
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }

    let host = |name: &str| -> Result<LabHost> {
        let ns = net.host(name)?;
        Ok(LabHost {
            name: name.to_owned(),
            ip: ns.ip,
            intf: ns.intf.clone(),
            pid: ns.pid,
        })
    };
    let collector = host(&collector_host)?;
    let state = LabState {
        dir: std::path::absolute(&dir.path)?,
        topology: prep.topo.origin().to_string(),
        switch: config.switch,
        supervisor_pid: std::process::id(),
        started_unix: intpath_core::time::now_ns() as f64 / 1e9,
        otlp_endpoint: format!("http://{}:{OTLP_PORT}", collector.ip),
        collector,
        database: std::path::absolute(dir.database())?,
        run,
        hosts: prep
            .topo
            .hosts()
            .iter()
            .map(|h| host(&h.name))
            .collect::<Result<_>>()?,
        switches: net
            .switch_map
            .switches
            .iter()
            .map(|s| LabSwitch {
                name: s.name.clone(),
                grpc_addr: s.grpc_addr.clone(),
                admin_addr: s.admin_addr.clone(),
            })
            .collect(),
        topology_json: std::path::absolute(&prep.topo_json)?,
        plan_json: std::path::absolute(&prep.plan_json)?,
        switch_map: std::path::absolute(&net.switch_map_path)?,
        web,
    };
    write_json(&dir.state(), &state)?;
    println!("lab ready: run {run} in {db}");

    let mut sender_failed = false;
    let mut next_reading = Instant::now();
    let failure = loop {
        if prep.stop.load(Ordering::Relaxed) {
            break None;
        }
        if Instant::now() >= next_reading {
            poll(&rt, &poller, &net.switch_map);
            // A slow round (switches busy) delays the next, not crowds it.
            next_reading = Instant::now() + Duration::from_secs(1);
        }
        if let Err(e) = collectors.check() {
            break Some(e);
        }
        if let (Err(e), false) = (senders.running(), sender_failed) {
            // A sender that failed leaves its paths unmeasured; the lab
            // goes on and says so, once.
            tracing::error!("{e:#}");
            sender_failed = true;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    println!("stopping: senders, then the collector, then the network");
    senders.stop()?;
    last_round(&rt, poller, &net.switch_map);
    collectors.stop()?;
    net.stop_timed()?;
    match failure {
        Some(e) => Err(e.context("the lab's collector stopped")),
        None => Ok(()),
    }
}
