//! Which of the spans stored in a database one diagnosis reads. A database
//! keeps every run's spans; diagnosing them all together would compare this
//! run's requests with last week's and blame this run's links for them.

use intpath_store::samples::Run;
use intpath_store::RunId;

/// Spans may start this much before a run's first probe or after its last
/// (services and the collector start and stop a moment apart).
pub const RUN_SLACK_NS: i64 = 1_000_000_000;

/// Calls that started inside a run may end this long after its last probe
/// (a request that timed out as the probes stopped): their spans are read
/// too, so that such a request is whole.
pub const RUN_TAIL_NS: i64 = 60_000_000_000;

/// The stored spans to read (from `--db`, when no trace file is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpanWindow {
    /// The spans of the latest collector run with probes, whose INT is then
    /// the evidence; every stored span when no run has probes.
    #[default]
    LatestRun,
    /// The spans of the run with this id, whose INT is the evidence.
    Run(RunId),
    /// Spans that started within `[since, until]` (ns since the epoch),
    /// with the INT of the run they overlap most.
    Between(i64, i64),
    /// Every stored span, with the INT of the run they overlap most.
    All,
}

impl SpanWindow {
    /// The run this window names (from `runs`, in id order): `None` for a
    /// window not tied to a run, and for the latest run of a database with
    /// no probes at all (a diagnosis from traces alone). Errors name a run
    /// asked for that is missing.
    pub fn run<'a>(&self, runs: &'a [Run]) -> Result<Option<&'a Run>, String> {
        let probed = || runs.iter().filter(|r| r.span_ns.is_some());
        match *self {
            SpanWindow::LatestRun => Ok(probed().max_by_key(|r| r.id)),
            SpanWindow::Run(id) => probed()
                .find(|r| r.id == id)
                .map(Some)
                .ok_or_else(|| format!("the database holds no run {id} with probes")),
            SpanWindow::Between(..) | SpanWindow::All => Ok(None),
        }
    }

    /// Start-time bounds of the spans to read, given the window's run.
    pub fn bounds(&self, run: Option<&Run>) -> (i64, i64) {
        match (*self, run.and_then(|r| r.span_ns)) {
            (SpanWindow::Between(a, b), _) => (a, b),
            (SpanWindow::LatestRun | SpanWindow::Run(_), Some((a, b))) => (
                a.saturating_sub(RUN_SLACK_NS),
                b.saturating_add(RUN_TAIL_NS),
            ),
            _ => (i64::MIN, i64::MAX),
        }
    }
}
