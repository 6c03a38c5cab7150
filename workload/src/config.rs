//! Typed settings for the services and the load generator, parsed from the
//! short strings a command line or a demo script writes.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

/// Why a setting could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    #[error("unknown service {0:?} (frontend, search, geo, rate, profile, reservation)")]
    UnknownService(String),
    #[error("peer {0:?} is not NAME=IP:PORT")]
    BadPeer(String),
    #[error("{0} needs peers {1} (missing: {2})")]
    MissingPeers(Service, String, String),
    #[error("{0} does not call {1}")]
    UnexpectedPeer(Service, Service),
    #[error("delay percentage {0} is not within 0..=100")]
    BadPercent(f64),
    #[error("mix entry {0:?} is not KIND=WEIGHT with KIND search, profile or reserve")]
    BadMix(String),
    #[error("request mix has no positive weight")]
    EmptyMix,
}

/// The HotelReservation services. The call graph is fixed: frontend calls
/// search, profile and reservation; search calls geo and rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Service {
    Frontend,
    Search,
    Geo,
    Rate,
    Profile,
    Reservation,
}

impl Service {
    pub const ALL: [Service; 6] = [
        Service::Frontend,
        Service::Search,
        Service::Geo,
        Service::Rate,
        Service::Profile,
        Service::Reservation,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Service::Frontend => "frontend",
            Service::Search => "search",
            Service::Geo => "geo",
            Service::Rate => "rate",
            Service::Profile => "profile",
            Service::Reservation => "reservation",
        }
    }

    /// The services this one calls.
    pub fn callees(self) -> &'static [Service] {
        match self {
            Service::Frontend => &[Service::Search, Service::Profile, Service::Reservation],
            Service::Search => &[Service::Geo, Service::Rate],
            _ => &[],
        }
    }
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Service {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Service::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| ConfigError::UnknownService(s.to_owned()))
    }
}

/// Where each callee listens: `geo=10.0.0.3:8083,rate=10.0.0.4:8084`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Peers(BTreeMap<Service, SocketAddr>);

impl Peers {
    pub fn get(&self, s: Service) -> Option<SocketAddr> {
        self.0.get(&s).copied()
    }

    pub fn insert(&mut self, s: Service, addr: SocketAddr) {
        self.0.insert(s, addr);
    }

    /// Checks that `service` is given exactly the peers it calls.
    pub fn check_for(&self, service: Service) -> Result<(), ConfigError> {
        if let Some(extra) = self.0.keys().find(|p| !service.callees().contains(p)) {
            return Err(ConfigError::UnexpectedPeer(service, *extra));
        }
        let missing: Vec<&str> = service
            .callees()
            .iter()
            .filter(|c| !self.0.contains_key(c))
            .map(|c| c.name())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let all: Vec<&str> = service.callees().iter().map(|c| c.name()).collect();
        Err(ConfigError::MissingPeers(
            service,
            all.join(", "),
            missing.join(", "),
        ))
    }
}

impl FromStr for Peers {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let mut peers = Peers::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, addr) = item
                .split_once('=')
                .ok_or_else(|| ConfigError::BadPeer(item.to_owned()))?;
            let addr = addr
                .parse()
                .map_err(|_| ConfigError::BadPeer(item.to_owned()))?;
            peers.insert(name.parse()?, addr);
        }
        Ok(peers)
    }
}

/// The service delay fault: `extra` added to `percent` % of requests,
/// from `after` the service starts serving (a fault injected mid-run, as
/// `intpath demo` does, with no second channel into the service).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delay {
    pub extra: Duration,
    percent: f64,
    pub after: Duration,
}

impl Delay {
    pub fn new(extra: Duration, percent: f64) -> Result<Self, ConfigError> {
        if !(0.0..=100.0).contains(&percent) {
            return Err(ConfigError::BadPercent(percent));
        }
        Ok(Delay {
            extra,
            percent,
            after: Duration::ZERO,
        })
    }

    /// The same fault, starting `after` the service starts serving.
    pub fn starting_after(self, after: Duration) -> Self {
        Delay { after, ..self }
    }

    pub fn percent(&self) -> f64 {
        self.percent
    }
}

/// What the load generator asks the frontend for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestKind {
    /// Hotels near a point: frontend → search → {geo, rate}, then profile.
    Search,
    /// One hotel's profile: frontend → profile.
    Profile,
    /// A booking: frontend → reservation.
    Reserve,
}

impl RequestKind {
    pub const ALL: [RequestKind; 3] = [
        RequestKind::Search,
        RequestKind::Profile,
        RequestKind::Reserve,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RequestKind::Search => "search",
            RequestKind::Profile => "profile",
            RequestKind::Reserve => "reserve",
        }
    }

    /// The frontend route serving this kind.
    pub fn route(self) -> &'static str {
        match self {
            RequestKind::Search => "/hotels",
            RequestKind::Profile => "/profile",
            RequestKind::Reserve => "/reserve",
        }
    }
}

/// Relative weights of the request kinds: `search=60,profile=30,reserve=10`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix(Vec<(RequestKind, f64)>);

impl Mix {
    pub fn weights(&self) -> &[(RequestKind, f64)] {
        &self.0
    }
}

impl Default for Mix {
    /// DeathStarBench's HotelReservation default leans on search.
    fn default() -> Self {
        Mix(vec![
            (RequestKind::Search, 60.0),
            (RequestKind::Profile, 30.0),
            (RequestKind::Reserve, 10.0),
        ])
    }
}

impl FromStr for Mix {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let mut out = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = || ConfigError::BadMix(item.to_owned());
            let (kind, w) = item.split_once('=').ok_or_else(bad)?;
            let kind = RequestKind::ALL
                .into_iter()
                .find(|k| k.name() == kind)
                .ok_or_else(bad)?;
            let w: f64 = w.parse().map_err(|_| bad())?;
            if !w.is_finite() || w < 0.0 {
                return Err(bad());
            }
            out.push((kind, w));
        }
        if !out.iter().any(|(_, w)| *w > 0.0) {
            return Err(ConfigError::EmptyMix);
        }
        Ok(Mix(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_parse_and_check() {
        let p: Peers = "geo=127.0.0.1:1,rate=127.0.0.1:2".parse().unwrap();
        assert_eq!(p.get(Service::Geo), Some("127.0.0.1:1".parse().unwrap()));
        assert!(p.check_for(Service::Search).is_ok());
        assert_eq!(
            p.check_for(Service::Frontend),
            Err(ConfigError::UnexpectedPeer(Service::Frontend, Service::Geo))
        );
        let one: Peers = "geo=127.0.0.1:1".parse().unwrap();
        assert_eq!(
            one.check_for(Service::Search).unwrap_err().to_string(),
            "search needs peers geo, rate (missing: rate)"
        );
        assert!("geo=nowhere".parse::<Peers>().is_err());
        assert!("moon=127.0.0.1:1".parse::<Peers>().is_err());
    }

    #[test]
    fn mix_and_delay_reject_bad_values() {
        let m: Mix = "search=1,reserve=3".parse().unwrap();
        assert_eq!(m.weights().len(), 2);
        for bad in [
            "search",
            "fly=1",
            "search=-1",
            "search=NaN",
            "profile=0",
            "",
        ] {
            assert!(bad.parse::<Mix>().is_err(), "{bad}");
        }
        assert!(Delay::new(Duration::from_millis(5), 101.0).is_err());
        assert!(Delay::new(Duration::from_millis(5), f64::NAN).is_err());
    }
}
