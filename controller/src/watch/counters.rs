//! Blaming a link from port counters.
//!
//! A probe path that goes silent says only that something on the path
//! broke. The switches' per-port counters say where: the sending switch's
//! egress counter keeps growing for a link whose far end's ingress counter
//! does not. Two readings a round apart are compared, so counters that were
//! already large (or reset by a switch restart) do not matter.

use intpath_core::link::DirLink;
use intpath_core::topo::Topology;
use std::collections::BTreeMap;

/// One switch's port counters at one moment: port → (rx packets, tx packets).
pub type PortCounters = BTreeMap<u16, (i64, i64)>;

/// Fewest frames a link must have been handed before its silence counts:
/// below this, counters read a few microseconds apart could disagree by
/// frames still on the wire.
const MIN_SENT: i64 = 10;

/// A direction of a link that lost (nearly) everything it was given
/// between two readings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LossyLink {
    pub link: DirLink,
    /// Frames the sender's egress counted.
    pub sent: i64,
    /// Frames the receiver's ingress counted.
    pub received: i64,
}

impl std::fmt::Display for LossyLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            // Both ends' ports: an operator checks the cable at either.
            "{}:{} ({} sent, {} received)",
            self.link, self.link.dst_port, self.sent, self.received
        )
    }
}

/// The switch-to-switch link directions that, from `before` to `after`,
/// received at most a tenth of what was sent into them. Switches missing
/// from either reading, and counters that went backwards (a restart), are
/// left out: no evidence is not guilt.
pub fn lossy_links(
    topo: &Topology,
    before: &BTreeMap<String, PortCounters>,
    after: &BTreeMap<String, PortCounters>,
) -> Vec<LossyLink> {
    let delta = |sw: &str, port: u16| -> Option<(i64, i64)> {
        let (r0, t0) = *before.get(sw)?.get(&port).unwrap_or(&(0, 0));
        let (r1, t1) = *after.get(sw)?.get(&port).unwrap_or(&(0, 0));
        (r1 >= r0 && t1 >= t0).then_some((r1 - r0, t1 - t0))
    };
    let mut lossy = Vec::new();
    for l in topo.switch_links() {
        for (from, fp, to, tp) in [
            (&l.a, l.a_port, &l.b, l.b_port),
            (&l.b, l.b_port, &l.a, l.a_port),
        ] {
            let (Some((_, sent)), Some((received, _))) = (delta(from, fp), delta(to, tp)) else {
                continue;
            };
            if sent >= MIN_SENT && received * 10 <= sent {
                lossy.push(LossyLink {
                    link: DirLink {
                        src: from.clone(),
                        src_port: fp,
                        dst: to.clone(),
                        dst_port: tp,
                    },
                    sent,
                    received,
                });
            }
        }
    }
    lossy
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(entries: &[(&str, u16, i64, i64)]) -> BTreeMap<String, PortCounters> {
        let mut m: BTreeMap<String, PortCounters> = BTreeMap::new();
        for &(sw, port, rx, tx) in entries {
            m.entry(sw.to_owned()).or_default().insert(port, (rx, tx));
        }
        m
    }

    #[test]
    fn a_link_whose_far_end_hears_nothing_is_blamed_in_that_direction_only() {
        let topo = Topology::load("paper-fig4").unwrap();
        let l = topo.switch_links().next().unwrap().clone();
        let before = reading(&[(&l.a, l.a_port, 100, 100), (&l.b, l.b_port, 100, 100)]);
        // a sent 50 more, b received none of them; b->a works.
        let after = reading(&[(&l.a, l.a_port, 130, 150), (&l.b, l.b_port, 100, 130)]);
        let lossy = lossy_links(&topo, &before, &after);
        assert_eq!(
            lossy,
            vec![LossyLink {
                link: DirLink {
                    src: l.a.clone(),
                    src_port: l.a_port,
                    dst: l.b.clone(),
                    dst_port: l.b_port,
                },
                sent: 50,
                received: 0,
            }]
        );
    }

    #[test]
    fn healthy_idle_restarted_and_unknown_links_are_not_blamed() {
        let topo = Topology::load("paper-fig4").unwrap();
        let l = topo.switch_links().next().unwrap().clone();
        let before = reading(&[(&l.a, l.a_port, 0, 0), (&l.b, l.b_port, 0, 0)]);
        // Healthy: a few frames still in flight.
        let after = reading(&[(&l.a, l.a_port, 40, 50), (&l.b, l.b_port, 48, 40)]);
        assert!(lossy_links(&topo, &before, &after).is_empty());
        // Too few frames to judge.
        let after = reading(&[(&l.a, l.a_port, 0, 5), (&l.b, l.b_port, 0, 0)]);
        assert!(lossy_links(&topo, &before, &after).is_empty());
        // b restarted: its counters went back to zero.
        let before = reading(&[(&l.a, l.a_port, 0, 0), (&l.b, l.b_port, 500, 0)]);
        let after = reading(&[(&l.a, l.a_port, 0, 50), (&l.b, l.b_port, 0, 0)]);
        assert!(lossy_links(&topo, &before, &after).is_empty());
        // b could not be read this round.
        let after = reading(&[(&l.a, l.a_port, 0, 50)]);
        assert!(lossy_links(&topo, &before, &after).is_empty());
    }
}
