//! The plan file: probe paths as `intpath plan` writes them and as
//! `intpath deploy`, `probe-gen` and the collector read them.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One probe path: the switches it visits and the port it leaves each by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbePath {
    /// Carried in the SR header and the probe payload.
    pub id: u16,
    /// Node names in visiting order.
    pub nodes: Vec<String>,
    /// `egress_ports[i]` is the port of `nodes[i]` towards `nodes[i + 1]`.
    pub egress_ports: Vec<u16>,
}

impl ProbePath {
    /// Links the path covers.
    pub fn len(&self) -> usize {
        self.egress_ports.len()
    }

    pub fn is_empty(&self) -> bool {
        self.egress_ports.is_empty()
    }

    pub fn generator(&self) -> &str {
        &self.nodes[0]
    }

    pub fn sink(&self) -> &str {
        &self.nodes[self.nodes.len() - 1]
    }
}

/// Figures about a plan, for people and for the evaluation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanStats {
    pub paths: usize,
    /// Fewest paths any plan under the same constraints could use.
    pub lower_bound: usize,
    pub max_len: usize,
    pub mean_len: f64,
    pub len_variance: f64,
    pub plan_ms: f64,
}

/// A whole plan file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The topology spec the plan was made for.
    pub topology: String,
    pub algo: String,
    pub paths: Vec<ProbePath>,
    pub stats: PlanStats,
}

/// Why a plan file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{path}: cannot read plan: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a plan file: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: path {id}: {problem}")]
    Invalid {
        path: PathBuf,
        id: u16,
        problem: String,
    },
}

impl Plan {
    /// Reads and checks the shape of a plan file (not its fit to a topology:
    /// that is `intpath plan --check`).
    pub fn load(path: &Path) -> Result<Self, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_owned(),
            source,
        })?;
        let plan: Plan = serde_json::from_str(&text).map_err(|source| PlanError::Parse {
            path: path.to_owned(),
            source,
        })?;
        let invalid = |id, problem: String| PlanError::Invalid {
            path: path.to_owned(),
            id,
            problem,
        };
        let mut seen = std::collections::HashSet::new();
        for p in &plan.paths {
            if !seen.insert(p.id) {
                return Err(invalid(p.id, "duplicate path id".into()));
            }
            if p.nodes.len() < 2 {
                return Err(invalid(p.id, "fewer than two nodes".into()));
            }
            if p.egress_ports.len() + 1 != p.nodes.len() {
                return Err(invalid(
                    p.id,
                    format!(
                        "{} nodes need {} egress ports, found {}",
                        p.nodes.len(),
                        p.nodes.len() - 1,
                        p.egress_ports.len()
                    ),
                ));
            }
        }
        Ok(plan)
    }

    pub fn path(&self, id: u16) -> Option<&ProbePath> {
        self.paths.iter().find(|p| p.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_reports_file_and_problem() {
        let dir = std::env::temp_dir().join(format!("intpath-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p.json");
        std::fs::write(
            &f,
            r#"{"topology":"t","algo":"euler","paths":[{"id":0,"nodes":["s1","s2"],"egress_ports":[]}],"stats":{"paths":1,"lower_bound":1,"max_len":1,"mean_len":1.0,"len_variance":0.0,"plan_ms":0.1}}"#,
        )
        .unwrap();
        let e = Plan::load(&f).unwrap_err().to_string();
        assert!(
            e.contains("p.json: path 0: 2 nodes need 1 egress ports"),
            "{e}"
        );
        std::fs::write(&f, "{").unwrap();
        assert!(Plan::load(&f)
            .unwrap_err()
            .to_string()
            .contains("not a plan file"));
        assert!(Plan::load(&dir.join("missing.json"))
            .unwrap_err()
            .to_string()
            .contains("cannot read plan"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
