//! Port numbers for the link ends a source left without one, and the rule
//! that no port of a node is used twice.
//!
//! Work goes node by node over each node's own link ends (compressed rows),
//! so it touches one small row at a time: a table of every (node, port) in
//! the network, as this once was, made loading a large file miss the cache
//! at every link end.

use super::NodeId;

/// Every link end with its port, and the ends grouped by node.
pub(super) struct Ports {
    /// `ends[l]` = link `l`'s ends as (node, port), a then b.
    pub ends: Vec<[(NodeId, u16); 2]>,
    /// Node `n`'s link ends, in link order, are `slots[start[n]..start[n + 1]]`,
    /// as (link, side: 0 for a, 1 for b).
    pub start: Vec<u32>,
    pub slots: Vec<(u32, u8)>,
}

/// The first problem in link order, whichever node it was found at.
#[derive(Debug, PartialEq)]
pub(super) enum Problem {
    /// `side` of `link` asks for `port`, which `first` already has.
    Twice {
        link: usize,
        side: usize,
        port: u16,
        first: usize,
    },
    /// The node of an end of `link` has all 65,536 ports taken.
    NoneFree { link: usize },
    /// `host` has a link already (a host has one interface, port 0).
    HostTaken { link: usize, host: NodeId },
}

impl Problem {
    fn link(&self) -> usize {
        match *self {
            Problem::Twice { link, .. } | Problem::NoneFree { link } => link,
            Problem::HostTaken { link, .. } => link,
        }
    }
}

/// Gives every end without a port the lowest free port of its node, in link
/// order (switch ports from 1, a host's port 0), and checks that no port is
/// used twice. `ends[l]` are link `l`'s ends as (node, port) among `n`
/// nodes; nodes below `switches` are switches, the rest hosts.
pub(super) fn assign(
    ends: &[[(NodeId, Option<u16>); 2]],
    n: usize,
    switches: usize,
) -> Result<Ports, Problem> {
    let mut start = vec![0u32; n + 1];
    for (id, _) in ends.iter().flatten() {
        start[id.index() + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill: Vec<u32> = start[..n].to_vec();
    let mut row = vec![(0u32, 0u8); ends.len() * 2];
    for (l, e) in ends.iter().enumerate() {
        for (side, (id, _)) in e.iter().enumerate() {
            let slot = &mut fill[id.index()];
            row[*slot as usize] = (l as u32, side as u8);
            *slot += 1;
        }
    }
    let mut out: Vec<[(NodeId, u16); 2]> = ends
        .iter()
        .map(|e| e.map(|(id, port)| (id, port.unwrap_or(0))))
        .collect();
    let mut problem: Option<Problem> = None;
    let mut report = |p: Problem| {
        if problem.as_ref().is_none_or(|q| p.link() < q.link()) {
            problem = Some(p);
        }
    };
    let mut taken: Vec<(u16, u32, u8)> = Vec::new();
    for id in 0..n {
        let slots = &row[start[id] as usize..start[id + 1] as usize];
        taken.clear();
        taken.extend(
            slots
                .iter()
                .filter_map(|&(l, side)| ends[l as usize][side as usize].1.map(|p| (p, l, side))),
        );
        taken.sort_unstable();
        for pair in taken.windows(2) {
            let ((port, first, _), (again, link, side)) = (pair[0], pair[1]);
            if port == again {
                report(Problem::Twice {
                    link: link as usize,
                    side: side as usize,
                    port,
                    first: first as usize,
                });
            }
        }
        let is_switch = id < switches;
        let mut next = Some(u16::from(is_switch));
        let mut explicit = taken.iter().map(|t| t.0).peekable();
        for &(l, side) in slots {
            let link = l as usize;
            if ends[link][side as usize].1.is_some() {
                continue;
            }
            // Skip the explicit ports at or below the candidate.
            let mut port = next;
            while let (Some(p), Some(&e)) = (port, explicit.peek()) {
                if e > p {
                    break;
                }
                if e == p {
                    port = p.checked_add(1);
                }
                explicit.next();
            }
            let Some(port) = port else {
                report(Problem::NoneFree { link });
                break;
            };
            if !is_switch && port != 0 {
                report(Problem::HostTaken {
                    link,
                    host: NodeId(id as u32),
                });
                break;
            }
            out[link][side as usize].1 = port;
            next = port.checked_add(1);
        }
    }
    match problem {
        Some(p) => Err(p),
        None => Ok(Ports {
            ends: out,
            start,
            slots: row,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_runs_out_of_ports_at_the_link_that_asks_one_too_many() {
        // Switch 0 linked to 65,536 hosts: ports 1..=65535, then none.
        let hosts = 65_536;
        let ends: Vec<_> = (0..hosts)
            .map(|h| [(NodeId(0), None), (NodeId(1 + h as u32), None)])
            .collect();
        let got = assign(&ends, 1 + hosts, 1).err();
        assert_eq!(got, Some(Problem::NoneFree { link: 65_535 }));
        let fits = assign(&ends[..65_535], 1 + hosts, 1).expect("fits");
        assert_eq!(fits.ends[65_534][0], (NodeId(0), 65_535));
        assert_eq!(fits.ends[65_534][1], (NodeId(65_535), 0));
    }
}
