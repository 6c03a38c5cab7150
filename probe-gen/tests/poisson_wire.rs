//! Poisson spacing as it reaches the wire, on a real veth pair.

mod common;

use common::{final_counts, final_number, run_ok, send, Capture, Veth};
use intpath_core::wire::ProbeRepr;

/// The schedule itself is tested against the exponential law with 100k
/// gaps (tests/schedule.rs); here the question is whether what reaches the
/// wire still is Poisson. About 1000 gaps reject constant spacing by a wide
/// margin. A sender descheduled for milliseconds bunches packets, so the wire
/// fit is only judged when the run kept its schedule (p99 lateness under
/// 1 ms, as the sender reports it); this test has its own binary so that the
/// other veth tests do not compete with it for the CPU.
#[test]
#[ignore = "needs root"]
fn poisson_arrivals_fit_the_exponential_and_constant_ones_do_not() {
    let v = Veth::new("poisson");
    let plan = common::write_plan(&v);
    let rate = 1000.0;
    for (poisson, seed) in [(true, "11"), (false, "0")] {
        let cap = Capture::start(&v, "udp");
        let pace = if poisson { "--poisson" } else { "" };
        let mut c = send(
            &v,
            &plan,
            &format!("--path 3 --rate 1000 --duration 1 --seed {seed} {pace}"),
        );
        let stderr = run_ok(&mut c);
        let frames = cap.finish();
        let p99_us = final_number(&stderr, "p99 ");
        let (sent, errors) = final_counts(&stderr);
        assert_eq!((frames.len() as u64, errors), (sent, 0));
        // Both clocks: the generator's stamps and the peer's receive times.
        let send: Vec<u64> = frames
            .iter()
            .map(|f| ProbeRepr::parse(&f.data).unwrap().payload.send_ts)
            .collect();
        let recv: Vec<u64> = frames.iter().map(|f| f.ts_ns).collect();
        for (clock, ts) in [("send_ts", send), ("capture", recv)] {
            let gaps: Vec<f64> = ts.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e9).collect();
            let d = common::ks_exponential(&gaps, rate);
            let crit = common::ks_critical_0001(gaps.len());
            eprintln!(
                "poisson={poisson} {clock}: KS {d:.4} (critical {crit:.4}, {} gaps)",
                gaps.len()
            );
            if poisson && p99_us >= 1000 {
                eprintln!(
                    "SKIPPED wire fit: the sender was descheduled (p99 lateness {p99_us} µs)"
                );
            } else if poisson {
                assert!(
                    d < crit,
                    "{clock}: KS distance {d:.4} over {crit:.4} ({} gaps)",
                    gaps.len()
                );
            } else {
                assert!(
                    d > 5.0 * crit,
                    "{clock}: constant gaps look exponential (KS {d:.4})"
                );
            }
        }
    }
}
