//! Which paths of a plan to probe.

use intpath_core::plan::{Plan, ProbePath};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSelection {
    Ids(Vec<u16>),
    /// Every path that starts at this switch.
    Generator(String),
    All,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error("path {id} is not in the plan (its paths: {known})")]
    UnknownPath { id: u16, known: String },
    #[error("no path of the plan starts at {0:?}")]
    NoPathAt(String),
    #[error("the plan has no paths")]
    EmptyPlan,
    #[error("path {0} is selected twice")]
    Duplicate(u16),
}

/// The selected paths, in plan order for `Generator`/`All` and in the given
/// order for `Ids`.
pub fn select<'p>(plan: &'p Plan, sel: &PathSelection) -> Result<Vec<&'p ProbePath>, SelectError> {
    let paths: Vec<&ProbePath> = match sel {
        PathSelection::Ids(ids) => {
            let mut seen = std::collections::HashSet::new();
            ids.iter()
                .map(|&id| {
                    if !seen.insert(id) {
                        return Err(SelectError::Duplicate(id));
                    }
                    plan.path(id).ok_or_else(|| SelectError::UnknownPath {
                        id,
                        known: id_ranges(plan.paths.iter().map(|p| p.id)),
                    })
                })
                .collect::<Result<_, _>>()?
        }
        PathSelection::Generator(sw) => {
            let v: Vec<_> = plan.paths.iter().filter(|p| p.generator() == sw).collect();
            if v.is_empty() {
                return Err(SelectError::NoPathAt(sw.clone()));
            }
            v
        }
        PathSelection::All => plan.paths.iter().collect(),
    };
    if paths.is_empty() {
        return Err(SelectError::EmptyPlan);
    }
    Ok(paths)
}

/// "0-3, 7, 9-10": short enough for an error message even for big plans.
fn id_ranges(ids: impl Iterator<Item = u16>) -> String {
    let mut ids: Vec<u16> = ids.collect();
    if ids.is_empty() {
        return "none".into();
    }
    ids.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut start = ids[0];
    let mut prev = ids[0];
    for &id in &ids[1..] {
        if id != prev + 1 {
            out.push(range(start, prev));
            start = id;
        }
        prev = id;
    }
    out.push(range(start, prev));
    out.join(", ")
}

fn range(a: u16, b: u16) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_core::plan::PlanStats;

    fn plan() -> Plan {
        let p = |id, a: &str, b: &str| ProbePath {
            id,
            nodes: vec![a.into(), b.into()],
            egress_ports: vec![1],
        };
        Plan {
            topology: "t".into(),
            algo: "euler".into(),
            paths: vec![
                p(0, "s1", "s2"),
                p(1, "s2", "s1"),
                p(2, "s1", "s3"),
                p(5, "s3", "s1"),
            ],
            stats: PlanStats::default(),
        }
    }

    fn ids(v: Vec<&ProbePath>) -> Vec<u16> {
        v.into_iter().map(|p| p.id).collect()
    }

    #[test]
    fn selects_by_id_generator_and_all() {
        let plan = plan();
        assert_eq!(
            ids(select(&plan, &PathSelection::Ids(vec![5, 0])).unwrap()),
            [5, 0]
        );
        assert_eq!(
            ids(select(&plan, &PathSelection::Generator("s1".into())).unwrap()),
            [0, 2]
        );
        assert_eq!(
            ids(select(&plan, &PathSelection::All).unwrap()),
            [0, 1, 2, 5]
        );
    }

    #[test]
    fn explains_what_is_wrong() {
        let plan = plan();
        assert_eq!(
            select(&plan, &PathSelection::Ids(vec![4]))
                .unwrap_err()
                .to_string(),
            "path 4 is not in the plan (its paths: 0-2, 5)"
        );
        assert_eq!(
            select(&plan, &PathSelection::Ids(vec![1, 1])).unwrap_err(),
            SelectError::Duplicate(1)
        );
        assert_eq!(
            select(&plan, &PathSelection::Generator("s9".into())).unwrap_err(),
            SelectError::NoPathAt("s9".into())
        );
        let empty = Plan {
            paths: vec![],
            ..plan
        };
        assert_eq!(
            select(&empty, &PathSelection::All).unwrap_err(),
            SelectError::EmptyPlan
        );
    }
}
