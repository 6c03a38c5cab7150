//! Fault specifications as users write them:
//! `KIND:TARGET[:AMOUNT[:SHARE]][@ONSET]`.

use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FaultKind {
    /// A service works `amount` ms longer on `share` of its requests, from
    /// a moment 30-60 % into the run on.
    Service,
    /// A link queues `amount` ms more in bursts.
    Link,
    /// A link loses `amount` of its packets (a fraction).
    Loss,
    /// A host's stack delays its packets `amount` ms in bursts.
    Host,
    /// A link queues `amount` ms more all the time, on no request's path.
    Decoy,
    /// Many senders answer one host at once: its downlink (switch → host)
    /// queues up to `amount` ms in short synchronised bursts. The target is
    /// a host; the truth names its downlink.
    Incast,
    /// A link between switches holds every packet `amount` ms longer, from
    /// a moment 30-60 % into the run on, with no queue growing (a longer
    /// wire after a reroute, a `netem` delay): only the next switch's
    /// ingress stamp shows it.
    Delay,
    /// A service stops answering `share` of the calls to it, from a moment
    /// 30-60 % into the run on, and records nothing for them: its callers
    /// give up after `amount` ms (their timeout).
    Silent,
}

/// One fault to inject; `target` `None` lets the generator pick one.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpec {
    pub kind: FaultKind,
    pub target: Option<String>,
    pub amount: f64,
    pub share: f64,
    /// When a lasting fault (service, silent, delay) begins, as a share of
    /// the run; `None`: a moment 30-60 % into it.
    pub onset: Option<f64>,
}

impl FromStr for FaultSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (spec, onset) = match s.split_once('@') {
            Some((spec, at)) => (spec, Some(onset(s, at)?)),
            None => (s, None),
        };
        let mut parts = spec.split(':');
        let kind = match parts.next().unwrap_or_default() {
            "service" => FaultKind::Service,
            "link" => FaultKind::Link,
            "loss" => FaultKind::Loss,
            "host" => FaultKind::Host,
            "decoy" => FaultKind::Decoy,
            "incast" => FaultKind::Incast,
            "delay" => FaultKind::Delay,
            "silent" => FaultKind::Silent,
            k => {
                return Err(format!(
                    "unknown fault kind {k:?} \
                     (service, link, loss, host, decoy, incast, delay, silent)"
                ))
            }
        };
        let rest: Vec<&str> = parts.collect();
        // Link names hold a ':' themselves (`s1:1->s5`): numbers at the end
        // are the amount and share, the rest is the target.
        let numbers = rest
            .iter()
            .rev()
            .take_while(|p| p.parse::<f64>().is_ok())
            .count();
        let numbers = numbers.min(2).min(rest.len().saturating_sub(1));
        let target = rest[..rest.len() - numbers].join(":");
        let nums: Vec<f64> = rest[rest.len() - numbers..]
            .iter()
            .filter_map(|p| p.parse().ok())
            .collect();
        if target.is_empty() {
            return Err(format!("fault {s:?}: missing target (a name or auto)"));
        }
        let default_amount = match kind {
            FaultKind::Loss => 0.05,
            _ => 5.0,
        };
        let amount = nums.first().copied().unwrap_or(default_amount);
        let share = nums
            .get(1)
            .copied()
            .unwrap_or(if kind == FaultKind::Service { 0.3 } else { 1.0 });
        if !(amount > 0.0 && (kind != FaultKind::Loss || amount < 1.0))
            || !(share > 0.0 && share <= 1.0)
        {
            return Err(format!("fault {s:?}: amount or share out of range"));
        }
        if onset.is_some()
            && !matches!(
                kind,
                FaultKind::Service | FaultKind::Silent | FaultKind::Delay
            )
        {
            return Err(format!(
                "fault {s:?}: only service, silent and delay faults begin at a moment (@ONSET)"
            ));
        }
        Ok(FaultSpec {
            kind,
            target: (target != "auto").then_some(target),
            amount,
            share,
            onset,
        })
    }
}

/// `@ONSET`: a share of the run in [0, 1).
fn onset(spec: &str, at: &str) -> Result<f64, String> {
    match at.parse::<f64>() {
        Ok(x) if (0.0..1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "fault {spec:?}: onset {at:?} is not a share of the run in [0, 1)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_names_keep_their_port() {
        let f: FaultSpec = "link:s1:1->s5:8".parse().unwrap();
        assert_eq!(
            (f.kind, f.target.as_deref(), f.amount),
            (FaultKind::Link, Some("s1:1->s5"), 8.0)
        );
        let f: FaultSpec = "service:profile:20:0.5".parse().unwrap();
        assert_eq!(
            (f.target.as_deref(), f.amount, f.share),
            (Some("profile"), 20.0, 0.5)
        );
        let f: FaultSpec = "loss:auto".parse().unwrap();
        assert_eq!((f.target, f.amount), (None, 0.05));
        assert!("loss:auto:2".parse::<FaultSpec>().is_err());
        assert!("flood:h1".parse::<FaultSpec>().is_err());
        assert!("host".parse::<FaultSpec>().is_err());
        let f: FaultSpec = "silent:geo:20".parse().unwrap();
        assert_eq!((f.kind, f.amount, f.share), (FaultKind::Silent, 20.0, 1.0));
        assert_eq!(f.onset, None);
        let f: FaultSpec = "service:auto:10:0.3@0.1".parse().unwrap();
        assert_eq!((f.amount, f.share, f.onset), (10.0, 0.3, Some(0.1)));
        assert!("service:auto:10@1.5".parse::<FaultSpec>().is_err());
        assert!("link:auto:8@0.1".parse::<FaultSpec>().is_err());
        let f: FaultSpec = "incast:h3:4".parse().unwrap();
        assert_eq!(
            (f.kind, f.target.as_deref(), f.amount),
            (FaultKind::Incast, Some("h3"), 4.0)
        );
    }
}
