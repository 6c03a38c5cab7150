//! Where the switches are and how to talk to them: the settings deploy,
//! status and watch share, and the check that a switch map fits the
//! topology.

use super::DeployOptions;
use intpath_core::switch_map::{SwitchMap, SwitchMapError};
use intpath_core::topo::Topology;
use intpath_p4rt::client::ClientTls;
use intpath_p4rt::p4info::{self, P4InfoError, P4InfoIndex};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The switches of a switch map and the session to open on them.
#[derive(Debug, Clone)]
pub struct Connection {
    /// Switch map (JSON, as the Mininet launcher writes it): name, gRPC
    /// address and device id of every switch.
    pub switches: PathBuf,
    /// P4Info of the switches' program; `None`: the built-in `sr_int` one.
    pub p4info: Option<PathBuf>,
    /// Election id for arbitration; `None`: the session's own
    /// ([`intpath_core::sessions`]), so that two intpath sessions never
    /// refuse or overrule each other.
    pub election_id: Option<u64>,
    /// How long a switch may take to accept the connection.
    pub connect_timeout: Duration,
    /// TLS to switches served with `--grpc-server-ssl` (none: plaintext).
    pub tls: Option<ClientTls>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error(transparent)]
    Map(#[from] SwitchMapError),
    #[error(transparent)]
    P4Info(#[from] P4InfoError),
    #[error("{}: switch {switch} of the topology is missing", .map.display())]
    Missing { map: PathBuf, switch: String },
    #[error("{}: switch {switch} has device id {device_id}, the topology says {topology_id}", .map.display())]
    DeviceId {
        map: PathBuf,
        switch: String,
        device_id: u64,
        topology_id: u32,
    },
}

impl Connection {
    /// The switch map and the P4Info to speak to its switches with.
    pub fn load(&self) -> Result<(SwitchMap, Arc<P4InfoIndex>), ConnectionError> {
        let map = SwitchMap::load(&self.switches)?;
        let ix = match &self.p4info {
            Some(path) => P4InfoIndex::new(p4info::load(path)?)?,
            None => intpath_sr_int::p4info()?,
        };
        Ok((map, Arc::new(ix)))
    }

    /// [`Connection::load`], with the map checked against `topo`.
    pub fn load_for(
        &self,
        topo: &Topology,
    ) -> Result<(SwitchMap, Arc<P4InfoIndex>), ConnectionError> {
        let (map, ix) = self.load()?;
        check_map(topo, &map, &self.switches)?;
        Ok((map, ix))
    }

    /// Deploy options with the election id given, else `session`'s.
    pub fn options(&self, session: u64) -> DeployOptions {
        DeployOptions {
            election_id: u128::from(self.election_id.unwrap_or(session)),
            connect_timeout: self.connect_timeout,
            tls: self.tls.clone(),
            ..DeployOptions::default()
        }
    }
}

/// The switch map (read from `path`) must name every switch of the
/// topology with its id: the id is both the P4Runtime device id and the INT
/// switch id.
pub fn check_map(topo: &Topology, map: &SwitchMap, path: &Path) -> Result<(), ConnectionError> {
    for s in topo.switches() {
        let entry = map.get(&s.name).ok_or_else(|| ConnectionError::Missing {
            map: path.to_owned(),
            switch: s.name.clone(),
        })?;
        if entry.device_id != u64::from(s.id) {
            return Err(ConnectionError::DeviceId {
                map: path.to_owned(),
                switch: s.name.clone(),
                device_id: entry.device_id,
                topology_id: s.id,
            });
        }
    }
    Ok(())
}
