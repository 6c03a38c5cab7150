//! The switch map: where each switch's P4Runtime server listens. The Mininet
//! launcher writes it; `intpath deploy` and `probe-gen` (packet-out at a
//! switch without a host) read it.
//!
//! ```json
//! {"switches": [{"name": "s1", "grpc_addr": "127.0.0.1:50001", "device_id": 1, "cpu_port": 255}]}
//! ```
//! `device_id` is the topology's switch id, which is also the INT switch id.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One switch's entry: how to reach its P4Runtime server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchEntry {
    /// The topology's switch name.
    pub name: String,
    /// `host:port` of the P4Runtime server.
    pub grpc_addr: String,
    /// P4Runtime device id: the topology's switch id, so that INT records
    /// and P4Runtime agree on who is who.
    pub device_id: u64,
    /// The switch's CPU port, where packet-outs enter and packet-ins leave.
    pub cpu_port: u16,
    /// `host:port` of the switch's text admin interface (queue rates and
    /// depths at run time), when it serves one: the reference switch under
    /// the Mininet launcher does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_addr: Option<String>,
    /// The port of bmv2's Thrift server on the same host as `grpc_addr`,
    /// for `simple_switch_CLI` (queue rates at run time), when the switch
    /// is bmv2 under the Mininet launcher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thrift_port: Option<u16>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchMap {
    /// Every switch, each name once.
    pub switches: Vec<SwitchEntry>,
}

/// Why a switch map could not be used; one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum SwitchMapError {
    /// The file cannot be read.
    #[error("{path}: cannot read switch map: {cause}")]
    Read {
        /// The file, named in the message so the user knows which one.
        path: PathBuf,
        /// What the system said.
        cause: std::io::Error,
    },
    /// The file is not a switch map's JSON.
    #[error("{path}: not a switch map: {cause}")]
    Parse {
        /// The file, named in the message so the user knows which one.
        path: PathBuf,
        /// What serde said, with line and column.
        cause: serde_json::Error,
    },
    /// Two entries share a name, so which one to reach would be a guess.
    #[error("{path}: switch {name:?} appears twice")]
    Duplicate {
        /// The file, named in the message so the user knows which one.
        path: PathBuf,
        /// The name given twice.
        name: String,
    },
}

impl SwitchMap {
    /// Reads and checks a switch map (names unique).
    pub fn load(path: &Path) -> Result<Self, SwitchMapError> {
        let text = std::fs::read_to_string(path).map_err(|source| SwitchMapError::Read {
            path: path.to_owned(),
            cause: source,
        })?;
        let map: SwitchMap =
            serde_json::from_str(&text).map_err(|source| SwitchMapError::Parse {
                path: path.to_owned(),
                cause: source,
            })?;
        let mut seen = std::collections::HashSet::new();
        for s in &map.switches {
            if !seen.insert(s.name.as_str()) {
                return Err(SwitchMapError::Duplicate {
                    path: path.to_owned(),
                    name: s.name.clone(),
                });
            }
        }
        Ok(map)
    }

    /// The entry of switch `name`, if the network has it.
    pub fn get(&self, name: &str) -> Option<&SwitchEntry> {
        self.switches.iter().find(|s| s.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_checks_shape_and_names() {
        let dir = std::env::temp_dir().join(format!("intpath-swmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("switches.json");
        let entry = r#"{"name":"s1","grpc_addr":"127.0.0.1:50001","device_id":1,"cpu_port":255}"#;
        std::fs::write(&f, format!(r#"{{"switches":[{entry}]}}"#)).unwrap();
        let map = SwitchMap::load(&f).unwrap();
        assert_eq!(map.get("s1").unwrap().grpc_addr, "127.0.0.1:50001");
        assert!(map.get("s2").is_none());
        std::fs::write(&f, format!(r#"{{"switches":[{entry},{entry}]}}"#)).unwrap();
        let e = SwitchMap::load(&f).unwrap_err().to_string();
        assert!(
            e.ends_with("switches.json: switch \"s1\" appears twice"),
            "{e}"
        );
        std::fs::write(&f, r#"{"switches":[{"name":"s1"}]}"#).unwrap();
        assert!(SwitchMap::load(&f)
            .unwrap_err()
            .to_string()
            .contains("not a switch map"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
