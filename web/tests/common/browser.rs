//! Debian's `chromium`, headless, driven over the DevTools protocol: a page
//! is opened, JavaScript evaluated in it, its console errors, uncaught
//! exceptions and failed loads collected, and a screenshot taken.
//!
//! The protocol is JSON over one WebSocket; the few commands used here are
//! sent by hand rather than through a crate of the whole generated
//! protocol, whose build alone would outlast the test on two cores.

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

pub struct Browser {
    child: tokio::process::Child,
    _profile: tempfile::TempDir,
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    next: AtomicU64,
    session: String,
    /// Every error the page reported: console errors, uncaught exceptions,
    /// log entries of level error (failed loads among them).
    pub errors: Arc<Mutex<Vec<String>>>,
}

impl Browser {
    /// Starts chromium with a page of `width` × `height` CSS pixels.
    pub async fn start(width: u32, height: u32) -> Self {
        let profile = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("chromium (scripts/install-deps.sh installs Debian's package)");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let ws = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return url.trim().to_owned();
                }
            }
            panic!("chromium exited without a DevTools endpoint")
        })
        .await
        .expect("chromium's DevTools endpoint within 30 s");
        // Keep draining its stderr, so that chromium never blocks on it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

        let (socket, _) = tokio_tungstenite::connect_async(ws.as_str()).await.unwrap();
        let (mut sink, mut stream) = socket.split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(m) = out_rx.recv().await {
                if sink.send(Message::text(m)).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::default();
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let (p, e) = (pending.clone(), errors.clone());
        tokio::spawn(async move {
            while let Some(Ok(m)) = stream.next().await {
                let Ok(text) = m.to_text() else { continue };
                let Ok(v) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                match v["id"].as_u64() {
                    Some(id) => {
                        if let Some(tx) = p.lock().unwrap().remove(&id) {
                            let _ = tx.send(v);
                        }
                    }
                    None => {
                        if let Some(err) = page_error(&v) {
                            e.lock().unwrap().push(err);
                        }
                    }
                }
            }
        });
        let mut b = Browser {
            child,
            _profile: profile,
            out,
            pending,
            next: AtomicU64::new(1),
            session: String::new(),
            errors,
        };
        let target = b
            .call("Target.createTarget", json!({ "url": "about:blank" }))
            .await;
        let target = target["targetId"].as_str().unwrap().to_owned();
        let attached = b
            .call(
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
            )
            .await;
        b.session = attached["sessionId"].as_str().unwrap().to_owned();
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            b.call(domain, json!({})).await;
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        )
        .await;
        b
    }

    /// Sends one command (to the page once attached) and waits for its
    /// answer; a protocol error fails the test.
    pub async fn call(&self, method: &str, params: Value) -> Value {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.out.send(msg.to_string()).unwrap();
        let v = tokio::time::timeout(Duration::from_secs(30), rx)
            .await
            .unwrap_or_else(|_| panic!("{method}: no answer within 30 s"))
            .unwrap();
        assert!(v.get("error").is_none(), "{method}: {}", v["error"]);
        v["result"].clone()
    }

    pub async fn open(&self, url: &str) {
        let r = self.call("Page.navigate", json!({ "url": url })).await;
        assert!(r.get("errorText").is_none(), "{url}: {}", r["errorText"]);
        let loaded = format!(
            "document.readyState === 'complete' && location.href === {}",
            json!(url)
        );
        self.wait_for(&loaded, Duration::from_secs(20)).await;
    }

    /// The value of `expression` in the page (promises awaited).
    pub async fn eval(&self, expression: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await;
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is truthy in the page; returns its value.
    pub async fn wait_for(&self, expression: &str, timeout: Duration) -> Value {
        let start = Instant::now();
        loop {
            let v = self.eval(expression).await;
            let truthy =
                !matches!(&v, Value::Null | Value::Bool(false)) && v != json!("") && v != json!(0);
            if truthy {
                return v;
            }
            assert!(
                start.elapsed() < timeout,
                "{expression}: still {v} after {timeout:?}; page errors: {:?}",
                self.errors.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A PNG of the page as shown, written to `path`.
    pub async fn screenshot(&self, path: &Path) {
        let r = self
            .call("Page.captureScreenshot", json!({ "format": "png" }))
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
    }

    pub fn errors(&self) -> Vec<String> {
        self.errors.lock().unwrap().clone()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The whole process group: chromium's renderer and GPU helpers too.
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The error an event reports, if it is one.
fn page_error(v: &Value) -> Option<String> {
    let p = &v["params"];
    match v["method"].as_str()? {
        "Runtime.exceptionThrown" => Some(format!(
            "exception: {}",
            p["exceptionDetails"]["exception"]["description"]
                .as_str()
                .or(p["exceptionDetails"]["text"].as_str())
                .unwrap_or_default()
        )),
        "Runtime.consoleAPICalled" if p["type"] == "error" => {
            Some(format!("console.error: {}", p["args"]))
        }
        "Log.entryAdded" if p["entry"]["level"] == "error" => Some(format!(
            "{}: {} ({})",
            p["entry"]["source"].as_str().unwrap_or_default(),
            p["entry"]["text"].as_str().unwrap_or_default(),
            p["entry"]["url"].as_str().unwrap_or_default()
        )),
        _ => None,
    }
}
