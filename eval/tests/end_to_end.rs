//! From `synth` output through the diagnosis to a score: the real collector
//! database, the real OTLP file, the routes deploy installs.

mod common;

use common::{diagnose, generate};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_diagnose::culprits::{Culprit, Method};
use intpath_diagnose::{Baseline, Request};
use intpath_eval::score::{rank_of, score};
use intpath_eval::synth::{App, Config, World};

type Run = (
    intpath_diagnose::Diagnosis,
    Vec<Culprit>,
    intpath_eval::synth::Truth,
);

fn run(faults: &[&str], seed: u64) -> Run {
    run_in(World::default(), faults, seed)
}

fn run_in(world: World, faults: &[&str], seed: u64) -> Run {
    run_at(App::Hotel, world, faults, seed, 150.0)
}

fn run_at(app: App, world: World, faults: &[&str], seed: u64, rate: f64) -> Run {
    let (dir, truth) = generated(app, world, faults, seed, rate);
    let d = diagnose(request(dir.path())).unwrap();
    let ranking = d.culprits(Method::Diagnose);
    (d, ranking, truth)
}

/// A synth run in a directory of its own, checked whole.
fn generated(
    app: App,
    world: World,
    faults: &[&str],
    seed: u64,
    rate: f64,
) -> (tempfile::TempDir, intpath_eval::synth::Truth) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        topo: Topology::load("fattree:k=4").unwrap(),
        app,
        world,
        faults: faults.iter().map(|f| f.parse().unwrap()).collect(),
        seed,
        requests: 1500,
        rate,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    };
    let truth = generate(&cfg).unwrap();
    for f in [
        "traces.otlp.json",
        "telemetry.db",
        "topology.json",
        "plan.json",
        "truth.json",
    ] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    (dir, truth)
}

/// The diagnosis of the synth run in `dir`, with its plan and topology.
fn request(dir: &std::path::Path) -> Request {
    Request {
        plan: Some(Plan::load(&dir.join("plan.json")).unwrap()),
        topo: Some(Topology::load_file(&dir.join("topology.json")).unwrap()),
        ..intpath_eval::synth::request(dir)
    }
}

/// The culprit of `kind` named `name` is ranked first.
fn assert_first(ranking: &[Culprit], kind: &str, name: &str) {
    assert_eq!(
        rank_of(ranking, kind, name),
        Some(1),
        "{kind} {name}: {:?}",
        &ranking[..3.min(ranking.len())]
    );
}

#[test]
fn a_congested_link_is_the_top_culprit() {
    let (d, ranking, truth) = run(&["link:auto:5"], 1);
    let f = &truth.faults[0];
    assert_first(&ranking, "link", &f.name);
    let s = score(&d, &ranking, &truth);
    assert!(s.labelled > 20, "{s:?}");
    assert!(s.correct as f64 >= 0.9 * s.labelled as f64, "{s:?}");
    assert!(s.clock_err_us.unwrap() < 100.0, "{s:?}");
    assert_eq!(d.rejects.total(), 0, "{:?}", d.rejects);
}

#[test]
fn a_slow_service_is_the_top_culprit_and_a_decoy_stays_below() {
    let (d, ranking, truth) = run(&["service:auto:5:0.3", "decoy:auto:8"], 2);
    let f = &truth.faults[0];
    assert_first(&ranking, "service", &f.name);
    let s = score(&d, &ranking, &truth);
    assert!(!s.decoy_above, "{s:?}");
    assert!(
        s.side_correct as f64 >= 0.95 * s.side_labelled as f64,
        "{s:?}"
    );
}

/// A service that stops answering one call in twenty from a moment on
/// records nothing for them: its callers' client spans, which name it by
/// address, and their 10 ms waits are all that is left. Nine such calls
/// among 151 are too few for the block test (q 0.10 alone); that no other
/// callee left a call unanswered names it.
#[test]
fn a_service_that_leaves_calls_unanswered_is_named_by_its_callers_waits() {
    let world = World {
        peer_addresses: true,
        ..World::default()
    };
    let silent = ["silent:reservation:10:0.05"];
    let (d, ranking, truth) = run_at(App::Hotel, world, &silent, 1000, 100.0);
    let unanswered: u64 = d.unanswered.iter().map(|u| u.calls).sum();
    assert!((5..=20).contains(&unanswered), "{:?}", d.unanswered);
    assert_first(&ranking, "service", &truth.faults[0].name);
    assert_eq!(ranking[0].evidence["unanswered_calls"], unanswered);
    // Without the callee's address on the client spans the calls are
    // nobody's: the waits are the caller's calls, not its work.
    let (_, ranking, _) = run_at(App::Hotel, World::default(), &silent, 1000, 100.0);
    assert!(ranking.is_empty(), "{ranking:?}");
}

#[test]
fn an_incast_on_an_unmeasured_host_link_is_named_as_that_link() {
    let (d, ranking, truth) = run(&["incast:auto:8"], 3);
    let f = &truth.faults[0];
    // The truth names the host's downlink, which the synth plan leaves
    // unmeasured: its queue shows only as one-way delay into the host, on
    // one leg of every RPC, which no stack fault makes.
    assert_eq!(f.kind, "link");
    assert_first(&ranking, "link", &f.name);
    let s = score(&d, &ranking, &truth);
    // How many RPCs the bursts hit depends on which host `auto` picks and
    // on the draw (17 to 353 over seeds 3..9); the floor only keeps the
    // ratio below from being judged on a handful.
    assert!(s.labelled >= 10, "{s:?}");
    assert!(s.correct as f64 >= 0.95 * s.labelled as f64, "{s:?}");
    assert!(s.fabric_rel_err.unwrap() < 0.1, "{s:?}");
}

#[test]
fn a_link_that_delays_without_a_queue_is_named_and_not_its_callees_host() {
    // No queue grows: INT's queueing delays stay as they were, and only
    // the next switch's ingress stamps show the link holding packets.
    let (d, ranking, truth) = run(&["delay:auto:5"], 4);
    let f = &truth.faults[0];
    assert_first(&ranking, "link", &f.name);
    assert!(
        ranking.iter().all(|c| c.kind.to_string() != "host"),
        "{ranking:?}"
    );
    // The calls slowed from the onset on are the link's, and the fabric
    // time put on each is the delay, to a tenth.
    let s = score(&d, &ranking, &truth);
    assert!(s.labelled >= 10, "{s:?}");
    assert!(s.correct as f64 >= 0.9 * s.labelled as f64, "{s:?}");
    assert!(s.fabric_rel_err.unwrap() < 0.1, "{s:?}");
}

#[test]
fn host_links_behind_a_delaying_link_are_not_named_beside_it() {
    // The matrix's delay run of the media app at 300 requests/s, among
    // noisy hosts: for 0.1-0.2 s after the link starts to hold packets
    // its probes' lower quartile has not risen yet, and those calls' one-way
    // delay fell on their receivers' host links, three of which were named
    // beside the link. Their other calls show nothing: the link explains them.
    let world = World {
        jitter_us: 25.0,
        ..World::pools()
    };
    let (_, ranking, truth) = run_at(App::Media, world, &["delay:auto:8"], 3278, 300.0);
    let f = &truth.faults[0];
    assert_first(&ranking, "link", &f.name);
    assert_eq!(ranking.len(), 1, "{ranking:?}");
}

/// A service slowed on 30 % of its calls from a tenth into the run on (the
/// `early` family's fault, sooner): the fault is the run's usual level,
/// and only its first 1.2 s were quiet. The running sum and the windows'
/// usual level missed it; the two-sample step finds it, and the calls
/// before that step set the level its size is measured from.
#[test]
fn a_service_slowed_for_most_of_the_run_is_named_with_its_size() {
    let world = World {
        jitter_us: 25.0,
        ..World::pools()
    };
    let fault = ["service:auto:10:0.3@0.1"];
    let (_, ranking, truth) = run_at(App::Media, world, &fault, 2100, 100.0);
    let f = &truth.faults[0];
    // A tenth of the 17 s the run spans, less the half second before the
    // first request.
    assert_eq!(f.onset_s, Some(1.2));
    // Measured: 2.43 ms/req of 2.68 (402 calls hit), alone, q 8e-4; the
    // code before named nobody here.
    assert_named_alone_with_its_size(&ranking, &truth);
}

/// The service `truth`'s one fault slowed is the only culprit, and the
/// time it added per request is within a quarter of the fault's: its
/// amount on each call the fault hit.
fn assert_named_alone_with_its_size(ranking: &[Culprit], truth: &intpath_eval::synth::Truth) {
    let f = &truth.faults[0];
    assert_first(ranking, "service", &f.name);
    let hit = (truth.edges.values())
        .filter(|e| e.label == "service")
        .count();
    let added_ms = hit as f64 * f.amount / truth.requests as f64;
    let effect = ranking[0].effect_ms.unwrap();
    assert!(
        (effect - added_ms).abs() < 0.25 * added_ms,
        "{effect} of {added_ms}"
    );
    assert_eq!(ranking.len(), 1, "{ranking:?}");
}

/// A service slowed from the first request on: the run has no quiet
/// moment, and alone names nobody. Given another run of the same app
/// without the fault as its baseline, the service is named, with the time
/// it added; a run without a fault against the same baseline names
/// nobody.
#[test]
fn a_service_slowed_for_the_whole_run_is_named_against_a_healthy_baseline() {
    let world = World {
        jitter_us: 25.0,
        ..World::pools()
    };
    let (healthy, _) = generated(App::Hotel, world, &[], 2200, 100.0);
    let baseline = Some(Baseline::File(healthy.path().join("traces.otlp.json")));
    let fault = ["service:auto:5:0.3@0"];
    let (slowed, truth) = generated(App::Hotel, world, &fault, 2201, 100.0);
    let f = &truth.faults[0];
    assert_eq!(f.onset_s, Some(0.0));
    let alone = diagnose(request(slowed.path())).unwrap();
    assert!(
        rank_of(&alone.culprits(Method::Diagnose), "service", &f.name).is_none(),
        "found without a baseline: the fault has a quiet moment in the run"
    );
    let compared = diagnose(Request {
        baseline: baseline.clone(),
        ..request(slowed.path())
    })
    .unwrap();
    // Measured: `reservation`, 0.159 ms/req of 0.173 (156 calls, 1.08 ms
    // a call in the baseline), alone, q 5e-3.
    assert_named_alone_with_its_size(&compared.culprits(Method::Diagnose), &truth);
    let (quiet, _) = generated(App::Hotel, world, &[], 2202, 100.0);
    let nothing = diagnose(Request {
        baseline,
        ..request(quiet.path())
    })
    .unwrap();
    assert_eq!(nothing.culprits(Method::Diagnose), vec![]);
}

/// The services instrumented as Express's or Spring's instrumentation
/// does it, an INTERNAL handler span between each server span and the calls
/// it makes: the same diagnosis as without. `geo` is slowed; `search`,
/// which calls it, waited on it and is not named, and the calls that
/// waited keep the verdict `downstream`.
#[test]
fn handler_spans_between_a_server_span_and_its_calls_change_nothing() {
    let fault = ["service:geo:3:0.5"];
    let (plain, plain_named, _) = run(&fault, 2);
    let handlers = World {
        handler_spans: true,
        ..World::default()
    };
    let (d, named, _) = run_in(handlers, &fault, 2);
    assert!(d.spans > plain.spans, "no handler spans written");
    assert_first(&named, "service", "geo");
    let names = |c: &[Culprit]| c.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&named), names(&plain_named));
    let verdicts = |d: &intpath_diagnose::Diagnosis| d.attr.iter().map(|a| a.verdict()).collect();
    let (with, without): (Vec<_>, Vec<_>) = (verdicts(&d), verdicts(&plain));
    assert_eq!(with, without);
    assert!(with.contains(&intpath_diagnose::attribution::Verdict::Downstream));
}

/// `frontend` is where every request enters: no traced client calls it,
/// so its server spans are no RPC edges. Its own work slowed, it is still
/// named first.
#[test]
fn a_slow_entry_service_is_named_though_no_traced_client_called_it() {
    let (d, ranking, _) = run(&["service:frontend:5:0.3"], 2);
    assert!(!d.entries.is_empty());
    assert_first(&ranking, "service", "frontend");
}

#[test]
fn a_slow_host_stack_stays_the_hosts() {
    let (d, ranking, truth) = run(&["host:auto:5"], 5);
    let f = &truth.faults[0];
    assert_first(&ranking, "host", &f.name);
    let s = score(&d, &ranking, &truth);
    assert!(s.labelled > 20, "{s:?}");
    assert!(s.correct as f64 >= 0.95 * s.labelled as f64, "{s:?}");
}

#[test]
fn a_slow_host_that_one_other_host_calls_is_named_and_not_its_caller() {
    // The matrix's runs where `auto` picked the host of a service that one
    // service calls: reservation and recommendation (frontend's calls) and
    // url-shorten (text's). Their calls are the pair's, and the caller's
    // host's other calls clear it; the stack stalls on and off, a third of
    // the time.
    for (app, seed, rate, service, caller) in [
        (App::Hotel, 3010, 100.0, "reservation", "frontend"),
        (App::Hotel, 1012, 300.0, "recommendation", "frontend"),
        (App::Social, 2013, 300.0, "url-shorten", "text"),
    ] {
        let (_, ranking, truth) = run_at(app, World::default(), &["host:auto:8"], seed, rate);
        let f = &truth.faults[0];
        assert_eq!(truth.placement[service], f.name, "seed {seed}");
        assert_first(&ranking, "host", &f.name);
        let caller = &truth.placement[caller];
        assert_eq!(rank_of(&ranking, "host", caller), None, "{ranking:?}");
    }
}

#[test]
fn two_faults_on_one_call_class_are_both_in_the_top_three() {
    // frontend (h5) → user (h9) crosses s15:3->s13: a third of those calls
    // meet the congested link, 30 % the slow service, so more than half
    // the class is slowed and its median total lies inside the faults.
    let (d, ranking, truth) = run(&["link:s15:3->s13:8", "service:user:10:0.3"], 1022);
    let user = d.services.iter().position(|s| s == "user").unwrap() as u16;
    let link = d
        .index
        .links
        .iter()
        .position(|l| l.is_named("s15:3->s13"))
        .unwrap() as u32;
    let class: Vec<usize> = (0..d.edges.len())
        .filter(|&i| d.edges[i].callee == user)
        .collect();
    assert!(
        !class.is_empty()
            && class.iter().all(|&i| d.paths[i]
                .as_ref()
                .is_some_and(|p| p.all().any(|l| l == link))),
        "the scenario needs the user calls to cross the link"
    );
    let s = score(&d, &ranking, &truth);
    assert!(
        s.all_in_top3,
        "{:?}",
        &ranking[..4.min(ranking.len())]
            .iter()
            .map(|c| (c.kind, &c.name, c.score))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_lossy_link_is_one_culprit_with_its_loss_evidence() {
    let (_, ranking, truth) = run(&["loss:auto:0.05"], 4);
    let f = &truth.faults[0];
    let top = &ranking[0];
    assert_eq!(
        (top.kind.name(), &top.name),
        ("loss", &f.name),
        "{ranking:?}"
    );
    // Its evidence: probes lost on it, well past the fabric's own loss,
    // and a q-value under the false discovery rate.
    assert!(
        top.evidence["probes_lost"].as_u64().unwrap() > 0
            && top.evidence["p_probes"].as_f64().unwrap() < 0.01,
        "{}",
        top.evidence
    );
    assert!(top.q_value.unwrap() < 0.05, "{top:?}");
    // Each link is listed once, whatever evidence it has.
    let mut links: Vec<&str> = ranking
        .iter()
        .filter(|c| c.kind.is_link())
        .map(|c| c.name.as_str())
        .collect();
    let n = links.len();
    links.sort_unstable();
    links.dedup();
    assert_eq!(links.len(), n, "{ranking:?}");
}
