//! A line-based admin interface on TCP, in the spirit of bmv2's
//! `simple_switch_CLI`, for what P4Runtime does not cover: queue rates and
//! depths and random port loss at run time.
//!
//! ```text
//! set_queue_rate <pps> [<port>]      0 = unlimited; no port = every port
//! set_queue_depth <packets> [<port>]
//! set_port_loss <percent> [<port>]   0–100, fractions allowed; 0 = none
//! show_queues                        port rate depth loss len drops, one line each
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
            if cmd == "set_queue_depth" && value == 0 {
                return Err("a queue depth must be at least 1".into());
            }
            for p in ports()? {
                let q = core.queue(p).ok_or(format!("no port {p}"))?;
                if cmd == "set_queue_rate" {
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
        Some("show_queues") => {
            let mut lines: Vec<String> = core
                .queue_ports()
                .map(|(p, s)| {
                    format!(
                        "port {p} rate_pps {} depth {} loss_pct {} len {} loss_drops {} tail_drops {}",
                        s.rate_pps, s.depth, s.loss_pct, s.len, s.loss_drops, s.tail_drops
                    )
                })
                .collect();
            lines.push("end".into());
            Ok(lines)
        }
        Some(other) => Err(format!(
            "unknown command {other} (set_queue_rate, set_queue_depth, set_port_loss, show_queues)"
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
        assert_eq!(execute(core, "set_port_loss 12.5 255"), ["ok"]);
        assert_eq!(
            execute(core, "show_queues"),
            [
                "port 255 rate_pps 500 depth 8 loss_pct 12.5 len 0 loss_drops 0 tail_drops 0",
                "end"
            ]
        );
        assert_eq!(execute(core, "set_port_loss 0"), ["ok"]);
        assert_eq!(core.queue(255).unwrap().status().loss_pct, 0.0);
        for (bad, why) in [
            ("set_queue_rate 5 7", "no port 7"),
            ("set_queue_depth 0", "at least 1"),
            ("set_queue_rate x", "not a number"),
            ("set_port_loss", "missing percent"),
            ("set_port_loss half", "not a number"),
            ("set_port_loss 101", "from 0 to 100"),
            ("set_port_loss -3", "from 0 to 100"),
            ("set_port_loss NaN", "from 0 to 100"),
            ("set_port_loss 5 7", "no port 7"),
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
