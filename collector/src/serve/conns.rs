//! The open connections of one listener: when each opened, whether it has
//! asked anything yet, what it has in flight and since when it is idle, so
//! the sweep and the cap close the right ones.

use super::Limits;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::Notify;

/// Connections open over every listener of the process: the file limit
/// they share is the process'.
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// One connection.
pub(super) struct Conn {
    id: u64,
    opened: Instant,
    /// Requests in flight.
    busy: AtomicUsize,
    /// Whether a request ever arrived.
    asked: AtomicBool,
    /// When the last request finished (or the connection opened).
    idle_since: Mutex<Instant>,
    closing: AtomicBool,
    close: Notify,
}

/// Marks a request in flight until dropped.
pub(super) struct Busy(Arc<Conn>);

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.idle_since.lock().expect("not poisoned") = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Conn {
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.asked.store(true, Ordering::Release);
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    /// Resolves once the connection is told to close.
    pub async fn closing(&self) {
        let notified = self.close.notified();
        if !self.closing.load(Ordering::Acquire) {
            notified.await;
        }
    }

    fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.close.notify_one();
    }

    /// Since when it has been idle, if it is (nothing in flight, not closing).
    fn idle(&self) -> Option<Instant> {
        if self.busy.load(Ordering::Acquire) > 0 || self.closing.load(Ordering::Acquire) {
            return None;
        }
        Some(*self.idle_since.lock().expect("not poisoned"))
    }
}

/// What a listener closed, and why.
#[derive(Debug, Default)]
struct Closed {
    /// No request within the header timeout.
    silent: AtomicU64,
    /// Idle past the idle timeout.
    idle: AtomicU64,
    /// The oldest idle one, to make room at the cap.
    at_cap: AtomicU64,
    /// New ones refused at the cap, nothing idle to close.
    refused: AtomicU64,
}

pub(super) struct Table {
    name: &'static str,
    pub limits: Limits,
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    closed: Closed,
    accepted: AtomicU64,
    cap_logged: AtomicBool,
}

impl Table {
    pub fn new(name: &'static str, limits: Limits) -> Self {
        Self {
            name,
            limits,
            conns: Mutex::default(),
            next: AtomicU64::new(0),
            closed: Closed::default(),
            accepted: AtomicU64::new(0),
            cap_logged: AtomicBool::new(false),
        }
    }

    /// Registers a new connection, closing the oldest idle one when the
    /// process is at its cap; `None` (the connection is dropped) when
    /// nothing is idle to close.
    pub fn admit(&self) -> Option<Arc<Conn>> {
        if OPEN.load(Ordering::Acquire) >= self.limits.max_connections && !self.evict_for_new() {
            self.closed.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        OPEN.fetch_add(1, Ordering::AcqRel);
        self.accepted.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let conn = Arc::new(Conn {
            id: self.next.fetch_add(1, Ordering::Relaxed),
            opened: now,
            busy: AtomicUsize::new(0),
            asked: AtomicBool::new(false),
            idle_since: Mutex::new(now),
            closing: AtomicBool::new(false),
            close: Notify::new(),
        });
        self.lock().insert(conn.id, conn.clone());
        Some(conn)
    }

    /// Closes this listener's oldest idle connection; whether there was one.
    pub fn evict_for_new(&self) -> bool {
        let oldest = self
            .lock()
            .values()
            .filter_map(|c| Some((c.idle()?, c.clone())))
            .min_by_key(|(since, _)| *since);
        let Some((_, c)) = oldest else { return false };
        c.close();
        self.closed.at_cap.fetch_add(1, Ordering::Relaxed);
        if !self.cap_logged.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "{}: {} connections open, the cap under the file limit of {}: closing the \
                 oldest idle ones for new ones (counts when the server stops)",
                self.name,
                self.limits.max_connections,
                super::open_file_limit()
            );
        }
        true
    }

    pub fn remove(&self, c: &Conn) {
        if self.lock().remove(&c.id).is_some() {
            OPEN.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Closes connections silent past the header timeout or idle past the
    /// idle timeout.
    pub fn sweep(&self) {
        let now = Instant::now();
        for c in self.lock().values() {
            let Some(since) = c.idle() else { continue };
            match c.asked.load(Ordering::Acquire) {
                false if now - c.opened >= self.limits.header_timeout => {
                    c.close();
                    self.closed.silent.fetch_add(1, Ordering::Relaxed);
                }
                true if now - since >= self.limits.idle_timeout => {
                    c.close();
                    self.closed.idle.fetch_add(1, Ordering::Relaxed);
                }
                _ => {}
            }
        }
    }

    pub fn close_all(&self) {
        for c in self.lock().values() {
            c.close();
        }
    }

    /// One line of counts, when anything was closed by the limits.
    pub fn report(&self) {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let c = &self.closed;
        if n(&c.silent) + n(&c.idle) + n(&c.at_cap) + n(&c.refused) == 0 {
            return;
        }
        tracing::warn!(
            accepted = n(&self.accepted),
            no_request_in_time = n(&c.silent),
            idle = n(&c.idle),
            closed_at_cap = n(&c.at_cap),
            refused_at_cap = n(&c.refused),
            "{}: connections closed by the limits",
            self.name
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.conns.lock().expect("not poisoned")
    }
}
