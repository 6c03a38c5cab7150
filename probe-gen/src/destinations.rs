//! Background-traffic destinations from a file: one `IP [MAC]` per line.
//!
//! The optional MAC is what lets one generator reach hosts behind switches
//! that forward on the destination MAC as well as those that rewrite it;
//! lines without one use the default given on the command line.

use intpath_core::wire::MacAddr;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DestinationsError {
    #[error("{path}: cannot read destinations: {cause}")]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{path}:{line}: {problem}")]
    Parse {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    #[error("{0}: no destinations (expected lines of `IP [MAC]`)")]
    Empty(PathBuf),
}

/// Reads `path`; blank lines and `#` comments are skipped.
pub fn load(
    path: &Path,
    default_mac: MacAddr,
) -> Result<Vec<(Ipv4Addr, MacAddr)>, DestinationsError> {
    let text = std::fs::read_to_string(path).map_err(|source| DestinationsError::Read {
        path: path.to_owned(),
        cause: source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |problem: String| DestinationsError::Parse {
            path: path.to_owned(),
            line: i + 1,
            problem,
        };
        let mut words = line.split_whitespace();
        let ip_word = words.next().unwrap_or("");
        let ip: Ipv4Addr = ip_word
            .parse()
            .map_err(|_| bad(format!("{ip_word:?} is not an IPv4 address")))?;
        let mac = match words.next() {
            None => default_mac,
            Some(m) => m
                .parse()
                .map_err(|_| bad(format!("{m:?} is not a MAC address")))?,
        };
        if let Some(extra) = words.next() {
            return Err(bad(format!("unexpected {extra:?} after the MAC address")));
        }
        out.push((ip, mac));
    }
    if out.is_empty() {
        return Err(DestinationsError::Empty(path.to_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ips_with_optional_macs_and_reports_bad_lines() {
        let dir = std::env::temp_dir().join(format!("ippg-dst-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("d.txt");
        let def = MacAddr::BROADCAST;
        std::fs::write(&f, "# hosts\n10.0.0.2\n\n10.0.0.3 02:00:00:00:00:03 # h3\n").unwrap();
        assert_eq!(
            load(&f, def).unwrap(),
            [
                (Ipv4Addr::new(10, 0, 0, 2), def),
                (Ipv4Addr::new(10, 0, 0, 3), MacAddr([2, 0, 0, 0, 0, 3]))
            ]
        );
        std::fs::write(&f, "10.0.0.2\n10.0.0.x\n").unwrap();
        let e = load(&f, def).unwrap_err().to_string();
        assert!(
            e.ends_with("d.txt:2: \"10.0.0.x\" is not an IPv4 address"),
            "{e}"
        );
        std::fs::write(&f, "10.0.0.2 02:00:00:00:00:03 extra\n").unwrap();
        assert!(load(&f, def)
            .unwrap_err()
            .to_string()
            .contains(":1: unexpected \"extra\""));
        std::fs::write(&f, "# nothing\n").unwrap();
        assert!(matches!(load(&f, def), Err(DestinationsError::Empty(_))));
        assert!(matches!(
            load(&dir.join("none"), def),
            Err(DestinationsError::Read { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
