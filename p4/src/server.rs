//! The P4Runtime server: arbitration, pipeline config, Write / Read of the
//! tables and counters, packet-in / packet-out, capabilities.
//!
//! The switch starts with the embedded P4Info, so it is usable without a
//! pipeline push; a pushed P4Info must describe the same program (names and
//! widths, see [`crate::p4info_map::mismatches`]) and replaces the ids.

use crate::p4info_map;
use crate::ping_policy::{PingPolicy, Policed};
use crate::schema;
use crate::switch::{PacketIn, Switch, SwitchCore};
use crate::tables::{Entry, TableError, WriteOp};
use anyhow::Context;
use intpath_p4rt::client::{from_uint128, to_uint128};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::v1 as p4;
use p4::p4_runtime_server::{P4Runtime, P4RuntimeServer};
use prost::Message;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use tokio::sync::mpsc;
use tokio_stream::{wrappers::ReceiverStream, Stream, StreamExt};
use tonic::{Code, Request, Response, Status};

const API_VERSION: &str = "1.3.0";
const STREAM_BACKLOG: usize = 1024;

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

    /// Writes and pipeline changes come from the primary controller only.
    fn check_primary(&self, election_id: &Option<p4::Uint128>) -> Result<(), Status> {
        let primary = lock(&self.streams).primary().map(|(_, e)| e);
        match (primary, election(election_id)) {
            (Some(p), Some(e)) if p == e => Ok(()),
            (None, _) => Err(Status::permission_denied(
                "no primary controller: open the stream channel and arbitrate first",
            )),
            (Some(_), _) => Err(Status::permission_denied(
                "election id is not the primary controller's",
            )),
        }
    }

    /// Sends every stream its role after the primary may have changed.
    fn announce(&self, streams: &Streams) {
        let Some((primary, election_id)) = streams.primary() else {
            return;
        };
        for (id, c) in &streams.clients {
            if c.election_id.is_none() {
                continue;
            }
            let status = if *id == primary {
                rpc_status(Code::Ok, "primary")
            } else {
                rpc_status(Code::AlreadyExists, "backup")
            };
            let msg = p4::StreamMessageResponse {
                update: Some(p4::stream_message_response::Update::Arbitration(
                    p4::MasterArbitrationUpdate {
                        device_id: self.device_id,
                        role: None,
                        election_id: Some(to_uint128(election_id)),
                        status: Some(status),
                    },
                )),
            };
            let _ = c.tx.try_send(Ok(msg));
        }
    }

    fn arbitrate(&self, stream: u64, update: p4::MasterArbitrationUpdate) -> Result<(), Status> {
        self.check_device(update.device_id)?;
        if update.role.as_ref().is_some_and(|r| !r.name.is_empty()) {
            return Err(Status::unimplemented("only the default role exists"));
        }
        let id = election(&update.election_id)
            .ok_or_else(|| Status::invalid_argument("arbitration without an election id"))?;
        let mut streams = lock(&self.streams);
        if streams
            .clients
            .iter()
            .any(|(s, c)| *s != stream && c.election_id == Some(id))
        {
            return Err(Status::invalid_argument(format!(
                "election id {id} is already used by another controller"
            )));
        }
        if let Some(c) = streams.clients.get_mut(&stream) {
            c.election_id = Some(id);
        }
        self.announce(&streams);
        Ok(())
    }

    fn close_stream(&self, stream: u64) {
        let mut streams = lock(&self.streams);
        let was_primary = streams.primary().map(|(s, _)| s) == Some(stream);
        streams.clients.remove(&stream);
        if was_primary {
            self.announce(&streams);
        }
    }

    fn packet_out(&self, stream: u64, out: p4::PacketOut) {
        if lock(&self.streams).primary().map(|(s, _)| s) != Some(stream) {
            tracing::debug!("packet-out from a backup controller ignored");
            return;
        }
        let index = self.index();
        let port_id = p4info_map::metadata_id(&index, schema::PACKET_OUT, "egress_port");
        let port = out
            .metadata
            .iter()
            .find(|m| Some(m.metadata_id) == port_id)
            .map_or(0, |m| {
                m.value
                    .iter()
                    .fold(0u32, |acc, b| (acc << 8) | u32::from(*b))
            });
        let mut frame = Vec::with_capacity(out.payload.len() + 4);
        frame.extend_from_slice(&(port as u16).to_be_bytes());
        frame.extend_from_slice(&[0, 0]);
        frame.extend_from_slice(&out.payload);
        if let Err(e) = self.core.packet_out(&frame) {
            tracing::warn!("packet-out dropped: {e}");
        }
    }

    /// Hands a frame from the CPU port to the primary controller.
    fn packet_in(&self, frame: &[u8]) {
        let Some((header, payload)) = frame.split_at_checked(4) else {
            return;
        };
        let index = self.index();
        let mut metadata = Vec::new();
        for (name, value) in [("ingress_port", &header[..2]), ("_pad", &header[2..])] {
            if let Some(id) = p4info_map::metadata_id(&index, schema::PACKET_IN, name) {
                metadata.push(p4::PacketMetadata {
                    metadata_id: id,
                    value: intpath_p4rt::bytes::canonical(value, 16)
                        .unwrap_or_else(|_| value.to_vec()),
                });
            }
        }
        let msg = p4::StreamMessageResponse {
            update: Some(p4::stream_message_response::Update::Packet(p4::PacketIn {
                payload: payload.to_vec(),
                metadata,
            })),
        };
        let streams = lock(&self.streams);
        if let Some(c) = streams.primary().and_then(|(s, _)| streams.clients.get(&s)) {
            if c.tx.try_send(Ok(msg)).is_err() {
                tracing::debug!("packet-in dropped: controller is not reading");
            }
        }
    }

    fn update(&self, index: &P4InfoIndex, u: &p4::Update) -> Result<(WriteOp, Entry), p4::Error> {
        let err = |code: Code, message: String| p4::Error {
            canonical_code: code as i32,
            message,
            ..Default::default()
        };
        let op = match p4::update::Type::try_from(u.r#type) {
            Ok(p4::update::Type::Insert) => WriteOp::Insert,
            Ok(p4::update::Type::Modify) => WriteOp::Modify,
            Ok(p4::update::Type::Delete) => WriteOp::Delete,
            _ => return Err(err(Code::InvalidArgument, "update type unspecified".into())),
        };
        let entry = match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
            Some(p4::entity::Entity::TableEntry(t)) => t,
            Some(_) => {
                return Err(err(
                    Code::Unimplemented,
                    "only table entries can be written".into(),
                ))
            }
            None => return Err(err(Code::InvalidArgument, "update without entity".into())),
        };
        let named =
            p4info_map::entry_from_p4(index, entry).map_err(|m| err(Code::InvalidArgument, m))?;
        let typed =
            Entry::from_named(&named).map_err(|e| err(Code::InvalidArgument, e.to_string()))?;
        Ok((op, typed))
    }

    fn read_tables(
        &self,
        index: &P4InfoIndex,
        filter: &p4::TableEntry,
        out: &mut Vec<p4::Entity>,
    ) -> Result<(), Status> {
        let tables: Vec<&str> = if filter.table_id == 0 {
            schema::TABLES.iter().map(|t| t.name).collect()
        } else {
            let t = index
                .table_by_id(filter.table_id)
                .map_err(|e| Status::not_found(e.to_string()))?;
            vec![
                schema::table(&t.name)
                    .ok_or_else(|| Status::not_found(format!("no table {}", t.name)))?
                    .name,
            ]
        };
        let key = if filter.r#match.is_empty() {
            None
        } else {
            let named =
                p4info_map::entry_from_p4(index, filter).map_err(Status::invalid_argument)?;
            Some(named.matches)
        };
        let snapshot = self.core.tables();
        for t in tables {
            for e in snapshot.entries(t) {
                let named = e.to_named();
                if named.is_default != filter.is_default_action {
                    continue;
                }
                if key.as_ref().is_some_and(|k| *k != named.matches) {
                    continue;
                }
                let entry = p4info_map::entry_to_p4(index, &named).map_err(Status::internal)?;
                out.push(p4::Entity {
                    entity: Some(p4::entity::Entity::TableEntry(entry)),
                });
            }
        }
        Ok(())
    }

    fn read_counters(
        &self,
        index: &P4InfoIndex,
        filter: &p4::CounterEntry,
        out: &mut Vec<p4::Entity>,
    ) -> Result<(), Status> {
        let names: Vec<String> = if filter.counter_id == 0 {
            schema::COUNTERS
                .iter()
                .map(|c| c.name.to_string())
                .collect()
        } else {
            vec![index
                .counter_by_id(filter.counter_id)
                .map_err(|e| Status::not_found(e.to_string()))?
                .name
                .clone()]
        };
        for name in names {
            let id = index
                .counter(&name)
                .map_err(|e| Status::internal(e.to_string()))?
                .id;
            let size = self.core.counters.size(&name).unwrap_or(0);
            let indices: Vec<usize> = match filter.index {
                Some(p4::Index { index }) => {
                    let i = usize::try_from(index)
                        .ok()
                        .filter(|i| *i < size)
                        .ok_or_else(|| {
                            Status::out_of_range(format!("{name}: index {index} >= size {size}"))
                        })?;
                    vec![i]
                }
                None => (0..size).collect(),
            };
            for i in indices {
                let (packets, bytes) = self.core.counters.read(&name, i).unwrap_or((0, 0));
                out.push(p4::Entity {
                    entity: Some(p4::entity::Entity::CounterEntry(p4::CounterEntry {
                        counter_id: id,
                        index: Some(p4::Index { index: i as i64 }),
                        data: Some(p4::CounterData {
                            byte_count: bytes as i64,
                            packet_count: packets as i64,
                        }),
                    })),
                });
            }
        }
        Ok(())
    }
}

fn table_error(e: &TableError) -> p4::Error {
    let code = match e {
        TableError::InvalidArgument(_) => Code::InvalidArgument,
        TableError::AlreadyExists(_) => Code::AlreadyExists,
        TableError::NotFound(_) => Code::NotFound,
        TableError::Full { .. } => Code::ResourceExhausted,
    };
    p4::Error {
        canonical_code: code as i32,
        message: e.to_string(),
        ..Default::default()
    }
}

/// A failed batch: one `p4.v1.Error` per update in the status details.
fn batch_status(errors: Vec<p4::Error>) -> Status {
    let failed: Vec<&str> = errors
        .iter()
        .filter(|e| e.canonical_code != Code::Ok as i32)
        .map(|e| e.message.as_str())
        .collect();
    let message = format!(
        "{} of {} updates failed: {}",
        failed.len(),
        errors.len(),
        failed.join("; ")
    );
    let details = rpc::Status {
        code: Code::Unknown as i32,
        message: message.clone(),
        details: errors
            .iter()
            .map(|e| prost_types::Any {
                type_url: "type.googleapis.com/p4.v1.Error".into(),
                value: e.encode_to_vec(),
            })
            .collect(),
    };
    Status::with_details(
        Code::Unknown,
        message,
        tonic::codegen::Bytes::from(details.encode_to_vec()),
    )
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

#[tonic::async_trait]
impl P4Runtime for Handle {
    async fn write(
        &self,
        request: Request<p4::WriteRequest>,
    ) -> Result<Response<p4::WriteResponse>, Status> {
        let req = request.into_inner();
        self.check_device(req.device_id)?;
        self.check_primary(&req.election_id)?;
        let index = self.index();
        let parsed: Vec<Result<(WriteOp, Entry), p4::Error>> =
            req.updates.iter().map(|u| self.update(&index, u)).collect();
        let valid: Vec<(WriteOp, Entry)> = parsed.iter().filter_map(|r| r.clone().ok()).collect();
        let mut applied = self.core.write(&valid).into_iter();
        let errors: Vec<p4::Error> = parsed
            .into_iter()
            .map(|r| match r {
                Ok(_) => match applied.next() {
                    Some(Err(e)) => table_error(&e),
                    _ => p4::Error::default(),
                },
                Err(e) => e,
            })
            .collect();
        if errors.iter().any(|e| e.canonical_code != Code::Ok as i32) {
            for e in errors.iter().filter(|e| e.canonical_code != 0) {
                tracing::debug!(code = e.canonical_code, "write refused: {}", e.message);
            }
            return Err(batch_status(errors));
        }
        Ok(Response::new(p4::WriteResponse {}))
    }

    type ReadStream = BoxStream<p4::ReadResponse>;

    async fn read(
        &self,
        request: Request<p4::ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        let req = request.into_inner();
        self.check_device(req.device_id)?;
        let index = self.index();
        let mut entities = Vec::new();
        for e in &req.entities {
            match &e.entity {
                Some(p4::entity::Entity::TableEntry(t)) => {
                    self.read_tables(&index, t, &mut entities)?
                }
                Some(p4::entity::Entity::CounterEntry(c)) => {
                    self.read_counters(&index, c, &mut entities)?
                }
                _ => {
                    return Err(Status::unimplemented(
                        "only table entries and counters can be read",
                    ))
                }
            }
        }
        let response = p4::ReadResponse { entities };
        Ok(Response::new(Box::pin(tokio_stream::once(Ok(response)))))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        request: Request<p4::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::SetForwardingPipelineConfigResponse>, Status> {
        use p4::set_forwarding_pipeline_config_request::Action;
        let req = request.into_inner();
        self.check_device(req.device_id)?;
        self.check_primary(&req.election_id)?;
        let action = Action::try_from(req.action).unwrap_or(Action::Unspecified);
        if action == Action::Commit {
            let saved = lock(&self.saved).take().ok_or_else(|| {
                Status::failed_precondition("COMMIT without a config saved by VERIFY_AND_SAVE")
            })?;
            *self.config.write().unwrap_or_else(|p| p.into_inner()) = saved;
            self.core.reset_tables();
            return Ok(Response::new(p4::SetForwardingPipelineConfigResponse {}));
        }
        let config = req
            .config
            .ok_or_else(|| Status::invalid_argument("no forwarding pipeline config"))?;
        let info = config
            .p4info
            .ok_or_else(|| Status::invalid_argument("the config has no P4Info"))?;
        let index = P4InfoIndex::new(info).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let bad = p4info_map::mismatches(&index);
        if !bad.is_empty() {
            return Err(Status::invalid_argument(format!(
                "P4Info does not match this switch's pipeline (sr_int.p4): {}",
                bad.join("; ")
            )));
        }
        if !config.p4_device_config.is_empty()
            && serde_json::from_slice::<serde::de::IgnoredAny>(&config.p4_device_config).is_err()
        {
            return Err(Status::invalid_argument(
                "p4_device_config is not a bmv2 JSON document",
            ));
        }
        let new = Config {
            index: Arc::new(index),
            device_config: config.p4_device_config,
            cookie: config.cookie.map(|c| c.cookie),
        };
        match action {
            Action::Verify => {}
            Action::VerifyAndSave => *lock(&self.saved) = Some(new),
            Action::VerifyAndCommit | Action::ReconcileAndCommit => {
                *self.config.write().unwrap_or_else(|p| p.into_inner()) = new;
                // The program is the same; a fresh commit starts from empty
                // tables as on bmv2, a reconcile keeps them.
                if action == Action::VerifyAndCommit {
                    self.core.reset_tables();
                }
            }
            Action::Unspecified | Action::Commit => {
                return Err(Status::invalid_argument(
                    "pipeline config action unspecified",
                ))
            }
        }
        Ok(Response::new(p4::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        request: Request<p4::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::GetForwardingPipelineConfigResponse>, Status> {
        use p4::get_forwarding_pipeline_config_request::ResponseType;
        let req = request.into_inner();
        self.check_device(req.device_id)?;
        let c = self.config.read().unwrap_or_else(|p| p.into_inner());
        let kind = ResponseType::try_from(req.response_type).unwrap_or(ResponseType::All);
        let with_p4info = matches!(kind, ResponseType::All | ResponseType::P4infoAndCookie);
        let with_device = matches!(
            kind,
            ResponseType::All | ResponseType::DeviceConfigAndCookie
        );
        let config = p4::ForwardingPipelineConfig {
            p4info: with_p4info.then(|| c.index.p4info().clone()),
            p4_device_config: if with_device {
                c.device_config.clone()
            } else {
                Vec::new()
            },
            cookie: c
                .cookie
                .map(|cookie| p4::forwarding_pipeline_config::Cookie { cookie }),
        };
        Ok(Response::new(p4::GetForwardingPipelineConfigResponse {
            config: Some(config),
        }))
    }

    type StreamChannelStream = BoxStream<p4::StreamMessageResponse>;

    async fn stream_channel(
        &self,
        request: Request<tonic::Streaming<p4::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let mut inbound = request.into_inner();
        // Like PI on gRPC C-core: nothing (not even response headers) goes
        // out before the client's arbitration, so clients that wait for the
        // switch to speak first fail here as they would on bmv2.
        let first = inbound
            .message()
            .await?
            .ok_or_else(|| Status::cancelled("stream closed before arbitration"))?;
        if !matches!(
            first.update,
            Some(p4::stream_message_request::Update::Arbitration(_))
        ) {
            return Err(Status::failed_precondition(
                "the first stream message must be a MasterArbitrationUpdate",
            ));
        }
        let mut inbound = tokio_stream::once(Ok(first)).chain(inbound);
        let (tx, rx) = mpsc::channel(STREAM_BACKLOG);
        let id = {
            let mut streams = lock(&self.streams);
            streams.next_id += 1;
            let id = streams.next_id;
            streams.clients.insert(
                id,
                Client {
                    election_id: None,
                    tx: tx.clone(),
                },
            );
            id
        };
        let service = self.0.clone();
        tokio::spawn(async move {
            while let Some(msg) = inbound.next().await {
                let Ok(msg) = msg else { break };
                match msg.update {
                    Some(p4::stream_message_request::Update::Arbitration(a)) => {
                        if let Err(status) = service.arbitrate(id, a) {
                            let _ = tx.send(Err(status)).await;
                            break;
                        }
                    }
                    Some(p4::stream_message_request::Update::Packet(p)) => {
                        service.packet_out(id, p)
                    }
                    _ => tracing::debug!("stream message ignored"),
                }
            }
            service.close_stream(id);
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn capabilities(
        &self,
        _request: Request<p4::CapabilitiesRequest>,
    ) -> Result<Response<p4::CapabilitiesResponse>, Status> {
        Ok(Response::new(p4::CapabilitiesResponse {
            p4runtime_api_version: API_VERSION.into(),
            experimental: None,
        }))
    }
}

/// Serves P4Runtime on `addr` until SIGINT or SIGTERM, then stops the switch.
pub fn serve(
    switch: Switch,
    packet_in: std::sync::mpsc::Receiver<PacketIn>,
    device_id: u64,
    addr: SocketAddr,
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
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("P4Runtime address {addr}"))?;
        tracing::info!(%addr, "P4Runtime server listening");
        let incoming = tokio_stream::StreamExt::map(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            |conn| conn.map(|c| Policed::new(c, PingPolicy::default())),
        );
        tonic::transport::Server::builder()
            .add_service(P4RuntimeServer::new(Handle(service)))
            .serve_with_incoming_shutdown(incoming, shutdown_signal())
            .await
            .context("P4Runtime server")
    })?;
    tracing::info!("shutting down");
    switch.stop();
    Ok(())
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
