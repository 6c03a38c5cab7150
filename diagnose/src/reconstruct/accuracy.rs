//! How right a reconstruction is against the parent links of an
//! instrumented input: per link, per calling and per called service (a
//! service with many callers is right only if each of them is), and end to
//! end (a
//! trace counts only if every one of its calls got its true parent and no
//! other trace's call was glued into it, TraceWeaver's measure).

use super::model::Rpcs;
use super::Reconstruction;

/// Accuracy of the calls one service makes (or, in
/// [`Score::per_callee`], receives).
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceScore {
    pub service: String,
    pub calls: usize,
    pub accuracy: f64,
    pub confidence: f64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Score {
    pub traces: usize,
    pub end_to_end: f64,
    pub links: f64,
    /// By calling service.
    pub per_service: Vec<ServiceScore>,
    /// By called service.
    pub per_callee: Vec<ServiceScore>,
    pub per_trace: Vec<TraceScore>,
}

/// One trace of the input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceScore {
    /// The product of its links' confidences.
    pub confidence: f64,
    /// Every call got its true parent and nothing else was glued in.
    pub right: bool,
    /// Its response time: the root RPC's server span (client span when
    /// the root's server is hidden), ns.
    pub response_ns: i64,
}

/// Scores `rec` against the input's own links (`Rpc::truth`).
pub fn score(rpcs: &Rpcs, rec: &Reconstruction) -> Score {
    let n = rpcs.rpcs.len();
    let root = |mut r: usize| {
        let mut hops = 0;
        while let Some(p) = rpcs.rpcs[r].truth {
            r = p as usize;
            hops += 1;
            if hops > n {
                break;
            }
        }
        r
    };
    let roots: Vec<usize> = (0..n).map(root).collect();
    let mut bad = vec![false; n];
    let mut conf = vec![1.0; n];
    let mut per: Vec<(usize, usize, f64)> = vec![(0, 0, 0.0); rpcs.services.len()];
    let mut per_callee = per.clone();
    let (mut links, mut right) = (0, 0);
    for (i, r) in rpcs.rpcs.iter().enumerate() {
        let Some(caller) = r.caller else { continue };
        let ok = rec.parent[i] == r.truth;
        links += 1;
        right += usize::from(ok);
        for s in [
            &mut per[caller as usize],
            &mut per_callee[r.callee as usize],
        ] {
            s.0 += 1;
            s.1 += usize::from(ok);
            s.2 += rec.confidence[i];
        }
        conf[roots[i]] *= rec.confidence[i];
        if !ok {
            bad[roots[i]] = true;
            if let Some(p) = rec.parent[i] {
                bad[roots[p as usize]] = true;
            }
        }
    }
    // A trace's root has no parent: a request from outside, or the call
    // of a client that records no server span (a traced load generator,
    // a browser, a cron job).
    let trace_roots: Vec<usize> = (0..n).filter(|&i| rpcs.rpcs[i].truth.is_none()).collect();
    let per_trace: Vec<TraceScore> = trace_roots
        .iter()
        .map(|&r| {
            let rpc = &rpcs.rpcs[r];
            TraceScore {
                confidence: conf[r],
                right: !bad[r],
                response_ns: rpc.server.or(rpc.client).map_or(0, |s| s.end - s.start),
            }
        })
        .collect();
    let good = per_trace.iter().filter(|t| t.right).count();
    Score {
        traces: trace_roots.len(),
        end_to_end: good as f64 / trace_roots.len().max(1) as f64,
        links: right as f64 / links.max(1) as f64,
        per_service: by_service(rpcs, per),
        per_callee: by_service(rpcs, per_callee),
        per_trace,
    }
}

/// (calls, right, confidence sum) per service id → scores of the services
/// that have calls.
fn by_service(rpcs: &Rpcs, per: Vec<(usize, usize, f64)>) -> Vec<ServiceScore> {
    per.into_iter()
        .enumerate()
        .filter(|(_, s)| s.0 > 0)
        .map(|(i, (calls, ok, c))| ServiceScore {
            service: rpcs.services[i].clone(),
            calls,
            accuracy: ok as f64 / calls as f64,
            confidence: c / calls as f64,
        })
        .collect()
}

/// End-to-end accuracy of the traces in each tenth of response times,
/// fastest first: whether reconstruction fails on the slow requests, the
/// ones diagnosis is about. Fewer than ten traces give fewer bins.
pub fn by_decile(traces: &[TraceScore]) -> Vec<f64> {
    let mut sorted: Vec<&TraceScore> = traces.iter().collect();
    sorted.sort_by_key(|t| t.response_ns);
    let n = sorted.len();
    (0..10)
        .map(|d| &sorted[d * n / 10..(d + 1) * n / 10])
        .filter(|bin| !bin.is_empty())
        .map(|bin| bin.iter().filter(|t| t.right).count() as f64 / bin.len() as f64)
        .collect()
}

/// Pearson correlation of paired samples (`None` when either is constant).
pub fn pearson(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let n = xs.len().min(ys.len()) as f64;
    if n < 2.0 {
        return None;
    }
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deciles_go_by_response_time_fastest_first() {
        // 20 traces, response time i µs, listed slowest first; traces 15
        // and 19 came out wrong.
        let traces: Vec<TraceScore> = (0..20)
            .rev()
            .map(|i| TraceScore {
                confidence: 1.0,
                right: i != 19 && i != 15,
                response_ns: i * 1_000,
            })
            .collect();
        let d = by_decile(&traces);
        assert_eq!(d.len(), 10);
        assert_eq!(&d[..7], &[1.0; 7]);
        assert_eq!(d[7], 0.5, "traces 14 and 15");
        assert_eq!(d[8], 1.0);
        assert_eq!(d[9], 0.5, "traces 18 and 19");
        // Fewer traces than deciles: only non-empty bins.
        assert_eq!(by_decile(&traces[..3]).len(), 3);
        assert!(by_decile(&[]).is_empty());
    }

    /// A load generator traced as a client only: each of its calls roots a
    /// trace (the shop's `loadgen`), which used to count no trace at all.
    #[test]
    fn a_client_without_a_server_span_roots_its_trace() {
        use super::super::model::{Rpc, Side};
        let side = Some(Side {
            span: 0,
            start: 0,
            end: 10,
            executor: Default::default(),
        });
        let rpc = |caller, callee, truth| Rpc {
            caller: Some(caller),
            callee,
            client: side,
            server: side,
            truth,
            hidden: None,
        };
        // loadgen (0) → frontend (1) → auth (2), twice.
        let rpcs = Rpcs {
            rpcs: vec![
                rpc(0, 1, None),
                rpc(1, 2, Some(0)),
                rpc(0, 1, None),
                rpc(1, 2, Some(2)),
            ],
            services: vec!["loadgen".into(), "frontend".into(), "auth".into()],
        };
        let rec = Reconstruction {
            parent: vec![None, Some(0), None, Some(0)],
            confidence: vec![1.0; 4],
            ..Reconstruction::default()
        };
        let s = score(&rpcs, &rec);
        // The second trace's call was glued into the first: both wrong.
        assert_eq!((s.traces, s.end_to_end, s.links), (2, 0.0, 0.75));
        let right = Reconstruction {
            parent: vec![None, Some(0), None, Some(2)],
            ..rec
        };
        assert_eq!(score(&rpcs, &right).end_to_end, 1.0);
    }
}
