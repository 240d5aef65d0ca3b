//! The suite's LSP client: the real `laya serve` binary over stdio, as an editor drives it, and
//! the helpers the LSP tests share (positions, typing, the model's readiness, real editors).
//! Each test file that drives the server includes it as `mod common;`.
#![allow(dead_code)] // each test file uses part of it

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub struct Client {
    pub child: Child,
    pub stdin: ChildStdin,
    pub rx: Receiver<Value>,
    pub next_id: i64,
    /// Notifications received while waiting for something else.
    pub notes: Vec<Value>,
}

impl Client {
    pub fn start(init_options: Value) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_laya"));
        // The default user dictionary lives in the user's config folder: not this suite's.
        cmd.arg("serve").env("XDG_CONFIG_HOME", "/nonexistent/laya-test-config").stderr(Stdio::inherit());
        Client::start_cmd(cmd, init_options)
    }

    /// Starts `cmd` (laya serve, perhaps under strace; stderr as the caller set it) and initializes it.
    pub fn start_cmd(mut cmd: Command, init_options: Value) -> Client {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("laya serve starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse().unwrap();
                    }
                }
                let mut buf = vec![0; len];
                r.read_exact(&mut buf).unwrap();
                if tx.send(serde_json::from_slice(&buf).expect("the server sends JSON")).is_err() {
                    return;
                }
            }
        });
        let mut c = Client { child, stdin, rx, next_id: 0, notes: vec![] };
        let caps = json!({"window": {"workDoneProgress": true}, "general": {"positionEncodings": ["utf-16"]}});
        let r = c.request("initialize", json!({"processId": null, "rootUri": null, "capabilities": caps, "initializationOptions": init_options}));
        assert_eq!(r["result"]["capabilities"]["positionEncoding"], "utf-16", "{r}");
        assert!(r["result"]["capabilities"]["inlineCompletionProvider"].as_bool().unwrap_or(false), "{r}");
        c.notify("initialized", json!({}));
        c
    }

    pub fn send(&mut self, v: &Value) {
        let b = serde_json::to_vec(v).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", b.len()).unwrap();
        self.stdin.write_all(&b).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Handles one message from the server: answers its requests, keeps its notifications.
    pub fn take(&mut self, m: Value) -> Option<Value> {
        if m.get("method").is_some() && m.get("id").is_some() {
            self.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
            None
        } else if m.get("method").is_some() {
            self.notes.push(m);
            None
        } else {
            Some(m)
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let m = self.rx.recv_timeout(deadline - Instant::now()).unwrap_or_else(|_| panic!("no answer to {method}"));
            if let Some(r) = self.take(m) {
                if r["id"] == id {
                    return r;
                }
            }
        }
    }

    /// Waits for a notification that `pred` accepts (also among those already received).
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.notes.iter().rposition(&pred) {
            return self.notes.remove(i);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(m) => {
                    if m.get("method").is_some() && m.get("id").is_none() && pred(&m) {
                        return m;
                    }
                    self.take(m);
                }
                Err(RecvTimeoutError::Timeout) => panic!("timed out waiting for {what}; got {:?}", self.notes),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output waiting for {what}"),
            }
        }
    }

    pub fn open(&mut self, uri: &str, lang: &str, text: &str) {
        self.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": lang, "version": 1, "text": text}}));
    }

    pub fn text(&mut self, uri: &str) -> (i64, String) {
        let r = self.request("laya/documentText", json!({"uri": uri}));
        (r["result"]["version"].as_i64().unwrap(), r["result"]["text"].as_str().unwrap().to_string())
    }

    pub fn shutdown(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "laya serve exited with {status}");
                return;
            }
            assert!(Instant::now() < deadline, "laya serve did not exit after `exit`");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub fn pos(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

/// Types `s` at the end of line 0 (starting at `col`), one character per didChange.
pub fn type_chars(c: &mut Client, uri: &str, col: &mut u32, version: &mut i64, s: &str) {
    for ch in s.chars() {
        *version += 1;
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": *version},
                   "contentChanges": [{"range": {"start": pos(0, *col), "end": pos(0, *col)}, "text": ch.to_string()}]}),
        );
        *col += ch.len_utf16() as u32;
    }
}

/// Runs a real editor (`program`, overridable by the env var `var`) on a file holding a
/// misspelling and a half-typed "Paris"; the editor's script writes what it saw as JSON to
/// $LAYA_EDITOR_OUT, which is returned.
pub fn run_editor(program: &str, var: &str, file_name: &str, args: &[String]) -> Value {
    let exe = which(program, var);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(file_name);
    std::fs::write(&file, "I will recieve the letter.\n\nThe capital of France is Pa\n").unwrap();
    let out = dir.path().join("editor.json");
    let status = Command::new(&exe)
        .args(args)
        .env("LAYA_BIN", env!("CARGO_BIN_EXE_laya"))
        .env("LAYA_EDITOR_FILE", &file)
        .env("LAYA_EDITOR_OUT", &out)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{program} exited with {status}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("the editor wrote its result")).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    v
}

pub fn editor_script(name: &str) -> String {
    format!("{}/../../tests/editors/{name}", env!("CARGO_MANIFEST_DIR"))
}

pub fn default_model() -> std::path::PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_laya")).args(["doctor", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["model"].as_str().unwrap().into()
}

/// The program to run: $var if set, else `program` from PATH (a clear failure when missing).
pub fn which(program: &str, var: &str) -> String {
    if let Ok(p) = std::env::var(var) {
        return p;
    }
    let found = Command::new("sh").args(["-c", &format!("command -v {program}")]).output().unwrap();
    let p = String::from_utf8_lossy(&found.stdout).trim().to_string();
    assert!(!p.is_empty(), "{program} is not installed: `make test` installs it (scripts/test-deps.sh), or set {var}");
    p
}

pub fn wait_for_model(c: &mut Client) {
    let start = Instant::now();
    while c.request("laya/stats", Value::Null)["result"]["model_state"] != "ready" {
        assert!(start.elapsed() < Duration::from_secs(60), "the model did not load");
        std::thread::sleep(Duration::from_millis(50));
    }
}
