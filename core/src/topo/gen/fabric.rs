//! Data-centre fabrics: the k-ary fat tree and leaf-spine.

use super::{add_host, add_switches, port, too_big, TopoError, Topology, TopologyBuilder};

/// The k-ary fat tree: switches s1.. are the (k/2)^2 cores, then pod by pod
/// the k/2 aggregation and k/2 edge switches. Edge switches use ports
/// 1..=k/2 for hosts and k/2+1..=k upwards; aggregation switches 1..=k/2
/// down, k/2+1..=k up; core port p+1 leads to pod p.
pub(super) fn fattree(spec: &str, k: usize) -> Result<Topology, TopoError> {
    if k < 2 || !k.is_multiple_of(2) || k > 256 {
        return Err(TopoError::invalid(spec, "k must be even, from 2 to 256"));
    }
    let h = k / 2;
    let cores = h * h;
    let mut b = TopologyBuilder::new(spec);
    add_switches(&mut b, cores + k * k);
    let agg = |pod: usize, a: usize| cores + pod * k + a + 1;
    let edge = |pod: usize, e: usize| cores + pod * k + h + e + 1;
    for pod in 0..k {
        for e in 0..h {
            for a in 0..h {
                b.link(
                    format!("s{}", edge(pod, e)),
                    Some(port(spec, h + a + 1)?),
                    format!("s{}", agg(pod, a)),
                    Some(port(spec, e + 1)?),
                );
            }
        }
        for a in 0..h {
            for c in 0..h {
                b.link(
                    format!("s{}", agg(pod, a)),
                    Some(port(spec, h + c + 1)?),
                    format!("s{}", a * h + c + 1),
                    Some(port(spec, pod + 1)?),
                );
            }
        }
    }
    for pod in 0..k {
        for e in 0..h {
            for p in 0..h {
                add_host(&mut b, edge(pod, e), Some(port(spec, p + 1)?));
            }
        }
    }
    b.build()
}

/// Every leaf is linked to every spine. Spines are s1..=sS, leaves follow;
/// a leaf uses ports 1..=H for hosts and H+1..=H+S for spines; spine port
/// l leads to leaf l.
pub(super) fn leafspine(
    spec: &str,
    spines: usize,
    leaves: usize,
    hosts: usize,
) -> Result<Topology, TopoError> {
    if spines == 0 || leaves == 0 {
        return Err(TopoError::invalid(
            spec,
            "spines and leaves must be at least 1",
        ));
    }
    if spines.saturating_mul(leaves) > 10_000_000 || leaves.saturating_mul(hosts) > 1_000_000 {
        return Err(too_big(spec, "fabric"));
    }
    let mut b = TopologyBuilder::new(spec);
    add_switches(&mut b, spines + leaves);
    for l in 0..leaves {
        for s in 0..spines {
            b.link(
                format!("s{}", spines + l + 1),
                Some(port(spec, hosts + s + 1)?),
                format!("s{}", s + 1),
                Some(port(spec, l + 1)?),
            );
        }
    }
    for l in 0..leaves {
        for p in 0..hosts {
            add_host(&mut b, spines + l + 1, Some(port(spec, p + 1)?));
        }
    }
    b.build()
}
