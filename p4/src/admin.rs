//! A line-based admin interface on TCP, in the spirit of bmv2's
//! `simple_switch_CLI`, for what P4Runtime does not cover: queue rates and
//! depths, random port loss and a port delay at run time.
//!
//! ```text
//! set_queue_rate <pps> [<port>]      0 = unlimited; no port = every port
//! set_queue_depth <packets> [<port>]
//! set_port_loss <percent> [<port>]   0–100, fractions allowed; 0 = none
//! set_port_delay <ms> [<port>]       0–10000, fractions allowed; 0 = none
//! show_queues                        port rate depth loss len drops delay, one line each
//! ```
//! Each command gets one line back (`ok`, `error: ...`) or, for
//! `show_queues`, its lines followed by `end`. Rates and depths are held to
//! [`crate::queue::check_settings`].
//!
//! There is no authentication: whoever reaches the port can slow or drop
//! every port's traffic. The binary binds it to loopback unless told
//! otherwise, and a client gets [`MAX_CLIENTS`] connections of lines up to
//! [`MAX_LINE`] bytes; a longer line closes its connection.

use crate::queue::check_settings;
use crate::switch::SwitchCore;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The longest command line accepted, newline excluded (bytes).
pub const MAX_LINE: usize = 4096;
/// Connections served at once; more are refused with an error line.
pub const MAX_CLIENTS: usize = 16;

/// Runs one command; the reply lines without trailing newline.
pub fn execute(core: &SwitchCore, line: &str) -> Vec<String> {
    match run(core, line) {
        Ok(lines) => lines,
        Err(e) => vec![format!("error: {e}")],
    }
}

fn run(core: &SwitchCore, line: &str) -> Result<Vec<String>, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |i: usize, what: &str| -> Result<Option<u64>, String> {
        words
            .get(i)
            .map(|w| {
                w.parse::<u64>()
                    .map_err(|_| format!("{what}: not a number: {w}"))
            })
            .transpose()
    };
    let ports = || -> Result<Vec<u16>, String> {
        Ok(match number(2, "port")? {
            Some(p) => {
                let p = u16::try_from(p).map_err(|_| format!("no port {p}"))?;
                core.queue(p).ok_or(format!("no port {p}"))?;
                vec![p]
            }
            None => core.queue_ports().map(|(p, _)| p).collect(),
        })
    };
    match words.first().copied() {
        Some(cmd @ ("set_queue_rate" | "set_queue_depth")) => {
            let value = number(1, "value")?.ok_or("missing value")?;
            let rate = cmd == "set_queue_rate";
            let ports = ports()?;
            // Every port is checked before any changes.
            for p in &ports {
                let s = core.queue(*p).ok_or(format!("no port {p}"))?.status();
                let depth = usize::try_from(value).unwrap_or(usize::MAX);
                let (r, d) = if rate {
                    (value, s.depth)
                } else {
                    (s.rate_pps, depth)
                };
                check_settings(r, d).map_err(|e| format!("port {p}: {e}"))?;
            }
            for p in ports {
                let q = core.queue(p).ok_or(format!("no port {p}"))?;
                if rate {
                    q.set_rate(value);
                } else {
                    q.set_depth(value as usize);
                }
            }
            Ok(vec!["ok".into()])
        }
        Some("set_port_loss") => {
            let pct = words.get(1).ok_or("missing percent")?;
            let pct: f64 = pct
                .parse()
                .map_err(|_| format!("percent: not a number: {pct}"))?;
            let ports = ports()?;
            for p in &ports {
                let q = core.queue(*p).ok_or(format!("no port {p}"))?;
                q.loss().set_percent(pct).map_err(|e| e.to_string())?;
            }
            Ok(vec!["ok".into()])
        }
        Some("set_port_delay") => {
            let ms = words.get(1).ok_or("missing milliseconds")?;
            let ms: f64 = ms
                .parse()
                .map_err(|_| format!("milliseconds: not a number: {ms}"))?;
            let ports = ports()?;
            for p in &ports {
                let q = core.queue(*p).ok_or(format!("no port {p}"))?;
                q.delay().set_ms(ms).map_err(|e| e.to_string())?;
            }
            Ok(vec!["ok".into()])
        }
        Some("show_queues") => {
            let mut lines: Vec<String> = core
                .queue_ports()
                .map(|(p, s)| {
                    format!(
                        "port {p} rate_pps {} depth {} loss_pct {} len {} loss_drops {} tail_drops {} delay_ms {}",
                        s.rate_pps, s.depth, s.loss_pct, s.len, s.loss_drops, s.tail_drops, s.delay_ms
                    )
                })
                .collect();
            lines.push("end".into());
            Ok(lines)
        }
        Some(other) => Err(format!(
            "unknown command {other} (set_queue_rate, set_queue_depth, set_port_loss, set_port_delay, show_queues)"
        )),
        None => Ok(vec![]),
    }
}

fn serve_client(core: &SwitchCore, stream: TcpStream) -> std::io::Result<()> {
    let mut out = stream.try_clone()?;
    let mut input = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        // One byte past the limit tells a long line from a full one.
        let limit = MAX_LINE as u64 + 1;
        if (&mut input).take(limit).read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        } else if line.len() > MAX_LINE {
            // One write, then FIN: the close that follows resets the
            // connection (its unread rest is discarded), and a reset drops
            // whatever the kernel has not sent yet, so a line written in
            // pieces could arrive cut.
            let reply = format!("error: line longer than {MAX_LINE} bytes, closing\n");
            out.write_all(reply.as_bytes())?;
            out.shutdown(std::net::Shutdown::Write)?;
            return Ok(());
        }
        let replies = match std::str::from_utf8(&line) {
            Ok(text) => execute(core, text.trim_end_matches('\r')),
            Err(_) => vec!["error: not UTF-8 text".into()],
        };
        for reply in replies {
            writeln!(out, "{reply}")?;
        }
    }
}

/// Accepts admin connections on `listener` until the process ends.
pub fn spawn(core: Arc<SwitchCore>, listener: TcpListener) {
    let clients = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            if clients.fetch_add(1, Ordering::SeqCst) >= MAX_CLIENTS {
                clients.fetch_sub(1, Ordering::SeqCst);
                let _ = writeln!(
                    stream,
                    "error: {MAX_CLIENTS} admin connections open already"
                );
                continue;
            }
            let (core, clients) = (core.clone(), clients.clone());
            std::thread::spawn(move || {
                if let Err(e) = serve_client(&core, stream) {
                    tracing::debug!("admin connection: {e}");
                }
                clients.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Backend;
    use crate::switch::{Forwarding, QueueConfig, Switch, SwitchConfig};

    #[test]
    fn commands_change_queues_and_bad_ones_say_why() {
        let (switch, _packet_in) = Switch::start(SwitchConfig {
            cpu_port: 255,
            ports: vec![],
            backend: Backend::Ring,
            forwarding: Forwarding::Direct,
            default_queue: QueueConfig {
                rate_pps: 0,
                depth: 64,
            },
            queue_overrides: vec![],
        })
        .unwrap();
        let core = &switch.core;
        assert_eq!(execute(core, "set_queue_rate 500 255"), ["ok"]);
        assert_eq!(execute(core, "set_queue_depth 8"), ["ok"]);
        assert_eq!(execute(core, "set_port_loss 12.5 255"), ["ok"]);
        assert_eq!(execute(core, "set_port_delay 2.5 255"), ["ok"]);
        assert_eq!(
            execute(core, "show_queues"),
            [
                "port 255 rate_pps 500 depth 8 loss_pct 12.5 len 0 loss_drops 0 tail_drops 0 delay_ms 2.5",
                "end"
            ]
        );
        assert_eq!(execute(core, "set_port_loss 0"), ["ok"]);
        assert_eq!(core.queue(255).unwrap().status().loss_pct, 0.0);
        for (bad, why) in [
            ("set_queue_rate 5 7", "no port 7"),
            ("set_queue_depth 0", "from 1 to 65536"),
            ("set_queue_depth 100000", "from 1 to 65536"),
            ("set_queue_depth 40000 255", "takes 80 s to drain"),
            ("set_queue_rate 99999999999", "at most 1000000000"),
            ("set_queue_rate x", "not a number"),
            ("set_port_loss", "missing percent"),
            ("set_port_loss half", "not a number"),
            ("set_port_loss 101", "from 0 to 100"),
            ("set_port_loss -3", "from 0 to 100"),
            ("set_port_loss NaN", "from 0 to 100"),
            ("set_port_loss 5 7", "no port 7"),
            ("set_port_delay", "missing milliseconds"),
            ("set_port_delay soon", "not a number"),
            ("set_port_delay -1", "from 0 to 10000"),
            ("set_port_delay 20000", "from 0 to 10000"),
            ("set_port_delay 5 7", "no port 7"),
            ("flush", "unknown command"),
        ] {
            let reply = execute(core, bad).join("");
            assert!(
                reply.starts_with("error:") && reply.contains(why),
                "{bad}: {reply}"
            );
        }
        switch.stop();
    }
}
