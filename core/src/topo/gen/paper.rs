//! The example network of the INT-path paper.

use super::{add_host, add_switches, TopoError, Topology, TopologyBuilder};

/// A small network modelled on Fig. 4 of the INT-path paper: 7 switches,
/// 10 links, 4 odd-degree switches (s2, s3, s5, s7), so 2 paths cover it.
/// Every switch has one host.
pub(super) fn paper_fig4(spec: &str) -> Result<Topology, TopoError> {
    const LINKS: [(usize, usize); 10] = [
        (1, 2),
        (1, 3),
        (2, 3),
        (2, 4),
        (3, 5),
        (4, 5),
        (4, 6),
        (5, 7),
        (6, 7),
        (4, 7),
    ];
    let mut b = TopologyBuilder::new(spec);
    add_switches(&mut b, 7);
    for s in 1..=7 {
        add_host(&mut b, s, None);
    }
    for (x, y) in LINKS {
        b.link(format!("s{x}"), None, format!("s{y}"), None);
    }
    b.build()
}
