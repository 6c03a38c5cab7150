//! P4Runtime write-side conformance of `intpath-switch` over real gRPC,
//! with raw requests (our client refuses to build most of these): batch
//! atomicity, entries the spec calls invalid, and refused batches too large
//! for one error per update in the status.

mod common;

use intpath_p4rt::client::{to_uint128, ClientError};
use intpath_p4rt::p4info::{Match, P4InfoIndex};
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::v1::{self as p4, p4_runtime_client::P4RuntimeClient};
use intpath_test_support::child::output_within;
use p4::write_request::Atomicity;
use prost::Message;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::Code;

const ELECTION_ID: u128 = 10;

/// A primary session on one plain tonic channel (default settings, like
/// any other client): the stream's sender and responses stay alive with it.
struct Raw {
    grpc: P4RuntimeClient<Channel>,
    device_id: u64,
    _stream: (
        mpsc::Sender<p4::StreamMessageRequest>,
        tonic::Streaming<p4::StreamMessageResponse>,
    ),
}

impl Raw {
    async fn connect(sw: &common::SwitchProcess) -> Self {
        let mut grpc = (P4RuntimeClient::connect(format!("http://{}", sw.grpc)).await)
            .unwrap_or_else(|e| panic!("gRPC connection: {e:?}; the switch: {}", sw.state()));
        let (tx, rx) = mpsc::channel(4);
        tx.send(p4::StreamMessageRequest {
            update: Some(p4::stream_message_request::Update::Arbitration(
                p4::MasterArbitrationUpdate {
                    device_id: sw.device_id,
                    election_id: Some(to_uint128(ELECTION_ID)),
                    ..Default::default()
                },
            )),
        })
        .await
        .unwrap();
        let mut responses = grpc
            .stream_channel(ReceiverStream::new(rx))
            .await
            .expect("stream channel")
            .into_inner();
        let first = responses.message().await.unwrap().expect("arbitration");
        match first.update {
            Some(p4::stream_message_response::Update::Arbitration(a)) => {
                assert_eq!(a.status.map(|s| s.code), Some(0), "primary");
            }
            other => panic!("expected arbitration, got {other:?}"),
        }
        Raw {
            grpc,
            device_id: sw.device_id,
            _stream: (tx, responses),
        }
    }

    async fn write(
        &mut self,
        updates: Vec<p4::Update>,
        atomicity: Atomicity,
    ) -> Result<(), tonic::Status> {
        self.grpc
            .write(p4::WriteRequest {
                device_id: self.device_id,
                election_id: Some(to_uint128(ELECTION_ID)),
                updates,
                atomicity: atomicity as i32,
                ..Default::default()
            })
            .await
            .map(|_| ())
    }

    /// Every entry but the default ones, in a fixed order.
    async fn entries(&mut self) -> Vec<p4::TableEntry> {
        let mut out = self.read(p4::TableEntry::default()).await;
        out.sort_by_key(|e| e.encode_to_vec());
        out
    }

    async fn default_entry(&mut self, table_id: u32) -> p4::TableEntry {
        let filter = p4::TableEntry {
            table_id,
            is_default_action: true,
            ..Default::default()
        };
        let mut found = self.read(filter).await;
        assert_eq!(found.len(), 1, "{found:?}");
        found.remove(0)
    }

    async fn read(&mut self, filter: p4::TableEntry) -> Vec<p4::TableEntry> {
        let mut stream = self
            .grpc
            .read(p4::ReadRequest {
                device_id: self.device_id,
                entities: vec![p4::Entity {
                    entity: Some(p4::entity::Entity::TableEntry(filter)),
                }],
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let mut out = Vec::new();
        while let Some(r) = stream.message().await.unwrap() {
            out.extend(r.entities.into_iter().filter_map(|e| match e.entity {
                Some(p4::entity::Entity::TableEntry(t)) => Some(t),
                _ => None,
            }));
        }
        out
    }
}

fn up(kind: p4::update::Type, e: &p4::TableEntry) -> p4::Update {
    intpath_p4rt::client::update(kind, p4::entity::Entity::TableEntry(e.clone()))
}

fn insert(e: &p4::TableEntry) -> p4::Update {
    up(p4::update::Type::Insert, e)
}

/// The per-update codes of a refused batch.
fn codes(status: &tonic::Status) -> Vec<Code> {
    assert_eq!(status.code(), Code::Unknown, "{status:?}");
    rpc::Status::decode(status.details())
        .expect("status details")
        .details
        .iter()
        .map(|any| {
            assert!(any.type_url.ends_with("/p4.v1.Error"));
            Code::from_i32(
                p4::Error::decode(any.value.as_slice())
                    .unwrap()
                    .canonical_code,
            )
        })
        .collect()
}

fn sink(ix: &P4InfoIndex, path_id: u8) -> p4::TableEntry {
    ix.table_entry(
        "SrIntIngress.sink",
        &[("hdr.sr.path_id", Match::Exact(vec![path_id]))],
        "SrIntIngress.sink_to_collector",
        &[],
    )
    .unwrap()
}

fn route(ix: &P4InfoIndex, addr: [u8; 4], len: i32) -> p4::TableEntry {
    ix.table_entry(
        "SrIntIngress.ipv4_lpm",
        &[("hdr.ipv4.dst_addr", Match::Lpm(addr.to_vec(), len))],
        "SrIntIngress.ipv4_forward",
        &[("dst_mac", &[0x0a, 0, 9, 9]), ("port", &[2])],
    )
    .unwrap()
}

/// A switch holding one sink entry (path 9), its primary session, the P4Info.
async fn with_one_sink() -> (common::SwitchProcess, Raw, std::sync::Arc<P4InfoIndex>) {
    let sw = common::start_switch(7, &[]);
    let mut raw = Raw::connect(&sw).await;
    let ix = common::p4info_index();
    raw.write(vec![insert(&sink(&ix, 9))], Atomicity::ContinueOnError)
        .await
        .unwrap();
    (sw, raw, ix)
}

#[tokio::test(flavor = "current_thread")]
async fn atomic_batches_are_all_or_nothing() {
    let (_sw, mut raw, ix) = with_one_sink().await;
    let before = raw.entries().await;
    assert_eq!(before.len(), 1);
    let mut no_action = sink(&ix, 12);
    no_action.action = None;
    for atomicity in [Atomicity::RollbackOnError, Atomicity::DataplaneAtomic] {
        // A duplicate (refused by the table) after two good inserts.
        let batch = vec![
            insert(&sink(&ix, 10)),
            insert(&route(&ix, [10, 0, 9, 0], 24)),
            insert(&sink(&ix, 9)),
        ];
        let status = raw.write(batch, atomicity).await.expect_err("refused");
        assert_eq!(
            codes(&status),
            [Code::Aborted, Code::Aborted, Code::AlreadyExists],
            "{atomicity:?}"
        );
        assert!(
            status.message().contains("#2 ALREADY_EXISTS")
                && status.message().contains("rolled back"),
            "{}",
            status.message()
        );
        assert_eq!(raw.entries().await, before, "{atomicity:?} left a trace");
        // An invalid update (refused before the tables) among good ones.
        let batch = vec![insert(&sink(&ix, 11)), insert(&no_action)];
        let status = raw.write(batch, atomicity).await.expect_err("refused");
        assert_eq!(codes(&status), [Code::Aborted, Code::InvalidArgument]);
        assert_eq!(raw.entries().await, before, "{atomicity:?} left a trace");
    }
    // A good atomic batch goes in whole.
    raw.write(
        vec![insert(&sink(&ix, 10)), insert(&sink(&ix, 11))],
        Atomicity::DataplaneAtomic,
    )
    .await
    .unwrap();
    assert_eq!(raw.entries().await.len(), 3);
    // CONTINUE_ON_ERROR keeps the good half.
    let status = raw
        .write(
            vec![insert(&sink(&ix, 12)), insert(&sink(&ix, 9))],
            Atomicity::ContinueOnError,
        )
        .await
        .expect_err("duplicate refused");
    assert_eq!(codes(&status), [Code::Ok, Code::AlreadyExists]);
    assert_eq!(raw.entries().await.len(), 4);
}

#[tokio::test(flavor = "current_thread")]
async fn invalid_entries_are_refused_with_invalid_argument() {
    let (_sw, mut raw, ix) = with_one_sink().await;
    let modify = |e: &p4::TableEntry| up(p4::update::Type::Modify, e);
    let generator = |num_labels: &[u8], labels: &[u8]| {
        ix.table_entry(
            "SrIntIngress.generator",
            &[("hdr.sr.path_id", Match::Exact(vec![3]))],
            "SrIntIngress.push_route",
            &[("num_labels", num_labels), ("labels", labels)],
        )
        .unwrap()
    };
    let without_action = |mut e: p4::TableEntry| {
        e.action = None;
        e
    };
    let mut empty_key = generator(&[0], &[0]);
    empty_key.r#match.clear();
    let mut lpm_zero = route(&ix, [0, 0, 0, 0], 0);
    lpm_zero.r#match = route(&ix, [10, 0, 0, 0], 8).r#match;
    if let Some(p4::field_match::FieldMatchType::Lpm(l)) = &mut lpm_zero.r#match[0].field_match_type
    {
        l.value = vec![0];
        l.prefix_len = 0;
    }
    let mut priority = sink(&ix, 20);
    priority.priority = 5;
    let mut lpm_priority = route(&ix, [10, 1, 0, 0], 16);
    lpm_priority.priority = 1;
    let mut missing_param = generator(&[0], &[0]);
    params(&mut missing_param).pop();
    let mut extra_param = route(&ix, [10, 2, 0, 0], 16);
    let again = params(&mut extra_param)[1].clone();
    params(&mut extra_param).push(again);
    let mut wide_param = route(&ix, [10, 3, 0, 0], 16);
    params(&mut wide_param)[1].value = vec![0x02, 0x00]; // port is 9 bits
    let mut idle = sink(&ix, 21);
    idle.idle_timeout_ns = 1_000_000;

    let cases: Vec<(&str, p4::Update)> = vec![
        (
            "INSERT without action",
            insert(&without_action(sink(&ix, 13))),
        ),
        (
            "MODIFY without action",
            modify(&without_action(sink(&ix, 9))),
        ),
        ("empty key on an exact table", insert(&empty_key)),
        ("LPM field with prefix_len 0", insert(&lpm_zero)),
        ("priority on an exact table", insert(&priority)),
        ("priority on an LPM table", insert(&lpm_priority)),
        ("parameter missing", insert(&missing_param)),
        ("parameter twice", insert(&extra_param)),
        ("parameter wider than its field", insert(&wide_param)),
        ("idle timeout on a table without one", insert(&idle)),
    ];
    for (what, bad) in cases {
        let good = insert(&sink(&ix, 30));
        let status = raw
            .write(vec![good, bad], Atomicity::ContinueOnError)
            .await
            .expect_err(what);
        assert_eq!(codes(&status), [Code::Ok, Code::InvalidArgument], "{what}");
        eprintln!("{what}: {}", status.message());
        // The good update went in; take it out for the next case.
        raw.write(
            vec![up(p4::update::Type::Delete, &without_action(sink(&ix, 30)))],
            Atomicity::ContinueOnError,
        )
        .await
        .unwrap_or_else(|s| panic!("{what}: the good update was not applied: {s:?}"));
    }
    assert_eq!(raw.entries().await, vec![sink(&ix, 9)]);

    // The wildcard route is the LPM field left out; it reads back the same.
    let default_route = route(&ix, [0, 0, 0, 0], 0);
    assert!(default_route.r#match.is_empty(), "the client leaves /0 out");
    raw.write(vec![insert(&default_route)], Atomicity::ContinueOnError)
        .await
        .expect("a /0 route as an empty key");
    assert!(raw.entries().await.contains(&default_route));

    // MODIFY of the default entry without an action restores the program's
    // default action, set_switch_id(0).
    let config = |id: u8| {
        ix.default_entry(
            "SrIntIngress.switch_config",
            "SrIntIngress.set_switch_id",
            &[("switch_id", &[id])],
        )
        .unwrap()
    };
    for e in [config(7), without_action(config(7))] {
        raw.write(vec![modify(&e)], Atomicity::ContinueOnError)
            .await
            .unwrap();
    }
    assert_eq!(raw.default_entry(config(0).table_id).await, config(0));
}

/// 2,000 refused updates in one batch: the per-update errors cannot all fit
/// the status a client accepts (16 KiB for tonic, 8 KiB for gRPC C-core),
/// yet the client must learn why, with no RESOURCE_EXHAUSTED or protocol
/// error in its place.
#[tokio::test(flavor = "current_thread")]
async fn a_batch_of_2000_failures_explains_itself() {
    let sw = common::start_switch(7, &[]);
    let ix = common::p4info_index();
    let mut raw = Raw::connect(&sw).await;
    let routes = deletes(&ix, 2000);
    // A plain tonic client with its default limits.
    let status = raw
        .write(routes.clone(), Atomicity::ContinueOnError)
        .await
        .expect_err("deletes of absent entries refused");
    assert_eq!(status.code(), Code::Unknown, "{status:?}");
    assert!(
        status
            .message()
            .starts_with("2000 of 2000 updates failed (NOT_FOUND 2000): #0 NOT_FOUND: no such entry in SrIntIngress.ipv4_lpm"),
        "{}",
        status.message()
    );
    let metadata = status.details().len().div_ceil(3) * 4 + status.message().len();
    assert!(metadata <= 8 * 1024, "{metadata} bytes of status");

    // A batch of 100 still gets one error per update.
    let mut some = deletes(&ix, 100);
    some.push(insert(&sink(&ix, 1)));
    let status = raw
        .write(some, Atomicity::ContinueOnError)
        .await
        .expect_err("deletes of absent entries refused");
    let codes = codes(&status);
    assert_eq!(codes.len(), 101);
    assert_eq!(codes[..100], [Code::NotFound; 100]);
    assert_eq!(codes[100], Code::Ok);

    // Our client says which and why, in a dozen lines.
    let client = common::connect(&sw, ELECTION_ID + 1).await;
    let e = client.write(routes).await.expect_err("refused");
    assert!(
        matches!(e, ClientError::Write { rejected: 2000, .. }),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("2000 of 2000 updates rejected")
            && text.contains("NOT_FOUND: no such entry in SrIntIngress.ipv4_lpm"),
        "{text}"
    );
    assert!(text.len() < 4096, "{text}");
}

fn params(e: &mut p4::TableEntry) -> &mut Vec<p4::action::Param> {
    match &mut e.action {
        Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(a)),
        }) => &mut a.params,
        _ => unreachable!("a direct action"),
    }
}

/// Deletes of `n` routes the switch does not have.
fn deletes(ix: &P4InfoIndex, n: u32) -> Vec<p4::Update> {
    (0..n)
        .map(|i| {
            let [a, b, c, d] = (0x0a00_0000 + i).to_be_bytes();
            up(p4::update::Type::Delete, &route(ix, [a, b, c, d], 32))
        })
        .collect()
}

/// The same 2,000 refused updates sent from gRPC C-core (grpcio and the
/// official `p4runtime` bindings, installed by scripts/install-deps.sh),
/// whose default metadata limits are 8 KiB (soft, refused at random above)
/// and 16 KiB: the status arrives as UNKNOWN with its reason, not as
/// RESOURCE_EXHAUSTED.
#[test]
fn a_grpc_c_core_client_reads_the_reason_of_2000_failures() {
    let sw = common::start_switch(7, &[]);
    let ix = common::p4info_index();
    let request = p4::WriteRequest {
        device_id: sw.device_id,
        election_id: Some(to_uint128(ELECTION_ID)),
        updates: deletes(&ix, 2000),
        ..Default::default()
    };
    let dir = std::env::temp_dir();
    let path = dir.join(format!("ipsw-write-{}.bin", std::process::id()));
    std::fs::write(&path, request.encode_to_vec()).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ccore_client.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    // Several runs: C-core refuses metadata between its limits at random.
    for _ in 0..3 {
        let child = std::process::Command::new(&python)
            .arg(&script)
            .arg(sw.grpc.to_string())
            .arg(&path)
            .current_dir(&dir)
            .env("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{python} {}: {e}", script.display()));
        let out = output_within(child, Duration::from_secs(60), "ccore_client.py");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines = stdout.lines();
        assert_eq!(lines.next(), Some("code UNKNOWN details 0"), "{stdout}");
        let message = lines.next().unwrap_or_default();
        assert!(
            message.starts_with("2000 of 2000 updates failed (NOT_FOUND 2000): #0 NOT_FOUND"),
            "{stdout}"
        );
    }
    let _ = std::fs::remove_file(&path);
}
