//! The plan file: probe paths as `intpath plan` writes them and as
//! `intpath deploy`, `probe-gen` and the collector read them.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A node name as plans hold it. Names up to 24 bytes (every generated
/// switch name) live inline, so a plan of a large fabric does not allocate
/// and free a string per stop: at FatTree k=48 the 56,553 owned `String`s
/// were more than half of the planner's time.
pub type NodeName = compact_str::CompactString;

/// One probe path: the switches it visits and the port it leaves each by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbePath {
    /// Carried in the SR header and the probe payload.
    pub id: u16,
    /// Node names in visiting order.
    pub nodes: Vec<NodeName>,
    /// `egress_ports[i]` is the port of `nodes[i]` towards `nodes[i + 1]`.
    pub egress_ports: Vec<u16>,
}

impl ProbePath {
    /// Links the path covers.
    pub fn len(&self) -> usize {
        self.egress_ports.len()
    }

    /// Whether the path covers no link (a plan never holds one, see
    /// [`Plan::load`]; the method pairs with [`Self::len`]).
    pub fn is_empty(&self) -> bool {
        self.egress_ports.is_empty()
    }

    /// The first switch, which pushes the route and where probes are sent.
    pub fn generator(&self) -> &str {
        &self.nodes[0]
    }

    /// The last switch, which sends the probe on to the collector.
    pub fn sink(&self) -> &str {
        &self.nodes[self.nodes.len() - 1]
    }
}

/// Figures about a plan, for people and for the evaluation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanStats {
    /// Paths in the plan.
    pub paths: usize,
    /// Fewest paths any plan under the same constraints could use.
    pub lower_bound: usize,
    /// Links of the longest path: it bounds the probe size (see
    /// [`crate::wire::max_path_links`]).
    pub max_len: usize,
    /// Mean links per path.
    pub mean_len: f64,
    /// Variance of the links per path: low when the plan balances lengths.
    pub len_variance: f64,
    /// How long planning took, ms, for the planner evaluation.
    pub plan_ms: f64,
}

/// A whole plan file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The topology spec the plan was made for.
    pub topology: String,
    /// The planning algorithm, so that plans can be compared.
    pub algo: String,
    /// The probe paths; ids are unique.
    pub paths: Vec<ProbePath>,
    /// Figures about the paths.
    pub stats: PlanStats,
}

/// Why a plan file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The file cannot be read.
    #[error("{path}: cannot read plan: {cause}")]
    Read {
        /// The file, named in the message so the user knows which one.
        path: PathBuf,
        /// What the system said.
        cause: std::io::Error,
    },
    /// The file is not a plan's JSON.
    #[error("{path}: not a plan file: {cause}")]
    Parse {
        /// The file, named in the message so the user knows which one.
        path: PathBuf,
        /// What serde said, with line and column.
        cause: serde_json::Error,
    },
    /// The plan cannot be written.
    #[error("{path}: cannot write plan: {cause}")]
    Write {
        /// The file, named in the message so the user knows which one.
        path: PathBuf,
        /// What the system said.
        cause: std::io::Error,
    },
    /// A path's shape is wrong (duplicate id, too few nodes, ports that
    /// do not match its nodes).
    #[error("{path}: path {id}: {problem}")]
    Invalid {
        /// The file, named in the message so the user knows which one.
        path: PathBuf,
        /// The path at fault.
        id: u16,
        /// What is wrong with it.
        problem: String,
    },
}

impl Plan {
    /// Reads and checks the shape of a plan file (not its fit to a topology:
    /// that is `intpath plan --check`).
    pub fn load(path: &Path) -> Result<Self, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_owned(),
            cause: source,
        })?;
        Self::parse(path, &text)
    }

    /// Writes the plan so that a reader never sees half of it: to a
    /// temporary file beside `path`, then renamed over it.
    pub fn save(&self, path: &Path) -> Result<(), PlanError> {
        let write_err = |source| PlanError::Write {
            path: path.to_owned(),
            cause: source,
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other);
        std::fs::write(&tmp, text.map_err(write_err)? + "\n").map_err(write_err)?;
        std::fs::rename(&tmp, path).map_err(write_err)
    }

    /// `text` read from `path` (named in errors).
    fn parse(path: &Path, text: &str) -> Result<Self, PlanError> {
        let plan: Plan = serde_json::from_str(text).map_err(|source| PlanError::Parse {
            path: path.to_owned(),
            cause: source,
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

    /// The path with id `id`: how a probe's path id finds its switches.
    pub fn path(&self, id: u16) -> Option<&ProbePath> {
        self.paths.iter().find(|p| p.id == id)
    }
}

/// A plan file that another program may rewrite while we use it (`intpath
/// watch` after a replan), so that probe senders and the collector can
/// follow the plan in force.
#[derive(Debug)]
pub struct FollowedPlan {
    path: PathBuf,
    text: String,
}

impl FollowedPlan {
    /// Reads the plan in force, remembering its text so that [`Self::poll`]
    /// sees only changes.
    pub fn open(path: &Path) -> Result<(Self, Plan), PlanError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_owned(),
            cause: source,
        })?;
        let plan = Plan::parse(path, &text)?;
        let path = path.to_owned();
        Ok((Self { path, text }, plan))
    }

    /// The file followed, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The plan, if the file's content changed since the last look. A file
    /// that cannot be read or parsed now is reported once per change; the
    /// caller keeps the plan it has.
    pub fn poll(&mut self) -> Option<Result<Plan, PlanError>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            // Reported once: the empty text stands for "unreadable".
            Err(_) if self.text.is_empty() => return None,
            Err(source) => {
                self.text.clear();
                return Some(Err(PlanError::Read {
                    path: self.path.clone(),
                    cause: source,
                }));
            }
        };
        if text == self.text {
            return None;
        }
        let plan = Plan::parse(&self.path, &text);
        self.text = text;
        Some(plan)
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

    #[test]
    fn names_inline_or_not_read_and_write_as_strings() {
        // Names past the 24 bytes held inline take the heap path.
        let long = "a-switch-name-longer-than-24-bytes";
        let text = format!(
            r#"{{
  "topology": "t",
  "algo": "balanced",
  "paths": [
    {{
      "id": 7,
      "nodes": [
        "s1",
        "{long}",
        "zürich-ß"
      ],
      "egress_ports": [
        1,
        2
      ]
    }}
  ],
  "stats": {{
    "paths": 1,
    "lower_bound": 1,
    "max_len": 2,
    "mean_len": 2.0,
    "len_variance": 0.0,
    "plan_ms": 0.5
  }}
}}
"#
        );
        let plan = Plan::parse(Path::new("p.json"), &text).unwrap();
        assert_eq!(plan.paths[0].nodes[1], long);
        assert_eq!(plan.paths[0].sink(), "zürich-ß");
        assert_eq!(serde_json::to_string_pretty(&plan).unwrap() + "\n", text);
    }

    #[test]
    fn a_followed_plan_reports_each_change_once() {
        let dir = std::env::temp_dir().join(format!("intpath-follow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p.json");
        let mut plan = Plan {
            topology: "t".into(),
            algo: "euler".into(),
            paths: vec![ProbePath {
                id: 0,
                nodes: vec!["s1".into(), "s2".into()],
                egress_ports: vec![1],
            }],
            stats: PlanStats::default(),
        };
        plan.save(&f).unwrap();
        let (mut followed, first) = FollowedPlan::open(&f).unwrap();
        assert_eq!(first, plan);
        assert!(followed.poll().is_none());
        plan.paths[0].egress_ports = vec![2];
        plan.save(&f).unwrap();
        assert_eq!(followed.poll().unwrap().unwrap(), plan);
        assert!(followed.poll().is_none());
        std::fs::write(&f, "{").unwrap();
        assert!(matches!(
            followed.poll(),
            Some(Err(PlanError::Parse { .. }))
        ));
        assert!(followed.poll().is_none());
        std::fs::remove_file(&f).unwrap();
        assert!(matches!(followed.poll(), Some(Err(PlanError::Read { .. }))));
        assert!(followed.poll().is_none());
        plan.save(&f).unwrap();
        assert_eq!(followed.poll().unwrap().unwrap(), plan);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
