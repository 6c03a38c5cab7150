//! The reference switch's stream channel behaves like PI on gRPC C-core:
//! silent (not even response headers) until the client's arbitration, so a
//! client that waits for the switch to speak first fails here too; and a
//! client that pings more often than C-core permits is sent away.

use intpath_p4rt::client::to_uint128;
use intpath_p4rt::proto::p4::v1::{self as p4, p4_runtime_client::P4RuntimeClient};
use intpath_test_support::{free_addr, switch::SwitchProc};
use std::io::{Read, Write};
use std::net::TcpStream;
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

fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend_from_slice(&[kind, flags, 0, 0, 0, 0]);
    f.extend_from_slice(payload);
    f
}

/// The frames the server sends until it closes the connection.
fn frames_until_close(conn: &mut TcpStream) -> Vec<(u8, Vec<u8>)> {
    let mut bytes = Vec::new();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    conn.read_to_end(&mut bytes)
        .expect("the switch closes the connection");
    let mut frames = Vec::new();
    let mut rest = &bytes[..];
    while rest.len() >= 9 {
        let len = u32::from_be_bytes([0, rest[0], rest[1], rest[2]]) as usize;
        frames.push((rest[3], rest[9..9 + len].to_vec()));
        rest = &rest[9 + len..];
    }
    frames
}

#[test]
fn a_client_pinging_too_often_gets_goaway_too_many_pings() {
    let bin = Path::new(env!("CARGO_BIN_EXE_intpath-switch"));
    let sw = SwitchProc::start_with(bin, 4, free_addr(), &[]);
    let mut conn = TcpStream::connect(&sw.addr).unwrap();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(frame(0x4, 0, &[]));
    // C-core allows two strikes: pings 2 and 3 are strikes, 4 is too many.
    for n in 0..4u8 {
        out.extend(frame(0x6, 0, &[n; 8]));
    }
    conn.write_all(&out).unwrap();
    let frames = frames_until_close(&mut conn);
    // Pings that arrive with the offending one may go unanswered.
    let acks = frames.iter().filter(|(kind, _)| *kind == 0x6).count();
    assert!(acks <= 3, "{frames:?}");
    let (kind, goaway) = frames.last().unwrap();
    assert_eq!(*kind, 0x7, "{frames:?}");
    assert_eq!(&goaway[4..8], &11u32.to_be_bytes(), "ENHANCE_YOUR_CALM");
    assert_eq!(&goaway[8..], b"too_many_pings");

    // Pings within the policy are answered and the connection stays open.
    let mut conn = TcpStream::connect(&sw.addr).unwrap();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(frame(0x4, 0, &[]));
    out.extend(frame(0x6, 0, &[1; 8]));
    out.extend(frame(0x6, 0, &[2; 8]));
    conn.write_all(&out).unwrap();
    conn.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut bytes = vec![0; 4096];
    let mut got = 0;
    while let Ok(n) = conn.read(&mut bytes[got..]) {
        assert!(n > 0, "the switch closed a connection within the policy");
        got += n;
    }
    assert!(
        !bytes[..got].windows(14).any(|w| w == b"too_many_pings"),
        "{:?}",
        &bytes[..got]
    );
}
