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
//! telemetry database through the collector's real pipeline; [`shop`] runs
//! the Python application we did not write (`apps/shop`); [`daemon`] stops
//! a daemon the moment it listens. Dev-only: never a dependency of a
//! library or binary.

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

/// Ports below the kernel's ephemeral range (32768 and up on Linux): no
/// connection on the machine takes one as its source port and no `bind(0)`
/// is given one, so a port found free here stays free until the test's
/// daemon binds it. (From the ephemeral range, any client's connect could
/// take it in between, and the daemon's clients then met another socket.)
const QUIET_PORTS: std::ops::Range<u16> = 20_000..32_000;

/// A loopback address nothing listens on (just freed), on a port of
/// [`QUIET_PORTS`].
pub fn free_addr() -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let seed = nanos ^ u64::from(std::process::id()) ^ call.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut rng = rng::Rng(seed | 1);
    loop {
        let port = QUIET_PORTS.start + rng.below(QUIET_PORTS.len()) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return format!("127.0.0.1:{port}");
        }
    }
}
