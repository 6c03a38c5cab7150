//! The counters of `sr_int.p4` (packets and bytes), shared by every
//! data-plane thread and read by P4Runtime.

use intpath_sr_int::schema::{self, NUM_DROP_REASONS, NUM_PORTS};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub use intpath_sr_int::DropReason;

#[derive(Debug, Default)]
pub struct PacketBytes {
    packets: AtomicU64,
    bytes: AtomicU64,
}

impl PacketBytes {
    fn count(&self, len: usize) {
        self.packets.fetch_add(1, Relaxed);
        self.bytes.fetch_add(len as u64, Relaxed);
    }

    /// (packets, bytes)
    pub fn get(&self) -> (u64, u64) {
        (self.packets.load(Relaxed), self.bytes.load(Relaxed))
    }
}

#[derive(Debug)]
pub struct Counters {
    rx: Box<[PacketBytes]>,
    tx: Box<[PacketBytes]>,
    drops: Box<[PacketBytes]>,
}

impl Default for Counters {
    fn default() -> Self {
        let array = |n| (0..n).map(|_| PacketBytes::default()).collect();
        Self {
            rx: array(NUM_PORTS),
            tx: array(NUM_PORTS),
            drops: array(NUM_DROP_REASONS),
        }
    }
}

/// Ports are `bit<9>`: wider values wrap as in the P4 program.
fn port_index(port: u16) -> usize {
    usize::from(port) % NUM_PORTS
}

impl Counters {
    pub fn rx(&self, port: u16, len: usize) {
        self.rx[port_index(port)].count(len);
    }

    pub fn tx(&self, port: u16, len: usize) {
        self.tx[port_index(port)].count(len);
    }

    pub fn drop(&self, reason: DropReason, len: usize) {
        self.drops[reason as usize].count(len);
    }

    /// Counter `name` at `index`, `None` for an unknown name or index.
    pub fn read(&self, name: &str, index: usize) -> Option<(u64, u64)> {
        self.array(name)?.get(index).map(PacketBytes::get)
    }

    /// Size of counter `name`.
    pub fn size(&self, name: &str) -> Option<usize> {
        self.array(name).map(<[PacketBytes]>::len)
    }

    fn array(&self, name: &str) -> Option<&[PacketBytes]> {
        match name {
            schema::RX_PORT_COUNTER => Some(&self.rx),
            schema::TX_PORT_COUNTER => Some(&self.tx),
            schema::DROP_COUNTER => Some(&self.drops),
            _ => None,
        }
    }
}
