//! Packet timings with known response latencies: the evaluation's stand-in
//! for a capture, since a real one needs root and a quiet machine.
//!
//! One client connection keeps `window` requests in flight; each response
//! triggers the next request. What it models, and why:
//! - the server answers each request after `server_delay` × a lognormal
//!   factor (`jitter` its σ), plus an M/M/1 wait at utilisation `load`
//!   (with probability `load` a wait of mean 50 µs / (1 − `load`)), so
//!   responses to one batch come back spread out, as under real load;
//! - the network adds a 100 µs round trip, the vantage point sits 10 µs
//!   after the client, every packet gets up to 2 µs of jitter;
//! - the client sends back to back 3 µs + Exp(1 µs) apart at best, thinks
//!   5 µs + Exp(5 µs) after a response, and acknowledges a third of the
//!   responses (the large ones) with a pure ACK as they arrive.
//!
//! The truth is what the client measures: response arrival − request send.

use intpath_diagnose::latency::pcap::Segment;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::SocketAddr;
use std::time::Duration;

/// One simulated connection.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub server_delay: Duration,
    pub window: usize,
    /// Server utilisation by other clients, in [0, 1).
    pub load: f64,
    /// σ of the lognormal factor on the server delay.
    pub jitter: f64,
    pub duration: Duration,
    pub seed: u64,
}

/// What the vantage point saw and what the client measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulated {
    /// Both directions' client-side packets as captured, in time order
    /// (requests and pure ACKs; the responses take another path).
    pub segments: Vec<Segment>,
    /// Per request: vantage-point time of the request (ns) and the latency
    /// the client measured for it (ns).
    pub truth: Vec<(i64, f64)>,
}

/// Start of every simulation: a whole second, so epochs align.
pub const START_NS: i64 = 1_700_000_000_000_000_000;
const RTT_NS: f64 = 100_000.0;
const TO_VANTAGE_NS: f64 = 10_000.0;

/// The client and its link as the simulation advances.
struct Client<'s> {
    s: &'s Scenario,
    rng: StdRng,
    think: Option<Exp<f64>>,
    spacing: Option<Exp<f64>>,
    wait: Option<Exp<f64>>,
    factor: Option<LogNormal<f64>>,
    last_send: f64,
    segments: Vec<Segment>,
    /// Pending responses: (arrival at the client, request send time), ns.
    pending: BinaryHeap<Reverse<(i64, i64)>>,
}

impl Client<'_> {
    fn draw(d: &Option<Exp<f64>>, rng: &mut StdRng) -> f64 {
        d.as_ref().map_or(0.0, |d| d.sample(rng))
    }

    /// Sends a request no earlier than `at` and no sooner after the last.
    fn send(&mut self, at: f64) {
        let t = at.max(self.last_send + 3_000.0 + Self::draw(&self.spacing, &mut self.rng));
        self.last_send = t;
        let seen = t + TO_VANTAGE_NS + self.rng.gen_range(0.0..2_000.0);
        self.segments.push(packet(seen as i64, 100));
        let load = self.s.load.clamp(0.0, 0.99);
        let queued = if self.rng.gen_bool(load) {
            Self::draw(&self.wait, &mut self.rng)
        } else {
            0.0
        };
        let factor = self
            .factor
            .as_ref()
            .map_or(1.0, |f| f.sample(&mut self.rng));
        let service = self.s.server_delay.as_nanos() as f64 * factor + queued;
        let back = t + RTT_NS + service + self.rng.gen_range(0.0..2_000.0);
        self.pending.push(Reverse((back as i64, t as i64)));
    }
}

/// Runs scenario `s`.
pub fn simulate(s: &Scenario) -> Simulated {
    let exp = |mean: f64| Exp::new(1.0 / mean).ok();
    let mut c = Client {
        s,
        rng: StdRng::seed_from_u64(s.seed),
        think: exp(5_000.0),
        spacing: exp(1_000.0),
        wait: exp(50_000.0 / (1.0 - s.load.clamp(0.0, 0.99))),
        factor: LogNormal::new(0.0, s.jitter.max(0.0)).ok(),
        last_send: f64::MIN,
        segments: Vec::new(),
        pending: BinaryHeap::new(),
    };
    let end = START_NS as f64 + s.duration.as_nanos() as f64;
    for _ in 0..s.window.max(1) {
        c.send(START_NS as f64);
    }
    let mut truth = Vec::new();
    while let Some(Reverse((back, sent))) = c.pending.pop() {
        if back as f64 > end {
            break;
        }
        // Keyed by when the vantage point saw the request, so epochs line
        // up with the estimates'.
        truth.push((sent + TO_VANTAGE_NS as i64, (back - sent) as f64));
        if c.rng.gen_bool(1.0 / 3.0) {
            let seen = back as f64 + TO_VANTAGE_NS + c.rng.gen_range(0.0..2_000.0);
            c.segments.push(packet(seen as i64, 0));
        }
        let next = back as f64 + 5_000.0 + Client::draw(&c.think, &mut c.rng);
        c.send(next);
    }
    let mut segments = c.segments;
    segments.sort_by_key(|p| p.at_ns);
    Simulated { segments, truth }
}

/// A client→server segment; payload 0 is a pure ACK.
fn packet(at_ns: i64, payload: u32) -> Segment {
    Segment::tcp_ack(
        at_ns,
        SocketAddr::from(([10, 0, 0, 1], 40_000)),
        SocketAddr::from(([10, 0, 0, 2], 80)),
        payload,
    )
}
