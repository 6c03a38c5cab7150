//! A line-based admin interface on TCP, in the spirit of bmv2's
//! `simple_switch_CLI`, for what P4Runtime does not cover: queue rates and
//! depths at run time.
//!
//! ```text
//! set_queue_rate <pps> [<port>]      0 = unlimited; no port = every port
//! set_queue_depth <packets> [<port>]
//! show_queues                        port rate depth len tail_drops, one line each
//! ```
//! Each command gets one line back (`ok`, `error: ...`) or, for
//! `show_queues`, its lines followed by `end`.

use crate::switch::SwitchCore;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

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
    match words.first().copied() {
        Some(cmd @ ("set_queue_rate" | "set_queue_depth")) => {
            let value = number(1, "value")?.ok_or("missing value")?;
            if cmd == "set_queue_depth" && value == 0 {
                return Err("a queue depth must be at least 1".into());
            }
            let ports: Vec<u16> = match number(2, "port")? {
                Some(p) => {
                    let p = u16::try_from(p).map_err(|_| format!("no port {p}"))?;
                    core.queue(p).ok_or(format!("no port {p}"))?;
                    vec![p]
                }
                None => core.queue_ports().map(|(p, _)| p).collect(),
            };
            for p in ports {
                let q = core.queue(p).ok_or(format!("no port {p}"))?;
                if cmd == "set_queue_rate" {
                    q.set_rate(value);
                } else {
                    q.set_depth(value as usize);
                }
            }
            Ok(vec!["ok".into()])
        }
        Some("show_queues") => {
            let mut lines: Vec<String> = core
                .queue_ports()
                .map(|(p, s)| {
                    format!(
                        "port {p} rate_pps {} depth {} len {} tail_drops {}",
                        s.rate_pps, s.depth, s.len, s.tail_drops
                    )
                })
                .collect();
            lines.push("end".into());
            Ok(lines)
        }
        Some(other) => Err(format!(
            "unknown command {other} (set_queue_rate, set_queue_depth, show_queues)"
        )),
        None => Ok(vec![]),
    }
}

fn serve_client(core: &SwitchCore, stream: TcpStream) -> std::io::Result<()> {
    let mut out = stream.try_clone()?;
    for line in BufReader::new(stream).lines() {
        for reply in execute(core, &line?) {
            writeln!(out, "{reply}")?;
        }
    }
    Ok(())
}

/// Accepts admin connections on `listener` until the process ends.
pub fn spawn(core: Arc<SwitchCore>, listener: TcpListener) {
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let core = core.clone();
            std::thread::spawn(move || {
                if let Err(e) = serve_client(&core, stream) {
                    tracing::debug!("admin connection: {e}");
                }
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
        assert_eq!(
            execute(core, "show_queues"),
            ["port 255 rate_pps 500 depth 8 len 0 tail_drops 0", "end"]
        );
        for (bad, why) in [
            ("set_queue_rate 5 7", "no port 7"),
            ("set_queue_depth 0", "at least 1"),
            ("set_queue_rate x", "not a number"),
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
