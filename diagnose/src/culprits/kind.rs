//! What a culprit is.

/// The kinds of culprit, named in output as in a synthetic run's
/// `truth.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CulpritKind {
    /// A link whose queue (INT) added time.
    Link,
    /// A link whose losses cost retransmissions.
    Loss,
    /// A service's own work.
    Service,
    /// A callee that records no spans of its own (a database, a cache,
    /// another company's API), seen from its callers: how long their calls
    /// to it took, its network and its work together.
    Dependency,
    /// A host's stack, over every call it makes or answers.
    Host,
    /// The network between two hosts (stacks and wire together): what a
    /// diagnosis without INT can say about the path.
    Network,
}

impl CulpritKind {
    pub fn name(self) -> &'static str {
        match self {
            CulpritKind::Link => "link",
            CulpritKind::Loss => "loss",
            CulpritKind::Service => "service",
            CulpritKind::Dependency => "dependency",
            CulpritKind::Host => "host",
            CulpritKind::Network => "network",
        }
    }

    /// Whether its calls are also tested for a share of them slowed, on
    /// their tail and on each side's own spread: a service's, and a
    /// callee's without spans. A host's calls are every service's on it,
    /// and their tail and spread move with whatever runs there.
    pub fn has_tail(self) -> bool {
        matches!(self, CulpritKind::Service | CulpritKind::Dependency)
    }

    /// Whether the culprit is a link of the topology (queue or loss).
    pub fn is_link(self) -> bool {
        matches!(self, CulpritKind::Link | CulpritKind::Loss)
    }
}

impl std::fmt::Display for CulpritKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CulpritKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "link" => Ok(CulpritKind::Link),
            "loss" => Ok(CulpritKind::Loss),
            "service" => Ok(CulpritKind::Service),
            "dependency" => Ok(CulpritKind::Dependency),
            "host" => Ok(CulpritKind::Host),
            "network" => Ok(CulpritKind::Network),
            _ => Err(format!(
                "unknown culprit kind {s:?} (link, loss, service, dependency, host, network)"
            )),
        }
    }
}
