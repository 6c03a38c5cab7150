//! The running collector: probe sources feeding one writer task.
//!
//! Sources (interface capture, UDP socket, packet-ins handed over by the
//! controller) parse and validate on their own thread or task and pass
//! finished probes over a bounded channel; the writer folds them into batches
//! and stores a batch when it is big enough or old enough. Shutdown stops the
//! sources first, so the writer sees the channel close only after the last
//! probe, stores everything and closes the database.

use crate::ingest::Aggregator;
use crate::metrics::Metrics;
use crate::parse::{self, Probe, Reject, RejectCounts};
use crate::plausible::Plausibility;
use crate::validate::{PlanMismatch, Validator};
use intpath_core::plan::Plan;
use intpath_core::time::now_ns;
use intpath_store::{LinkMap, Retention, RunId, Store, StoreError, StoreMode};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use writer::write_loop;

mod udp;
mod writer;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("plan does not fit the topology: {0}")]
    Plan(#[from] PlanMismatch),
    #[error("no interface named {0}")]
    NoInterface(String),
    #[error("{iface}: cannot capture: {source}")]
    Iface {
        iface: String,
        source: std::io::Error,
    },
    #[error("{addr}: cannot listen for UDP probes: {source}")]
    Udp {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("a capture task failed: {0}")]
    Task(String),
    #[error("{lost} probes were lost, not stored: {reason}")]
    Lost { lost: u64, reason: String },
}

/// How the writer batches.
#[derive(Debug, Clone)]
pub struct Options {
    /// Width of the per-link and per-path time buckets.
    pub bucket: Duration,
    /// A batch is stored at least this often...
    pub flush_every: Duration,
    /// ...or as soon as it holds this many hop records.
    pub flush_hops: usize,
    /// Probes the channel to the writer holds before sources wait.
    pub queue: usize,
    /// Receive buffer asked for the UDP socket, bytes (the kernel clamps it
    /// to `net.core.rmem_max`): bursts beyond it are dropped by the kernel.
    pub udp_rcvbuf: usize,
    /// Probes the writer holds in memory while the store fails (a full
    /// disk, a server away); a batch that would go beyond is counted as lost
    /// instead of growing memory without bound.
    pub max_held: usize,
    /// Which raw probe rows to keep.
    pub store: StoreMode,
    /// Where to publish what is stored (`/metrics`), if anywhere.
    pub metrics: Option<Metrics>,
    /// Join the run other collectors started under this key instead of
    /// starting one of our own (many collectors, one database).
    pub run_key: Option<String>,
    /// Drop telemetry older than this (PostgreSQL partitions), checked once
    /// a minute.
    pub retention: Option<Retention>,
    /// Which send times and hop numbers are believable.
    pub plausible: Plausibility,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            bucket: Duration::from_millis(100),
            flush_every: Duration::from_millis(250),
            flush_hops: 100_000,
            queue: 65_536,
            max_held: 1_000_000,
            udp_rcvbuf: 8 << 20,
            store: StoreMode::Raw,
            metrics: None,
            run_key: None,
            retention: None,
            plausible: Plausibility::default(),
        }
    }
}

/// What a finished run stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub run: RunId,
    /// Probes and hop records in the buckets: every valid one that arrived.
    pub probes: u64,
    pub hops: u64,
    /// Of those, the ones kept as raw rows (all of them with `--store raw`).
    pub raw_probes: u64,
    pub raw_hops: u64,
    pub rejects: Vec<(&'static str, u64)>,
    /// Times the store became unreachable (writes failed) and came back, and
    /// for how long in all: probes were held in memory meanwhile.
    pub store_outages: u64,
    pub store_outage_ms: u64,
    /// Valid probes that arrived but are not in the store (its writes failed
    /// until the held batches overflowed or the run ended), and why.
    pub lost_probes: u64,
    /// Datagrams the kernel dropped at the UDP socket (its receive buffer
    /// was full): probes the network delivered, not path loss.
    pub udp_drops: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_reason: Option<String>,
}

impl Summary {
    /// An error naming the probes this run lost, if it lost any.
    pub fn check(&self) -> Result<(), CaptureError> {
        match self.lost_probes {
            0 => Ok(()),
            lost => Err(CaptureError::Lost {
                lost,
                reason: self.lost_reason.clone().unwrap_or_default(),
            }),
        }
    }
}

/// Where sources hand probes over: parses, validates, counts rejects.
#[derive(Debug, Clone)]
pub struct Intake {
    tx: mpsc::Sender<Probe>,
    validator: Arc<Validator>,
    rejects: Arc<RejectCounts>,
}

impl Intake {
    fn check(&self, parsed: Result<Probe, Reject>) -> Result<Probe, Reject> {
        parsed
            .and_then(|p| self.validator.check(&p).map(|()| p))
            .inspect_err(|&r| self.rejects.count(r))
    }

    async fn send(&self, parsed: Result<Probe, Reject>) -> Result<(), Reject> {
        let p = self.check(parsed)?;
        if self.tx.send(p).await.is_err() {
            tracing::warn!("probe arrived after the writer stopped");
        }
        Ok(())
    }

    fn blocking_send(&self, parsed: Result<Probe, Reject>) -> Result<(), Reject> {
        let p = self.check(parsed)?;
        if self.tx.blocking_send(p).is_err() {
            tracing::warn!("probe arrived after the writer stopped");
        }
        Ok(())
    }

    /// A probe the controller received as a packet-in.
    pub async fn submit_packet_in(&self, buf: &[u8]) -> Result<(), Reject> {
        self.send(parse::parse_packet_in(buf, now_ns())).await
    }

    /// A probe as a whole Ethernet frame.
    pub async fn submit_frame(&self, frame: &[u8]) -> Result<(), Reject> {
        self.send(parse::parse_frame(frame, now_ns())).await
    }

    pub fn rejects(&self) -> &RejectCounts {
        &self.rejects
    }
}

/// A started collector.
pub struct Collector {
    run: RunId,
    intake: Intake,
    stop: watch::Sender<bool>,
    stop_flag: Arc<AtomicBool>,
    sources: Vec<JoinHandle<Result<(), CaptureError>>>,
    writer: JoinHandle<Result<Summary, CaptureError>>,
    udp_rcvbuf: usize,
    /// Kernel drops at every UDP socket, as last read.
    udp_drops: Arc<AtomicU64>,
    metrics: Option<Metrics>,
}

impl Collector {
    /// Records a new run in `store` and starts the writer; add sources next.
    pub async fn start(
        store: Store,
        links: Arc<LinkMap>,
        plan: &Plan,
        opts: Options,
    ) -> Result<Self, CaptureError> {
        let validator = Arc::new(Validator::new(plan, &links)?.with_plausibility(opts.plausible));
        let bucket_ns = opts.bucket.as_nanos().max(1) as u64;
        let run = store
            .begin_run_storing(&links, plan, bucket_ns, opts.store, opts.run_key.as_deref())
            .await?;
        let agg = Aggregator::new(links.clone(), bucket_ns).storing(opts.store);
        tracing::info!(run, store = %opts.store, "collector started");
        let (tx, rx) = mpsc::channel(opts.queue.max(1));
        let rejects = Arc::new(RejectCounts::default());
        if let Some(m) = &opts.metrics {
            m.begin_run(run, &links, plan, bucket_ns, rejects.clone());
        }
        let (udp_rcvbuf, metrics) = (opts.udp_rcvbuf, opts.metrics.clone());
        let writer = tokio::spawn(write_loop(store, run, agg, rx, rejects.clone(), opts));
        let (stop, _) = watch::channel(false);
        Ok(Self {
            run,
            intake: Intake {
                tx,
                validator,
                rejects,
            },
            stop,
            stop_flag: Arc::new(AtomicBool::new(false)),
            sources: Vec::new(),
            writer,
            udp_rcvbuf,
            udp_drops: Arc::default(),
            metrics,
        })
    }

    pub fn run_id(&self) -> RunId {
        self.run
    }

    /// For probes from elsewhere (the controller's packet-ins).
    pub fn intake(&self) -> Intake {
        self.intake.clone()
    }

    /// Listens for probes as UDP datagrams (payload = SR + INT + payload);
    /// returns the bound address. The kernel's drops at the socket are read
    /// every second and at shutdown.
    pub async fn listen_udp(&mut self, addr: SocketAddr) -> Result<SocketAddr, CaptureError> {
        let udp_err = |source| CaptureError::Udp { addr, source };
        let (sock, rcvbuf) = udp::bind(addr, self.udp_rcvbuf).map_err(udp_err)?;
        let bound = sock.local_addr().map_err(udp_err)?;
        let intake = self.intake.clone();
        let mut stop = self.stop.subscribe();
        let (total, metrics) = (self.udp_drops.clone(), self.metrics.clone());
        self.sources.push(tokio::spawn(async move {
            let mut seen = 0;
            let mut count_drops = || match udp::kernel_drops(&sock) {
                Ok(now) => {
                    let delta = now.saturating_sub(seen);
                    seen = now;
                    let all = total.fetch_add(delta, Ordering::Relaxed) + delta;
                    if let Some(m) = &metrics {
                        m.socket_drops(all);
                    }
                }
                Err(e) => tracing::debug!("cannot read the kernel's UDP drops: {e}"),
            };
            let mut buf = vec![0u8; 65_536];
            let mut look = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    r = sock.recv_from(&mut buf) => {
                        let (n, _) = r.map_err(|source| CaptureError::Udp { addr: bound, source })?;
                        // Rejects are counted by the intake.
                        let _ = intake.send(parse::parse_udp_payload(&buf[..n], now_ns())).await;
                    }
                    _ = look.tick() => count_drops(),
                    _ = stop.changed() => {
                        count_drops();
                        return Ok(());
                    }
                }
            }
        }));
        tracing::info!(
            %bound,
            rcvbuf_bytes = rcvbuf,
            "listening for UDP probes (receive buffer {rcvbuf} bytes as the kernel counts them)"
        );
        Ok(bound)
    }

    /// Captures probe frames on an interface (promiscuous, needs root).
    pub fn capture_iface(&mut self, name: &str) -> Result<(), CaptureError> {
        use pnet_datalink::{Channel, Config};
        let iface = interface(name)?;
        let iface_err = |source| CaptureError::Iface {
            iface: name.to_owned(),
            source,
        };
        let config = Config {
            // The capture thread checks for shutdown this often.
            read_timeout: Some(Duration::from_millis(50)),
            promiscuous: true,
            ..Config::default()
        };
        let mut rx = match pnet_datalink::channel(&iface, config).map_err(iface_err)? {
            Channel::Ethernet(_, rx) => rx,
            _ => return Err(iface_err(std::io::Error::other("not an Ethernet channel"))),
        };
        let intake = self.intake.clone();
        let stop = self.stop_flag.clone();
        let iface_name = name.to_owned();
        self.sources.push(tokio::task::spawn_blocking(move || {
            while !stop.load(Ordering::Relaxed) {
                match rx.next() {
                    Ok(frame) => {
                        // Other traffic on the interface is not ours to count.
                        match parse::parse_frame(frame, now_ns()) {
                            Err(Reject::NotProbe) => {}
                            parsed => {
                                let _ = intake.blocking_send(parsed);
                            }
                        }
                    }
                    Err(e) if is_timeout(&e) => {}
                    Err(source) => {
                        return Err(CaptureError::Iface {
                            iface: iface_name,
                            source,
                        })
                    }
                }
            }
            Ok(())
        }));
        tracing::info!(iface = name, "capturing probes");
        Ok(())
    }

    /// Stops every source, stores what is buffered and closes the database.
    pub async fn shutdown(self) -> Result<Summary, CaptureError> {
        self.stop_flag.store(true, Ordering::Relaxed);
        let _ = self.stop.send(true);
        drop(self.intake);
        let mut first_err = None;
        for s in self.sources {
            let r = s
                .await
                .map_err(|e| CaptureError::Task(e.to_string()))
                .and_then(|r| r);
            if let Err(e) = r {
                tracing::error!("{e}");
                first_err.get_or_insert(e);
            }
        }
        let mut summary = self
            .writer
            .await
            .map_err(|e| CaptureError::Task(e.to_string()))??;
        summary.udp_drops = self.udp_drops.load(Ordering::Relaxed);
        match first_err {
            Some(e) => Err(e),
            None => Ok(summary),
        }
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::Interrupted
    )
}

/// The interface called `name`; checked before a run is created so that a
/// misspelt name leaves no empty run behind.
pub fn interface(name: &str) -> Result<pnet_datalink::NetworkInterface, CaptureError> {
    pnet_datalink::interfaces()
        .into_iter()
        .find(|i| i.name == name)
        .ok_or_else(|| CaptureError::NoInterface(name.to_owned()))
}
