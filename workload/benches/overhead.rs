//! The workload's own cost per request, tracing off and on, side by side:
//! CPU time of all six service processes (from /proc) per frontend request
//! at a fixed Poisson rate, and the latencies the load generator saw. The
//! sink that receives the spans runs in this process and is not counted.
//!
//! `cargo bench -p intpath-workload --bench overhead [-- RATE SECONDS]`

#[path = "../tests/support/mod.rs"]
mod support;

use support::{load, Hotel, Sink};

/// utime + stime of `pid`, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc stat");
    // Fields after the `(comm)`: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').expect("stat has (comm)") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rate: f64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(300.0);
    let secs: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10.0);
    let sink = Sink::start();
    let endpoint = sink.endpoint();
    println!(
        "| tracing | requests | CPU µs/request (6 services) | p50 ms | p99 ms | spans/request |"
    );
    println!("|---|---|---|---|---|---|");
    for (label, flags) in [
        ("off", vec!["--otlp-endpoint", &endpoint, "--no-tracing"]),
        ("on (OTLP/HTTP)", vec!["--otlp-endpoint", &endpoint]),
    ] {
        sink.clear();
        let hotel = Hotel::start(&flags, &[]);
        let frontend = hotel.addr("frontend");
        // Warm-up: connections, pools and allocator.
        load(frontend, &["--rate", "100", "--duration", "1"]);
        let pids = hotel.pids();
        let before: f64 = pids.iter().map(|p| cpu_seconds(*p)).sum();
        let spans_before = sink.spans().len();
        let s = load(
            frontend,
            &["--rate", &rate.to_string(), "--duration", &secs.to_string()],
        );
        // Spans still queued are exported within the batch delay: wait for
        // them so their export is counted.
        std::thread::sleep(std::time::Duration::from_millis(600));
        let after: f64 = pids.iter().map(|p| cpu_seconds(*p)).sum();
        let spans = sink.spans().len() - spans_before;
        hotel.stop();
        let n = s["requests"].as_u64().unwrap();
        assert_eq!(s["errors"], 0, "{s}");
        println!(
            "| {label} | {n} | {:.0} | {:.2} | {:.2} | {:.1} |",
            (after - before) * 1e6 / n as f64,
            s["p50_ms"].as_f64().unwrap(),
            s["p99_ms"].as_f64().unwrap(),
            spans as f64 / n as f64
        );
    }
}
