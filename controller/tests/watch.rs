//! Watch driven round by round through the library, against real reference
//! switches over real gRPC (the paper's Fig. 4 network, s1..s7): the first
//! round plans and deploys; a switch that stops answering is planned
//! around, the new plan published and the surviving switches synced; when
//! it answers again it is planned back in and re-synced; a view that loses
//! more than half of the switches is refused, once, and the plan in force
//! stays on file and in force.

use intpath_controller::deploy::Connection;
use intpath_controller::watch::{Replan, Round, Shrink, Watch, WatchConfig};
use intpath_core::plan::{Plan, ProbePath};
use intpath_core::topo::Topology;
use intpath_planner::PlanOptions;
use intpath_test_support::switch::Fleet;
use intpath_test_support::{tempdir, TempDir};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

/// Seven reference switches and a watch on them, its plan file (not yet
/// written) in a scratch directory.
fn watched() -> (Fleet, Watch, PathBuf, TempDir) {
    let fleet = Fleet::start((1..=7).map(|id| (format!("s{id}"), id)));
    let dir = tempdir().unwrap();
    let map = dir.path().join("switches.json");
    std::fs::write(&map, fleet.map_json()).unwrap();
    let plan = dir.path().join("plan.json");
    let watch = Watch::new(WatchConfig {
        topo: Topology::load("paper-fig4").unwrap(),
        connection: Connection {
            switches: map,
            p4info: None,
            election_id: None,
            connect_timeout: Duration::from_millis(500),
            tls: None,
        },
        plan_options: PlanOptions::default(),
        plan_file: Some(plan.clone()),
        db: None,
        silence: Duration::from_secs(1),
    })
    .unwrap();
    (fleet, watch, plan, dir)
}

/// The switches a round synced, with whether each got entries written.
fn synced(r: &Round) -> Vec<(String, bool)> {
    let reports = match &r.synced {
        Some(Ok(reports)) => reports,
        other => panic!("no sync: {other:?}"),
    };
    reports
        .iter()
        .map(|s| (s.name.clone(), s.inserts + s.modifies + s.deletes > 0))
        .collect()
}

/// The paths of the plan file (its timing, a float, does not survive JSON
/// exactly).
fn on_file(path: &std::path::Path) -> Vec<ProbePath> {
    Plan::load(path).unwrap().paths
}

fn crosses(plan: &Plan, switch: &str) -> bool {
    plan.paths
        .iter()
        .any(|p| p.nodes.iter().any(|n| n == switch))
}

#[tokio::test]
async fn a_switch_down_is_planned_around_then_back_in() {
    let (mut fleet, mut watch, plan_file, _dir) = watched();

    let first = watch.round().await.unwrap();
    assert!(matches!(first.replan, Replan::Planned), "{first:?}");
    assert!(first.down.is_empty() && first.dead.is_empty(), "{first:?}");
    let all = synced(&first);
    assert_eq!(all.len(), 7, "{first:?}");
    assert!(all.iter().all(|(_, wrote)| *wrote), "{first:?}");
    let planned = watch.in_force().unwrap().plan.clone();
    assert_eq!(on_file(&plan_file), planned.paths);
    assert!(crosses(&planned, "s3"), "{planned:?}");

    // Nothing changed: no replan, nothing written.
    let quiet = watch.round().await.unwrap();
    assert!(matches!(quiet.replan, Replan::Unchanged), "{quiet:?}");
    assert!(synced(&quiet).iter().all(|(_, wrote)| !wrote), "{quiet:?}");

    fleet.kill("s3");
    let lost = watch.round().await.unwrap();
    assert_eq!(lost.down, BTreeSet::from(["s3".to_owned()]));
    assert!(matches!(lost.replan, Replan::Planned), "{lost:?}");
    let around = watch.in_force().unwrap().plan.clone();
    assert!(
        !around.paths.is_empty() && !crosses(&around, "s3"),
        "{around:?}"
    );
    assert_eq!(on_file(&plan_file), around.paths);
    let names: Vec<String> = synced(&lost).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["s1", "s2", "s4", "s5", "s6", "s7"]);

    // Back, without its entries: planned in again and written in full.
    fleet.restart("s3");
    let back = watch.round().await.unwrap();
    assert!(back.down.is_empty(), "{back:?}");
    assert!(matches!(back.replan, Replan::Planned), "{back:?}");
    assert!(crosses(&watch.in_force().unwrap().plan, "s3"));
    assert!(synced(&back).contains(&("s3".to_owned(), true)), "{back:?}");
}

#[tokio::test]
async fn a_view_without_most_switches_is_refused_once_and_the_plan_stays() {
    let (mut fleet, mut watch, plan_file, _dir) = watched();
    let first = watch.round().await.unwrap();
    assert!(matches!(first.replan, Replan::Planned), "{first:?}");
    let on_file = std::fs::read_to_string(&plan_file).unwrap();
    let planned = watch.in_force().unwrap().plan.clone();

    for s in ["s1", "s2", "s3", "s4"] {
        fleet.kill(s);
    }
    let refused = watch.round().await.unwrap();
    assert_eq!(refused.down.len(), 4, "{refused:?}");
    match &refused.replan {
        Replan::Refused(Shrink { paths, what }) => {
            assert_eq!(*paths, planned.paths.len());
            assert!(
                what.contains("drop 4 of 7 switches (s1, s2, s3, s4)"),
                "{what}"
            );
        }
        other => panic!("not refused: {other:?}"),
    }
    // The plan in force stays, with the view it was made for: every switch
    // is still synced to it, and the four that are gone fail.
    assert_eq!(watch.in_force().unwrap().plan, planned);
    assert!(watch.in_force().unwrap().down.is_empty());
    assert!(matches!(refused.synced, Some(Err(_))), "{refused:?}");
    assert_eq!(std::fs::read_to_string(&plan_file).unwrap(), on_file);

    // The same view again: refused once, not every round.
    let again = watch.round().await.unwrap();
    assert!(matches!(again.replan, Replan::Unchanged), "{again:?}");
    assert_eq!(std::fs::read_to_string(&plan_file).unwrap(), on_file);
}
