//! A P4Runtime client for one device.
//!
//! It keeps the stream channel open for the whole session because the
//! device ties primaryship to that stream: when the stream ends (switch
//! restart, network loss) the client is no longer primary and must
//! [`Client::reconnect`] and re-sync. Errors always name the switch and its
//! address, and rejected writes name the entry and carry the switch's own
//! message, because a deploy touches many switches at once.

mod entries;
mod error;
mod pipeline;
mod stream;

pub use entries::{entity, update};
pub use error::{ClientError, UpdateFailure};
pub use pipeline::p4info_difference;
pub use stream::{Arbitration, ReceivedPacket};

use crate::p4info::P4InfoIndex;
use crate::proto::p4::v1::{self as p4, p4_runtime_client::P4RuntimeClient};
use error::{error_chain, rpc_error};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use stream::{arbitration_request, read_stream};
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
/// default gRPC limit); a table entry takes tens to a few hundred bytes, so
/// this stays far below while amortising the round trip.
pub const DEFAULT_BATCH: usize = 1000;

/// Response metadata accepted (HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE).
/// hyper's default of 16 KiB is what a refused batch's per-update errors
/// (`grpc-status-details-bin`) pass from ~300 failed updates on a switch
/// that sends them all, as PI does; the reasons would then be lost.
pub const MAX_HEADER_LIST: u32 = 4 << 20;

/// Which device a client talks to, for error messages and requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// A name for people (e.g. the switch's name in a topology).
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
    /// TLS to a switch served with `--grpc-server-ssl` (none: plaintext).
    pub tls: Option<ClientTls>,
}

/// TLS towards a switch: the CA its certificate must chain to and, for a
/// switch started with `--grpc-server-with-client-auth`, our certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTls {
    /// CA certificates (PEM).
    pub ca_pem: Vec<u8>,
    /// Our certificate chain and key (PEM).
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
    /// The name the switch's certificate must carry (default: the host of
    /// its address).
    pub domain: Option<String>,
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
            tls: None,
        }
    }
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

/// A live session with one device.
pub struct Client {
    config: ClientConfig,
    grpc: P4RuntimeClient<Channel>,
    stream_tx: mpsc::Sender<p4::StreamMessageRequest>,
    arbitration: watch::Receiver<Arbitration>,
    packets: Option<mpsc::Receiver<p4::PacketIn>>,
    index: Option<Arc<P4InfoIndex>>,
    /// How the device ended the stream channel, when it said why.
    ended: Arc<OnceLock<tonic::Status>>,
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

    /// Connects without opening the stream channel: no arbitration, so no
    /// election id to collide with anyone's. Reads and Capabilities work
    /// (they need no arbitration); writes, pipeline pushes and packet-outs
    /// are refused by the device.
    pub async fn connect_reader(config: ClientConfig) -> Result<Self, ClientError> {
        let grpc = Self::channel(&config).await?;
        let (stream_tx, _) = mpsc::channel(1);
        let (_, arbitration) = watch::channel(Arbitration::Unarbitrated);
        Ok(Client {
            config,
            grpc,
            stream_tx,
            arbitration,
            packets: None,
            index: None,
            ended: Arc::default(),
        })
    }

    async fn channel(config: &ClientConfig) -> Result<P4RuntimeClient<Channel>, ClientError> {
        let target = &config.target;
        let scheme = if config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let uri = if target.addr.contains("://") {
            target.addr.clone()
        } else {
            format!("{scheme}://{}", target.addr)
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
            .http2_max_header_list_size(MAX_HEADER_LIST)
            .keep_alive_timeout(Duration::from_secs(20));
        let endpoint = match &config.tls {
            None => endpoint,
            Some(tls) => {
                use tonic::transport::{Certificate, ClientTlsConfig, Identity};
                let mut cfg =
                    ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&tls.ca_pem));
                if let Some((cert, key)) = &tls.identity {
                    cfg = cfg.identity(Identity::from_pem(cert, key));
                }
                if let Some(d) = &tls.domain {
                    cfg = cfg.domain_name(d.clone());
                }
                endpoint
                    .tls_config(cfg)
                    .map_err(|e| connect_err(format!("TLS settings: {}", error_chain(&e))))?
            }
        };
        let channel = tokio::time::timeout(config.connect_timeout, endpoint.connect())
            .await
            .map_err(|_| ClientError::Timeout {
                target: target.clone(),
                what: "connect",
                timeout: config.connect_timeout,
            })?
            .map_err(|e| connect_err(error_chain(&e)))?;
        Ok(P4RuntimeClient::new(channel)
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20))
    }

    async fn open(config: ClientConfig) -> Result<Self, ClientError> {
        let target = config.target.clone();
        let mut grpc = Self::channel(&config).await?;

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
        let ended = Arc::new(OnceLock::new());
        tokio::spawn(read_stream(
            responses,
            config.election_id,
            target.clone(),
            arb_tx,
            packet_tx,
            ended.clone(),
        ));
        Ok(Client {
            config,
            grpc,
            stream_tx,
            arbitration,
            packets: Some(packets),
            index: None,
            ended,
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
            Arbitration::Closed | Arbitration::Pending | Arbitration::Unarbitrated => {
                Err(self.closed())
            }
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

    /// Why the stream channel is gone: the device's own reason when it gave
    /// one (a refused arbitration is not a restart), else a lost connection.
    fn closed(&self) -> ClientError {
        let target = self.config.target.clone();
        match self.ended.get() {
            // P4Runtime: a stream whose election id another stream of the
            // same role already holds is ended with INVALID_ARGUMENT.
            Some(s) if s.code() == tonic::Code::InvalidArgument => ClientError::ElectionIdInUse {
                target,
                election_id: self.config.election_id,
                message: s.message().to_owned(),
            },
            Some(s) => rpc_error(&target, "StreamChannel", s.clone()),
            None => ClientError::StreamClosed { target },
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
}
