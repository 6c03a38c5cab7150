//! Helpers every crate's tests share, so that each exists once:
//! [`switch`] starts reference switches (`intpath-switch` processes),
//! [`entries`] reads a switch's entries back by name,
//! [`fake_device`] is an in-process P4Runtime device that misbehaves on
//! request, [`netns`] is the network-namespace lab of the root-only tests
//! and [`probe_frames`] the sample probe they send; [`otlp`] posts traces
//! to the OTLP receiver; [`prometheus`] runs a real Prometheus that
//! scrapes the collector's `/metrics`; [`postgres`] hands out databases on
//! the test PostgreSQL server and runs one test body on both backends;
//! [`rng`] is the seeded generator of the fuzz-style tests; [`pcap`] writes
//! capture files and [`latency_lab`] runs and captures real request/response
//! traffic with known latencies (the Pirate tests); [`telemetry`] fills a
//! telemetry database through the collector's real pipeline; [`apps`] runs
//! the Python applications we did not write (`apps/`), [`shop`] the shop
//! among them; [`daemon`] stops
//! a daemon the moment it listens; [`child`] waits on a child process with
//! a time limit. Dev-only: never a dependency of a
//! library or binary.

pub mod apps;
pub mod child;
pub mod daemon;
pub mod entries;
pub mod fake_device;
pub mod latency_lab;
pub mod netns;
pub mod otlp;
pub mod pcap;
pub mod postgres;
pub mod probe_frames;
pub mod prometheus;
pub mod rng;
pub mod shop;
pub mod switch;
pub mod tcpdump;
pub mod telemetry;
pub mod tls;

pub use tempfile::{tempdir, TempDir};

/// A loopback address nothing listens on (just freed), on a port below the
/// kernel's ephemeral range (32768 and up on Linux). A port from `bind(0)`
/// is in that range: a test polling it until its server listens can be
/// answered by its own socket (the kernel may pick the port as the poll's
/// source, and a TCP connection to itself succeeds), and any connection
/// can take it as its source port before the server binds. Apart from
/// [`daemon`]'s ports (20000–32000) and the Mininet launcher's and the
/// `watch` tests' switches (10100–11500).
pub fn free_addr() -> String {
    free_addr_in(12_000..20_000)
}

/// A loopback address on a port of `ports` that was free just now, drawn
/// at random so that tests running at once rarely try the same one. The
/// draw counts its callers: two tests of one process asking in the same
/// clock tick must not be handed the same port.
pub(crate) fn free_addr_in(ports: std::ops::Range<u16>) -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()).rotate_left(32)
        ^ call.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut rng = rng::Rng(seed | 1);
    loop {
        let port = ports.start + rng.below(ports.len()) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return format!("127.0.0.1:{port}");
        }
    }
}
