//! Real request/response traffic on 127.0.0.1 with known latencies, and a
//! capture of it: the ground truth of the response-latency (Pirate) tests.
//!
//! The server answers each request a fixed delay after it arrived, each on
//! its own timer (so a window of requests comes back together, as from a
//! server working on them in parallel); the client keeps a window of
//! requests in flight, sends the next one as soon as a response arrives and
//! measures every request-to-response time itself. The capture (an
//! `AF_PACKET` socket on `lo`, root only) writes the segments to or from
//! the server's port into a pcap file, stamped when the capture thread
//! receives them.

use intpath_rawsock::{Options, PacketSocket};
use pcap_file::pcap::{PcapHeader, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
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

/// A capture of loopback segments to or from one port, into a pcap file.
pub struct Capture {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<usize>>,
}

impl Capture {
    /// Starts capturing on `lo` (needs root) the TCP segments from or to
    /// `port` (every frame when `None`).
    pub fn start(path: &Path, port: Option<u16>) -> Self {
        let ifindex: u32 = std::fs::read_to_string("/sys/class/net/lo/ifindex")
            .expect("lo's index")
            .trim()
            .parse()
            .expect("a number");
        let sock = PacketSocket::open(
            ifindex,
            &Options {
                receive: true,
                // A loopback frame passes the socket twice (out, then in).
                ignore_outgoing: true,
                recv_timeout: Some(Duration::from_millis(20)),
                ..Options::default()
            },
            false,
        )
        .expect("an AF_PACKET socket on lo (root)");
        let file = std::fs::File::create(path).expect("pcap file created");
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            snaplen: 65535,
            ts_resolution: TsResolution::NanoSecond,
            ..PcapHeader::default()
        };
        let mut out = PcapWriter::with_header(std::io::BufWriter::new(file), header)
            .expect("pcap header written");
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut bufs = vec![vec![0u8; 65_536]; 16];
            let mut lens = vec![None; 16];
            let mut written = 0;
            while !stopped.load(Ordering::Relaxed) {
                let n = sock
                    .recv_batch(&mut bufs, |b| b.as_mut_slice(), &mut lens)
                    .expect("capture");
                let at = Duration::from_nanos(unix_ns() as u64);
                for (b, len) in bufs.iter().zip(&lens).take(n) {
                    let Some(len) = *len else { continue };
                    let frame = &b[..len];
                    if port.is_none_or(|p| tcp_port_matches(frame, p)) {
                        out.write_packet(&crate::pcap::packet(at, frame))
                            .expect("record written");
                        written += 1;
                    }
                }
            }
            written
        });
        Capture {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops and flushes; returns the number of frames written.
    pub fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .map_or(0, |t| t.join().expect("the capture thread"))
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Whether an Ethernet/IPv4/TCP frame is from or to `port`.
fn tcp_port_matches(frame: &[u8], port: u16) -> bool {
    match etherparse::SlicedPacket::from_ethernet(frame) {
        Ok(p) => match p.transport {
            Some(etherparse::TransportSlice::Tcp(t)) => {
                t.source_port() == port || t.destination_port() == port
            }
            _ => false,
        },
        Err(_) => false,
    }
}
