//! Reconstruction on synthetic HotelReservation traces with their parent
//! links stripped, scored against the links the generator wrote.

mod common;

use common::generate;
use intpath_core::topo::Topology;
use intpath_diagnose::reconstruct::accuracy::score;
use intpath_diagnose::reconstruct::callgraph::CallGraph;
use intpath_diagnose::reconstruct::model::Rpcs;
use intpath_diagnose::reconstruct::view::NoTransfer;
use intpath_diagnose::reconstruct::{reconstruct, Algo};
use intpath_diagnose::spans;
use intpath_eval::synth::{App, Config, World};
use tempfile::TempDir;

/// A synthetic HotelReservation workload in a temporary directory.
fn workload(topo: &str, seed: u64, load: (usize, f64), faults: &[&str]) -> TempDir {
    app_workload(App::Hotel, World::default(), topo, seed, load, faults)
}

fn app_workload(
    app: App,
    world: World,
    topo: &str,
    seed: u64,
    (requests, rate): (usize, f64),
    faults: &[&str],
) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    generate(&Config {
        topo: Topology::load(topo).unwrap(),
        app,
        world,
        faults: faults.iter().map(|f| f.parse().unwrap()).collect(),
        seed,
        requests,
        rate,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    })
    .unwrap();
    dir
}

fn read(dir: &TempDir) -> Vec<spans::Span> {
    let text = std::fs::read_to_string(dir.path().join("traces.otlp.json")).unwrap();
    spans::parse(&text, None).unwrap().spans
}

#[test]
fn tw_is_right_end_to_end_where_fcfs_fails() {
    let train = Rpcs::join(&read(&workload("fattree:k=4", 1, (300, 100.0), &[])));
    let cg = CallGraph::learn(&train).unwrap();
    let test = Rpcs::join(&read(&workload("fattree:k=4", 2, (1000, 2000.0), &[])));
    let e2e = |algo| score(&test, &reconstruct(&test, &cg, &NoTransfer, algo, 3)).end_to_end;
    let (tw, wap5, fcfs) = (e2e(Algo::Tw), e2e(Algo::Wap5), e2e(Algo::Fcfs));
    // Issue 15's goal (1.00 here); 0.90 when a stage's parallel calls were
    // each scored from the arrival, whose gap spreads with the FIFO queue.
    assert!(tw >= 0.93, "tw {tw}");
    assert!(fcfs < 0.7 && tw > fcfs + 0.3, "tw {tw} fcfs {fcfs}");
    assert!(tw > wap5 + 0.3, "tw {tw} wap5 {wap5}");
}

/// End-to-end accuracy of tw and of tw-int with `app`'s black-box service
/// hidden and its leaf's uplinks congested, as `eval reconstruct` runs it
/// (seed 1 to learn, seed 2 to test): `(tw, tw-int)`.
fn blackbox(app: App, world: World, load: (usize, f64)) -> (f64, f64) {
    use intpath_diagnose::reconstruct::request::{run, Graph, Method, Request, Telemetry};
    use intpath_eval::matrix::reconstruction::{hidden, TOPO};
    let topo = Topology::load(TOPO).unwrap();
    let train = read(&app_workload(app, world, TOPO, 1, (300, 100.0), &[]));
    let test = app_workload(
        app,
        world,
        TOPO,
        2,
        load,
        &["link:s3:3->s1:3", "link:s3:4->s2:3"],
    );
    let spans = read(&test);
    let e2e = |method| {
        let out = run(Request {
            spans: spans.clone(),
            graph: Graph::Train(train.clone()),
            method,
            blackbox: vec![hidden(app).unwrap().into()],
            strip_parents: true,
            threads: true,
            telemetry: Some(Telemetry {
                diagnosis: common::diagnose(intpath_diagnose::Request {
                    topo: Some(topo.clone()),
                    ..intpath_eval::synth::request(test.path())
                })
                .unwrap(),
            }),
            rounds: 3,
        })
        .unwrap();
        out.score.unwrap().end_to_end
    };
    (e2e(Method::Tw), e2e(Method::TwInt))
}

/// `search` hidden, its leaf's uplinks congested: INT's per-moment one-way
/// delays place its calls where the symmetric-delay guess cannot.
#[test]
fn tw_int_beats_tw_on_a_hidden_service_under_congestion() {
    let (tw, tw_int) = blackbox(App::Hotel, World::default(), (1000, 2000.0));
    assert!(
        // Issue 15's goal (0.944 against 0.798 here, with the congestion
        // on a third of the run; 0.941 against 0.718 when its 1.5 s bursts
        // met a quarter of the requests); 0.85 before parallel calls were
        // scored from each other and the queue's wait from its length.
        tw_int >= 0.93 && tw_int >= tw + 0.1,
        "tw {tw} tw-int {tw_int}"
    );
}

/// The media app's black box (`rating` hidden, its leaf's uplinks
/// congested) at a quarter of its capacity: `compose-review`'s calls from
/// the hidden caller are placed from its side, where INT's one-way delays
/// tell which of the hidden service's requests sent them and the
/// symmetric-delay guess has only the round trip.
#[test]
fn tw_int_places_a_hidden_callers_uploads_at_low_load() {
    // 0.871 against 0.751 (0.871 against 0.765 with 1.5 s bursts that met
    // a third of the requests, on the media app's old uploads).
    let (tw, tw_int) = media_blackbox(0.25);
    assert!(
        tw_int >= tw + 0.1 && tw_int >= 0.85,
        "tw {tw} tw-int {tw_int}"
    );
}

/// The media app's black box at 80 % of its capacity, where a request's
/// calls at the hidden `rating` follow it by a few hundred µs and the
/// congestion comes and goes several times a second: INT's delay between
/// two probes that straddle a burst's edge is off by up to the burst's
/// depth, which must neither rule the right calls out (a one-way delay
/// below zero) nor score them as impossible (the estimate's error taken
/// into the gap's likelihood). Before both, tw-int got 0.224 where tw got
/// 0.456 (the media app's old uploads); then 0.573 against 0.496. Issue
/// 33's goal is ten points: with the visible RPCs over the same congested
/// link correcting what the probes missed, 0.615 against 0.496.
#[test]
fn tw_int_keeps_its_lead_where_bursts_are_shorter_than_a_run() {
    let (tw, tw_int) = media_blackbox(0.8);
    assert!(tw_int >= tw + 0.10, "tw {tw} tw-int {tw_int}");
}

/// [`blackbox`] for the media app with 4-worker pools at `share` of its
/// capacity, with as many requests as `eval reconstruct`'s: the
/// congestion then comes in bursts long next to the probes' 20 ms (three
/// a run).
fn media_blackbox(share: f64) -> (f64, f64) {
    let world = World::pools();
    let rate = share * App::Media.capacity(world.workers, world.work_sigma.unwrap());
    blackbox(App::Media, world, (1000, rate))
}

/// The media app in `world`: the call graph learned from 300 requests at
/// 100 requests/s (seed 1), and 400 requests at 80 % of its capacity
/// (seed 2), on `eval reconstruct`'s topology.
fn media_at_80(world: World) -> (CallGraph, Vec<spans::Span>) {
    use intpath_eval::matrix::reconstruction::TOPO;
    let rate = 0.8 * App::Media.capacity(world.workers, world.work_sigma.unwrap());
    let train = read(&app_workload(App::Media, world, TOPO, 1, (300, 100.0), &[]));
    let cg = CallGraph::learn(&Rpcs::join(&train)).unwrap();
    let test = read(&app_workload(App::Media, world, TOPO, 2, (400, rate), &[]));
    (cg, test)
}

/// The MediaMicroservices-like app with 4-worker pools at 80 % of its
/// capacity: requests overtake each other at every service, and
/// `compose-review` is called by five services for each review, the last
/// upload to arrive storing it (as DeathStarBench's counter in memcached
/// decides). The caller says little there (any of the five may be last);
/// where an upload arrived among its review's five, which the other
/// services' links tell, says nearly all. FCFS, which takes the earliest
/// open request whoever sent it, fails.
#[test]
fn a_service_that_gathers_a_requests_parts_is_matched_by_their_arrival() {
    let (cg, spans) = media_at_80(World::pools());
    assert_eq!(
        cg.gathering.get("compose-review"),
        Some(&5),
        "{:?}",
        cg.gathering
    );
    let callers = CallGraph {
        gathering: Default::default(),
        ..cg.clone()
    };
    let blind = CallGraph {
        services: (callers.services.iter())
            .map(|(s, vs)| (s.clone(), blind(vs)))
            .collect(),
        ..callers.clone()
    };
    let test = Rpcs::join(&spans);
    let run = |cg: &CallGraph, algo| score(&test, &reconstruct(&test, cg, &NoTransfer, algo, 3));
    let calls_by = |s: &intpath_diagnose::reconstruct::accuracy::Score, who: &str| {
        s.per_service
            .iter()
            .find(|p| p.service == who)
            .unwrap()
            .accuracy
    };
    let (tw, tw_callers, tw_blind, fcfs) = (
        run(&cg, Algo::Tw),
        run(&callers, Algo::Tw),
        run(&blind, Algo::Tw),
        run(&cg, Algo::Fcfs),
    );
    let [own, by_caller, blind_own] =
        [&tw, &tw_callers, &tw_blind].map(|s| calls_by(s, "compose-review"));
    // compose-review's storage calls placed: 0.94 by arrival, 0.84 by
    // caller alone, 0.57 blind to both.
    assert!(
        own >= 0.9 && own > by_caller + 0.05 && by_caller >= blind_own,
        "{own} by arrival, {by_caller} by caller, {blind_own} blind"
    );
    assert!(fcfs.end_to_end <= 0.7, "fcfs {}", fcfs.end_to_end);
    assert!(
        tw.end_to_end >= fcfs.end_to_end + 0.3 && tw.links >= 0.9,
        "tw {} ({} links) fcfs {}",
        tw.end_to_end,
        tw.links,
        fcfs.end_to_end
    );
}

/// The media app's review is stored by its last upload to arrive at
/// `compose-review`, whichever of the five services sent it: most often
/// `rating`'s, the end of the longest chain, but not always, so a caller's
/// own share of the storage calls is no sure guide.
#[test]
fn the_last_upload_of_a_review_stores_it_whoever_sent_it() {
    use intpath_diagnose::spans::Kind;
    use std::collections::{BTreeMap, BTreeSet};
    let (_, spans) = media_at_80(World::pools());
    let by_id: BTreeMap<&str, &spans::Span> =
        spans.iter().map(|s| (s.span_id.as_str(), s)).collect();
    let parent = |s: &spans::Span| s.parent_id.as_deref().and_then(|p| by_id.get(p).copied());
    let storing: BTreeSet<&str> = (spans.iter())
        .filter(|s| s.kind == Kind::Client && s.service == "compose-review")
        .filter_map(|s| s.parent_id.as_deref())
        .collect();
    let mut uploads: BTreeMap<&str, Vec<&spans::Span>> = BTreeMap::new();
    for s in spans
        .iter()
        .filter(|s| s.kind == Kind::Server && s.service == "compose-review")
    {
        uploads.entry(s.trace_id.as_str()).or_default().push(s);
    }
    let mut stored_by: BTreeMap<String, usize> = BTreeMap::new();
    for (trace, ups) in &uploads {
        let stores: Vec<&&spans::Span> = (ups.iter())
            .filter(|s| storing.contains(s.span_id.as_str()))
            .collect();
        assert_eq!(
            stores.len(),
            1,
            "trace {trace}: {} uploads store",
            stores.len()
        );
        let last = ups.iter().map(|s| s.start_ns).max();
        assert_eq!(
            Some(stores[0].start_ns),
            last,
            "trace {trace}: not the last stores"
        );
        let caller = parent(stores[0]).map_or("?", |c| c.service.as_str());
        *stored_by.entry(caller.to_owned()).or_default() += 1;
    }
    // 374 of 400 by `rating`'s upload, 21 by `text`'s, 5 by `unique-id`'s.
    let reviews = uploads.len();
    let by_rating = stored_by.get("rating").copied().unwrap_or(0);
    assert_eq!(reviews, 400);
    assert!(
        stored_by.len() >= 3 && by_rating > reviews / 2 && reviews - by_rating >= reviews / 50,
        "{stored_by:?}"
    );
}

/// A service's variants with the callers forgotten, shares pooled: the call
/// graph as learned before callers were told apart.
fn blind(
    vs: &[intpath_diagnose::reconstruct::callgraph::Variant],
) -> Vec<intpath_diagnose::reconstruct::callgraph::Variant> {
    let total: f64 = vs.iter().map(|v| v.share).sum();
    let mut out: Vec<intpath_diagnose::reconstruct::callgraph::Variant> = Vec::new();
    for v in vs {
        match out.iter_mut().find(|o| o.stages == v.stages) {
            Some(o) => o.share += v.share / total,
            None => out.push(intpath_diagnose::reconstruct::callgraph::Variant {
                caller: None,
                share: v.share / total,
                ..v.clone()
            }),
        }
    }
    out
}

/// The same app at 80 % of capacity with each span's worker recorded as
/// `thread.id`, as the Java agent records it: a call may belong only to a
/// request its own worker took, which timing alone cannot tell at this
/// load. Where the calls are sent from other threads than the ones that
/// took the requests (handed to a client pool, as gRPC and Thrift
/// services do), the spans show it and the thread ids are not used.
#[test]
fn thread_ids_bind_calls_where_the_spans_bear_them_out() {
    use intpath_diagnose::reconstruct::executors::Grain;
    let world = World {
        thread_ids: true,
        ..World::pools()
    };
    let (cg, mut spans) = media_at_80(world);
    assert!(spans.iter().all(|s| s.endpoint.thread.is_some()));
    let run = |rpcs: &Rpcs| {
        let rec = reconstruct(rpcs, &cg, &NoTransfer, Algo::Tw, 3);
        (score(rpcs, &rec).end_to_end, rec.bound_by)
    };
    let mut timing = Rpcs::join(&spans);
    timing.forget_executors();
    let (alone, _) = run(&timing);
    let (threads, bound) = run(&Rpcs::join(&spans));
    let compose = timing.service_id("compose").unwrap() as usize;
    assert_eq!(bound[compose], Some(Grain::Thread));
    // 0.990 against 0.755 here (400 requests); 0.980 against 0.755 in
    // `eval reconstruct`'s 1000.
    assert!(
        threads >= 0.95 && threads > alone + 0.1,
        "{threads} vs {alone}"
    );

    // Every call sent by a worker the request was not taken by.
    for s in &mut spans {
        if s.kind == intpath_diagnose::spans::Kind::Client {
            let t: u32 = s.endpoint.thread.as_deref().unwrap().parse().unwrap();
            s.endpoint.thread = Some(((t + 1) % world.workers).to_string());
        }
    }
    let (handed, bound) = run(&Rpcs::join(&spans));
    assert!(bound.iter().all(Option::is_none), "{bound:?}");
    assert_eq!(handed, alone);
}

/// `cg` without the fan-out `what` (`intpath eval reconstruct`'s name
/// for it, `SERVICE<-CALLER CALLS`): a call graph learned from a capture
/// that never saw it.
fn without(cg: &CallGraph, what: &str) -> CallGraph {
    let cuts = intpath_eval::matrix::unseen::without_subsets(cg);
    let names: Vec<&str> = cuts.iter().map(|(n, _)| n.as_str()).collect();
    let cut = cuts.iter().find(|(n, _)| n == what);
    cut.unwrap_or_else(|| panic!("{what} not among {names:?}"))
        .1
        .clone()
}

/// A fan-out the call graph never saw, one of its variants with calls
/// skipped (TraceWeaver §4.2): the last upload of a review whose movie's
/// review list was cached (two storage calls of three, a quarter of the
/// reviews) at the media app's `compose-review`, and a login that only checks the user
/// (`user` without `reservation`, 7 %) at HotelReservation's `frontend`.
/// The calls the service made fall short of what the variants it knows
/// expect, which lets its requests skip them; before, such a request had
/// no mapping of its own and took a neighbour's call or nothing.
#[test]
fn a_fan_out_the_call_graph_never_saw_is_taken_from_the_calls_it_skipped() {
    let (cg, spans) = media_at_80(World::pools());
    let media = Rpcs::join(&spans);
    let hotel_train = Rpcs::join(&read(&workload("fattree:k=4", 1, (300, 100.0), &[])));
    let hotel_cg = CallGraph::learn(&hotel_train).unwrap();
    let hotel = Rpcs::join(&read(&workload("fattree:k=4", 2, (1000, 2000.0), &[])));
    let cases = [
        (
            &media,
            cg.clone(),
            without(&cg, "compose-review@last review-storage+user-review"),
        ),
        (
            &hotel,
            hotel_cg.clone(),
            without(&hotel_cg, "frontend user"),
        ),
    ];
    for (test, full, pruned) in cases {
        let e2e = |cg: &CallGraph| {
            score(test, &reconstruct(test, cg, &NoTransfer, Algo::Tw, 3)).end_to_end
        };
        let (full, pruned) = (e2e(&full), e2e(&pruned));
        // Here media 0.768 without the variant against 0.755 with it, hotel
        // 1.000 both; before skips, on the media app's old uploads, 0.515
        // against 0.683 (`eval reconstruct`'s 1000: 0.586 against 0.782).
        assert!(
            pruned >= full - 0.01,
            "{pruned} without the variant, {full} with it"
        );
    }
}
