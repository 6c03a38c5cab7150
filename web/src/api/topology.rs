//! `GET /api/topology`: the run's network and its probe paths, as the run
//! recorded them (its topology, or, for a run recorded before runs kept
//! theirs, the links its probes were numbered on) for the page to lay out.

use super::{ApiError, Params};
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::Json;
use intpath_core::topo::Topology;
use intpath_store::query::RunInfo;
use intpath_store::samples;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize)]
pub struct Node {
    pub name: String,
    pub switch: bool,
}

/// A cable, both directions.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Cable {
    pub a: String,
    pub a_port: u16,
    pub b: String,
    pub b_port: u16,
}

#[derive(Debug, Clone, Serialize)]
pub struct DirLink {
    pub id: u32,
    pub name: String,
    pub src: String,
    pub dst: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Path {
    pub id: u16,
    /// Switches in visiting order.
    pub nodes: Vec<String>,
    /// Link ids, in order.
    pub links: Vec<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TopologyView {
    pub run: i64,
    /// Where the network came from: the recorded topology's origin, or
    /// "the run's links".
    pub origin: String,
    pub nodes: Vec<Node>,
    pub cables: Vec<Cable>,
    pub links: Vec<DirLink>,
    pub paths: Vec<Path>,
}

pub async fn get(
    State(app): State<Arc<AppState>>,
    Query(p): Query<Params>,
) -> Result<Json<TopologyView>, ApiError> {
    let store = app.store().await?;
    let info = RunInfo::load(&store, p.run).await?;
    let run = samples::runs(&store)
        .await?
        .into_iter()
        .find(|r| r.id == info.id)
        .ok_or_else(|| ApiError::NotFound(format!("no run {} in the database", info.id)))?;
    let recorded = match &run.topology {
        Some(json) => Some(
            Topology::from_json(json, &format!("run {}", run.id))
                .map_err(|e| ApiError::Internal(format!("run {}: its topology: {e}", run.id)))?,
        ),
        None => None,
    };
    let switches: BTreeSet<&str> = info.switches.iter().map(|(n, _)| n.as_str()).collect();
    let (origin, nodes, cables) = match &recorded {
        Some(t) => (
            t.origin().to_owned(),
            t.switches()
                .iter()
                .map(|s| Node {
                    name: s.name.clone(),
                    switch: true,
                })
                .chain(t.hosts().iter().map(|h| Node {
                    name: h.name.clone(),
                    switch: false,
                }))
                .collect(),
            t.links()
                .iter()
                .map(|l| Cable {
                    a: l.a.clone(),
                    a_port: l.a_port,
                    b: l.b.clone(),
                    b_port: l.b_port,
                })
                .collect(),
        ),
        None => {
            let mut names: Vec<&str> = info.switches.iter().map(|(n, _)| n.as_str()).collect();
            let mut cables = BTreeSet::new();
            for l in &info.links {
                for end in [&l.src, &l.dst] {
                    if !names.contains(&end.as_str()) {
                        names.push(end);
                    }
                }
                let reverse = info.links.iter().find(|r| r.src == l.dst && r.dst == l.src);
                let (a, b) = (
                    (&l.src, l.src_port),
                    (&l.dst, reverse.map_or(0, |r| r.src_port)),
                );
                let (a, b) = if a <= b { (a, b) } else { (b, a) };
                cables.insert(Cable {
                    a: a.0.clone(),
                    a_port: a.1,
                    b: b.0.clone(),
                    b_port: b.1,
                });
            }
            let nodes = names
                .iter()
                .map(|n| Node {
                    name: n.to_string(),
                    switch: switches.contains(n),
                })
                .collect();
            (
                "the run's links".to_owned(),
                nodes,
                cables.into_iter().collect(),
            )
        }
    };
    let links = info
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| DirLink {
            id: i as u32,
            name: l.to_string(),
            src: l.src.clone(),
            dst: l.dst.clone(),
        })
        .collect();
    let paths = run
        .paths
        .iter()
        .map(|(id, ls)| {
            let hops: Vec<_> = ls
                .iter()
                .filter_map(|&l| info.links.get(l as usize))
                .collect();
            let nodes = hops
                .first()
                .map(|h| h.src.clone())
                .into_iter()
                .chain(hops.iter().map(|h| h.dst.clone()))
                .collect();
            Path {
                id: *id,
                nodes,
                links: ls.clone(),
            }
        })
        .collect();
    Ok(Json(TopologyView {
        run: info.id,
        origin,
        nodes,
        cables,
        links,
        paths,
    }))
}
