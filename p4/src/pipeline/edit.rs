//! The edits the pipeline makes to a probe that grow it: the INT record the
//! egress control pushes, and the IPv4 and UDP lengths that follow every
//! label or record pushed or popped.

use super::{ipv4, EgressMeta, Forward, UDP_AT};
use crate::packet::PacketBuf;
use intpath_core::wire::{IntHeader, IntRecordRepr, UdpPacket, INT_HEADER_LEN, INT_RECORD_LEN};

/// Adds `delta` bytes to the IPv4 total length and the UDP length.
pub(super) fn grow_lengths(frame: &mut [u8], delta: i32) {
    let mut ip = ipv4(frame);
    ip.set_total_len((i32::from(ip.total_len()) + delta) as u16);
    let mut udp = UdpPacket::new_unchecked(&mut frame[UDP_AT..]);
    udp.set_len((i32::from(udp.len()) + delta) as u16);
}

/// Pushes this switch's record at the front of the INT stack (ingress made
/// sure the budget allows it); false when the frame cannot grow.
pub(super) fn push_record(
    pkt: &mut PacketBuf,
    int_at: usize,
    fwd: &Forward,
    meta: &EgressMeta,
) -> bool {
    if pkt
        .insert_gap(int_at + INT_HEADER_LEN, INT_RECORD_LEN)
        .is_err()
    {
        return false;
    }
    let frame = pkt.data_mut();
    let mut int = IntHeader::new_unchecked(&mut frame[int_at..]);
    IntRecordRepr {
        switch_id: fwd.switch_id,
        ingress_port: fwd.ingress_port,
        egress_port: fwd.egress_port,
        ingress_ts: meta.ingress_ts,
        egress_ts: meta.egress_ts,
        enq_qdepth: meta.enq_qdepth,
        deq_timedelta: meta.deq_timedelta,
    }
    .emit(&mut int.record_mut(0));
    int.set_hop_count(int.hop_count() + 1);
    int.set_remaining_hops(int.remaining_hops() - 1);
    grow_lengths(frame, INT_RECORD_LEN as i32);
    true
}
