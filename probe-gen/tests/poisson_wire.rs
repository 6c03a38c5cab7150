//! Poisson spacing as it reaches the wire, on a real veth pair.

mod common;

use common::{final_counts, final_number, run_ok, send, Capture, Veth};
use intpath_core::wire::ProbeRepr;
use std::path::Path;
use std::process::Command;

const RATE: f64 = 1000.0;

/// Poisson runs tried before the test gives up on a machine that keeps
/// descheduling the sender (a run takes about a second).
const ATTEMPTS: usize = 12;

/// The p99 lateness (µs) a run may have and still be judged. The sender
/// reports quantiles as the upper bound of a power-of-two bucket, so this
/// is the bound of the bucket [0.52, 1.05) ms: fewer than 1 % of packets
/// left a mean gap or more late, which moves the gaps' CDF by about 2 %
/// where the KS critical value is 6 % (with a real-time task taking each
/// core for 1 ms in every 11, p99 came out in this bucket and KS 0.039).
const MAX_P99_US: u64 = (1 << 20) / 1000;

/// What one second of probes at [`RATE`] looked like on the wire.
struct Run {
    /// The sender's p99 lateness against its own schedule.
    p99_us: u64,
    /// Gaps in seconds on both clocks: the generator's stamps and the
    /// peer's receive times.
    gaps: [(&'static str, Vec<f64>); 2],
}

fn run(v: &Veth, plan: &Path, seed: &str, pace: &str) -> Run {
    let cap = Capture::start(v, "udp");
    let c = send(
        v,
        plan,
        &format!("--path 3 --rate {RATE} --duration 1 --seed {seed} {pace}"),
    );
    // Real-time priority, so that the builds and tests sharing the machine
    // do not take the sender's CPU at its deadlines.
    let mut rt = Command::new("chrt");
    rt.args(["--fifo", "10"])
        .arg(c.get_program())
        .args(c.get_args());
    let stderr = run_ok(&mut rt);
    let frames = cap.finish();
    let (sent, errors) = final_counts(&stderr);
    assert_eq!((frames.len() as u64, errors), (sent, 0));
    let gaps =
        |ts: Vec<u64>| -> Vec<f64> { ts.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e9).collect() };
    let send_ts = frames
        .iter()
        .map(|f| ProbeRepr::parse(&f.data).unwrap().payload.send_ts)
        .collect();
    let recv_ts = frames.iter().map(|f| f.ts_ns).collect();
    Run {
        p99_us: final_number(&stderr, "p99 "),
        gaps: [("send_ts", gaps(send_ts)), ("capture", gaps(recv_ts))],
    }
}

/// The KS distance of `gaps` from the exponential law at [`RATE`], and the
/// critical value at the 0.1 % level.
fn ks(poisson: bool, clock: &str, gaps: &[f64]) -> (f64, f64) {
    let d = common::ks_exponential(gaps, RATE);
    let crit = common::ks_critical_0001(gaps.len());
    eprintln!(
        "poisson={poisson} {clock}: KS {d:.4} (critical {crit:.4}, {} gaps)",
        gaps.len()
    );
    (d, crit)
}

/// The schedule itself is tested against the exponential law with 100k
/// gaps (tests/schedule.rs); here the question is whether what reaches the
/// wire still is Poisson. About 1000 gaps reject constant spacing by a wide
/// margin. A sender descheduled for milliseconds bunches packets, which
/// says nothing of the pacing: the sender runs at real-time priority, and
/// the Poisson fit is judged on the first of up to [`ATTEMPTS`] runs that
/// kept its schedule (p99 lateness within [`MAX_P99_US`]); the test fails
/// when none did. This test has its own binary so that the
/// other veth tests do not compete with it for the CPU.
#[test]
#[ignore = "needs root"]
fn poisson_arrivals_fit_the_exponential_and_constant_ones_do_not() {
    let v = Veth::new("poisson");
    let plan = common::write_plan(&v);

    let mut late = Vec::new();
    let clean = std::iter::repeat_with(|| run(&v, &plan, "11", "--poisson"))
        .take(ATTEMPTS)
        .find(|r| {
            eprintln!("poisson run: p99 lateness {} µs", r.p99_us);
            late.push(r.p99_us);
            r.p99_us <= MAX_P99_US
        })
        .unwrap_or_else(|| {
            panic!("the sender was descheduled in all {ATTEMPTS} runs (p99 lateness {late:?} µs)")
        });
    for (clock, gaps) in &clean.gaps {
        let (d, crit) = ks(true, clock, gaps);
        assert!(
            d < crit,
            "{clock}: KS distance {d:.4} over {crit:.4} ({} gaps)",
            gaps.len()
        );
    }

    // Bunching from descheduling only takes constant gaps further from the
    // exponential, so any run judges them.
    for (clock, gaps) in &run(&v, &plan, "0", "").gaps {
        let (d, crit) = ks(false, clock, gaps);
        assert!(
            d > 5.0 * crit,
            "{clock}: constant gaps look exponential (KS {d:.4})"
        );
    }
}
