//! `laya bench --replay`: prose typed character by character, at a set pace, into a document of
//! the real language service — the same backend, jobs, caches, windows and decisions as
//! `laya serve`, and the same JSON-RPC transport, over an in-process pipe instead of stdio. It
//! reports what a writer feels: per-keystroke ghost-text latency, typo re-check time, how often
//! the context had to be prefilled again, and the caches' memory.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

pub struct Replay {
    pub text: String,
    pub pace_ms: u64,
    pub limit: usize,
}

fn frame(v: &Value) -> Vec<u8> {
    let b = v.to_string();
    format!("Content-Length: {}\r\n\r\n{b}", b.len()).into_bytes()
}

/// Runs the replay and returns its report.
pub fn run(r: Replay) -> anyhow::Result<Value> {
    if r.text.trim().is_empty() {
        bail!("the replay text is empty");
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(replay(r))
}

async fn replay(r: Replay) -> anyhow::Result<Value> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    let (service, socket, engine) = super::service();
    tokio::spawn(super::serve_on(server_read, server_write, service, socket));
    let (client_read, mut client_write) = tokio::io::split(client_io);

    // Reader: responses by id go to `resp`; server requests are answered; the rest is dropped.
    let (resp_tx, mut resp_rx) = mpsc::unbounded_channel::<Value>();
    let (req_tx, mut req_rx) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let mut rd = BufReader::new(client_read);
        while let Some((_, buf)) = super::guard::read_frame(&mut rd).await {
            let Ok(m) = serde_json::from_slice::<Value>(&buf) else { continue };
            if m.get("method").is_some() && m.get("id").is_some() {
                let _ = req_tx.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
            } else if m.get("method").is_none() {
                let _ = resp_tx.send(m);
            }
        }
    });

    let mut next_id = 0i64;
    macro_rules! send {
        ($v:expr) => {{
            while let Ok(a) = req_rx.try_recv() {
                client_write.write_all(&frame(&a)).await?;
            }
            client_write.write_all(&frame(&$v)).await?;
            client_write.flush().await?;
        }};
    }
    macro_rules! request {
        ($method:expr, $params:expr) => {{
            next_id += 1;
            let id = next_id;
            send!(json!({"jsonrpc": "2.0", "id": id, "method": $method, "params": $params}));
            loop {
                let m = tokio::time::timeout(Duration::from_secs(120), resp_rx.recv())
                    .await
                    .context("no answer from the server in 120 s")?
                    .context("the server stopped")?;
                if m["id"] == id {
                    break m;
                }
            }
        }};
    }

    let init = request!("initialize", json!({"processId": null, "capabilities": {}, "initializationOptions": {}}));
    if init.get("error").is_some() {
        bail!("initialize failed: {init}");
    }
    send!(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    // Wait for the model.
    let start = Instant::now();
    loop {
        let s = request!("laya/stats", Value::Null);
        let state = s["result"]["model_state"].as_str().unwrap_or("").to_string();
        if state == "ready" {
            break;
        }
        if state.starts_with("failed") {
            bail!("the model did not load: {state}");
        }
        if start.elapsed() > Duration::from_secs(120) {
            bail!("the model took over 120 s to load");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let load_ms = start.elapsed().as_secs_f64() * 1e3;

    let uri = "file:///replay/essay.md";
    send!(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                 "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": ""}}}));
    let (mut line, mut col, mut version) = (0u32, 0u32, 1i64);
    let mut ghost_ms = vec![];
    let (mut shown, mut typed) = (0usize, 0usize);
    let t0 = Instant::now();
    for ch in r.text.chars().take(r.limit) {
        let key_start = Instant::now();
        version += 1;
        let p = json!({"line": line, "character": col});
        send!(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
                     "params": {"textDocument": {"uri": uri, "version": version},
                                "contentChanges": [{"range": {"start": p, "end": p}, "text": ch.to_string()}]}}));
        if ch == '\n' {
            line += 1;
            col = 0;
        } else {
            col += ch.len_utf16() as u32;
        }
        typed += 1;
        if ch != '\n' {
            let t = Instant::now();
            let resp = request!("textDocument/inlineCompletion",
                json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": col}, "context": {"triggerKind": 2}}));
            ghost_ms.push(t.elapsed().as_secs_f64() * 1e3);
            if resp["result"]["items"].as_array().is_some_and(|a| !a.is_empty()) {
                shown += 1;
            }
        }
        // A writer pauses at the end of a sentence or paragraph: long enough for the spelling
        // check of the edited paragraph to run (its debounce is 250 ms).
        let pace = if matches!(ch, '.' | '!' | '?' | '\n') { r.pace_ms.max(500) } else { r.pace_ms };
        let spent = key_start.elapsed();
        if spent < Duration::from_millis(pace) {
            tokio::time::sleep(Duration::from_millis(pace) - spent).await;
        }
    }
    // Let the last spelling check finish.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let stats = request!("laya/stats", Value::Null);
    let _ = request!("shutdown", Value::Null);
    send!(json!({"jsonrpc": "2.0", "method": "exit"}));
    engine.stop();
    let e = &stats["result"]["engine"];
    let nums = |k: &str| e[k].as_array().into_iter().flatten().filter_map(Value::as_f64).collect::<Vec<f64>>();
    let ghost_jobs = nums("ghost_ms").len();
    Ok(json!({
        "transport": "JSON-RPC over an in-process pipe (the same service as laya serve)",
        "characters": typed,
        "pace_ms": r.pace_ms,
        "wall_s": t0.elapsed().as_secs_f64(),
        "model_load_ms": load_ms,
        "ghost_text": crate::cli::percentiles(ghost_ms),
        "ghost_engine": crate::cli::percentiles(nums("ghost_ms")),
        "typo_recheck_engine": crate::cli::percentiles(nums("check_ms")),
        "suggestions_shown": shown,
        "answered_without_the_model": typed.saturating_sub(ghost_jobs),
        "reused_suggestions": e["reused_suggestions"],
        "reprefill_share": (e["cache_misses"].as_f64().unwrap_or(0.0) + stats["result"]["reanchors"].as_f64().unwrap_or(0.0)) / typed.max(1) as f64,
        "stale_dropped": e["stale_dropped"],
        "cache_bytes": e["cache_bytes"],
        "budget_bytes": e["budget_bytes"],
        "peak_rss_bytes": crate::cli::peak_rss_bytes(),
        "load_average": std::fs::read_to_string("/proc/loadavg").ok().map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")),
    }))
}
