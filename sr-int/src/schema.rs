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
    Exact,
    Lpm,
}

impl MatchKind {
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
    pub name: &'static str,
    pub bitwidth: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySchema {
    pub field: Field,
    pub kind: MatchKind,
}

#[derive(Debug, Clone, Copy)]
pub struct TableSchema {
    pub name: &'static str,
    pub keys: &'static [KeySchema],
    pub actions: &'static [&'static str],
    /// Actions the controller may only use as the default action.
    pub default_only: &'static [&'static str],
    /// The program's `default_action` (the entry a miss runs until the
    /// controller modifies it; only `switch_config`'s can be modified).
    pub default_action: &'static str,
    pub size: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct ActionSchema {
    pub name: &'static str,
    pub params: &'static [Field],
}

#[derive(Debug, Clone, Copy)]
pub struct CounterSchema {
    pub name: &'static str,
    pub size: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct ControllerHeaderSchema {
    pub name: &'static str,
    pub metadata: &'static [Field],
}

pub const SWITCH_CONFIG: &str = "SrIntIngress.switch_config";
pub const IPV4_LPM: &str = "SrIntIngress.ipv4_lpm";
pub const GENERATOR: &str = "SrIntIngress.generator";
pub const SINK: &str = "SrIntIngress.sink";

pub const SET_SWITCH_ID: &str = "SrIntIngress.set_switch_id";
pub const IPV4_FORWARD: &str = "SrIntIngress.ipv4_forward";
pub const DROP: &str = "SrIntIngress.drop";
pub const NO_ACTION: &str = "NoAction";
pub const PUSH_ROUTE: &str = "SrIntIngress.push_route";
pub const SINK_TO_COLLECTOR: &str = "SrIntIngress.sink_to_collector";
pub const SINK_TO_CPU: &str = "SrIntIngress.sink_to_cpu";

pub const RX_PORT_COUNTER: &str = "SrIntIngress.rx_port_counter";
pub const TX_PORT_COUNTER: &str = "SrIntEgress.tx_port_counter";
pub const DROP_COUNTER: &str = "SrIntIngress.drop_counter";

pub const PACKET_IN: &str = "packet_in";
pub const PACKET_OUT: &str = "packet_out";

/// Port numbers are `bit<9>` in v1model: counters are indexed by them.
pub const PORT_BITS: u32 = 9;
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

pub fn table(name: &str) -> Option<&'static TableSchema> {
    TABLES.iter().find(|t| t.name == name)
}

pub fn action(name: &str) -> Option<&'static ActionSchema> {
    ACTIONS.iter().find(|a| a.name == name)
}

pub fn counter(name: &str) -> Option<&'static CounterSchema> {
    COUNTERS.iter().find(|c| c.name == name)
}
