//! The P4Runtime server: arbitration, pipeline config, Write / Read of the
//! tables and counters, packet-in / packet-out, capabilities.
//!
//! The switch starts with the embedded P4Info, so it is usable without a
//! pipeline push; a pushed P4Info must describe the same program (names and
//! widths, see [`crate::p4info_map::mismatches`]) and replaces the ids.

mod arbitration;
mod p4runtime;
mod read;
mod stream;
mod write;

use crate::p4info_map;
use crate::ping_policy::{PingPolicy, Policed};
use crate::switch::{PacketIn, Switch, SwitchCore};
use anyhow::Context;
use intpath_p4rt::client::from_uint128;
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::v1 as p4;
use p4::p4_runtime_server::P4RuntimeServer;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tonic::{Code, Status};

const API_VERSION: &str = "1.3.0";
const STREAM_BACKLOG: usize = 1024;
/// The largest `ReadRequest` accepted (bytes). gRPC decodes a request before
/// the handler sees it, at about 400 bytes of memory per entity of 4 bytes on
/// the wire, so its size is what bounds a read's memory; 64 KiB holds more
/// than [`read::MAX_FILTERS`] filters.
const MAX_READ_REQUEST: usize = 64 << 10;

type StreamTx = mpsc::Sender<Result<p4::StreamMessageResponse, Status>>;

/// The forwarding pipeline config as last committed.
struct Config {
    index: Arc<P4InfoIndex>,
    device_config: Vec<u8>,
    cookie: Option<u64>,
}

#[derive(Default)]
struct Streams {
    next_id: u64,
    clients: HashMap<u64, Client>,
}

struct Client {
    election_id: Option<u128>,
    /// The connection the stream came over: the primary's writes must too.
    peer: Option<SocketAddr>,
    tx: StreamTx,
}

impl Streams {
    /// The stream with the highest election id, and that id.
    fn primary(&self) -> Option<(u64, u128)> {
        self.clients
            .iter()
            .filter_map(|(id, c)| c.election_id.map(|e| (*id, e)))
            .max_by_key(|(_, e)| *e)
    }
}

pub struct Service {
    core: Arc<SwitchCore>,
    device_id: u64,
    config: RwLock<Config>,
    /// A config saved by VERIFY_AND_SAVE, waiting for COMMIT.
    saved: Mutex<Option<Config>>,
    streams: Mutex<Streams>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn election(id: &Option<p4::Uint128>) -> Option<u128> {
    id.as_ref().map(|u| from_uint128(Some(u)))
}

fn rpc_status(code: Code, message: impl Into<String>) -> rpc::Status {
    rpc::Status {
        code: code as i32,
        message: message.into(),
        details: vec![],
    }
}

impl Service {
    pub fn new(core: Arc<SwitchCore>, device_id: u64) -> anyhow::Result<Self> {
        let index = intpath_sr_int::p4info().context("built-in P4Info")?;
        let bad = p4info_map::mismatches(&index);
        anyhow::ensure!(bad.is_empty(), "built-in P4Info: {}", bad.join("; "));
        Ok(Self {
            core,
            device_id,
            config: RwLock::new(Config {
                index: Arc::new(index),
                device_config: Vec::new(),
                cookie: None,
            }),
            saved: Mutex::new(None),
            streams: Mutex::new(Streams::default()),
        })
    }

    fn index(&self) -> Arc<P4InfoIndex> {
        self.config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .index
            .clone()
    }

    fn check_device(&self, device_id: u64) -> Result<(), Status> {
        if device_id != self.device_id {
            return Err(Status::not_found(format!(
                "device {device_id} is not this switch (device {})",
                self.device_id
            )));
        }
        Ok(())
    }
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// The gRPC face of a shared [`Service`].
pub struct Handle(Arc<Service>);

impl std::ops::Deref for Handle {
    type Target = Service;
    fn deref(&self) -> &Service {
        &self.0
    }
}

/// Serves P4Runtime on `addr` (over TLS when `tls` says) until SIGINT or
/// SIGTERM, then stops the switch.
pub fn serve(
    switch: Switch,
    packet_in: std::sync::mpsc::Receiver<PacketIn>,
    device_id: u64,
    addr: SocketAddr,
    tls: Option<tonic::transport::ServerTlsConfig>,
) -> anyhow::Result<()> {
    let service = Arc::new(Service::new(switch.core.clone(), device_id)?);
    let delivery = service.clone();
    std::thread::Builder::new()
        .name("packet-in".into())
        .spawn(move || {
            while let Ok(frame) = packet_in.recv() {
                delivery.packet_in(&frame);
            }
        })
        .context("starting the packet-in thread")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("tokio runtime")?;
    runtime.block_on(async {
        let stop = intpath_core::shutdown::signals().context("catching SIGTERM and SIGINT")?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("P4Runtime address {addr}"))?;
        tracing::info!(%addr, tls = tls.is_some(), "P4Runtime server listening");
        let mut server = tonic::transport::Server::builder();
        if let Some(tls) = tls {
            server = server.tls_config(tls).context("P4Runtime TLS settings")?;
        }
        let incoming = tokio_stream::StreamExt::map(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            |conn| conn.map(|c| Policed::new(c, PingPolicy::default())),
        );
        server
            .layer(tower::util::MapRequestLayer::new(limit_reads))
            .add_service(P4RuntimeServer::new(Handle(service)))
            .serve_with_incoming_shutdown(incoming, stop)
            .await
            .context("P4Runtime server")
    })?;
    tracing::info!("shutting down");
    switch.stop();
    Ok(())
}

/// Caps the body of Read calls at [`MAX_READ_REQUEST`]; other calls keep
/// gRPC's 4 MiB (writes come from the primary only).
fn limit_reads(req: http::Request<tonic::body::Body>) -> http::Request<tonic::body::Body> {
    if req.uri().path() == "/p4.v1.P4Runtime/Read" {
        req.map(|b| tonic::body::Body::new(http_body_util::Limited::new(b, MAX_READ_REQUEST)))
    } else {
        req
    }
}
