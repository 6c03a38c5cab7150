//! `intpath plan`: plan probe paths, or check a plan with `--check`.

use anyhow::{Context, Result};
use clap::ValueEnum;
use intpath_core::plan::Plan;
use intpath_core::topo::{LoadOptions, Topology};
use intpath_core::wire::{DEFAULT_MTU, MAX_HOPS};
use intpath_planner::{check, plan, Algo, CheckOptions, PlanOptions};
use std::fmt::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Generator expression (fattree:k=4, leafspine:spines=2,leaves=4,hosts=2,
    /// random:n=50,m=80,seed=1, paper-fig4) or topology file.
    #[arg(long)]
    topo: String,
    /// Refuse self-loops in the topology instead of skipping them.
    #[arg(long)]
    strict: bool,
    /// dfs: the paper's depth-first baseline, no bound on the path count.
    /// euler: Euler trails in linear time; exactly the lower bound of paths
    /// unless trails longer than the hop limit must be split, which adds
    /// paths. balanced: euler's paths rebalanced so the longest is shorter,
    /// never more paths than euler. paper: the paper's balancing heuristic
    /// (slow, for comparison). `--format table` prints the count next to the
    /// lower bound.
    #[arg(long, default_value = "balanced", value_parser = clap::value_parser!(AlgoArg))]
    algo: AlgoArg,
    /// Most links per path [default: what a probe fits in --mtu]; at most
    /// 44, as sr_int.p4's stacks hold 45 records (one per switch).
    #[arg(long)]
    max_hops: Option<usize>,
    /// IPv4 MTU the probes must fit.
    #[arg(long, default_value_t = DEFAULT_MTU)]
    mtu: usize,
    /// Cover every link in both directions (measures every egress queue).
    #[arg(long)]
    directed: bool,
    /// Cover host links too.
    #[arg(long)]
    include_hosts: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Output file (default: stdout).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Verify this plan file against --topo instead of planning: every path a
    /// valid walk within the hop limit, every link covered exactly once.
    /// Directed and host coverage follow the plan unless the flags are given.
    #[arg(long, value_name = "PLAN")]
    check: Option<PathBuf>,
}

#[derive(Clone, Copy)]
struct AlgoArg(Algo);

impl clap::builder::ValueParserFactory for AlgoArg {
    type Parser = clap::builder::ValueParser;
    fn value_parser() -> Self::Parser {
        clap::builder::ValueParser::new(|s: &str| s.parse::<Algo>().map(AlgoArg))
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
    Dot,
}

/// Most links a path may have: a probe collects one record per switch, and
/// `sr_int.p4` holds [`MAX_HOPS`] of them.
const MAX_PATH_LINKS: usize = MAX_HOPS - 1;

pub fn run(a: Args) -> Result<()> {
    let t = Topology::load_with(
        &a.topo,
        &LoadOptions {
            strict: a.strict,
            ..LoadOptions::default()
        },
    )?;
    let mut opts = PlanOptions {
        algo: a.algo.0,
        max_hops: a.max_hops,
        mtu: a.mtu,
        directed: a.directed,
        include_hosts: a.include_hosts,
    };
    opts.max_hops = Some(capped_hop_limit(&opts)?);
    if let Some(file) = &a.check {
        let p = Plan::load(file)?;
        let co = CheckOptions {
            max_links: Some(opts.hop_limit()?),
            directed: a.directed.then_some(true),
            include_hosts: a.include_hosts.then_some(true),
        };
        let r = check(&t, &p, &co).with_context(|| format!("{}", file.display()))?;
        println!(
            "{}: ok: {} paths cover all {} {}{} of {} exactly once, none over {} links",
            file.display(),
            r.paths,
            r.covered,
            if r.directed {
                "link directions"
            } else {
                "links"
            },
            if r.include_hosts {
                " (host links included)"
            } else {
                ""
            },
            t.origin(),
            co.max_links.unwrap_or(usize::MAX),
        );
        return Ok(());
    }
    let p = plan(&t, &opts)?;
    if p.paths.is_empty() && !a.include_hosts && t.switch_links().next().is_none() {
        tracing::warn!(
            "{}: no link between two switches to probe; --include-hosts covers the host links",
            t.origin()
        );
    }
    tracing::debug!(
        paths = p.stats.paths,
        lower_bound = p.stats.lower_bound,
        ms = format!("{:.2}", p.stats.plan_ms),
        "planned"
    );
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&p)? + "\n",
        Format::Table => table(&p),
        Format::Dot => dot(&p),
    };
    super::emit(a.output.as_deref(), &text)
}

/// The hop limit, checked against what the P4 program can carry: a
/// `--max-hops` beyond it is refused, an MTU that would allow more is capped.
fn capped_hop_limit(opts: &PlanOptions) -> Result<usize> {
    let limit = opts.hop_limit()?;
    if limit <= MAX_PATH_LINKS {
        return Ok(limit);
    }
    if let Some(n) = opts.max_hops {
        anyhow::bail!(
            "--max-hops {n}: a path has at most {MAX_PATH_LINKS} links, as sr_int.p4's \
             stacks hold {MAX_HOPS} records (one per switch)"
        );
    }
    tracing::info!(
        "--mtu {} fits {limit}-link paths, but sr_int.p4's stacks hold {MAX_HOPS} records: \
         paths are capped at {MAX_PATH_LINKS} links",
        opts.mtu
    );
    Ok(MAX_PATH_LINKS)
}

fn table(p: &Plan) -> String {
    let s = &p.stats;
    let mut out = format!(
        "{}  algo {}: {} paths (lower bound {}), longest {} links, mean {:.1}, variance {:.2}, {:.2} ms\n  id  links  path (node -egress port-> node ...)\n",
        p.topology, p.algo, s.paths, s.lower_bound, s.max_len, s.mean_len, s.len_variance, s.plan_ms
    );
    for path in &p.paths {
        let _ = write!(out, "{:>4}  {:>5}  {}", path.id, path.len(), path.nodes[0]);
        for (port, node) in path.egress_ports.iter().zip(&path.nodes[1..]) {
            let _ = write!(out, " -{port}-> {node}");
        }
        out.push('\n');
    }
    out
}

/// Each hop an arrow in its path's colour, labelled with the path id.
fn dot(p: &Plan) -> String {
    const COLOURS: [&str; 8] = [
        "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
    ];
    let mut out = format!(
        "digraph plan {{\n  label=\"{} ({}, {} paths)\";\n  node [shape=box];\n",
        p.topology.replace('"', "'"),
        p.algo,
        p.paths.len()
    );
    for path in &p.paths {
        let colour = COLOURS[usize::from(path.id) % COLOURS.len()];
        for (i, port) in path.egress_ports.iter().enumerate() {
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [color=\"{colour}\", fontcolor=\"{colour}\", label=\"{}:{}\", taillabel=\"{port}\"];",
                path.nodes[i], path.nodes[i + 1], path.id, i
            );
        }
    }
    out.push_str("}\n");
    out
}
