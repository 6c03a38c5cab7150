//! Real request/response traffic on 127.0.0.1 with known latencies, and a
//! capture of it: the ground truth of the response-latency (Pirate) tests.
//!
//! The server answers each request a fixed delay after it arrived, each on
//! its own timer (so a window of requests comes back together, as from a
//! server working on them in parallel); the client keeps a window of
//! requests in flight, sends the next one as soon as a response arrives and
//! measures every request-to-response time itself. The capture (tcpdump on
//! `lo`, root only) writes the segments into a pcap file with the kernel's
//! timestamps.

use crate::tcpdump::Tcpdump;
use pcap_file::pcap::PcapReader;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Request and response size, bytes: one short segment each.
const MESSAGE: usize = 64;

/// What the client and server do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    /// How long after a request arrives the server answers it.
    pub delay: Duration,
    /// Requests the client keeps in flight.
    pub window: usize,
    /// How long the client keeps sending.
    pub duration: Duration,
}

/// What the client measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// Per request: when it was sent (ns since the Unix epoch) and its
    /// request-to-response latency (ns).
    pub latencies: Vec<(i64, f64)>,
}

impl Measured {
    /// Mean latency of the requests sent in `[from_ns, to_ns)`, and how many.
    pub fn mean_between(&self, from_ns: i64, to_ns: i64) -> (f64, usize) {
        let v: Vec<f64> = self
            .latencies
            .iter()
            .filter(|(t, _)| (from_ns..to_ns).contains(t))
            .map(|(_, l)| *l)
            .collect();
        (v.iter().sum::<f64>() / v.len().max(1) as f64, v.len())
    }

    /// Mean latency of every request.
    pub fn mean(&self) -> f64 {
        self.mean_between(i64::MIN, i64::MAX).0
    }
}

/// The measure of a real-traffic run: the median of the whole
/// epochs' relative errors is under `limit`, over at least `min_epochs`.
/// One epoch may be off when the machine stalls the client mid-epoch; the
/// median must not be.
pub fn assert_median_error_below(mut errors: Vec<f64>, min_epochs: usize, limit: f64) {
    errors.sort_by(f64::total_cmp);
    assert!(errors.len() >= min_epochs, "{} whole epochs", errors.len());
    let median = errors[errors.len() / 2];
    assert!(
        median < limit,
        "median relative error {median} of {errors:?}"
    );
}

fn unix_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Runs one connection of workload `w` on a fresh server; returns once the
/// client has its last response.
pub fn run(w: Workload) -> Measured {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let server = listener.local_addr().expect("bound address");
    let delay = w.delay;
    let srv = std::thread::spawn(move || {
        let (conn, _) = listener.accept().expect("the client connects");
        conn.set_nodelay(true).expect("TCP_NODELAY");
        let mut writer = conn.try_clone().expect("a second handle");
        let (tx, rx) = mpsc::channel::<Instant>();
        let answer = std::thread::spawn(move || {
            for due in rx {
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                if writer.write_all(&[0x72; MESSAGE]).is_err() {
                    return;
                }
            }
        });
        let mut reader = conn;
        let mut req = [0u8; MESSAGE];
        while reader.read_exact(&mut req).is_ok() {
            if tx.send(Instant::now() + delay).is_err() {
                break;
            }
        }
        drop(tx);
        answer.join().expect("the answering thread");
    });
    let mut conn = TcpStream::connect(server).expect("connect to the server");
    conn.set_nodelay(true).expect("TCP_NODELAY");
    let client = conn.local_addr().expect("client address");
    let mut in_flight = std::collections::VecDeque::new();
    let mut latencies = Vec::new();
    let send = |conn: &mut TcpStream, q: &mut std::collections::VecDeque<_>| {
        q.push_back((unix_ns(), Instant::now()));
        conn.write_all(&[0x71; MESSAGE]).expect("request sent");
    };
    let end = Instant::now() + w.duration;
    for _ in 0..w.window.max(1) {
        send(&mut conn, &mut in_flight);
    }
    let mut resp = [0u8; MESSAGE];
    while let Some((sent_ns, sent)) = in_flight.pop_front() {
        conn.read_exact(&mut resp).expect("a response");
        latencies.push((sent_ns, sent.elapsed().as_nanos() as f64));
        if Instant::now() < end {
            send(&mut conn, &mut in_flight);
        }
    }
    drop(conn);
    srv.join().expect("the server thread");
    Measured {
        client,
        server,
        latencies,
    }
}

/// A capture of loopback TCP segments, to or from one port, into a pcap
/// file: tcpdump on `lo` (root), kernel timestamps.
pub struct Capture(Tcpdump);

impl Capture {
    /// Starts capturing the TCP segments from or to `port` (every TCP
    /// segment when `None`).
    pub fn start(path: &Path, port: Option<u16>) -> Self {
        let filter = port.map_or("tcp".to_owned(), |p| format!("tcp port {p}"));
        Capture(Tcpdump::start(Command::new("tcpdump"), "lo", &filter, path))
    }

    /// Stops; returns the number of frames written.
    pub fn stop(self) -> usize {
        let file = self.0.stop();
        let bytes = std::fs::read(&file).expect("the capture file");
        let mut reader = PcapReader::new(bytes.as_slice()).expect("a pcap file");
        let mut frames = 0;
        while let Some(p) = reader.next_packet() {
            p.expect("a whole record");
            frames += 1;
        }
        frames
    }
}
