//! A P4Runtime client for one device.
//!
//! It keeps the stream channel open for the whole session because the
//! device ties primaryship to that stream: when the stream ends (switch
//! restart, network loss) the client is no longer primary and must
//! [`Client::reconnect`] and re-sync. Errors always name the switch and its
//! address, and rejected writes name the entry and carry the switch's own
//! message, because a deploy touches many switches at once.

use crate::bytes::{self, ValueError};
use crate::p4info::{P4InfoError, P4InfoIndex};
use crate::proto::google::rpc;
use crate::proto::p4::config::v1::P4Info;
use crate::proto::p4::v1::{self as p4, p4_runtime_client::P4RuntimeClient};
use prost::Message;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};

/// HTTP/2 keepalive ping interval. gRPC C-core servers (PI's
/// simple_switch_grpc among them) accept one ping per 5 minutes while they
/// send no data (`GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS`)
/// and close the connection with GOAWAY `too_many_pings` after two
/// violations; a mostly idle stream channel must stay above that. Dead
/// switches are found by RPC timeouts long before.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(6 * 60);

/// Updates per Write RPC. Devices cap the message size (bmv2: 4 MiB by
/// default gRPC limit); a `push_route` entry is ~130 bytes, so this stays
/// far below while amortising the round trip.
pub const DEFAULT_BATCH: usize = 1000;

/// Which device a client talks to, for error messages and requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// A name for people (the topology's switch name).
    pub name: String,
    /// `host:port` or a full `http://` URI.
    pub addr: String,
    pub device_id: u64,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "switch {} (device {} at {})",
            self.name, self.device_id, self.addr
        )
    }
}

#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub target: Target,
    /// Higher wins arbitration.
    pub election_id: u128,
    /// Empty = the default role (full access).
    pub role: String,
    pub connect_timeout: Duration,
    /// Limit for each unary RPC and for the arbitration answer.
    pub rpc_timeout: Duration,
    pub batch_size: usize,
}

impl ClientConfig {
    pub fn new(target: Target) -> Self {
        ClientConfig {
            target,
            election_id: 1,
            role: String::new(),
            connect_timeout: Duration::from_secs(3),
            rpc_timeout: Duration::from_secs(10),
            batch_size: DEFAULT_BATCH,
        }
    }
}

/// One update of a batch the device refused, with its own words.
#[derive(Debug, Clone)]
pub struct UpdateFailure {
    /// Position in the list given to [`Client::write`].
    pub index: usize,
    /// The entity rendered by name (when the P4Info is known).
    pub update: String,
    pub code: tonic::Code,
    pub message: String,
}

impl fmt::Display for UpdateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "update {} ({}): {:?}: {}",
            self.index, self.update, self.code, self.message
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{target}: cannot connect: {reason}")]
    Connect { target: Target, reason: String },
    #[error("{target}: no answer to {what} within {timeout:?}")]
    Timeout {
        target: Target,
        what: &'static str,
        timeout: Duration,
    },
    #[error("{target}: not primary: the device's primary has election id {primary}, ours is {ours} ({message})")]
    NotPrimary {
        target: Target,
        primary: u128,
        ours: u128,
        message: String,
    },
    #[error("{target}: {what} failed: {code:?}: {message}")]
    Rpc {
        target: Target,
        what: &'static str,
        code: tonic::Code,
        message: String,
    },
    #[error("{target}: {} of {total} updates rejected:\n  {}", failures.len(), failures.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("\n  "))]
    Write {
        target: Target,
        total: usize,
        failures: Vec<UpdateFailure>,
    },
    #[error("{target}: stream channel closed (switch restarted or unreachable)")]
    StreamClosed { target: Target },
    #[error("{target}: no pipeline loaded (push one first)")]
    NoPipeline { target: Target },
    #[error("{target}: P4Info mismatch: {difference}")]
    P4InfoMismatch { target: Target, difference: String },
    #[error("{target}: {source}")]
    P4Info {
        target: Target,
        source: Box<P4InfoError>,
    },
    #[error("{target}: {what}: {source}")]
    Value {
        target: Target,
        what: String,
        source: Box<ValueError>,
    },
}

/// A packet the device sent to the controller, metadata by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedPacket {
    pub payload: Vec<u8>,
    /// `packet_in` header fields, e.g. `("ingress_port", 3)`.
    pub metadata: Vec<(String, u128)>,
}

impl ReceivedPacket {
    pub fn field(&self, name: &str) -> Option<u128> {
        self.metadata
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }
}

/// What the client knows of arbitration, as the device last said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arbitration {
    Pending,
    Primary,
    /// Another controller (or a stale session of ours) is primary.
    Backup {
        primary: u128,
    },
    /// The stream channel ended.
    Closed,
}

pub fn to_uint128(v: u128) -> p4::Uint128 {
    p4::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

pub fn from_uint128(v: Option<&p4::Uint128>) -> u128 {
    v.map_or(0, |v| u128::from(v.high) << 64 | u128::from(v.low))
}

/// The client's first message on the stream channel.
fn arbitration_request(config: &ClientConfig) -> p4::StreamMessageRequest {
    let update = p4::MasterArbitrationUpdate {
        device_id: config.target.device_id,
        role: (!config.role.is_empty()).then(|| p4::Role {
            name: config.role.clone(),
            ..Default::default()
        }),
        election_id: Some(to_uint128(config.election_id)),
        status: None,
    };
    p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Arbitration(update)),
    }
}

/// A live session with one device.
pub struct Client {
    config: ClientConfig,
    grpc: P4RuntimeClient<Channel>,
    stream_tx: mpsc::Sender<p4::StreamMessageRequest>,
    arbitration: watch::Receiver<Arbitration>,
    packets: Option<mpsc::Receiver<p4::PacketIn>>,
    index: Option<Arc<P4InfoIndex>>,
}

impl Client {
    /// Connects, opens the stream channel and runs arbitration. Returns
    /// [`ClientError::NotPrimary`] when another controller holds the device.
    pub async fn connect(config: ClientConfig) -> Result<Self, ClientError> {
        let mut client = Self::open(config).await?;
        client.wait_arbitration().await?;
        Ok(client)
    }

    /// Connects and arbitrates but accepts being a backup (for status views).
    pub async fn connect_observer(config: ClientConfig) -> Result<Self, ClientError> {
        let mut client = Self::open(config).await?;
        match client.wait_arbitration().await {
            Ok(()) | Err(ClientError::NotPrimary { .. }) => Ok(client),
            Err(e) => Err(e),
        }
    }

    async fn open(config: ClientConfig) -> Result<Self, ClientError> {
        let target = config.target.clone();
        let uri = if target.addr.contains("://") {
            target.addr.clone()
        } else {
            format!("http://{}", target.addr)
        };
        let connect_err = |reason: String| ClientError::Connect {
            target: target.clone(),
            reason,
        };
        let endpoint = Endpoint::from_shared(uri)
            .map_err(|e| connect_err(format!("bad address: {e}")))?
            .connect_timeout(config.connect_timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(Duration::from_secs(20));
        let channel = tokio::time::timeout(config.connect_timeout, endpoint.connect())
            .await
            .map_err(|_| ClientError::Timeout {
                target: target.clone(),
                what: "connect",
                timeout: config.connect_timeout,
            })?
            .map_err(|e| connect_err(error_chain(&e)))?;
        let mut grpc = P4RuntimeClient::new(channel)
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20);

        // The arbitration request goes first, queued before the call: a
        // P4Runtime server may stay silent (not even response headers, as
        // PI on gRPC C-core does) until it has read the client's arbitration.
        let (stream_tx, rx) = mpsc::channel(1024);
        stream_tx
            .try_send(arbitration_request(&config))
            .expect("a fresh channel has room");
        let responses = tokio::time::timeout(
            config.rpc_timeout,
            grpc.stream_channel(ReceiverStream::new(rx)),
        )
        .await
        .map_err(|_| ClientError::Timeout {
            target: target.clone(),
            what: "StreamChannel",
            timeout: config.rpc_timeout,
        })?
        .map_err(|s| rpc_error(&target, "StreamChannel", s))?
        .into_inner();

        let (arb_tx, arbitration) = watch::channel(Arbitration::Pending);
        let (packet_tx, packets) = mpsc::channel(4096);
        tokio::spawn(read_stream(
            responses,
            config.election_id,
            target.clone(),
            arb_tx,
            packet_tx,
        ));
        Ok(Client {
            config,
            grpc,
            stream_tx,
            arbitration,
            packets: Some(packets),
            index: None,
        })
    }

    async fn wait_arbitration(&mut self) -> Result<(), ClientError> {
        let timeout = self.config.rpc_timeout;
        let state = tokio::time::timeout(
            timeout,
            self.arbitration.wait_for(|a| *a != Arbitration::Pending),
        )
        .await
        .map_err(|_| ClientError::Timeout {
            target: self.config.target.clone(),
            what: "arbitration",
            timeout,
        })?
        .map(|s| *s)
        .unwrap_or(Arbitration::Closed);
        match state {
            Arbitration::Primary => Ok(()),
            Arbitration::Backup { primary } => Err(ClientError::NotPrimary {
                target: self.config.target.clone(),
                primary,
                ours: self.config.election_id,
                message: "arbitration lost".into(),
            }),
            Arbitration::Closed | Arbitration::Pending => Err(self.closed()),
        }
    }

    /// Re-establishes the connection after the device went away (e.g. a
    /// switch restart). Tables are then empty on a restarted switch: the
    /// caller re-syncs (push pipeline, write the difference).
    pub async fn reconnect(&mut self) -> Result<(), ClientError> {
        let fresh = Self::connect(self.config.clone()).await?;
        let index = self.index.take();
        *self = fresh;
        self.index = index;
        Ok(())
    }

    pub fn target(&self) -> &Target {
        &self.config.target
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    pub fn arbitration(&self) -> Arbitration {
        *self.arbitration.borrow()
    }

    pub fn is_primary(&self) -> bool {
        self.arbitration() == Arbitration::Primary
    }

    /// The P4Info the client uses to name things (set by
    /// [`Client::set_pipeline`] or [`Client::use_p4info`]).
    pub fn index(&self) -> Option<&Arc<P4InfoIndex>> {
        self.index.as_ref()
    }

    pub fn use_p4info(&mut self, index: Arc<P4InfoIndex>) {
        self.index = Some(index);
    }

    fn closed(&self) -> ClientError {
        ClientError::StreamClosed {
            target: self.config.target.clone(),
        }
    }

    fn election_id(&self) -> Option<p4::Uint128> {
        Some(to_uint128(self.config.election_id))
    }

    async fn unary<T>(
        &self,
        what: &'static str,
        call: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, ClientError> {
        let timeout = self.config.rpc_timeout;
        match tokio::time::timeout(timeout, call).await {
            Err(_) => Err(ClientError::Timeout {
                target: self.config.target.clone(),
                what,
                timeout,
            }),
            Ok(Err(status)) => Err(self.status_error(what, status)),
            Ok(Ok(r)) => Ok(r.into_inner()),
        }
    }

    fn status_error(&self, what: &'static str, status: tonic::Status) -> ClientError {
        if status.code() == tonic::Code::PermissionDenied {
            return ClientError::NotPrimary {
                target: self.config.target.clone(),
                primary: 0,
                ours: self.config.election_id,
                message: status.message().to_owned(),
            };
        }
        rpc_error(&self.config.target, what, status)
    }

    pub async fn capabilities(&self) -> Result<String, ClientError> {
        let mut grpc = self.grpc.clone();
        let r = self
            .unary(
                "Capabilities",
                grpc.capabilities(p4::CapabilitiesRequest {
                    device_id: self.config.target.device_id,
                }),
            )
            .await?;
        Ok(r.p4runtime_api_version)
    }

    /// Pushes a pipeline (P4Info + target config, e.g. bmv2 JSON) and keeps
    /// the P4Info to name things from then on.
    pub async fn set_pipeline(
        &mut self,
        index: Arc<P4InfoIndex>,
        device_config: Vec<u8>,
        cookie: u64,
    ) -> Result<(), ClientError> {
        let mut grpc = self.grpc.clone();
        let request = p4::SetForwardingPipelineConfigRequest {
            device_id: self.config.target.device_id,
            role: self.config.role.clone(),
            election_id: self.election_id(),
            action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
            config: Some(p4::ForwardingPipelineConfig {
                p4info: Some(index.p4info().clone()),
                p4_device_config: device_config,
                cookie: Some(p4::forwarding_pipeline_config::Cookie { cookie }),
            }),
            ..Default::default()
        };
        self.unary(
            "SetForwardingPipelineConfig",
            grpc.set_forwarding_pipeline_config(request),
        )
        .await?;
        self.index = Some(index);
        Ok(())
    }

    /// The device's current P4Info and cookie (None when it has no pipeline).
    pub async fn get_pipeline(&self) -> Result<Option<(P4Info, u64)>, ClientError> {
        let mut grpc = self.grpc.clone();
        let request = p4::GetForwardingPipelineConfigRequest {
            device_id: self.config.target.device_id,
            response_type: p4::get_forwarding_pipeline_config_request::ResponseType::P4infoAndCookie
                as i32,
        };
        match self
            .unary(
                "GetForwardingPipelineConfig",
                grpc.get_forwarding_pipeline_config(request),
            )
            .await
        {
            Ok(r) => Ok(r.config.and_then(|c| {
                let cookie = c.cookie.map_or(0, |c| c.cookie);
                c.p4info.map(|i| (i, cookie))
            })),
            Err(ClientError::Rpc {
                code: tonic::Code::FailedPrecondition,
                ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Makes sure the device runs `index`'s program: pushes it when the
    /// device has none, adopts it when the device already runs the same
    /// P4Info, and fails naming the first difference otherwise (unless
    /// `replace` is set, then it pushes). Returns whether it pushed.
    pub async fn ensure_pipeline(
        &mut self,
        index: Arc<P4InfoIndex>,
        device_config: &[u8],
        cookie: u64,
        replace: bool,
    ) -> Result<bool, ClientError> {
        match self.get_pipeline().await? {
            Some((remote, _)) if remote == *index.p4info() => {
                self.index = Some(index);
                Ok(false)
            }
            Some((remote, _)) if !replace => Err(ClientError::P4InfoMismatch {
                target: self.config.target.clone(),
                difference: p4info_difference(index.p4info(), &remote),
            }),
            _ => {
                self.set_pipeline(index, device_config.to_vec(), cookie)
                    .await?;
                Ok(true)
            }
        }
    }

    fn require_index(&self) -> Result<&Arc<P4InfoIndex>, ClientError> {
        self.index.as_ref().ok_or_else(|| ClientError::NoPipeline {
            target: self.config.target.clone(),
        })
    }

    /// Writes updates in batches (CONTINUE_ON_ERROR). Every rejected update
    /// is reported with its position, its rendering and the device's
    /// message; updates the device accepted stay written.
    pub async fn write(&self, updates: Vec<p4::Update>) -> Result<(), ClientError> {
        let total = updates.len();
        let mut failures = Vec::new();
        let mut offset = 0;
        let mut remaining = updates.into_iter().peekable();
        while remaining.peek().is_some() {
            let batch: Vec<p4::Update> = remaining
                .by_ref()
                .take(self.config.batch_size.max(1))
                .collect();
            let n = batch.len();
            if let Err(status) = self.write_batch(batch.clone()).await? {
                failures.extend(self.update_failures(&status, &batch, offset));
            }
            offset += n;
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(ClientError::Write {
                target: self.config.target.clone(),
                total,
                failures,
            })
        }
    }

    /// Outer error: the RPC could not be made; inner: the device refused.
    async fn write_batch(
        &self,
        updates: Vec<p4::Update>,
    ) -> Result<Result<(), tonic::Status>, ClientError> {
        let mut grpc = self.grpc.clone();
        let request = p4::WriteRequest {
            device_id: self.config.target.device_id,
            role: self.config.role.clone(),
            election_id: self.election_id(),
            updates,
            atomicity: p4::write_request::Atomicity::ContinueOnError as i32,
            ..Default::default()
        };
        let timeout = self.config.rpc_timeout;
        match tokio::time::timeout(timeout, grpc.write(request)).await {
            Err(_) => Err(ClientError::Timeout {
                target: self.config.target.clone(),
                what: "Write",
                timeout,
            }),
            Ok(Ok(_)) => Ok(Ok(())),
            Ok(Err(status)) => match status.code() {
                tonic::Code::Unavailable | tonic::Code::PermissionDenied => {
                    Err(self.status_error("Write", status))
                }
                _ => Ok(Err(status)),
            },
        }
    }

    /// Per-update errors from the status details (one `p4.v1.Error` per
    /// update, OK for the ones that went in); a status without details
    /// blames the whole batch.
    fn update_failures(
        &self,
        status: &tonic::Status,
        batch: &[p4::Update],
        offset: usize,
    ) -> Vec<UpdateFailure> {
        let details = rpc::Status::decode(status.details())
            .map(|s| s.details)
            .unwrap_or_default();
        let errors: Vec<Option<p4::Error>> = details
            .iter()
            .map(|any| {
                any.type_url
                    .ends_with("/p4.v1.Error")
                    .then(|| p4::Error::decode(any.value.as_slice()).ok())
                    .flatten()
            })
            .collect();
        if errors.len() != batch.len() || errors.iter().any(Option::is_none) {
            return batch
                .iter()
                .enumerate()
                .map(|(i, u)| UpdateFailure {
                    index: offset + i,
                    update: self.describe_update(u),
                    code: status.code(),
                    message: status.message().to_owned(),
                })
                .collect();
        }
        errors
            .into_iter()
            .flatten()
            .zip(batch)
            .enumerate()
            .filter(|(_, (e, _))| e.canonical_code != tonic::Code::Ok as i32)
            .map(|(i, (e, u))| UpdateFailure {
                index: offset + i,
                update: self.describe_update(u),
                code: tonic::Code::from_i32(e.canonical_code),
                message: e.message,
            })
            .collect()
    }

    /// An update rendered by name, for messages.
    pub fn describe_update(&self, update: &p4::Update) -> String {
        let kind = p4::update::Type::try_from(update.r#type)
            .map_or_else(|_| format!("type {}", update.r#type), |t| format!("{t:?}"));
        let what = match (
            &self.index,
            update.entity.as_ref().and_then(|e| e.entity.as_ref()),
        ) {
            (Some(ix), Some(p4::entity::Entity::TableEntry(t))) => ix.describe_entry(t),
            (_, Some(e)) => format!("{e:?}"),
            (_, None) => "no entity".into(),
        };
        format!("{} {what}", kind.to_uppercase())
    }

    /// Reads every entity matching the filters (unset fields = wildcards).
    pub async fn read(&self, filters: Vec<p4::Entity>) -> Result<Vec<p4::Entity>, ClientError> {
        let mut grpc = self.grpc.clone();
        let request = p4::ReadRequest {
            device_id: self.config.target.device_id,
            role: self.config.role.clone(),
            entities: filters,
        };
        let timeout = self.config.rpc_timeout;
        let target = self.config.target.clone();
        let collect = async move {
            let mut stream = grpc.read(request).await?.into_inner();
            let mut out = Vec::new();
            while let Some(r) = stream.message().await? {
                out.extend(r.entities);
            }
            Ok::<_, tonic::Status>(out)
        };
        match tokio::time::timeout(timeout, collect).await {
            Err(_) => Err(ClientError::Timeout {
                target,
                what: "Read",
                timeout,
            }),
            Ok(r) => r.map_err(|s| self.status_error("Read", s)),
        }
    }

    /// Entries of one table (by name), or of every table; default-action
    /// entries are not included.
    pub async fn read_table_entries(
        &self,
        table: Option<&str>,
    ) -> Result<Vec<p4::TableEntry>, ClientError> {
        let table_id = match table {
            Some(name) => self.resolve(|ix| ix.table(name).map(|t| t.id))?,
            None => 0,
        };
        let filter = entity(p4::entity::Entity::TableEntry(p4::TableEntry {
            table_id,
            ..Default::default()
        }));
        Ok(self
            .read(vec![filter])
            .await?
            .into_iter()
            .filter_map(|e| match e.entity {
                Some(p4::entity::Entity::TableEntry(t)) if !t.is_default_action => Some(t),
                _ => None,
            })
            .collect())
    }

    /// The default-action entry of a table.
    pub async fn read_default_entry(
        &self,
        table: &str,
    ) -> Result<Option<p4::TableEntry>, ClientError> {
        let table_id = self.resolve(|ix| ix.table(table).map(|t| t.id))?;
        let filter = entity(p4::entity::Entity::TableEntry(p4::TableEntry {
            table_id,
            is_default_action: true,
            ..Default::default()
        }));
        Ok(self
            .read(vec![filter])
            .await?
            .into_iter()
            .find_map(|e| match e.entity {
                Some(p4::entity::Entity::TableEntry(t)) if t.is_default_action => Some(t),
                _ => None,
            }))
    }

    /// `(index, packets, bytes)` of an indexed counter: one cell, or all.
    pub async fn read_counter(
        &self,
        name: &str,
        index: Option<i64>,
    ) -> Result<Vec<(i64, i64, i64)>, ClientError> {
        let counter_id = self.resolve(|ix| ix.counter(name).map(|c| c.id))?;
        let filter = entity(p4::entity::Entity::CounterEntry(p4::CounterEntry {
            counter_id,
            index: index.map(|index| p4::Index { index }),
            data: None,
        }));
        let mut cells: Vec<(i64, i64, i64)> = self
            .read(vec![filter])
            .await?
            .into_iter()
            .filter_map(|e| match e.entity {
                Some(p4::entity::Entity::CounterEntry(c)) => {
                    let d = c.data.unwrap_or_default();
                    Some((c.index.map_or(0, |i| i.index), d.packet_count, d.byte_count))
                }
                _ => None,
            })
            .collect();
        cells.sort_unstable();
        Ok(cells)
    }

    fn resolve<T>(
        &self,
        f: impl FnOnce(&P4InfoIndex) -> Result<T, P4InfoError>,
    ) -> Result<T, ClientError> {
        f(self.require_index()?).map_err(|source| ClientError::P4Info {
            target: self.config.target.clone(),
            source: Box::new(source),
        })
    }

    /// Sends a packet-out; `metadata` names `packet_out` header fields
    /// (missing ones are zero).
    pub async fn packet_out(
        &self,
        payload: Vec<u8>,
        metadata: &[(&str, u128)],
    ) -> Result<(), ClientError> {
        let header = self.resolve(|ix| ix.packet_metadata("packet_out").cloned())?;
        for (name, _) in metadata {
            self.resolve(|_| header.field(name).map(|_| ()))?;
        }
        let metadata = header
            .metadata
            .iter()
            .map(|m| {
                let v = metadata
                    .iter()
                    .find(|(n, _)| *n == m.name)
                    .map_or(0, |&(_, v)| v);
                let value =
                    bytes::encode_uint(v, m.bitwidth).map_err(|source| ClientError::Value {
                        target: self.config.target.clone(),
                        what: format!("packet_out field {}", m.name),
                        source: Box::new(source),
                    })?;
                Ok(p4::PacketMetadata {
                    metadata_id: m.id,
                    value,
                })
            })
            .collect::<Result<_, ClientError>>()?;
        self.stream_tx
            .send(p4::StreamMessageRequest {
                update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
                    payload,
                    metadata,
                })),
            })
            .await
            .map_err(|_| self.closed())
    }

    /// The next packet-in, waiting at most `timeout`; None on timeout.
    pub async fn next_packet_in(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<ReceivedPacket>, ClientError> {
        let header = self.resolve(|ix| ix.packet_metadata("packet_in").cloned())?;
        let closed = self.closed();
        let packets = self.packets.as_mut().ok_or(closed)?;
        let packet = match tokio::time::timeout(timeout, packets.recv()).await {
            Err(_) => return Ok(None),
            Ok(None) => return Err(self.closed()),
            Ok(Some(p)) => p,
        };
        let metadata = packet
            .metadata
            .iter()
            .map(|m| {
                let name = header
                    .metadata
                    .iter()
                    .find(|f| f.id == m.metadata_id)
                    .map_or_else(|| format!("#{}", m.metadata_id), |f| f.name.clone());
                (name, bytes::decode_uint(&m.value).unwrap_or(0))
            })
            .collect();
        Ok(Some(ReceivedPacket {
            payload: packet.payload,
            metadata,
        }))
    }
}

pub fn entity(e: p4::entity::Entity) -> p4::Entity {
    p4::Entity { entity: Some(e) }
}

pub fn update(kind: p4::update::Type, e: p4::entity::Entity) -> p4::Update {
    p4::Update {
        r#type: kind as i32,
        entity: Some(entity(e)),
    }
}

fn rpc_error(target: &Target, what: &'static str, status: tonic::Status) -> ClientError {
    ClientError::Rpc {
        target: target.clone(),
        what,
        code: status.code(),
        message: status.message().to_owned(),
    }
}

/// The innermost causes too: tonic's top-level transport error just says
/// "transport error".
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

/// Reads the stream channel until it ends: arbitration answers update the
/// state, packet-ins are queued (dropped with a warning when nobody reads).
async fn read_stream(
    mut responses: tonic::Streaming<p4::StreamMessageResponse>,
    ours: u128,
    target: Target,
    arbitration: watch::Sender<Arbitration>,
    packets: mpsc::Sender<p4::PacketIn>,
) {
    use p4::stream_message_response::Update;
    loop {
        match responses.message().await {
            Ok(Some(msg)) => match msg.update {
                Some(Update::Arbitration(a)) => {
                    let primary = from_uint128(a.election_id.as_ref());
                    let ok = a.status.as_ref().is_none_or(|s| s.code == 0);
                    let state = if ok && primary == ours {
                        Arbitration::Primary
                    } else {
                        Arbitration::Backup { primary }
                    };
                    tracing::debug!(%target, ?state, "arbitration");
                    arbitration.send_replace(state);
                }
                Some(Update::Packet(p)) => {
                    let _ = packets.try_send(p).inspect_err(|_| {
                        tracing::warn!(%target, "packet-in dropped: queue full");
                    });
                }
                Some(Update::Error(e)) => {
                    tracing::warn!(%target, code = e.canonical_code, message = %e.message, "stream error");
                }
                _ => {}
            },
            Ok(None) => break,
            Err(status) => {
                tracing::debug!(%target, %status, "stream channel ended");
                break;
            }
        }
    }
    arbitration.send_replace(Arbitration::Closed);
}

/// The first name-level difference between two P4Infos: an object one has
/// and the other lacks, or one whose id, key or parameters differ.
pub fn p4info_difference(ours: &P4Info, theirs: &P4Info) -> String {
    fn named<T>(
        items: &[T],
        preamble: impl Fn(&T) -> Option<&crate::proto::p4::config::v1::Preamble>,
    ) -> Vec<(String, u32, &T)> {
        let mut v: Vec<_> = items
            .iter()
            .map(|x| {
                let p = preamble(x);
                (
                    p.map_or_else(String::new, |p| p.name.clone()),
                    p.map_or(0, |p| p.id),
                    x,
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
    fn compare<T: PartialEq>(
        kind: &str,
        ours: Vec<(String, u32, &T)>,
        theirs: Vec<(String, u32, &T)>,
    ) -> Option<String> {
        for (name, id, x) in &ours {
            match theirs.iter().find(|(n, _, _)| n == name) {
                None => return Some(format!("{kind} {name} is missing on the device")),
                Some((_, tid, _)) if tid != id => {
                    return Some(format!(
                        "{kind} {name} has id {id:#x} here, {tid:#x} on the device"
                    ))
                }
                Some((_, _, y)) if y != x => {
                    return Some(format!(
                        "{kind} {name} is defined differently on the device"
                    ))
                }
                _ => {}
            }
        }
        theirs
            .iter()
            .find(|(n, _, _)| !ours.iter().any(|(m, _, _)| m == n))
            .map(|(n, _, _)| format!("{kind} {n} exists only on the device"))
    }
    compare(
        "table",
        named(&ours.tables, |t| t.preamble.as_ref()),
        named(&theirs.tables, |t| t.preamble.as_ref()),
    )
    .or_else(|| {
        compare(
            "action",
            named(&ours.actions, |t| t.preamble.as_ref()),
            named(&theirs.actions, |t| t.preamble.as_ref()),
        )
    })
    .or_else(|| {
        compare(
            "counter",
            named(&ours.counters, |t| t.preamble.as_ref()),
            named(&theirs.counters, |t| t.preamble.as_ref()),
        )
    })
    .or_else(|| {
        compare(
            "controller header",
            named(&ours.controller_packet_metadata, |t| t.preamble.as_ref()),
            named(&theirs.controller_packet_metadata, |t| t.preamble.as_ref()),
        )
    })
    .unwrap_or_else(|| {
        "the P4Infos differ outside tables, actions, counters and controller headers".into()
    })
}
