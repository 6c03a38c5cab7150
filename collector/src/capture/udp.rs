//! The UDP source's socket: a receive buffer large enough for bursts, and the
//! kernel's count of the datagrams it dropped because that buffer was full
//! (reported apart from path loss: the network delivered those probes).

use std::net::SocketAddr;
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::MetadataExt as _;

/// Binds `addr` with a receive buffer of `rcvbuf` bytes (the kernel clamps it
/// to `net.core.rmem_max`); returns the socket and the size the kernel
/// granted (as it reports it: twice what it lets the data use).
pub(super) fn bind(
    addr: SocketAddr,
    rcvbuf: usize,
) -> std::io::Result<(tokio::net::UdpSocket, usize)> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_recv_buffer_size(rcvbuf)?;
    s.bind(&addr.into())?;
    s.set_nonblocking(true)?;
    let granted = s.recv_buffer_size()?;
    Ok((tokio::net::UdpSocket::from_std(s.into())?, granted))
}

/// Datagrams the kernel dropped at `sock` since it was opened: the `drops`
/// column of its line in `/proc/self/net/udp` (or `udp6`), found by the
/// socket's inode.
pub(super) fn kernel_drops(sock: &tokio::net::UdpSocket) -> std::io::Result<u64> {
    let fd = sock.as_raw_fd();
    let inode = std::fs::metadata(format!("/proc/self/fd/{fd}"))?.ino();
    let table = match sock.local_addr()? {
        SocketAddr::V4(_) => "/proc/self/net/udp",
        SocketAddr::V6(_) => "/proc/self/net/udp6",
    };
    let text = std::fs::read_to_string(table)?;
    drops_of(&text, inode).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{table}: no socket with inode {inode}"),
        )
    })
}

/// The `drops` column (the last) of the line whose `inode` column (the
/// tenth) is `inode`.
fn drops_of(table: &str, inode: u64) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        match (cols.get(9)?.parse::<u64>(), cols.last()?.parse::<u64>()) {
            (Ok(i), Ok(drops)) if i == inode => Some(drops),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_are_read_from_the_line_of_the_socket() {
        let table = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
             8304: 0100007F:80E3 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 3973310 2 00000000ee789c65 0\n\
             8305: 0100007F:80E4 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 3973311 2 00000000ee789c66 42\n";
        assert_eq!(drops_of(table, 3973311), Some(42));
        assert_eq!(drops_of(table, 3973310), Some(0));
        assert_eq!(drops_of(table, 1), None);
    }

    /// A socket with the smallest buffer the kernel allows, flooded while
    /// nobody reads it: the kernel drops, and says how many.
    #[tokio::test]
    async fn a_flooded_socket_reports_its_kernel_drops() {
        let (sock, granted) = bind("127.0.0.1:0".parse().unwrap(), 1).unwrap();
        assert!(granted < 64 << 10, "{granted}");
        assert_eq!(kernel_drops(&sock).unwrap(), 0);
        let to = sock.local_addr().unwrap();
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..2_000 {
            tx.send_to(&[0u8; 1_000], to).unwrap();
        }
        let drops = kernel_drops(&sock).unwrap();
        assert!(drops > 1_000, "{drops}");
        // Every datagram is either queued or counted as dropped.
        let mut buf = [0u8; 2_000];
        let mut queued = 0;
        let wait = std::time::Duration::from_millis(100);
        while let Ok(r) = tokio::time::timeout(wait, sock.recv(&mut buf)).await {
            r.unwrap();
            queued += 1;
        }
        assert_eq!(queued + kernel_drops(&sock).unwrap(), 2_000);
    }
}
