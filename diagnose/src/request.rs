//! What a diagnosis is asked to read, and why it could not.

use crate::rejects::Rejects;
use crate::spans::{Format, SpansError};
use crate::window::SpanWindow;
use intpath_core::plan::Plan;
use intpath_core::topo::{TopoError, Topology};
use intpath_store::{Db, RunId, StoreError};
use std::collections::HashMap;
use std::path::PathBuf;

/// What to diagnose. Every input but the spans is optional: without a
/// collector run there is no INT and links are not localised, and without
/// a topology hosts are the addresses the spans give.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// A span file; `None` reads the spans the OTLP receiver stored in `db`.
    pub traces: Option<PathBuf>,
    /// The telemetry database: the INT evidence and, without `traces`, the
    /// spans.
    pub db: Option<Db>,
    /// The topology; `None` takes the run's own (with INT) or places hosts
    /// by address alone (without). Given with a run, it must be the run's.
    pub topo: Option<Topology>,
    /// The plan in force; `None` takes the run's own. Given with a run, it
    /// must be the one the run measured.
    pub plan: Option<Plan>,
    /// The span file's format; `None` detects it from the content.
    pub format: Option<Format>,
    /// IP, host name or service name → host, over what the spans say.
    pub host_map: HashMap<String, String>,
    /// Which stored spans (and so which run) to read.
    pub window: SpanWindow,
    /// Diagnose from the traces alone, whatever INT the database holds.
    pub no_int: bool,
    /// Fail when any span or edge is rejected.
    pub strict: bool,
    /// Spans of a period the application was healthy: each service's
    /// calls are also compared with its calls there, so a fault present
    /// for the whole run, which the run's own quiet moments cannot show,
    /// is found.
    pub baseline: Option<Baseline>,
}

/// Where a healthy period's spans are read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// A span file, in any span format.
    File(PathBuf),
    /// The spans the OTLP receiver stored in the request's database in
    /// this window (a run's, or a time span).
    Stored(SpanWindow),
}

impl Request {
    /// The spans the OTLP receiver stored in `db`, with the INT of the run
    /// they came with, everything else as the run recorded it.
    pub fn of_db(db: Db) -> Self {
        Request {
            db: Some(db),
            ..Request::default()
        }
    }

    /// A span file alone, diagnosed from the traces.
    pub fn of_traces(traces: PathBuf) -> Self {
        Request {
            traces: Some(traces),
            ..Request::default()
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DiagnoseError {
    #[error("{0}: cannot read traces: {1}")]
    Read(String, std::io::Error),
    #[error("{0}: {1}")]
    Spans(String, SpansError),
    #[error(transparent)]
    HostMap(#[from] crate::hosts::HostMapError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start the database runtime: {0}")]
    Runtime(std::io::Error),
    #[error("baseline: {0}")]
    Baseline(Box<DiagnoseError>),
    #[error("a baseline of stored spans needs the database they are in (--db)")]
    BaselineWithoutDb,
    #[error("nothing to diagnose: give a span file (--traces) or a database the OTLP receiver stored spans in (--db)")]
    NoSource,
    #[error("no usable RPC edge: {total} spans or edges rejected, most for {reason} ({count})")]
    NoEdges {
        reason: String,
        count: u64,
        total: u64,
        /// Every reason with its count and first example, for the table a
        /// command line prints before the error.
        rejects: Rejects,
    },
    #[error("--strict: {0} spans or edges rejected (first reason: {1})")]
    Strict(u64, String),
    #[error("{0}: the database holds no spans; send traces to `intpath-collector receive` or pass --traces")]
    NoSpans(String),
    #[error("{0}: no stored span started within {1}; pick the run (--run) or the window (--since/--until), or --all-spans")]
    NoSpansInWindow(String, String),
    #[error("{0}: {1}")]
    Window(String, String),
    #[error("the topology given ({given}) is not the one run {run} measured ({recorded}): {why}")]
    TopologyMismatch {
        given: String,
        run: RunId,
        recorded: String,
        why: String,
    },
    #[error("run {run} recorded no topology (it was collected before runs kept theirs): pass the topology it measured (--topo)")]
    NoTopology { run: RunId },
    #[error("run {0}: its recorded topology does not read back: {1}")]
    RecordedTopology(RunId, TopoError),
    #[error("the plan given ({given}) is not the one run {run} measured: {why}")]
    PlanMismatch {
        given: String,
        run: RunId,
        why: String,
    },
}
