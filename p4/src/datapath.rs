//! The data-plane threads: per port a receive loop (ingress, then egress
//! and send for frames run to completion, or enqueue) and a transmit loop
//! (dequeue at the queue's rate, egress, send). Either way a port's random
//! loss ([`crate::loss`]) takes frames after egress, before the send, and a
//! port's delay ([`crate::delay`]) holds them for its own thread to send.

use crate::io::{FrameRx, FrameTx, BATCH};
use crate::packet::PacketBuf;
use crate::pipeline::EgressMeta;
use crate::queue::Queued;
use crate::switch::SwitchCore;
use std::sync::mpsc::TrySendError;
use std::time::{Duration, Instant};

/// How long an idle transmit thread sleeps before it looks again; stopping
/// the switch wakes it sooner.
const IDLE_WAIT: Duration = Duration::from_secs(1);

/// Where a port's frames leave the switch.
pub(crate) enum Output {
    Port(Box<dyn FrameTx>),
    /// Packet-ins for the controller.
    Cpu,
}

/// Frames that passed egress on a receiving thread, held until the end of
/// the received batch so that each port gets one send call per batch.
#[derive(Default)]
pub(crate) struct Outbox {
    frames: Vec<(u16, PacketBuf)>,
}

impl Outbox {
    pub(crate) fn push(&mut self, port: u16, pkt: PacketBuf) {
        self.frames.push((port, pkt));
    }
}

impl SwitchCore {
    /// Sends what `out` holds, per port in arrival order, and recycles the
    /// buffers.
    pub(crate) fn flush(&self, out: &mut Outbox) {
        // Stable: frames for one port keep their order.
        out.frames.sort_by_key(|(port, _)| *port);
        let mut rest = &out.frames[..];
        while let Some(((port, _), _)) = rest.split_first() {
            let n = rest.iter().take_while(|(p, _)| p == port).count();
            let mut frames: [&[u8]; BATCH] = [&[]; BATCH];
            for chunk in rest[..n].chunks(BATCH) {
                for (f, (_, pkt)) in frames.iter_mut().zip(chunk) {
                    *f = pkt.data();
                }
                self.emit(*port, &frames[..chunk.len()]);
            }
            rest = &rest[n..];
        }
        for (_, pkt) in out.frames.drain(..) {
            self.pool.put(pkt);
        }
    }

    /// Hands frames that passed egress to port `port`'s output, or to its
    /// delay line.
    fn emit(&self, port: u16, frames: &[&[u8]]) {
        match self.queue(port).map(|q| q.delay()) {
            Some(d) if d.active() => d.hold(frames),
            _ => self.send_now(port, frames),
        }
    }

    fn send_now(&self, port: u16, frames: &[&[u8]]) {
        match self.outputs.get(usize::from(port)).and_then(Option::as_ref) {
            Some(Output::Port(tx)) => {
                if let Err(e) = tx.send(frames) {
                    tracing::warn!(port, "send failed: {e}");
                }
            }
            Some(Output::Cpu) => {
                for f in frames {
                    if let Err(TrySendError::Full(_)) = self.packet_in.try_send(f.to_vec()) {
                        tracing::debug!("packet-in backlog full; dropped");
                    }
                }
            }
            None => tracing::debug!(port, "no output on egress port"),
        }
    }
}

pub(crate) fn receive_loop(core: &SwitchCore, port: u16, mut rx: Box<dyn FrameRx>) {
    // The ring's naps are 20 µs; the default slack would stretch them to 70.
    tighten_timer_slack();
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| core.pool.get()).collect();
    let mut out = Outbox::default();
    while !core.stopping() {
        let n = match rx.recv(&mut bufs) {
            Ok(n) => n,
            Err(e) => {
                tracing::error!(port, "receive failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        for buf in &mut bufs[..n] {
            let pkt = std::mem::replace(buf, core.pool.get());
            core.receive(pkt, port, &mut out);
        }
        core.flush(&mut out);
    }
}

/// Precise sleeps for rate-limited queues and the receive ring's naps: the
/// default timer slack (50 µs) would distort queueing delays at high rates.
fn tighten_timer_slack() {
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

pub(crate) fn transmit_loop(core: &SwitchCore, port: u16) {
    let Some(queue) = core.queue(port).cloned() else {
        return;
    };
    tighten_timer_slack();
    let mut batch: Vec<Queued> = Vec::with_capacity(BATCH);
    let mut next_departure = Instant::now();
    while !core.stopping() {
        if !queue.wait_nonempty(IDLE_WAIT) {
            continue;
        }
        if let Some(interval) = 1_000_000_000u64.checked_div(queue.rate()) {
            // Serve one packet per 1/rate: the queue builds up behind it.
            let now = Instant::now();
            if next_departure > now {
                std::thread::sleep(next_departure - now);
            } else {
                next_departure = now;
            }
            next_departure += Duration::from_nanos(interval);
            queue.pop_into(&mut batch, 1);
        } else {
            queue.pop_into(&mut batch, BATCH);
        }
        let egress_ts = core.now_us();
        let mut frames: [&[u8]; BATCH] = [&[]; BATCH];
        let mut n = 0;
        for q in &mut batch {
            let meta = EgressMeta {
                ingress_ts: q.ingress_ts,
                egress_ts,
                enq_qdepth: q.enq_qdepth,
                deq_timedelta: egress_ts.saturating_sub(q.enq_ts) as u32,
            };
            if core
                .pipeline
                .egress(&core.counters, &mut q.pkt, &q.fwd, &meta)
                && !queue.loss().lose()
            {
                frames[n] = q.pkt.data();
                n += 1;
            }
        }
        core.emit(port, &frames[..n]);
        for q in batch.drain(..) {
            core.pool.put(q.pkt);
        }
    }
}

/// Sends a delayed port's frames as they come due.
pub(crate) fn delay_loop(core: &SwitchCore, port: u16) {
    let Some(queue) = core.queue(port).cloned() else {
        return;
    };
    tighten_timer_slack();
    let mut due = Vec::new();
    while !core.stopping() {
        queue.delay().take_due(&mut due, IDLE_WAIT);
        let frames: Vec<&[u8]> = due.iter().map(Vec::as_slice).collect();
        for chunk in frames.chunks(BATCH) {
            core.send_now(port, chunk);
        }
        due.clear();
    }
}
