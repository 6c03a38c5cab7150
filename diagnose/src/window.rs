//! Which of the spans stored in a database one diagnosis reads. A database
//! keeps every run's spans; diagnosing them all together would compare this
//! run's requests with last week's and blame this run's links for them.

use intpath_store::samples::Run;
use intpath_store::RunId;

/// Spans may start this much before a run's first probe or after its last
/// (services and the collector start and stop a moment apart).
pub const RUN_SLACK_NS: i64 = 1_000_000_000;

/// The stored spans to read (from `--db`, when no trace file is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpanWindow {
    /// Spans that started while a collector run probed (± [`RUN_SLACK_NS`]):
    /// the latest run with probes, or the run with this id. Its INT is the
    /// evidence too.
    #[default]
    LatestRun,
    Run(RunId),
    /// Spans that started within `[since, until]` (ns since the epoch).
    Between(i64, i64),
    /// Every stored span.
    All,
}

impl SpanWindow {
    /// The run whose window this is (from `runs`, in id order), `None` for
    /// a window not tied to a run. Errors name the run that is missing.
    pub fn run<'a>(&self, runs: &'a [Run]) -> Result<Option<&'a Run>, String> {
        let probed = || runs.iter().filter(|r| r.span_ns.is_some());
        match *self {
            SpanWindow::LatestRun => probed()
                .max_by_key(|r| r.id)
                .map(Some)
                .ok_or_else(|| "the database holds no collector run with probes".to_owned()),
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
                b.saturating_add(RUN_SLACK_NS),
            ),
            _ => (i64::MIN, i64::MAX),
        }
    }
}
