//! The running switch: ports with their receive and transmit threads, egress
//! queues between ingress and egress, table state shared with the control
//! plane, and the CPU port towards P4Runtime.
//!
//! Per data port there is one receive thread and one transmit thread. With
//! [`Forwarding::Direct`] (the default) the receive thread runs a frame to
//! completion when its egress port has no rate limit and nothing queued:
//! ingress, egress and the send, batched per port, with no thread hand-off.
//! Frames for a rate-limited port (or one whose queue still holds frames)
//! are queued, and the port's transmit thread serves them at the queue's
//! rate, so queue depth and queueing delay mean what they always did.
//! [`Forwarding::Queued`] sends every frame through its queue and transmit
//! thread, as bmv2 does. Tables are an immutable snapshot swapped whole on
//! every control-plane write, so the data path reads them without locks.

use crate::counters::Counters;
use crate::datapath::{self, Outbox, Output};
use crate::io::{self, Backend};
use crate::packet::PacketBuf;
use crate::pipeline::{EgressMeta, Pipeline, Verdict, DROP_PORT};
use crate::queue::{EgressQueue, Pool, QueueStatus, Queued};
use crate::tables::{Entry, TableError, Tables, WriteOp};
use arc_swap::ArcSwap;
use intpath_sr_int::schema::NUM_PORTS;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// Packet-ins waiting for the controller; more are dropped.
const PACKET_IN_BACKLOG: usize = 1024;

/// Queue settings for one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    pub rate_pps: u64,
    pub depth: usize,
}

/// A frame for the controller: the switch's output on the CPU port
/// (starting with the packet-in header).
pub type PacketIn = Vec<u8>;

/// Everything the data-plane threads and the control plane share.
pub struct SwitchCore {
    pub pipeline: Pipeline,
    tables: ArcSwap<Tables>,
    /// Serialises writers of `tables` (read-copy-update).
    write_lock: Mutex<()>,
    pub counters: Counters,
    epoch: Instant,
    queues: Vec<Option<Arc<EgressQueue>>>,
    /// Where each port's frames leave, by port number.
    pub(crate) outputs: Vec<Option<Output>>,
    forwarding: Forwarding,
    pub(crate) pool: Pool,
    pub(crate) packet_in: SyncSender<PacketIn>,
    stop: AtomicBool,
}

/// Whether [`SwitchCore::write`] makes its batch live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// Every update that applies (P4Runtime's CONTINUE_ON_ERROR).
    Always,
    /// All updates or none (ROLLBACK_ON_ERROR, DATAPLANE_ATOMIC).
    IfAllApplied,
    /// None: a dry run that reports what each update would do.
    Never,
}

impl Commit {
    /// Whether a batch with these `results` becomes live.
    pub fn swaps(self, results: &[Result<(), TableError>]) -> bool {
        match self {
            Commit::Always => true,
            Commit::IfAllApplied => results.iter().all(Result::is_ok),
            Commit::Never => false,
        }
    }
}

/// Which frames skip the egress queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Forwarding {
    /// Run to completion on the receiving thread when the egress port has no
    /// rate limit and an empty queue; queue otherwise.
    Direct,
    /// Every frame through its egress queue and the port's transmit thread.
    Queued,
}

impl SwitchCore {
    /// µs since the switch started: v1model's global timestamp.
    pub fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    pub fn tables(&self) -> arc_swap::Guard<Arc<Tables>> {
        self.tables.load()
    }

    /// Applies writes in order to a copy of the tables, which replaces the
    /// live ones in one swap when `commit` allows: the data plane sees the
    /// tables from before the batch or after it, never a part of it.
    pub fn write(&self, ops: &[(WriteOp, Entry)], commit: Commit) -> Vec<Result<(), TableError>> {
        let _w = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = Tables::clone(&self.tables.load());
        let results: Vec<_> = ops.iter().map(|(op, e)| next.apply(*op, *e)).collect();
        if commit.swaps(&results) {
            self.tables.store(Arc::new(next));
        }
        results
    }

    /// Replaces every table with fresh ones (a new pipeline config).
    pub fn reset_tables(&self) {
        let _w = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.tables.store(Arc::new(Tables::default()));
    }

    pub fn queue(&self, port: u16) -> Option<&Arc<EgressQueue>> {
        self.queues.get(usize::from(port)).and_then(Option::as_ref)
    }

    /// Ports with a queue (data ports and the CPU port), ascending.
    pub fn queue_ports(&self) -> impl Iterator<Item = (u16, QueueStatus)> + '_ {
        self.queues
            .iter()
            .enumerate()
            .filter_map(|(p, q)| q.as_ref().map(|q| (p as u16, q.status())))
    }

    /// Runs ingress on `pkt` arriving at `port`, then either egress with the
    /// frame left in `out` for sending (run to completion) or queues it.
    pub(crate) fn receive(&self, mut pkt: PacketBuf, port: u16, out: &mut Outbox) {
        let ingress_ts = self.now_us();
        let tables = self.tables.load();
        match self
            .pipeline
            .ingress(&tables, &self.counters, &mut pkt, port)
        {
            Verdict::Forward(fwd) => match self.queue(fwd.egress_port) {
                // Nothing ahead of it and nothing to wait for: as if dequeued
                // at once (depth 0, no queueing delay).
                Some(q)
                    if self.forwarding == Forwarding::Direct && q.rate() == 0 && q.is_empty() =>
                {
                    let meta = EgressMeta {
                        ingress_ts,
                        egress_ts: self.now_us(),
                        ..EgressMeta::default()
                    };
                    if self.pipeline.egress(&self.counters, &mut pkt, &fwd, &meta)
                        && !q.loss().lose()
                    {
                        out.push(fwd.egress_port, pkt);
                    } else {
                        self.pool.put(pkt);
                    }
                }
                Some(q) => {
                    let item = Queued {
                        pkt,
                        fwd,
                        ingress_ts,
                        enq_ts: 0,
                        enq_qdepth: 0,
                    };
                    if let Err(dropped) = q.enqueue(item, self.now_us()) {
                        self.pool.put(dropped.pkt);
                    }
                }
                None => {
                    // As bmv2: egress runs and counts the transmission on a
                    // port without an interface; the frame then goes nowhere.
                    let now = self.now_us();
                    let meta = EgressMeta {
                        ingress_ts,
                        egress_ts: now,
                        ..EgressMeta::default()
                    };
                    self.pipeline.egress(&self.counters, &mut pkt, &fwd, &meta);
                    tracing::debug!(port = fwd.egress_port, "no interface on egress port");
                    self.pool.put(pkt);
                }
            },
            Verdict::Drop(_) => self.pool.put(pkt),
        }
    }

    /// A packet-out from the controller: `frame` starts with the packet-out header.
    pub fn packet_out(&self, frame: &[u8]) -> Result<(), crate::packet::TooLong> {
        let mut pkt = self.pool.get();
        pkt.load(frame)?;
        let mut out = Outbox::default();
        self.receive(pkt, self.pipeline.cpu_port, &mut out);
        self.flush(&mut out);
        Ok(())
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Relaxed)
    }
}

/// A switch with its threads running.
pub struct Switch {
    pub core: Arc<SwitchCore>,
    threads: Vec<JoinHandle<()>>,
}

/// What the switch is built from.
pub struct SwitchConfig {
    pub cpu_port: u16,
    /// (port, interface name)
    pub ports: Vec<(u16, String)>,
    pub backend: Backend,
    pub forwarding: Forwarding,
    pub default_queue: QueueConfig,
    /// Per-port overrides of the default queue.
    pub queue_overrides: Vec<(u16, QueueConfig)>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("port {0} is out of range (ports are 0..{max})", max = DROP_PORT - 1)]
    PortRange(u16),
    #[error("port {0} given twice (or equal to the CPU port)")]
    Duplicate(u16),
    #[error("queue setting for port {0}, which the switch does not have")]
    UnknownQueuePort(u16),
    #[error("interface {iface} (port {port})")]
    Io {
        port: u16,
        iface: String,
        source: std::io::Error,
    },
}

impl Switch {
    /// Opens every interface and starts the threads. Returns the switch and
    /// the stream of packet-ins for the controller.
    pub fn start(config: SwitchConfig) -> Result<(Self, Receiver<PacketIn>), StartError> {
        let mut queues: Vec<Option<Arc<EgressQueue>>> = vec![None; NUM_PORTS];
        let mut add = |port: u16| -> Result<(), StartError> {
            let slot = queues
                .get_mut(usize::from(port))
                .filter(|_| port != DROP_PORT)
                .ok_or(StartError::PortRange(port))?;
            if slot.is_some() {
                return Err(StartError::Duplicate(port));
            }
            *slot = Some(Arc::new(EgressQueue::new(
                config.default_queue.rate_pps,
                config.default_queue.depth,
            )));
            Ok(())
        };
        add(config.cpu_port)?;
        for (port, _) in &config.ports {
            add(*port)?;
        }
        for (port, q) in &config.queue_overrides {
            let queue = queues
                .get(usize::from(*port))
                .and_then(Option::as_ref)
                .ok_or(StartError::UnknownQueuePort(*port))?;
            queue.set_rate(q.rate_pps);
            queue.set_depth(q.depth);
        }
        let mut receivers = Vec::new();
        let mut outputs: Vec<Option<Output>> = (0..NUM_PORTS).map(|_| None).collect();
        outputs[usize::from(config.cpu_port)] = Some(Output::Cpu);
        for (port, iface) in &config.ports {
            let (rx, tx) = io::open(iface, config.backend).map_err(|source| StartError::Io {
                port: *port,
                iface: iface.clone(),
                source,
            })?;
            receivers.push((*port, rx));
            outputs[usize::from(*port)] = Some(Output::Port(tx));
        }
        let (packet_in, packet_in_rx) = std::sync::mpsc::sync_channel(PACKET_IN_BACKLOG);
        let core = Arc::new(SwitchCore {
            pipeline: Pipeline::new(config.cpu_port),
            tables: ArcSwap::from_pointee(Tables::default()),
            write_lock: Mutex::new(()),
            counters: Counters::default(),
            epoch: Instant::now(),
            queues,
            outputs,
            forwarding: config.forwarding,
            pool: Pool::default(),
            packet_in,
            stop: AtomicBool::new(false),
        });
        let mut threads = Vec::new();
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name)
                .spawn(f)
                .expect("spawning a thread")
        };
        let cpu_core = core.clone();
        threads.push(spawn(
            "tx-cpu".into(),
            Box::new(move || datapath::transmit_loop(&cpu_core, config.cpu_port)),
        ));
        for (port, rx) in receivers {
            let c = core.clone();
            threads.push(spawn(
                format!("rx-{port}"),
                Box::new(move || datapath::receive_loop(&c, port, rx)),
            ));
            let c = core.clone();
            threads.push(spawn(
                format!("tx-{port}"),
                Box::new(move || datapath::transmit_loop(&c, port)),
            ));
            let c = core.clone();
            threads.push(spawn(
                format!("delay-{port}"),
                Box::new(move || datapath::delay_loop(&c, port)),
            ));
        }
        Ok((Self { core, threads }, packet_in_rx))
    }

    /// Stops every thread and waits for them.
    pub fn stop(self) {
        self.core.stop.store(true, Relaxed);
        for q in self.core.queues.iter().flatten() {
            q.wake_consumer();
            q.delay().wake();
        }
        for t in self.threads {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(ports: &[u16]) -> SwitchConfig {
        SwitchConfig {
            cpu_port: 255,
            ports: ports.iter().map(|p| (*p, "lo".to_string())).collect(),
            backend: Backend::Ring,
            forwarding: Forwarding::Direct,
            default_queue: QueueConfig {
                rate_pps: 0,
                depth: crate::queue::DEFAULT_DEPTH,
            },
            queue_overrides: Vec::new(),
        }
    }

    #[test]
    fn the_drop_port_and_beyond_are_refused() {
        for port in [DROP_PORT, 512] {
            assert!(matches!(
                Switch::start(config(&[port])),
                Err(StartError::PortRange(p)) if p == port
            ));
        }
    }

    /// simple_switch_grpc accepts `-i 0@iface`; so do we.
    #[test]
    #[ignore = "needs root"]
    fn port_zero_is_a_data_port() {
        let (switch, _packet_in) = Switch::start(config(&[0])).expect("port 0 accepted");
        assert!(switch.core.queue(0).is_some());
        switch.stop();
    }
}
