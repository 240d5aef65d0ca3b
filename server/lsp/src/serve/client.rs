//! An LSP client of the in-process service, for `laya stress` and `laya bench --replay`: it
//! starts the same service as `laya serve` (frame guard included) on an in-process pipe,
//! answers the server's own requests, and sends requests awaited or fired and timed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// `v` as one LSP frame.
pub fn frame(v: &Value) -> Vec<u8> {
    super::guard::frame(v.to_string().as_bytes())
}

pub type Latencies = Arc<Mutex<HashMap<&'static str, Vec<f64>>>>;

/// An LSP client of an in-process service: requests awaited or fired and timed.
pub struct Client {
    out: mpsc::UnboundedSender<Vec<u8>>,
    next_id: i64,
    waiters: Arc<Mutex<HashMap<i64, oneshot::Sender<Value>>>>,
    fired: Arc<Mutex<HashMap<i64, (Instant, &'static str)>>>,
    pub latencies: Latencies,
    pub errors: Arc<Mutex<HashMap<String, usize>>>,
    pub messages: Arc<Mutex<Vec<String>>>,
    pub diagnostics: Arc<Mutex<usize>>,
    engine: laya_engine::Engine,
}

impl Client {
    pub async fn start(encodings: &[&str]) -> anyhow::Result<Client> {
        let (client_io, server_io) = tokio::io::duplex(1 << 22);
        let (server_read, server_write) = tokio::io::split(server_io);
        let (service, socket, engine) = super::service(None);
        tokio::spawn(super::serve_on(server_read, server_write, service, socket));
        let (client_read, mut client_write) = tokio::io::split(client_io);
        let (out, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(b) = out_rx.recv().await {
                if client_write.write_all(&b).await.is_err() || client_write.flush().await.is_err() {
                    return;
                }
            }
        });
        let c = Client {
            out: out.clone(),
            next_id: 0,
            waiters: Default::default(),
            fired: Default::default(),
            latencies: Default::default(),
            errors: Default::default(),
            messages: Default::default(),
            diagnostics: Default::default(),
            engine,
        };
        let (waiters, fired, latencies, errors, messages, diagnostics) =
            (c.waiters.clone(), c.fired.clone(), c.latencies.clone(), c.errors.clone(), c.messages.clone(), c.diagnostics.clone());
        tokio::spawn(async move {
            let mut rd = BufReader::new(client_read);
            while let Some((_, buf)) = super::guard::read_frame(&mut rd).await {
                let Ok(m) = serde_json::from_slice::<Value>(&buf) else { continue };
                match (m.get("method").and_then(Value::as_str), m.get("id")) {
                    (Some(_), Some(id)) => {
                        let _ = out.send(frame(&json!({"jsonrpc": "2.0", "id": id, "result": null})));
                    }
                    (Some("window/showMessage"), None) => messages.lock().unwrap().push(m["params"]["message"].as_str().unwrap_or("").to_string()),
                    (Some("textDocument/publishDiagnostics"), None) => *diagnostics.lock().unwrap() += 1,
                    (Some(_), None) => {}
                    (None, id) => {
                        let id = id.and_then(Value::as_i64).unwrap_or(-1);
                        if let Some(e) = m.get("error") {
                            *errors.lock().unwrap().entry(e["code"].to_string()).or_default() += 1;
                        }
                        if let Some(w) = waiters.lock().unwrap().remove(&id) {
                            let _ = w.send(m);
                        } else if let Some((t, kind)) = fired.lock().unwrap().remove(&id) {
                            latencies.lock().unwrap().entry(kind).or_default().push(t.elapsed().as_secs_f64() * 1e3);
                        }
                    }
                }
            }
        });
        let mut c = c;
        let caps = json!({"general": {"positionEncodings": encodings}});
        let init = c.request("initialize", json!({"processId": null, "capabilities": caps, "initializationOptions": {}})).await?;
        if init.get("error").is_some() {
            bail!("initialize failed: {init}");
        }
        c.notify("initialized", json!({}));
        Ok(c)
    }

    pub fn notify(&self, method: &str, params: Value) {
        let _ = self.out.send(frame(&json!({"jsonrpc": "2.0", "method": method, "params": params})));
    }

    pub fn raw(&self, bytes: Vec<u8>) {
        let _ = self.out.send(bytes);
    }

    /// Sends a request and waits for its answer (at most 60 s).
    pub async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().unwrap().insert(id, tx);
        let _ = self.out.send(frame(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})));
        tokio::time::timeout(Duration::from_secs(60), rx)
            .await
            .with_context(|| format!("no answer to {method} in 60 s"))?
            .context("the server stopped")
    }

    /// Sends a request without waiting; its latency is recorded under `kind`.
    pub fn fire(&mut self, kind: &'static str, method: &str, params: Value) {
        self.next_id += 1;
        self.fired.lock().unwrap().insert(self.next_id, (Instant::now(), kind));
        let _ = self.out.send(frame(&json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})));
    }

    pub async fn wait_for_model(&mut self) -> anyhow::Result<()> {
        let start = Instant::now();
        loop {
            let s = self.request("laya/stats", Value::Null).await?;
            match s["result"]["model_state"].as_str().unwrap_or("") {
                "ready" => return Ok(()),
                st if st.starts_with("failed") => bail!("the model did not load: {st}"),
                _ if start.elapsed() > Duration::from_secs(120) => bail!("the model took over 120 s to load"),
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    pub async fn text_of(&mut self, uri: &str) -> anyhow::Result<Option<String>> {
        let r = self.request("laya/documentText", json!({"uri": uri})).await?;
        Ok(r["result"]["text"].as_str().map(str::to_string))
    }

    /// Waits until every fired request is answered (at most `limit`); returns how many were not.
    pub async fn drain(&self, limit: Duration) -> usize {
        let start = Instant::now();
        loop {
            let n = self.fired.lock().unwrap().len();
            if n == 0 || start.elapsed() > limit {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn stop(mut self) {
        let _ = self.request("shutdown", Value::Null).await;
        self.notify("exit", Value::Null);
        self.engine.stop();
    }
}
