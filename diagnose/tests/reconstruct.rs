//! Reconstruction on synthetic HotelReservation traces with their parent
//! links stripped, scored against the links the generator wrote.

use intpath_core::topo::Topology;
use intpath_diagnose::reconstruct::accuracy::score;
use intpath_diagnose::reconstruct::callgraph::CallGraph;
use intpath_diagnose::reconstruct::model::Rpcs;
use intpath_diagnose::reconstruct::view::NoTransfer;
use intpath_diagnose::reconstruct::{reconstruct, Algo};
use intpath_diagnose::spans;
use intpath_diagnose::synth::{generate, App, Config};

fn traces(seed: u64, requests: usize, rate: f64) -> Vec<spans::Span> {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        topo: Topology::load("fattree:k=4").unwrap(),
        app: App::Hotel,
        faults: Vec::new(),
        seed,
        requests,
        rate,
        probe_rate: 5.0,
        out: dir.path().to_owned(),
    };
    generate(&cfg).unwrap();
    let text = std::fs::read_to_string(dir.path().join("traces.otlp.json")).unwrap();
    spans::parse(&text, None).unwrap().spans
}

#[test]
fn tw_is_right_end_to_end_where_fcfs_fails() {
    let train = Rpcs::join(&traces(1, 300, 100.0));
    let cg = CallGraph::learn(&train).unwrap();
    let test = Rpcs::join(&traces(2, 1000, 2000.0));
    let e2e = |algo| score(&test, &reconstruct(&test, &cg, &NoTransfer, algo, 3)).end_to_end;
    let (tw, wap5, fcfs) = (e2e(Algo::Tw), e2e(Algo::Wap5), e2e(Algo::Fcfs));
    assert!(tw >= 0.93, "tw {tw}");
    assert!(fcfs < 0.7 && tw > fcfs + 0.3, "tw {tw} fcfs {fcfs}");
    assert!(tw > wap5 + 0.3, "tw {tw} wap5 {wap5}");
}
