//! The suite's LSP client (laya-harness's, shared with `laya stress` and the replay) started on
//! the real `laya serve` binary over stdio, as an editor drives it, and the helpers the LSP tests
//! share (positions, typing, the model's readiness, real editors).
//! Each test file that drives the server includes it as `mod common;`.
#![allow(dead_code)] // each test file uses part of it

use std::process::{Command, Stdio};

use serde_json::{json, Value};

pub use laya_harness::Client;

/// How the suite starts `laya serve` (as an editor would) and reads a document back.
pub trait Suite: Sized {
    /// The real binary with this suite's settings, initialized with `init_options`.
    fn start(init_options: Value) -> Self;
    /// Starts `cmd` (laya serve, perhaps under strace; stderr as the caller set it) and initializes it.
    fn start_cmd(cmd: Command, init_options: Value) -> Self;
    /// The server's copy of a document: (version, text).
    fn text(&mut self, uri: &str) -> (i64, String);
    /// Applies a code action's text edit (`{range, newText}`) as an editor does: as a change that
    /// makes the document `version`.
    fn apply_edit(&mut self, uri: &str, version: i64, edit: &Value);
}

impl Suite for Client {
    fn start(init_options: Value) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_laya"));
        // The default user dictionary lives in the user's config folder: not this suite's.
        cmd.arg("serve").env("XDG_CONFIG_HOME", "/nonexistent/laya-test-config").stderr(Stdio::inherit());
        Client::start_cmd(cmd, init_options)
    }

    fn start_cmd(cmd: Command, init_options: Value) -> Client {
        let mut c = Client::spawn(cmd).expect("laya serve starts");
        let caps = json!({"window": {"workDoneProgress": true}, "general": {"positionEncodings": ["utf-16"]}});
        let r = c.initialize(caps, init_options);
        assert_eq!(r["result"]["capabilities"]["positionEncoding"], "utf-16", "{r}");
        assert!(r["result"]["capabilities"]["inlineCompletionProvider"].as_bool().unwrap_or(false), "{r}");
        c
    }

    fn text(&mut self, uri: &str) -> (i64, String) {
        self.text_of(uri).unwrap_or_else(|| panic!("{uri} is not open"))
    }

    fn apply_edit(&mut self, uri: &str, version: i64, edit: &Value) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": edit["range"], "text": edit["newText"]}]}),
        );
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
    c.wait_for_model(std::time::Duration::from_secs(60)).unwrap();
}
