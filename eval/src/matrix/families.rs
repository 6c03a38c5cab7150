//! The scenario families of `intpath eval diagnose` (and of `intpath
//! diagnose synth --family`): each a world under the app, fault specs at a
//! low and a high intensity, and the apps its seeds take in turn.

use crate::synth::{App, FaultSpec, World};

/// Each family runs at both fault intensities and once without its fault,
/// in its own world: the run that must name nobody.
pub(crate) const LEVELS: [&str; 3] = ["low", "high", NO_FAULT];
/// The intensity of a family's run without its fault.
pub(crate) const NO_FAULT: &str = "none";

/// A scenario family: fault specs at a low and a high intensity, the world
/// under the app, and the apps its seeds take in turn.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub name: &'static str,
    pub levels: [&'static [&'static str]; 2],
    pub world: fn() -> World,
    pub apps: &'static [App],
    /// Its runs are diagnosed against a healthy run of the same world and
    /// app (another seed), as `--baseline`: how a fault present from the
    /// first request on is found.
    pub baseline: bool,
}

const CLASSIC: &[App] = &[App::Hotel, App::Social];
const ALL_APPS: &[App] = &[App::Hotel, App::Social, App::Media];

/// Thread pools, plus per-host scheduling jitter that grows with the calls
/// a host makes.
fn jittery() -> World {
    World {
        jitter_us: 25.0,
        ..World::pools()
    }
}

/// Thread pools on a machine whose load swells and ebbs (every host).
fn loaded() -> World {
    World {
        load_us: 300.0,
        ..World::pools()
    }
}

/// The jittery world whose client spans name their callees
/// (`server.address`, `server.port`), as HTTP and gRPC client
/// instrumentations record them.
fn jittery_named() -> World {
    World {
        peer_addresses: true,
        ..jittery()
    }
}

/// The families, in the order the matrix runs them: the first seven in the
/// original world (their seeds and draws as before the others existed),
/// then the worlds that reorder requests and add host noise.
pub const FAMILIES: [Family; 15] = [
    classic("link", [&["link:auto:2"], &["link:auto:8"]]),
    classic(
        "service",
        [&["service:auto:2:0.2"], &["service:auto:10:0.3"]],
    ),
    classic("loss", [&["loss:auto:0.02"], &["loss:auto:0.05"]]),
    classic("host", [&["host:auto:2"], &["host:auto:8"]]),
    classic(
        "decoy",
        [
            &["link:auto:2", "decoy:auto:5"],
            &["link:auto:5", "decoy:auto:20"],
        ],
    ),
    classic(
        "double",
        [
            &["link:auto:3", "service:auto:3:0.3"],
            &["link:auto:8", "service:auto:10:0.3"],
        ],
    ),
    classic("incast", [&["incast:auto:3"], &["incast:auto:8"]]),
    Family {
        name: "pools",
        levels: [&["service:auto:2:0.2"], &["service:auto:10:0.3"]],
        world: World::pools,
        apps: ALL_APPS,
        baseline: false,
    },
    Family {
        name: "jitter",
        levels: [&["service:auto:2:0.2"], &["service:auto:10:0.3"]],
        world: jittery,
        apps: ALL_APPS,
        baseline: false,
    },
    Family {
        name: "loaded",
        levels: [&["link:auto:2"], &["link:auto:8"]],
        world: loaded,
        apps: ALL_APPS,
        baseline: false,
    },
    Family {
        name: "media",
        levels: [&["link:auto:2"], &["service:auto:10:0.3"]],
        world: World::pools,
        apps: &[App::Media],
        baseline: false,
    },
    // A link that delays without queueing, among hosts as noisy as the
    // jitter family's: only INT's stamps tell it from its callee's host.
    Family {
        name: "delay",
        levels: [&["delay:auto:2"], &["delay:auto:8"]],
        world: jittery,
        apps: ALL_APPS,
        baseline: false,
    },
    // A service that stops answering, from a moment on: a twentieth of the
    // calls to it (callers give up after 10 ms), or all (after 50 ms). It
    // records nothing for them, so its callers' waits are all that is left.
    Family {
        name: "silent",
        levels: [&["silent:auto:10:0.05"], &["silent:auto:50:1"]],
        world: jittery_named,
        apps: ALL_APPS,
        baseline: false,
    },
    // A service slowed from a tenth into the run on: the fault holds nine
    // tenths of it, so the run's usual level is the fault's and only its
    // first moments were quiet.
    Family {
        name: "early",
        levels: [&["service:auto:2:0.2@0.2"], &["service:auto:10:0.3@0.2"]],
        world: jittery,
        apps: ALL_APPS,
        baseline: false,
    },
    // A service slowed from the first request on, diagnosed against a
    // healthy run of the same world: the run alone has nothing quiet to
    // compare the fault with.
    Family {
        name: "whole",
        levels: [&["service:auto:2:0.2@0"], &["service:auto:10:0.3@0"]],
        world: jittery,
        apps: ALL_APPS,
        baseline: true,
    },
];

const fn classic(name: &'static str, levels: [&'static [&'static str]; 2]) -> Family {
    Family {
        name,
        levels,
        world: World::default,
        apps: CLASSIC,
        baseline: false,
    }
}

impl Family {
    pub fn by_name(name: &str) -> Option<&'static Family> {
        FAMILIES.iter().find(|f| f.name == name)
    }

    /// The app the matrix's `seed` (1, 2, …) runs: the family's apps in turn.
    pub fn app(&self, seed: u64) -> App {
        self.apps[(seed.max(1) - 1) as usize % self.apps.len()]
    }

    /// The fault specs of `intensity` (`low` or `high`; `none`: the
    /// family's world without a fault, e.g. to train on).
    pub fn faults(&self, intensity: &str) -> Option<Vec<FaultSpec>> {
        if intensity == NO_FAULT {
            return Some(Vec::new());
        }
        let level = ["low", "high"].iter().position(|l| *l == intensity)?;
        Some(
            self.levels[level]
                .iter()
                .filter_map(|s| s.parse().ok())
                .collect(),
        )
    }
}
