//! The switches' port counters, read once a second during a run (P4Runtime
//! reads, no stream: `controller::deploy::status`) and stored next to the
//! probes, so that the loss heatmap and `intpath query` put loss on the
//! link that dropped rather than on every link of a lossy path.

use anyhow::Result;
use intpath_controller::deploy::{self, DeployOptions, StatusQuery};
use intpath_core::switch_map::SwitchMap;
use intpath_core::time::now_ns;
use intpath_core::topo::Topology;
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_store::counters::PortReading;
use intpath_store::{Db, RunId, Store};
use std::sync::Arc;

/// Reads every switch's port counters and stores them under one run.
pub struct CounterPoller {
    ix: Arc<P4InfoIndex>,
    store: Store,
    run: RunId,
    ports: Vec<(String, Vec<u16>)>,
}

impl CounterPoller {
    /// A poller writing into run `run` of `db`, for the switch ports of
    /// `topo` (a port a switch reports nothing for has counted nothing).
    pub async fn open(db: &Db, run: RunId, topo: &Topology) -> Result<Self> {
        let ports = topo
            .switches()
            .iter()
            .map(|s| {
                let ports = topo.neighbours(&s.name).map(|(p, _, _)| p).collect();
                (s.name.clone(), ports)
            })
            .collect();
        Ok(Self {
            ix: Arc::new(intpath_sr_int::p4info()?),
            store: Store::open(db).await?,
            run,
            ports,
        })
    }

    /// One round: every switch that answered, all at one time stamp.
    /// Returns how many switches answered.
    pub async fn round(&self, map: &SwitchMap) -> Result<usize> {
        let t = now_ns() as i64;
        let status = deploy::status(
            self.ix.clone(),
            map,
            &DeployOptions::default(),
            &StatusQuery::default(),
        )
        .await;
        let mut readings = Vec::new();
        let mut answered = 0;
        for st in status.iter().filter(|s| s.error.is_none()) {
            answered += 1;
            let Some((_, ports)) = self.ports.iter().find(|(n, _)| *n == st.name) else {
                continue;
            };
            for &port in ports {
                let (rx, tx) = st
                    .ports
                    .iter()
                    .find(|&&(p, _, _)| p == i64::from(port))
                    .map_or((0, 0), |&(_, rx, tx)| (rx, tx));
                readings.push(PortReading {
                    switch: st.name.clone(),
                    port,
                    rx,
                    tx,
                });
            }
        }
        self.store
            .write_port_counters(self.run, t, &readings)
            .await?;
        Ok(answered)
    }

    pub async fn close(self) {
        self.store.close().await;
    }
}

/// The run's last round, once nothing sends any more: probes and requests
/// still in flight (queued behind a throttled link) arrive within the wait,
/// so the counters' last reading includes them.
pub fn last_round(rt: &tokio::runtime::Runtime, poller: CounterPoller, map: &SwitchMap) {
    std::thread::sleep(std::time::Duration::from_millis(500));
    poll(rt, &poller, map);
    rt.block_on(poller.close());
}

/// One round of `poller` in a run's loop: a round that fails costs that
/// second's counters, not the run.
pub fn poll(rt: &tokio::runtime::Runtime, poller: &CounterPoller, map: &SwitchMap) {
    if let Err(e) = rt.block_on(poller.round(map)) {
        tracing::warn!("port counters not stored this second: {e:#}");
    }
}
