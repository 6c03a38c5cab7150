//! `--hosts-per-switch N` and `--hosts SW,…`: hosts for a topology file
//! that has none (GraphML, GML, Topology Zoo), on every command that loads
//! a topology to run traffic over it. Mapped onto `core::topo::AddHosts`,
//! which the loader applies.

use intpath_core::topo::{AddHosts, LoadOptions};

#[derive(Debug, Clone, clap::Args)]
pub struct HostArgs {
    /// Attach N hosts to every switch of a topology file without hosts
    /// (GraphML, GML, Topology Zoo): h1, h2, … in switch order, each on its
    /// switch's next free port.
    #[arg(long, value_name = "N", conflicts_with = "hosts")]
    pub hosts_per_switch: Option<u16>,
    /// Attach one host to each of these switches (comma-separated), for a
    /// topology file without hosts.
    #[arg(long, value_name = "SW,...", value_delimiter = ',')]
    pub hosts: Vec<String>,
}

impl HostArgs {
    pub fn add_hosts(&self) -> AddHosts {
        match (self.hosts_per_switch, self.hosts.is_empty()) {
            (Some(n), _) => AddHosts::PerSwitch(n),
            (None, false) => AddHosts::On(self.hosts.clone()),
            (None, true) => AddHosts::None,
        }
    }

    /// Loading options with these hosts.
    pub fn load_options(&self, strict: bool) -> LoadOptions {
        LoadOptions {
            strict,
            add_hosts: self.add_hosts(),
        }
    }
}
