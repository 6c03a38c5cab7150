//! The faults `intpath demo --workload` injects halfway through a run: a
//! service delay through the workload's own `--delay-after`, a congested,
//! lossy or delaying link as `intpath lab fault` sets it
//! ([`crate::lab::fault`]).

use super::services::Placement;
use anyhow::{bail, Context, Result};
use intpath_core::link::{DirLink, LinkName};
use intpath_core::routes::Routes;
use intpath_core::topo::Topology;
use std::str::FromStr;

/// One `--fault`: what to break; `None` link means `auto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultSpec {
    Service(String),
    Link(Option<String>),
    Loss(Option<String>),
    Delay(Option<String>),
}

impl FromStr for FaultSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (kind, target) = s.split_once(':').ok_or_else(|| {
            format!(
                "{s:?}: expected service:NAME, link:auto|LINK, loss:auto|LINK or delay:auto|LINK"
            )
        })?;
        let link = (target != "auto").then(|| target.to_owned());
        match kind {
            // Checked against the workload's services before the run starts.
            "service" if !target.is_empty() => Ok(FaultSpec::Service(target.to_owned())),
            "service" => Err("service: which service? (service:NAME)".to_owned()),
            "link" => Ok(FaultSpec::Link(link)),
            "loss" => Ok(FaultSpec::Loss(link)),
            "delay" => Ok(FaultSpec::Delay(link)),
            _ => Err(format!(
                "{kind:?}: fault kinds are service, link, loss and delay"
            )),
        }
    }
}

impl FaultSpec {
    /// Refuses a fault the workload cannot inject, before anything starts.
    pub fn check(&self, services: &[&str]) -> Result<()> {
        match self {
            FaultSpec::Service(s) if !services.contains(&s.as_str()) => bail!(
                "--fault service:{s}: the workload has no service {s} ({})",
                services.join(", ")
            ),
            _ => Ok(()),
        }
    }
}

/// A fault with its target resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    Service(String),
    Link(DirLink),
    Loss(DirLink),
    Delay(DirLink),
}

impl Fault {
    /// The culprit `intpath diagnose culprits` should name: (kind, name).
    pub fn culprit(&self) -> (&'static str, String) {
        match self {
            Fault::Service(s) => ("service", s.clone()),
            Fault::Link(l) => ("link", l.to_string()),
            Fault::Loss(l) => ("loss", l.to_string()),
            Fault::Delay(l) => ("link", l.to_string()),
        }
    }

    /// Whether a ranked culprit names this fault. `intpath diagnose` lists
    /// a link once, its queueing and loss evidence together, under the kind
    /// that weighs more; a throttled link's queue overflows, so that single
    /// culprit names it whether its queue or its tail drops lead. A lossy
    /// link is named when its loss leads.
    pub fn named_by(&self, kind: &str, name: &str) -> bool {
        let (want_kind, want_name) = self.culprit();
        let kind_ok = match self {
            Fault::Link(_) => kind == "link" || kind == "loss",
            _ => kind == want_kind,
        };
        kind_ok && name == want_name
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, name) = self.culprit();
        write!(f, "{kind} {name}")
    }
}

/// Resolves `auto` to a switch-to-switch link the workload's requests
/// cross: on the frontend → search route (most requests are searches),
/// the link the fewest other calls share, so that the fault hurts one
/// call and a diagnosis can tell it from the rest.
pub fn resolve(spec: &FaultSpec, topo: &Topology, placement: &Placement) -> Result<Fault> {
    let link = |given: &Option<String>| -> Result<DirLink> {
        match given {
            Some(name) => LinkName::parse(name)
                .and_then(|n| n.resolve(topo))
                .with_context(|| format!("{name}: not a link of the topology")),
            None => auto_link(topo, placement),
        }
    };
    Ok(match spec {
        FaultSpec::Service(s) => Fault::Service(s.clone()),
        FaultSpec::Link(l) => Fault::Link(link(l)?),
        FaultSpec::Loss(l) => Fault::Loss(link(l)?),
        FaultSpec::Delay(l) => Fault::Delay(link(l)?),
    })
}

fn auto_link(topo: &Topology, placement: &Placement) -> Result<DirLink> {
    let routes = Routes::shortest(topo);
    let (Some(from), Some(to)) = (placement.host_of("frontend"), placement.host_of("search"))
    else {
        bail!("the placement has no frontend or search");
    };
    let fabric = |l: &DirLink| topo.switch(&l.src).is_some() && topo.switch(&l.dst).is_some();
    let mut others = Vec::new();
    for (a, b) in placement.calls() {
        if (a, b) != (from, to) {
            others.extend(routes.path(topo, a, b)?);
            others.extend(routes.path(topo, b, a)?);
        }
    }
    routes
        .path(topo, from, to)?
        .into_iter()
        .filter(fabric)
        .min_by_key(|l| others.iter().filter(|o| *o == l).count())
        .with_context(|| format!("the route {from} → {to} crosses no switch-to-switch link"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::services::START_ORDER;

    #[test]
    fn specs_parse_and_auto_picks_a_link_of_the_search_call() {
        assert_eq!(
            "service:profile".parse(),
            Ok(FaultSpec::Service("profile".into()))
        );
        assert_eq!("link:auto".parse(), Ok(FaultSpec::Link(None)));
        assert_eq!("loss:auto".parse(), Ok(FaultSpec::Loss(None)));
        let moon: FaultSpec = "service:moon".parse().unwrap();
        assert!(moon
            .check(&START_ORDER)
            .unwrap_err()
            .to_string()
            .contains("no service moon"));
        assert!("service:".parse::<FaultSpec>().is_err());
        let profile: FaultSpec = "service:profile".parse().unwrap();
        assert!(profile.check(&START_ORDER).is_ok());
        assert!("fire:auto".parse::<FaultSpec>().is_err());
        assert!("link".parse::<FaultSpec>().is_err());

        let topo = Topology::load("fattree:k=4").unwrap();
        let hosts: Vec<String> = topo.hosts().iter().map(|h| h.name.clone()).collect();
        let placement = Placement::spread(&hosts, hosts.last().unwrap()).unwrap();
        let Fault::Link(l) = resolve(&FaultSpec::Link(None), &topo, &placement).unwrap() else {
            panic!("a link fault resolves to a link");
        };
        let routes = Routes::shortest(&topo);
        let (f, s) = (
            placement.host_of("frontend").unwrap(),
            placement.host_of("search").unwrap(),
        );
        assert!(routes.path(&topo, f, s).unwrap().contains(&l));
        assert!(topo.switch(&l.src).is_some() && topo.switch(&l.dst).is_some());

        let name = l.to_string();
        let link = Fault::Link(l.clone());
        assert!(link.named_by("link", &name) && link.named_by("loss", &name));
        assert!(!link.named_by("service", &name) && !link.named_by("link", "s1:1->s2"));
        let delay = Fault::Delay(l.clone());
        assert!(delay.named_by("link", &name) && !delay.named_by("loss", &name));
        assert_eq!("delay:auto".parse(), Ok(FaultSpec::Delay(None)));
        let loss = Fault::Loss(l);
        assert!(loss.named_by("loss", &name) && !loss.named_by("link", &name));
        let svc = Fault::Service("profile".into());
        assert!(svc.named_by("service", "profile") && !svc.named_by("host", "profile"));
    }
}
