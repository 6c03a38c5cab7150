//! An OTLP/HTTP client for the receiver's tests and benchmark: a real HTTP
//! connection (reqwest), bodies as the caller encoded them.

use std::io::Write;

/// What the receiver answered.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// POSTs `body` to `http://{addr}/v1/traces` with `content_type` and, when
/// given, `content_encoding` (the body is sent as it is: see [`gzip_bytes`]).
pub async fn post(
    client: &reqwest::Client,
    addr: &str,
    content_type: &str,
    content_encoding: Option<&str>,
    body: Vec<u8>,
) -> reqwest::Result<Answer> {
    let mut req = client
        .post(format!("http://{addr}/v1/traces"))
        .header("content-type", content_type);
    if let Some(e) = content_encoding {
        req = req.header("content-encoding", e);
    }
    let resp = req.body(body).send().await?;
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = resp.bytes().await?.to_vec();
    Ok(Answer {
        status,
        content_type,
        body,
    })
}

pub fn gzip_bytes(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).expect("gzip into memory");
    e.finish().expect("gzip into memory")
}

/// Waits until something accepts TCP connections on `addr` (a receiver
/// process starting up).
pub fn wait_for_listener(addr: &str, timeout: std::time::Duration) -> bool {
    let until = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < until {
        if std::net::TcpStream::connect(addr).is_ok() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}
