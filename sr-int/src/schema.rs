//! What `sr_int.p4` declares to the control plane: tables, their keys, actions
//! and parameters with bit widths, counters and controller headers.
//!
//! The reference switch executes exactly this program, so a P4Info pushed to it
//! must describe exactly this (names and widths; ids are the P4Info's own), and
//! name-based table entries (test vectors, P4Runtime after id resolution) are
//! checked against it before they reach the tables.

/// How a key field matches, as P4Info spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The whole field must equal the key (path ids).
    Exact,
    /// The longest matching prefix wins (IPv4 routes).
    Lpm,
}

impl MatchKind {
    /// The spelling P4Info uses, for comparing with a pushed P4Info.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Exact => "EXACT",
            MatchKind::Lpm => "LPM",
        }
    }
}

/// A key field or an action parameter: name and bit width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The fully qualified name (`hdr.ipv4.dst_addr`, `port`).
    pub name: &'static str,
    /// Width in bits: P4Runtime values must fit it exactly.
    pub bitwidth: u32,
}

/// A table's key field and how it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySchema {
    /// The field and its width.
    pub field: Field,
    /// How it matches.
    pub kind: MatchKind,
}

/// One table: what a P4Info must declare for it and what entries may
/// hold.
#[derive(Debug, Clone, Copy)]
pub struct TableSchema {
    /// The fully qualified name.
    pub name: &'static str,
    /// Key fields in P4Info order.
    pub keys: &'static [KeySchema],
    /// Actions an entry may run.
    pub actions: &'static [&'static str],
    /// Actions the controller may only use as the default action.
    pub default_only: &'static [&'static str],
    /// The program's `default_action` (the entry a miss runs until the
    /// controller modifies it; only `switch_config`'s can be modified).
    pub default_action: &'static str,
    /// Entries the table holds at most; inserts beyond are refused.
    pub size: u64,
}

/// One action: its name and parameters, which entries must give in full.
#[derive(Debug, Clone, Copy)]
pub struct ActionSchema {
    /// The fully qualified name.
    pub name: &'static str,
    /// Parameters in P4Info order.
    pub params: &'static [Field],
}

/// One indexed counter, which P4Runtime reads by index.
#[derive(Debug, Clone, Copy)]
pub struct CounterSchema {
    /// The fully qualified name.
    pub name: &'static str,
    /// Cells, indices 0..size.
    pub size: u64,
}

/// A `@controller_header`: the metadata a packet-in or packet-out
/// carries between switch and controller.
#[derive(Debug, Clone, Copy)]
pub struct ControllerHeaderSchema {
    /// `packet_in` or `packet_out`.
    pub name: &'static str,
    /// Fields in P4Info order (their ids are 1, 2, ...).
    pub metadata: &'static [Field],
}

/// Keyless table whose default action gives the switch its INT id.
pub const SWITCH_CONFIG: &str = "SrIntIngress.switch_config";
/// IPv4 routes to hosts and the collector.
pub const IPV4_LPM: &str = "SrIntIngress.ipv4_lpm";
/// Path id to route: where fresh probes get their label stack.
pub const GENERATOR: &str = "SrIntIngress.generator";
/// Path id to what the last switch does with a probe.
pub const SINK: &str = "SrIntIngress.sink";

/// Sets the id the switch writes into every INT record.
pub const SET_SWITCH_ID: &str = "SrIntIngress.set_switch_id";
/// Forwards out of `port` with `dst_mac` as destination.
pub const IPV4_FORWARD: &str = "SrIntIngress.ipv4_forward";
/// Drops and counts the packet.
pub const DROP: &str = "SrIntIngress.drop";
/// p4c's built-in empty action.
pub const NO_ACTION: &str = "NoAction";
/// Pushes a path's labels onto a fresh probe.
pub const PUSH_ROUTE: &str = "SrIntIngress.push_route";
/// Finishes the route and forwards the probe to the collector by IPv4.
pub const SINK_TO_COLLECTOR: &str = "SrIntIngress.sink_to_collector";
/// Finishes the route and sends the probe to the controller as a
/// packet-in (for a collector behind a switch's CPU port).
pub const SINK_TO_CPU: &str = "SrIntIngress.sink_to_cpu";

/// Packets and bytes received, per ingress port.
pub const RX_PORT_COUNTER: &str = "SrIntIngress.rx_port_counter";
/// Packets and bytes sent, per egress port.
pub const TX_PORT_COUNTER: &str = "SrIntEgress.tx_port_counter";
/// Packets dropped, per [`crate::DropReason`].
pub const DROP_COUNTER: &str = "SrIntIngress.drop_counter";

/// The header on frames a switch sends to its CPU port.
pub const PACKET_IN: &str = "packet_in";
/// The header on frames the controller sends out of a switch port.
pub const PACKET_OUT: &str = "packet_out";

/// Port numbers are `bit<9>` in v1model: counters are indexed by them.
pub const PORT_BITS: u32 = 9;
/// Every possible port, the size of the per-port counters.
pub const NUM_PORTS: usize = 1 << PORT_BITS;
/// Size of `drop_counter` (the indices of [`crate::DropReason`] are used).
pub const NUM_DROP_REASONS: usize = 8;
/// `push_route`'s label bytestring: MAX_HOPS labels of 16 bits.
pub const LABELS_BITS: u32 = (intpath_core::wire::MAX_HOPS * 16) as u32;

const PATH_ID_KEY: &[KeySchema] = &[KeySchema {
    field: Field {
        name: "hdr.sr.path_id",
        bitwidth: 16,
    },
    kind: MatchKind::Exact,
}];

/// Every table of the program.
pub const TABLES: &[TableSchema] = &[
    TableSchema {
        name: SWITCH_CONFIG,
        keys: &[],
        actions: &[SET_SWITCH_ID],
        default_only: &[SET_SWITCH_ID],
        default_action: SET_SWITCH_ID,
        size: 1,
    },
    TableSchema {
        name: IPV4_LPM,
        keys: &[KeySchema {
            field: Field {
                name: "hdr.ipv4.dst_addr",
                bitwidth: 32,
            },
            kind: MatchKind::Lpm,
        }],
        actions: &[IPV4_FORWARD, DROP, NO_ACTION],
        default_only: &[],
        default_action: DROP,
        size: 1024,
    },
    TableSchema {
        name: GENERATOR,
        keys: PATH_ID_KEY,
        actions: &[PUSH_ROUTE, DROP],
        default_only: &[],
        default_action: DROP,
        size: 1024,
    },
    TableSchema {
        name: SINK,
        keys: PATH_ID_KEY,
        actions: &[SINK_TO_COLLECTOR, SINK_TO_CPU, DROP],
        default_only: &[],
        default_action: DROP,
        size: 1024,
    },
];

/// Every action of the program.
pub const ACTIONS: &[ActionSchema] = &[
    ActionSchema {
        name: SET_SWITCH_ID,
        params: &[Field {
            name: "switch_id",
            bitwidth: 32,
        }],
    },
    ActionSchema {
        name: IPV4_FORWARD,
        params: &[
            Field {
                name: "dst_mac",
                bitwidth: 48,
            },
            Field {
                name: "port",
                bitwidth: PORT_BITS,
            },
        ],
    },
    ActionSchema {
        name: DROP,
        params: &[],
    },
    ActionSchema {
        name: NO_ACTION,
        params: &[],
    },
    ActionSchema {
        name: PUSH_ROUTE,
        params: &[
            Field {
                name: "num_labels",
                bitwidth: 8,
            },
            Field {
                name: "labels",
                bitwidth: LABELS_BITS,
            },
        ],
    },
    ActionSchema {
        name: SINK_TO_COLLECTOR,
        params: &[],
    },
    ActionSchema {
        name: SINK_TO_CPU,
        params: &[],
    },
];

/// Every counter of the program.
pub const COUNTERS: &[CounterSchema] = &[
    CounterSchema {
        name: RX_PORT_COUNTER,
        size: NUM_PORTS as u64,
    },
    CounterSchema {
        name: TX_PORT_COUNTER,
        size: NUM_PORTS as u64,
    },
    CounterSchema {
        name: DROP_COUNTER,
        size: NUM_DROP_REASONS as u64,
    },
];

const CPU_METADATA_PAD: Field = Field {
    name: "_pad",
    bitwidth: 16,
};

/// Both controller headers.
pub const CONTROLLER_HEADERS: &[ControllerHeaderSchema] = &[
    ControllerHeaderSchema {
        name: PACKET_IN,
        metadata: &[
            Field {
                name: "ingress_port",
                bitwidth: 16,
            },
            CPU_METADATA_PAD,
        ],
    },
    ControllerHeaderSchema {
        name: PACKET_OUT,
        metadata: &[
            Field {
                name: "egress_port",
                bitwidth: 16,
            },
            CPU_METADATA_PAD,
        ],
    },
];

/// The table named `name`, to check an entry or a P4Info against.
pub fn table(name: &str) -> Option<&'static TableSchema> {
    TABLES.iter().find(|t| t.name == name)
}

/// The action named `name`.
pub fn action(name: &str) -> Option<&'static ActionSchema> {
    ACTIONS.iter().find(|a| a.name == name)
}

/// The counter named `name`.
pub fn counter(name: &str) -> Option<&'static CounterSchema> {
    COUNTERS.iter().find(|c| c.name == name)
}
