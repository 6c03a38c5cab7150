//! Egress queues, one per port, with bmv2's two knobs: a service rate in
//! packets per second (`set_queue_rate`) and a depth in packets
//! (`set_queue_depth`). A full queue tail-drops. The depth a packet finds
//! and the time it waits become the record's `enq_qdepth` and
//! `deq_timedelta`, which is what makes congestion visible to INT. Each
//! queue also carries its port's random loss (`set_port_loss`) and delay
//! (`set_port_delay`).

use crate::delay::PortDelay;
use crate::loss::PortLoss;
use crate::packet::PacketBuf;
use crate::pipeline::Forward;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// bmv2's default queue depth (packets).
pub const DEFAULT_DEPTH: usize = 64;
/// The deepest queue accepted (packets): each queued frame holds a buffer.
pub const MAX_DEPTH: usize = 1 << 16;
/// The longest a full queue may take to drain (seconds). Slower, a queued
/// probe outlives every measurement window; this also bounds the lowest
/// rate: 2 pps at the default depth, 1 pps for up to 60 packets.
pub const MAX_DRAIN_SECS: u64 = 60;
/// The highest rate accepted (packets/s): the pacing clock counts ns.
pub const MAX_RATE_PPS: u64 = 1_000_000_000;

/// Checks a queue's settings (`rate_pps` 0 = unlimited) against the bounds
/// above, saying which one is broken.
pub fn check_settings(rate_pps: u64, depth: usize) -> Result<(), String> {
    if !(1..=MAX_DEPTH).contains(&depth) {
        return Err(format!(
            "a queue depth must be from 1 to {MAX_DEPTH} packets, not {depth}"
        ));
    }
    if rate_pps > MAX_RATE_PPS {
        return Err(format!(
            "a queue rate must be at most {MAX_RATE_PPS} packets/s (0 = unlimited), not {rate_pps}"
        ));
    }
    if rate_pps > 0 && depth as u64 > rate_pps * MAX_DRAIN_SECS {
        return Err(format!(
            "at {rate_pps} packets/s a full queue of {depth} packets takes {} s to drain \
             (at most {MAX_DRAIN_SECS} s): raise the rate or lower the depth",
            (depth as u64).div_ceil(rate_pps)
        ));
    }
    Ok(())
}

/// A packet between ingress and egress, with the metadata egress needs.
#[derive(Debug)]
pub struct Queued {
    pub pkt: PacketBuf,
    pub fwd: Forward,
    /// µs, switch clock.
    pub ingress_ts: u64,
    /// µs, switch clock; set by [`EgressQueue::enqueue`].
    pub enq_ts: u64,
    /// Set by [`EgressQueue::enqueue`].
    pub enq_qdepth: u32,
}

#[derive(Debug, Default)]
struct State {
    items: VecDeque<Queued>,
    /// The consumer sleeps on the condvar: producers must wake it.
    consumer_waiting: bool,
}

#[derive(Debug)]
pub struct EgressQueue {
    state: Mutex<State>,
    ready: Condvar,
    /// Packets per second; 0 = as fast as the port takes them.
    rate_pps: AtomicU64,
    depth: AtomicUsize,
    tail_drops: AtomicU64,
    loss: PortLoss,
    delay: PortDelay,
}

/// A snapshot for the admin interface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueStatus {
    pub rate_pps: u64,
    pub depth: usize,
    pub len: usize,
    pub tail_drops: u64,
    /// `set_port_loss`, percent.
    pub loss_pct: f64,
    pub loss_drops: u64,
    /// `set_port_delay`, ms.
    pub delay_ms: f64,
}

impl EgressQueue {
    pub fn new(rate_pps: u64, depth: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
            rate_pps: AtomicU64::new(rate_pps),
            depth: AtomicUsize::new(depth),
            tail_drops: AtomicU64::new(0),
            loss: PortLoss::default(),
            delay: PortDelay::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking holder cannot leave the deque inconsistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_rate(&self, pps: u64) {
        self.rate_pps.store(pps, Relaxed);
    }

    pub fn set_depth(&self, packets: usize) {
        self.depth.store(packets, Relaxed);
    }

    /// The port's random loss, applied to frames that passed egress.
    pub fn loss(&self) -> &PortLoss {
        &self.loss
    }

    /// The port's delay, applied to frames that passed egress.
    pub fn delay(&self) -> &PortDelay {
        &self.delay
    }

    pub fn rate(&self) -> u64 {
        self.rate_pps.load(Relaxed)
    }

    pub fn status(&self) -> QueueStatus {
        QueueStatus {
            rate_pps: self.rate(),
            depth: self.depth.load(Relaxed),
            len: self.lock().items.len(),
            tail_drops: self.tail_drops.load(Relaxed),
            loss_pct: self.loss.percent(),
            loss_drops: self.loss.drops() + self.delay.drops(),
            delay_ms: self.delay.ms(),
        }
    }

    /// Appends `q` stamped with the depth it finds, or hands it back when
    /// the queue is full (tail drop).
    pub fn enqueue(&self, mut q: Queued, now_us: u64) -> Result<(), Queued> {
        let mut s = self.lock();
        let len = s.items.len();
        if len >= self.depth.load(Relaxed) {
            drop(s);
            self.tail_drops.fetch_add(1, Relaxed);
            return Err(q);
        }
        q.enq_qdepth = len as u32;
        q.enq_ts = now_us;
        s.items.push_back(q);
        if s.consumer_waiting {
            s.consumer_waiting = false;
            drop(s);
            self.ready.notify_one();
        }
        Ok(())
    }

    /// Whether the queue holds no packet (a frame may then overtake nothing
    /// by skipping it).
    pub fn is_empty(&self) -> bool {
        self.lock().items.is_empty()
    }

    /// Wakes the consumer if it is waiting (to let it see a shutdown).
    pub fn wake_consumer(&self) {
        let _s = self.lock();
        self.ready.notify_all();
    }

    /// Waits up to `timeout` for the queue to hold a packet.
    pub fn wait_nonempty(&self, timeout: Duration) -> bool {
        let mut s = self.lock();
        if s.items.is_empty() {
            s.consumer_waiting = true;
            s = self
                .ready
                .wait_timeout_while(s, timeout, |s| s.items.is_empty())
                .unwrap_or_else(|p| p.into_inner())
                .0;
            s.consumer_waiting = false;
        }
        !s.items.is_empty()
    }

    /// Moves up to `max` packets from the head into `out`.
    pub fn pop_into(&self, out: &mut Vec<Queued>, max: usize) {
        let mut s = self.lock();
        let n = max.min(s.items.len());
        out.extend(s.items.drain(..n));
    }
}

/// Free packet buffers, so that forwarding does not allocate per packet.
#[derive(Debug, Default)]
pub struct Pool {
    free: Mutex<Vec<PacketBuf>>,
}

/// Buffers kept at most; more are freed.
const POOL_MAX: usize = 4096;

impl Pool {
    pub fn get(&self) -> PacketBuf {
        self.free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .unwrap_or_default()
    }

    pub fn put(&self, pkt: PacketBuf) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if free.len() < POOL_MAX {
            free.push(pkt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued() -> Queued {
        Queued {
            pkt: PacketBuf::new(),
            fwd: Forward {
                egress_port: 1,
                ingress_port: 2,
                switch_id: 1,
                push_record: false,
                packet_in: false,
                int_at: None,
                ingress_len: 0,
                ipv4: false,
            },
            ingress_ts: 0,
            enq_ts: 0,
            enq_qdepth: 0,
        }
    }

    #[test]
    fn depth_is_stamped_and_full_queues_tail_drop() {
        let q = EgressQueue::new(0, 2);
        q.enqueue(queued(), 10).unwrap();
        q.enqueue(queued(), 11).unwrap();
        assert!(q.enqueue(queued(), 12).is_err());
        let mut out = Vec::new();
        q.pop_into(&mut out, 8);
        assert_eq!(out.iter().map(|p| p.enq_qdepth).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(out[1].enq_ts, 11);
        assert_eq!(q.status().tail_drops, 1);
        assert!(!q.wait_nonempty(Duration::from_millis(1)));
    }

    #[test]
    fn settings_out_of_bounds_say_which_bound() {
        assert_eq!(check_settings(0, DEFAULT_DEPTH), Ok(()));
        assert_eq!(check_settings(2, DEFAULT_DEPTH), Ok(()));
        assert_eq!(check_settings(1, 60), Ok(()));
        assert_eq!(check_settings(MAX_RATE_PPS, MAX_DEPTH), Ok(()));
        for (rate, depth, why) in [
            (1, DEFAULT_DEPTH, "takes 64 s to drain"),
            (0, 0, "from 1 to 65536"),
            (0, MAX_DEPTH + 1, "from 1 to 65536"),
            (MAX_RATE_PPS + 1, 1, "at most 1000000000"),
        ] {
            let e = check_settings(rate, depth).unwrap_err();
            assert!(e.contains(why), "{rate} {depth}: {e}");
        }
    }
}
