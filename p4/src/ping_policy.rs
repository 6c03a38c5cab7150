//! gRPC C-core's keepalive enforcement, which simple_switch_grpc inherits
//! and the h2 server under tonic lacks: a client that pings more often than
//! once per `min_interval` while the server sends it nothing earns strikes,
//! and past `max_strikes` it gets GOAWAY `ENHANCE_YOUR_CALM` with debug data
//! `too_many_pings` and the connection closes. Enforcing it here keeps the
//! reference switch from accepting a client that bmv2 would disconnect.
//!
//! The policy watches the HTTP/2 frame headers crossing the connection in
//! both directions (payloads are not touched): inbound PINGs count, outbound
//! DATA or HEADERS reset the count, as in C-core. C-core also allows only
//! one ping per two hours on a connection without an open call; P4Runtime
//! connections keep their StreamChannel open, so only the per-call interval
//! is enforced.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

/// C-core's defaults (`grpc.http2.min_ping_interval_without_data_ms`,
/// `grpc.http2.max_ping_strikes`).
#[derive(Debug, Clone, Copy)]
pub struct PingPolicy {
    pub min_interval: Duration,
    pub max_strikes: u32,
}

impl Default for PingPolicy {
    fn default() -> Self {
        PingPolicy {
            min_interval: Duration::from_secs(300),
            max_strikes: 2,
        }
    }
}

const PREFACE_LEN: usize = 24;
const HEADER_LEN: usize = 9;
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const ACK: u8 = 0x1;
const ENHANCE_YOUR_CALM: u32 = 0xb;
const TOO_MANY_PINGS: &[u8] = b"too_many_pings";

/// Follows frame boundaries in one direction of the byte stream.
#[derive(Debug)]
struct Framer {
    skip: usize,
    header: [u8; HEADER_LEN],
    filled: usize,
    payload_left: usize,
}

/// A frame header: type, flags, stream id.
type Header = (u8, u8, u32);

impl Framer {
    fn new(preface: usize) -> Self {
        Framer {
            skip: preface,
            header: [0; HEADER_LEN],
            filled: 0,
            payload_left: 0,
        }
    }

    fn at_boundary(&self) -> bool {
        self.skip == 0 && self.filled == 0 && self.payload_left == 0
    }

    /// Feeds bytes, calling `on_header` for every complete frame header.
    fn feed(&mut self, mut bytes: &[u8], mut on_header: impl FnMut(Header)) {
        while !bytes.is_empty() {
            let n = if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                n
            } else if self.payload_left > 0 {
                let n = self.payload_left.min(bytes.len());
                self.payload_left -= n;
                n
            } else {
                let n = (HEADER_LEN - self.filled).min(bytes.len());
                self.header[self.filled..self.filled + n].copy_from_slice(&bytes[..n]);
                self.filled += n;
                if self.filled == HEADER_LEN {
                    let h = self.header;
                    self.filled = 0;
                    self.payload_left =
                        usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
                    let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
                    on_header((h[3], h[4], stream));
                }
                n
            };
            bytes = &bytes[n..];
        }
    }
}

/// The GOAWAY C-core sends to a client that pinged too often.
fn goaway(last_stream: u32) -> Vec<u8> {
    let len = 8 + TOO_MANY_PINGS.len();
    let mut f = Vec::with_capacity(HEADER_LEN + len);
    f.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    f.extend_from_slice(&[GOAWAY, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&last_stream.to_be_bytes());
    f.extend_from_slice(&ENHANCE_YOUR_CALM.to_be_bytes());
    f.extend_from_slice(TOO_MANY_PINGS);
    f
}

#[derive(Debug, PartialEq)]
enum State {
    Open,
    /// Strikes exceeded: GOAWAY goes out at the next outbound frame
    /// boundary, from `sent` bytes on.
    Calming {
        frame: Vec<u8>,
        sent: usize,
    },
    Closed,
}

/// A server connection under the ping policy.
#[derive(Debug)]
pub struct Policed<IO> {
    io: IO,
    policy: PingPolicy,
    inbound: Framer,
    outbound: Framer,
    strikes: u32,
    last_ping: Option<Instant>,
    last_stream: u32,
    state: State,
    reader: Option<Waker>,
}

impl<IO> Policed<IO> {
    pub fn new(io: IO, policy: PingPolicy) -> Self {
        Policed {
            io,
            policy,
            inbound: Framer::new(PREFACE_LEN),
            outbound: Framer::new(0),
            strikes: 0,
            last_ping: None,
            last_stream: 0,
            state: State::Open,
            reader: None,
        }
    }

    fn on_inbound(&mut self, (kind, flags, stream): Header) {
        if kind == HEADERS {
            self.last_stream = self.last_stream.max(stream);
        }
        if kind != PING || flags & ACK != 0 || self.state != State::Open {
            return;
        }
        let now = Instant::now();
        if self
            .last_ping
            .is_some_and(|last| now < last + self.policy.min_interval)
        {
            self.strikes += 1;
        }
        self.last_ping = Some(now);
        if self.strikes > self.policy.max_strikes {
            tracing::warn!(
                strikes = self.strikes,
                "client pings too often: GOAWAY too_many_pings"
            );
            self.state = State::Calming {
                frame: goaway(self.last_stream),
                sent: 0,
            };
        }
    }
}

impl<IO: AsyncWrite + Unpin> Policed<IO> {
    /// Writes the pending GOAWAY once the outbound stream is between
    /// frames; `Ready` when the connection is closed.
    fn poll_calm(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            match &mut self.state {
                State::Open => return Poll::Ready(Ok(())),
                State::Closed => return Poll::Ready(Ok(())),
                State::Calming { .. } if !self.outbound.at_boundary() => {
                    return Poll::Ready(Ok(()));
                }
                State::Calming { frame, sent } => {
                    if *sent == frame.len() {
                        std::task::ready!(Pin::new(&mut self.io).poll_flush(cx))?;
                        self.state = State::Closed;
                        if let Some(w) = self.reader.take() {
                            w.wake();
                        }
                        continue;
                    }
                    *sent +=
                        std::task::ready!(Pin::new(&mut self.io).poll_write(cx, &frame[*sent..]))?;
                }
            }
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for Policed<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        std::task::ready!(this.poll_calm(cx))?;
        match this.state {
            // End of stream: the server side winds the connection down.
            State::Closed => return Poll::Ready(Ok(())),
            // Mid-frame on the way out: the writer sends GOAWAY after it.
            State::Calming { .. } => {
                this.reader = Some(cx.waker().clone());
                return Poll::Pending;
            }
            State::Open => {}
        }
        let before = buf.filled().len();
        std::task::ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        let mut headers = Vec::new();
        this.inbound
            .feed(&buf.filled()[before..], |h| headers.push(h));
        for h in headers {
            this.on_inbound(h);
        }
        if this.state != State::Open {
            // Hold back what was read: the connection is being refused.
            buf.set_filled(before);
            std::task::ready!(this.poll_calm(cx))?;
            if this.state != State::Closed {
                this.reader = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Policed<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        std::task::ready!(this.poll_calm(cx))?;
        if this.state != State::Open && this.outbound.at_boundary() {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        let n = std::task::ready!(Pin::new(&mut this.io).poll_write(cx, bytes))?;
        let mut reset = false;
        this.outbound.feed(&bytes[..n], |(kind, _, _)| {
            reset |= kind == DATA || kind == HEADERS;
        });
        if reset {
            this.strikes = 0;
            this.last_ping = None;
        }
        if this.state != State::Open {
            // Best effort: a pending GOAWAY goes out behind this frame.
            let _ = this.poll_calm(cx);
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl<IO: Connected> Connected for Policed<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[kind, flags]);
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn framer_finds_headers_split_anywhere() {
        let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        bytes.extend(frame(4, 0, 0, &[0; 6]));
        bytes.extend(frame(HEADERS, 4, 1, &[1, 2, 3]));
        bytes.extend(frame(PING, 0, 0, &[9; 8]));
        for chunk in [1, 2, 7, 9, 100] {
            let mut f = Framer::new(PREFACE_LEN);
            let mut seen = Vec::new();
            for c in bytes.chunks(chunk) {
                f.feed(c, |h| seen.push(h));
            }
            assert_eq!(seen, [(4, 0, 0), (HEADERS, 4, 1), (PING, 0, 0)]);
            assert!(f.at_boundary());
        }
    }

    #[test]
    fn third_strike_within_the_interval_calms_the_client() {
        let mut p = Policed::new((), PingPolicy::default());
        p.on_inbound((HEADERS, 0, 5));
        for _ in 0..3 {
            p.on_inbound((PING, 0, 0));
            assert_eq!(p.state, State::Open);
        }
        // Acks never count.
        p.on_inbound((PING, ACK, 0));
        assert_eq!(p.state, State::Open);
        p.on_inbound((PING, 0, 0));
        let State::Calming { frame, .. } = &p.state else {
            panic!("{:?}", p.state)
        };
        assert_eq!(frame[3], GOAWAY);
        assert_eq!(&frame[9..13], &5u32.to_be_bytes());
        assert_eq!(&frame[13..17], &ENHANCE_YOUR_CALM.to_be_bytes());
        assert_eq!(&frame[17..], TOO_MANY_PINGS);
    }

    #[test]
    fn pings_further_apart_than_the_interval_are_welcome() {
        let policy = PingPolicy {
            min_interval: Duration::from_millis(5),
            max_strikes: 0,
        };
        let mut p = Policed::new((), policy);
        for _ in 0..3 {
            p.on_inbound((PING, 0, 0));
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(p.state, State::Open);
        // Two at once: the second is a strike, and none is allowed.
        p.on_inbound((PING, 0, 0));
        p.on_inbound((PING, 0, 0));
        assert_ne!(p.state, State::Open);
    }
}
