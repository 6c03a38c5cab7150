//! The text admin interface against clients that send endless lines or
//! absurd settings, and the binary's refusal to expose it beyond loopback.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn switch_with_admin() -> (common::SwitchProcess, SocketAddr) {
    let admin = common::free_addr();
    let sw = common::start_switch(1, &["--admin-addr".into(), admin.to_string()]);
    // The admin listener starts before P4Runtime's, which start_switch awaited.
    (sw, admin)
}

#[test]
fn a_line_without_end_closes_the_connection_and_costs_no_memory() {
    let (sw, admin) = switch_with_admin();
    let before = common::peak_rss_bytes(sw.child.id());
    let mut conn = TcpStream::connect(admin).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = conn.try_clone().unwrap();
    // 64 MiB without a newline, as fast as the switch takes it.
    const TOTAL: usize = 64 << 20;
    let sender = std::thread::spawn(move || {
        let chunk = vec![b'a'; 64 << 10];
        let mut sent = 0;
        while sent < TOTAL {
            match writer.write(&chunk) {
                Ok(n) => sent += n,
                Err(_) => break,
            }
        }
        sent
    });
    let mut reply = String::new();
    let read = BufReader::new(&mut conn).read_line(&mut reply);
    let sent = sender.join().unwrap();
    let grown = common::peak_rss_bytes(sw.child.id()).saturating_sub(before);
    eprintln!(
        "64 MiB line: switch took {} KiB, grew {} KiB, replied {reply:?}",
        sent >> 10,
        grown >> 10
    );
    // The error line arrives, unless the reset for the unread rest beats it.
    assert!(
        reply.starts_with("error: line longer than 4096 bytes") || read.is_err(),
        "{read:?} {reply:?}"
    );
    assert!(sent < TOTAL, "the switch took all {sent} bytes");
    assert!(grown < 8 << 20, "the switch's peak grew by {grown} bytes");
    // Other clients are served as before.
    assert_eq!(
        common::admin(admin, "show_queues")
            .last()
            .map(String::as_str),
        Some("end")
    );
}

#[test]
fn absurd_queue_settings_are_refused() {
    let (_sw, admin) = switch_with_admin();
    for (command, why) in [
        // 64 packets at 1 packet/s: a probe would wait a minute.
        ("set_queue_rate 1", "takes 64 s to drain"),
        ("set_queue_depth 0", "from 1 to 65536"),
        ("set_queue_depth 100000000", "from 1 to 65536"),
        ("set_queue_rate 18446744073709551615", "at most 1000000000"),
    ] {
        let reply = common::admin(admin, command).join("\n");
        assert!(
            reply.starts_with("error:") && reply.contains(why),
            "{command}: {reply}"
        );
    }
    assert_eq!(common::admin(admin, "set_queue_rate 2"), ["ok"]);
    let queues = common::admin(admin, "show_queues");
    assert!(
        queues[0].starts_with("port 255 rate_pps 2 depth 64 "),
        "{queues:?}"
    );
}

/// The switch's stderr when it refuses to start with `args`; a switch
/// still running after 5 s is killed and fails the test.
fn refused_start(args: &[&str]) -> String {
    let grpc = common::free_addr().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_intpath-switch"))
        .args(args)
        .args(["--", "--grpc-server-addr", &grpc])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("intpath-switch {args:?} started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!child.wait().unwrap().success(), "{stderr}");
    stderr
}

#[test]
fn the_admin_port_stays_on_loopback_unless_asked() {
    let stderr = refused_start(&["--admin-addr", "0.0.0.0:0"]);
    assert!(stderr.contains("--admin-allow-remote"), "{stderr}");
    let stderr = refused_start(&["--queue-depth", "1000", "--queue-rate", "10"]);
    assert!(stderr.contains("takes 100 s to drain"), "{stderr}");
}
