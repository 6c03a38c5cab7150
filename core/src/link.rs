//! Directed links: the unit every measurement, plan check and verdict names.
//!
//! An INT record describes one switch's *egress* queue, so a cable carries
//! two links, one per sending end. Every crate names a link the same way,
//! `sender:port->receiver`, through [`DirLink`]'s `Display`.

use crate::topo::Topology;
use std::fmt;

/// One direction of a cable: traffic leaves `src` by `src_port` and enters
/// `dst` by `dst_port`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct DirLink {
    /// The sending switch, whose egress queue the link's records measure.
    pub src: String,
    /// The port `src` sends by.
    pub src_port: u16,
    /// The receiving node.
    pub dst: String,
    /// The port `dst` receives on (implied by the cable, so not in the name).
    pub dst_port: u16,
}

impl DirLink {
    /// The direction leaving `node` by `port`, if the topology has that port.
    pub fn leaving(topo: &Topology, node: &str, port: u16) -> Option<DirLink> {
        let (dst, dst_port) = topo.peer(node, port)?;
        Some(DirLink {
            src: node.to_owned(),
            src_port: port,
            dst: dst.to_owned(),
            dst_port,
        })
    }

    /// The opposite direction of the same cable.
    pub fn reversed(&self) -> DirLink {
        DirLink {
            src: self.dst.clone(),
            src_port: self.dst_port,
            dst: self.src.clone(),
            dst_port: self.src_port,
        }
    }

    /// Whether `name` (as [`Display`](fmt::Display) writes it) is this link.
    pub fn is_named(&self, name: &str) -> bool {
        LinkName::parse(name)
            .is_some_and(|n| n.src == self.src && n.src_port == self.src_port && n.dst == self.dst)
    }
}

/// `sender:port->receiver`: the receiving port is implied by the cable.
impl fmt::Display for DirLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}->{}", self.src, self.src_port, self.dst)
    }
}

/// A link name as users write it (`s1:1->s5`), before it is checked
/// against a topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkName<'a> {
    /// The sending node as written.
    pub src: &'a str,
    /// The port it sends by.
    pub src_port: u16,
    /// The receiving node as written.
    pub dst: &'a str,
}

impl<'a> LinkName<'a> {
    /// `None` unless `s` is `sender:port->receiver` with a numeric port.
    pub fn parse(s: &'a str) -> Option<Self> {
        let (from, dst) = s.split_once("->")?;
        let (src, port) = from.rsplit_once(':')?;
        let src_port = port.parse().ok()?;
        (!src.is_empty() && !dst.is_empty()).then_some(LinkName { src, src_port, dst })
    }

    /// The link of `topo` this names, if its port leads to the named peer.
    pub fn resolve(&self, topo: &Topology) -> Option<DirLink> {
        DirLink::leaving(topo, self.src, self.src_port).filter(|l| l.dst == self.dst)
    }
}

/// A link as a user may ask for it: its full name (`s1:1->s5`), its sending
/// end (`s1:1`) or its two switches (`s1->s5`). The full name is read by
/// [`LinkName::parse`], so every name intpath prints is accepted back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkSpec<'a> {
    /// `sender:port->receiver`.
    Full(LinkName<'a>),
    /// `sender:port`: the one link a port sends on.
    Sender {
        /// The sending node.
        src: &'a str,
        /// The port it sends by.
        src_port: u16,
    },
    /// `sender->receiver`: the first link between the two.
    Ends {
        /// The sending node.
        src: &'a str,
        /// The receiving node.
        dst: &'a str,
    },
}

impl<'a> LinkSpec<'a> {
    /// `None` unless `s` is one of the three forms.
    pub fn parse(s: &'a str) -> Option<Self> {
        if let Some(name) = LinkName::parse(s) {
            return Some(LinkSpec::Full(name));
        }
        if let Some((src, dst)) = s.split_once("->") {
            let plain = |n: &str| !n.is_empty() && !n.contains("->");
            return (plain(src) && plain(dst)).then_some(LinkSpec::Ends { src, dst });
        }
        let (src, port) = s.rsplit_once(':')?;
        let src_port = port.parse().ok()?;
        (!src.is_empty()).then_some(LinkSpec::Sender { src, src_port })
    }

    /// Whether `link` is one this spec asks for.
    pub fn matches(&self, link: &DirLink) -> bool {
        match *self {
            LinkSpec::Full(n) => {
                n.src == link.src && n.src_port == link.src_port && n.dst == link.dst
            }
            LinkSpec::Sender { src, src_port } => src == link.src && src_port == link.src_port,
            LinkSpec::Ends { src, dst } => src == link.src && dst == link.dst,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_the_topology() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let (port, peer, peer_port) = topo.neighbours("s1").next().unwrap();
        let l = DirLink::leaving(&topo, "s1", port).unwrap();
        assert_eq!(l.to_string(), format!("s1:{port}->{peer}"));
        assert_eq!(l.dst_port, peer_port);
        let name = l.to_string();
        assert_eq!(
            LinkName::parse(&name).unwrap().resolve(&topo),
            Some(l.clone())
        );
        assert!(l.is_named(&name));
        // Every form a user may write names the printed link.
        for spec in [name.clone(), format!("s1:{port}"), format!("s1->{peer}")] {
            let parsed = LinkSpec::parse(&spec).unwrap();
            assert!(parsed.matches(&l), "{spec}");
            assert!(!parsed.matches(&l.reversed()), "{spec}");
        }
        assert!(!l.reversed().is_named(&name));
        assert_eq!(l.reversed().reversed(), l);
    }

    #[test]
    fn malformed_names_are_refused() {
        for bad in [
            "s1->s5",
            "s1:x->s5",
            ":1->s5",
            "s1:1->",
            "s1:1-s5",
            "s1:70000->s5",
        ] {
            assert_eq!(LinkName::parse(bad), None, "{bad}");
        }
        for bad in ["s1", "s1:x", ":1", "s1->", "->s5", "s1->s5->s6"] {
            assert_eq!(LinkSpec::parse(bad), None, "{bad}");
        }
        let topo = Topology::load("fattree:k=4").unwrap();
        // A real port, the wrong peer.
        assert_eq!(LinkName::parse("s1:1->s2").unwrap().resolve(&topo), None);
    }
}
