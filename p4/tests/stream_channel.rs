//! The reference switch's stream channel behaves like PI on gRPC C-core:
//! silent (not even response headers) until the client's arbitration, so a
//! client that waits for the switch to speak first fails here too.

use intpath_p4rt::client::to_uint128;
use intpath_p4rt::proto::p4::v1::{self as p4, p4_runtime_client::P4RuntimeClient};
use intpath_test_support::{free_addr, switch::SwitchProc};
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

fn arbitration(device_id: u64) -> p4::StreamMessageRequest {
    p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Arbitration(
            p4::MasterArbitrationUpdate {
                device_id,
                election_id: Some(to_uint128(1)),
                ..Default::default()
            },
        )),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_until_the_clients_arbitration() {
    let bin = Path::new(env!("CARGO_BIN_EXE_intpath-switch"));
    let sw = SwitchProc::start_with(bin, 3, free_addr(), &[]);
    let mut grpc = P4RuntimeClient::connect(format!("http://{}", sw.addr))
        .await
        .unwrap();
    let (tx, rx) = mpsc::channel(4);
    let call = tokio::spawn(async move { grpc.stream_channel(ReceiverStream::new(rx)).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !call.is_finished(),
        "the switch answered the stream channel before arbitration"
    );
    tx.send(arbitration(3)).await.unwrap();
    let mut responses = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("headers after arbitration")
        .unwrap()
        .unwrap()
        .into_inner();
    let first = responses.message().await.unwrap().unwrap();
    assert!(
        matches!(
            first.update,
            Some(p4::stream_message_response::Update::Arbitration(ref a)) if a.device_id == 3
        ),
        "{first:?}"
    );

    // A stream that opens with anything else is refused.
    let mut grpc = P4RuntimeClient::connect(format!("http://{}", sw.addr))
        .await
        .unwrap();
    let packet = p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Packet(
            p4::PacketOut::default(),
        )),
    };
    let status = grpc
        .stream_channel(tokio_stream::iter([packet]))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status}");
}
