//! `sr_int.p4` executed: parser, ingress control, egress control, deparser.
//!
//! The pipeline is a pure function of a frame, its port, the tables and the
//! queue metadata; queues and I/O live elsewhere so that the test vectors and
//! the benchmarks drive exactly the code the switch runs. No allocation
//! happens here: frames are edited in place in their [`PacketBuf`].
//!
//! `parser` only reads a frame; `edit` holds the edits that grow it.
//!
//! Probe handling follows ARCHITECTURE.md ("Data-plane semantics"):
//! DONE -> IPv4; fresh -> generator then pop; labels -> pop; else -> sink.

mod edit;
mod parser;

use crate::counters::{Counters, DropReason};
use crate::packet::PacketBuf;
use crate::tables::{GeneratorAction, Ipv4Action, SinkAction, Tables};
use edit::{grow_lengths, push_record};
use intpath_core::wire::{
    EthernetFrame, IntHeader, Ipv4Packet, MacAddr, PacketIn, PacketInRepr, PacketOut, SrHeader,
    UdpPacket, CPU_HEADER_LEN, ETHERNET_HEADER_LEN, IPV4_HEADER_LEN, MAX_HOPS, SR_HEADER_LEN,
    SR_LABEL_LEN, UDP_HEADER_LEN,
};
use parser::{parse, probe_lengths_ok, Parsed};

// Where each header of a probe starts: the parser accepts IPv4 without
// options only, so these are sums of header lengths.
const IPV4_AT: usize = ETHERNET_HEADER_LEN;
const UDP_AT: usize = IPV4_AT + IPV4_HEADER_LEN;
const SR_AT: usize = UDP_AT + UDP_HEADER_LEN;
const LABELS_AT: usize = SR_AT + SR_HEADER_LEN;
/// v1model's `egress_spec` is `bit<9>`: wider labels and ports wrap.
const PORT_MASK: u16 = 0x1ff;
/// simple_switch's drop port: `mark_to_drop` sets `egress_spec` to it, and a
/// packet leaving ingress with it is dropped before egress, uncounted.
pub const DROP_PORT: u16 = 511;

/// What ingress decided for a packet it did not drop: the metadata v1model
/// carries from ingress to egress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forward {
    pub egress_port: u16,
    pub ingress_port: u16,
    pub switch_id: u32,
    /// The egress control pushes an INT record.
    pub push_record: bool,
    /// The deparser emits the packet-in header (`sink_to_cpu`).
    pub packet_in: bool,
    /// Offset of the INT header when the packet is an SR-INT probe.
    pub int_at: Option<usize>,
    /// The deparser recomputes the IPv4 checksum (an IPv4 header was parsed).
    pub ipv4: bool,
    /// Length of the frame as it arrived (packet-out header included): what
    /// bmv2 adds to every byte counter, tx and drop alike.
    pub ingress_len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Forward(Forward),
    /// Dropped, counted in `drop_counter` when a reason is given.
    Drop(Option<DropReason>),
}

/// Queue and clock values v1model's `standard_metadata` gives at egress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EgressMeta {
    /// µs, switch clock.
    pub ingress_ts: u64,
    /// µs, switch clock.
    pub egress_ts: u64,
    /// Packets in the egress queue when this one was enqueued.
    pub enq_qdepth: u32,
    /// µs spent in the egress queue.
    pub deq_timedelta: u32,
}

/// The program with its one compile-time parameter, the CPU port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pipeline {
    pub cpu_port: u16,
}

fn ipv4(frame: &mut [u8]) -> Ipv4Packet<&mut [u8]> {
    Ipv4Packet::new_unchecked(&mut frame[IPV4_AT..])
}

fn sr(frame: &mut [u8]) -> SrHeader<&mut [u8]> {
    SrHeader::new_unchecked(&mut frame[SR_AT..])
}

impl Pipeline {
    pub fn new(cpu_port: u16) -> Self {
        Self { cpu_port }
    }

    /// Parser and ingress control. `pkt` is edited in place (packet-out
    /// header stripped, labels pushed or popped, MACs and TTL rewritten).
    pub fn ingress(
        &self,
        tables: &Tables,
        counters: &Counters,
        pkt: &mut PacketBuf,
        in_port: u16,
    ) -> Verdict {
        let ingress_len = pkt.len();
        counters.rx(in_port, ingress_len);
        let verdict = match self.ingress_inner(tables, pkt, in_port, ingress_len) {
            Verdict::Forward(fwd) if fwd.egress_port == DROP_PORT => Verdict::Drop(None),
            v => v,
        };
        if let Verdict::Drop(Some(reason)) = verdict {
            counters.drop(reason, ingress_len);
        }
        verdict
    }

    fn ingress_inner(
        &self,
        tables: &Tables,
        pkt: &mut PacketBuf,
        in_port: u16,
        ingress_len: usize,
    ) -> Verdict {
        let mut fwd = Forward {
            egress_port: 0,
            ingress_port: in_port,
            switch_id: tables.switch_id,
            push_record: false,
            packet_in: false,
            int_at: None,
            ipv4: false,
            ingress_len,
        };
        if in_port == self.cpu_port {
            let Ok(out) = PacketOut::new_checked(pkt.data()) else {
                return Verdict::Drop(Some(DropReason::Malformed));
            };
            // The program compares the 16-bit header field with 0 and only
            // then casts it to the 9-bit egress_spec: 0x0200 leaves on port 0.
            let port = out.egress_port();
            pkt.pull_front(CPU_HEADER_LEN);
            if port != 0 {
                // Out as is: the parser leaves the frame unparsed.
                fwd.egress_port = port & PORT_MASK;
                return Verdict::Forward(fwd);
            }
        }
        let (num_labels, hop_count) = match parse(pkt.data()) {
            Err(()) => return Verdict::Drop(Some(DropReason::Malformed)),
            Ok(Parsed::Other) => return Verdict::Drop(None),
            Ok(Parsed::Ipv4) => (None, 0),
            Ok(Parsed::Probe {
                num_labels,
                hop_count,
            }) => (Some(num_labels), hop_count),
        };
        fwd.ipv4 = true;
        if !Ipv4Packet::new_unchecked(&pkt.data()[IPV4_AT..]).verify_checksum() {
            return Verdict::Drop(Some(DropReason::Malformed));
        }
        let route_ipv4 = match num_labels {
            None => true,
            Some(n) => match self.probe(tables, pkt, n, hop_count, &mut fwd) {
                Ok(route_ipv4) => route_ipv4,
                Err(reason) => return Verdict::Drop(Some(reason)),
            },
        };
        let frame = pkt.data_mut();
        if route_ipv4 {
            if let Err(reason) = ipv4_forward(tables, frame, &mut fwd) {
                return Verdict::Drop(Some(reason));
            }
        }
        if let (true, Some(int_at)) = (fwd.push_record, fwd.int_at) {
            // The hop budget and the record stack must allow the record.
            let int = IntHeader::new_unchecked(&frame[int_at..]);
            if int.remaining_hops() == 0 || usize::from(int.hop_count()) >= MAX_HOPS {
                return Verdict::Drop(Some(DropReason::HopLimit));
            }
        }
        Verdict::Forward(fwd)
    }

    /// The SR-INT part of ingress: generator, forwarder, sink. Returns
    /// whether the probe continues by IPv4 forwarding.
    fn probe(
        &self,
        tables: &Tables,
        pkt: &mut PacketBuf,
        mut num_labels: usize,
        hop_count: u8,
        fwd: &mut Forward,
    ) -> Result<bool, DropReason> {
        let frame = pkt.data();
        if !probe_lengths_ok(frame, num_labels, hop_count) {
            return Err(DropReason::Malformed);
        }
        let header = SrHeader::new_unchecked(&frame[SR_AT..]);
        let path_id = header.path_id();
        if header.is_done() {
            fwd.int_at = Some(LABELS_AT + num_labels * SR_LABEL_LEN);
            return Ok(true);
        }
        let mut next_label = None;
        if num_labels == 0 && hop_count == 0 {
            let route = match tables.generator.get(&path_id) {
                Some(GeneratorAction::PushRoute(r)) => r,
                Some(GeneratorAction::Drop) | None => return Err(DropReason::PathMiss),
            };
            let labels = route.labels().ok_or(DropReason::Malformed)?;
            // Pushing every label and popping the first is pushing the rest.
            if let Some((first, rest)) = labels.split_first() {
                let n = rest.len() * SR_LABEL_LEN;
                pkt.insert_gap(LABELS_AT, n)
                    .map_err(|_| DropReason::Malformed)?;
                let frame = pkt.data_mut();
                let mut header = sr(frame);
                header.set_num_labels(rest.len() as u8);
                for (i, l) in rest.iter().enumerate() {
                    header.set_label(i, *l);
                }
                grow_lengths(frame, n as i32);
                num_labels = rest.len();
                next_label = Some(*first);
            }
        } else if num_labels > 0 {
            next_label = Some(header.label(0));
            pkt.remove(LABELS_AT, SR_LABEL_LEN);
            num_labels -= 1;
            let frame = pkt.data_mut();
            sr(frame).set_num_labels(num_labels as u8);
            grow_lengths(frame, -(SR_LABEL_LEN as i32));
        }
        fwd.int_at = Some(LABELS_AT + num_labels * SR_LABEL_LEN);
        fwd.push_record = true;
        if let Some(label) = next_label {
            fwd.egress_port = label & PORT_MASK;
            return Ok(false);
        }
        // Sink: the route is used up.
        let action = match tables.sink.get(&path_id) {
            Some(SinkAction::Drop) | None => return Err(DropReason::RouteExhausted),
            Some(a) => *a,
        };
        sr(pkt.data_mut()).set_done();
        if action == SinkAction::ToCpu {
            fwd.egress_port = self.cpu_port;
            fwd.packet_in = true;
            return Ok(false);
        }
        Ok(true)
    }

    /// Egress control and deparser: pushes the INT record, fixes lengths and
    /// checksums, adds the packet-in header. Returns false when the frame
    /// cannot grow (it exceeds the switch's buffers).
    pub fn egress(
        &self,
        counters: &Counters,
        pkt: &mut PacketBuf,
        fwd: &Forward,
        meta: &EgressMeta,
    ) -> bool {
        if let Some(int_at) = fwd.int_at {
            if fwd.push_record && !push_record(pkt, int_at, fwd, meta) {
                return false;
            }
            UdpPacket::new_unchecked(&mut pkt.data_mut()[UDP_AT..]).set_checksum(0);
        }
        if fwd.ipv4 {
            // As the P4 deparser: over the 20 bytes the parser extracted.
            ipv4(pkt.data_mut()).fill_checksum();
        }
        if fwd.packet_in {
            let Ok(header) = pkt.push_front(CPU_HEADER_LEN) else {
                return false;
            };
            PacketInRepr {
                ingress_port: fwd.ingress_port,
            }
            .emit(&mut PacketIn::new_unchecked(header));
        }
        counters.tx(fwd.egress_port, fwd.ingress_len);
        true
    }

    /// Ingress then egress with an empty queue, all timestamps `ts`: the
    /// pipeline as the test vectors see it. Returns the output port and frame.
    pub fn process(
        &self,
        tables: &Tables,
        counters: &Counters,
        pkt: &mut PacketBuf,
        in_port: u16,
        ts: u64,
    ) -> Option<u16> {
        let Verdict::Forward(fwd) = self.ingress(tables, counters, pkt, in_port) else {
            return None;
        };
        let meta = EgressMeta {
            ingress_ts: ts,
            egress_ts: ts,
            ..EgressMeta::default()
        };
        self.egress(counters, pkt, &fwd, &meta)
            .then_some(fwd.egress_port)
    }
}

/// The TTL check, `ipv4_lpm` and `ipv4_forward`: MACs rewritten, TTL
/// decremented.
fn ipv4_forward(tables: &Tables, frame: &mut [u8], fwd: &mut Forward) -> Result<(), DropReason> {
    let mut ip = ipv4(frame);
    if ip.ttl() <= 1 {
        return Err(DropReason::TtlExpired);
    }
    let dst = u32::from(ip.dst_addr());
    let Some(Ipv4Action::Forward { dst_mac, port }) = tables.ipv4_lpm.lookup(dst) else {
        // drop(), NoAction or a miss: no usable route.
        return Err(DropReason::NoRoute);
    };
    ip.decrement_ttl();
    let mut eth = EthernetFrame::new_unchecked(&mut *frame);
    let old_dst = eth.dst_addr();
    eth.set_src_addr(old_dst);
    eth.set_dst_addr(MacAddr(*dst_mac));
    fwd.egress_port = port & PORT_MASK;
    Ok(())
}
