//! The switches' port counters of a synthetic run, as `intpath demo` and
//! `intpath lab` read them once a second: a link's sender counts what it
//! sent, its receiver what arrived, so a lossy link shows where a path's
//! probes were lost. Only the probes are counted (the RPCs' packets are
//! drawn per call, not per packet); a real run's counters also hold the
//! background traffic, which only makes their rates steadier.

use intpath_core::topo::Topology;
use intpath_diagnose::path::LinkIndex;
use intpath_store::counters::PortReading;
use std::collections::BTreeMap;

/// Readings are taken this often.
const READING_NS: i64 = 1_000_000_000;

/// Packets sent and lost per directed link and reading interval.
pub struct PortCounts {
    t0: i64,
    /// Per link id: per interval, (sent, lost).
    links: Vec<BTreeMap<i64, (i64, i64)>>,
}

impl PortCounts {
    pub fn new(index: &LinkIndex, t0: i64) -> Self {
        PortCounts {
            t0,
            links: vec![BTreeMap::new(); index.links.len()],
        }
    }

    /// A packet `link` sent at `t_ns`, and whether the link lost it.
    pub fn cross(&mut self, link: u32, t_ns: i64, lost: bool) {
        // The reading after the packet counts it.
        let at = (t_ns - self.t0).div_euclid(READING_NS) + 1;
        let c = self.links[link as usize].entry(at).or_default();
        c.0 += 1;
        c.1 += i64::from(lost);
    }

    /// Every switch port's cumulative counters at each reading from the
    /// first (before any packet, all zero) to `duration_ns`, with the time
    /// of each reading.
    pub fn readings(
        &self,
        topo: &Topology,
        index: &LinkIndex,
        duration_ns: i64,
    ) -> Vec<(i64, Vec<PortReading>)> {
        let last = duration_ns.div_euclid(READING_NS) + 1;
        // (switch, port) → (rx, tx), running totals.
        let mut ports: BTreeMap<(&str, u16), (i64, i64)> = BTreeMap::new();
        for l in &index.links {
            for (node, port) in [(&l.src, l.src_port), (&l.dst, l.dst_port)] {
                if topo.host(node).is_none() {
                    ports.insert((node.as_str(), port), (0, 0));
                }
            }
        }
        (0..=last)
            .map(|at| {
                for (l, counts) in index.links.iter().zip(&self.links) {
                    let (sent, lost) = counts.get(&at).copied().unwrap_or_default();
                    if let Some(p) = ports.get_mut(&(l.src.as_str(), l.src_port)) {
                        p.1 += sent;
                    }
                    if let Some(p) = ports.get_mut(&(l.dst.as_str(), l.dst_port)) {
                        p.0 += sent - lost;
                    }
                }
                let round = ports
                    .iter()
                    .map(|(&(switch, port), &(rx, tx))| PortReading {
                        switch: switch.to_owned(),
                        port,
                        rx,
                        tx,
                    })
                    .collect();
                (self.t0 + at * READING_NS, round)
            })
            .collect()
    }
}
