//! An LSP client, as an editor drives a server: JSON-RPC frames over any byte pipe (a `laya
//! serve` child's stdio, or an in-process server's pipes). A reader thread stamps each message
//! as it arrives and answers the server's own requests (null results); the caller sends
//! notifications, requests it waits for, and requests it fires without waiting (their latencies
//! are kept by kind), and reads notifications as they come.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long a request or a wait may take before the client gives up.
const PATIENCE: Duration = Duration::from_secs(60);

/// `v` as one LSP frame.
pub fn frame(v: &Value) -> Vec<u8> {
    let body = v.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

type Writer = Arc<Mutex<Option<Box<dyn Write + Send>>>>;

pub struct Client {
    writer: Writer,
    /// Messages from the server (answers and notifications) with the moment each arrived.
    rx: Receiver<(Instant, Value)>,
    next_id: i64,
    /// The server process, when the client started one.
    child: Option<Child>,
    /// Notifications received and not yet taken by `wait_for`.
    pub notes: Vec<Value>,
    /// Requests fired without waiting: when each was sent, and its kind.
    fired: HashMap<i64, (Instant, &'static str)>,
    /// Milliseconds from sending to the answer of fired requests, by kind.
    pub latencies: HashMap<&'static str, Vec<f64>>,
    /// Error answers (to any request) by error code.
    pub errors: HashMap<String, usize>,
    /// `window/showMessage` texts and the number of `textDocument/publishDiagnostics` received.
    pub messages: Vec<String>,
    pub diagnostics_published: usize,
}

impl Client {
    /// Starts `cmd` (a language server on stdio; stderr as the caller set it) and connects to it.
    pub fn spawn(mut cmd: Command) -> std::io::Result<Client> {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let stdin: ChildStdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let mut c = Client::connect(stdout, stdin);
        c.child = Some(child);
        Ok(c)
    }

    /// A client of the server at the other end of `from_server` and `to_server`.
    pub fn connect(from_server: impl Read + Send + 'static, to_server: impl Write + Send + 'static) -> Client {
        let writer: Writer = Arc::new(Mutex::new(Some(Box::new(to_server))));
        let (tx, rx) = channel();
        let answer_to = writer.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(from_server);
            while let Some(body) = read_frame(&mut r) {
                let at = Instant::now();
                let Ok(m) = serde_json::from_slice::<Value>(&body) else { continue };
                if m.get("method").is_some() && m.get("id").is_some() {
                    write_to(&answer_to, &frame(&json!({"jsonrpc": "2.0", "id": m["id"], "result": null})));
                } else if tx.send((at, m)).is_err() {
                    return;
                }
            }
        });
        Client {
            writer,
            rx,
            next_id: 0,
            child: None,
            notes: vec![],
            fired: HashMap::new(),
            latencies: HashMap::new(),
            errors: HashMap::new(),
            messages: vec![],
            diagnostics_published: 0,
        }
    }

    /// `initialize` with these capabilities and options, then `initialized`; returns the answer.
    pub fn initialize(&mut self, capabilities: Value, options: Value) -> Value {
        let r =
            self.request("initialize", json!({"processId": null, "rootUri": null, "capabilities": capabilities, "initializationOptions": options}));
        if r.get("result").is_some() {
            self.notify("initialized", json!({}));
        }
        r
    }

    /// The server process's id, when the client started it.
    pub fn server_pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Sends bytes as they are (a frame, or something that is not one).
    pub fn raw(&mut self, bytes: &[u8]) {
        write_to(&self.writer, bytes);
    }

    /// Sends one message.
    pub fn send(&mut self, v: &Value) {
        self.raw(&frame(v));
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// A fresh request id (for requests sent with `send`).
    pub fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a request and waits for its answer (panics after a minute without one).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.try_request(method, params).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Sends a request and waits for its answer, or says why none came.
    pub fn try_request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.fresh_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.next_answer_until(deadline) {
                Ok(r) if r["id"] == id => return Ok(r),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => return Err(format!("no answer to {method} in {PATIENCE:?}")),
                Err(RecvTimeoutError::Disconnected) => return Err(format!("the server stopped before answering {method}")),
            }
        }
    }

    /// Sends a request without waiting; its latency is kept under `kind` when its answer comes.
    pub fn fire(&mut self, kind: &'static str, method: &str, params: Value) {
        let id = self.fresh_id();
        self.fired.insert(id, (Instant::now(), kind));
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// The next answer to a request that was not fired (panics after `limit` without one).
    pub fn next_answer(&mut self, limit: Duration) -> Value {
        self.next_answer_until(Instant::now() + limit).unwrap_or_else(|e| panic!("no answer in {limit:?}: {e:?}"))
    }

    fn next_answer_until(&mut self, deadline: Instant) -> Result<Value, RecvTimeoutError> {
        loop {
            let (at, m) = self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))?;
            if let Some(r) = self.take(at, m) {
                return Ok(r);
            }
        }
    }

    /// Files one message: notifications are kept and counted, answers to fired requests timed;
    /// returns any other answer.
    fn take(&mut self, at: Instant, m: Value) -> Option<Value> {
        if let Some(method) = m.get("method").and_then(Value::as_str) {
            match method {
                "window/showMessage" => self.messages.push(m["params"]["message"].as_str().unwrap_or("").to_string()),
                "textDocument/publishDiagnostics" => self.diagnostics_published += 1,
                _ => {}
            }
            self.notes.push(m);
            return None;
        }
        if let Some(e) = m.get("error") {
            *self.errors.entry(e["code"].to_string()).or_default() += 1;
        }
        if let Some((sent, kind)) = m["id"].as_i64().and_then(|id| self.fired.remove(&id)) {
            self.latencies.entry(kind).or_default().push(at.duration_since(sent).as_secs_f64() * 1e3);
            return None;
        }
        Some(m)
    }

    /// Waits for a notification that `pred` accepts (also among those already received, the
    /// latest first); panics after a minute without one.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.notes.iter().rposition(&pred) {
            return self.notes.remove(i);
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((at, m)) => {
                    if m.get("method").is_some() && pred(&m) {
                        self.take(at, m.clone());
                        self.notes.pop();
                        return m;
                    }
                    self.take(at, m);
                }
                Err(RecvTimeoutError::Timeout) => panic!("timed out waiting for {what}; got {:?}", self.notes),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output waiting for {what}"),
            }
        }
    }

    /// Reads what has arrived until every fired request is answered or `limit` passes; returns
    /// how many are still unanswered.
    pub fn drain(&mut self, limit: Duration) -> usize {
        let deadline = Instant::now() + limit;
        while !self.fired.is_empty() {
            match self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((at, m)) => {
                    self.take(at, m);
                }
                Err(_) => break,
            }
        }
        self.fired.len()
    }

    pub fn open(&mut self, uri: &str, language: &str, text: &str) {
        self.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}));
    }

    /// Laya's copy of a document: (version, text), or None when it is not open.
    pub fn text_of(&mut self, uri: &str) -> Option<(i64, String)> {
        let r = self.request("laya/documentText", json!({"uri": uri}));
        Some((r["result"]["version"].as_i64()?, r["result"]["text"].as_str()?.to_string()))
    }

    /// Waits until Laya says its model is loaded (`laya/stats`), or why it is not.
    pub fn wait_for_model(&mut self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        loop {
            let s = self.try_request("laya/stats", Value::Null)?;
            match s["result"]["model_state"].as_str().unwrap_or("") {
                "ready" => return Ok(()),
                st if st.starts_with("failed") => return Err(format!("the model did not load: {st}")),
                _ if start.elapsed() > limit => return Err(format!("the model took over {limit:?} to load")),
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// `shutdown`, then `exit`; waits up to 20 s for a server process to end and says how it did.
    pub fn shutdown(mut self) -> Result<(), String> {
        let r = self.try_request("shutdown", Value::Null)?;
        if r.get("error").is_some() {
            return Err(format!("shutdown answered {r}"));
        }
        self.notify("exit", Value::Null);
        self.close_input();
        let Some(child) = self.child.take() else { return Ok(()) };
        wait_exit(child, Duration::from_secs(20))
    }

    /// Closes the server's input, as a client that goes away does; returns the server process.
    pub fn vanish(mut self) -> Option<Child> {
        self.close_input();
        self.child.take()
    }

    fn close_input(&mut self) {
        self.writer.lock().unwrap().take();
    }
}

/// Waits up to `limit` for `child` to end, and for a clean exit.
pub fn wait_exit(mut child: Child, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("the server exited with {status}")),
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                return Err(format!("the server did not exit within {limit:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn write_to(w: &Writer, bytes: &[u8]) {
    if let Some(w) = w.lock().unwrap().as_mut() {
        // A server that went away is seen by the reader; the writer just stops.
        let _ = w.write_all(bytes).and_then(|_| w.flush());
    }
}

/// One frame's body, or None at the end of the stream (or a broken frame).
fn read_frame(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse::<usize>().ok();
        }
    }
    let mut buf = vec![0; len?];
    r.read_exact(&mut buf).ok()?;
    Some(buf)
}
