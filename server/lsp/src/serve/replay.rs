//! `laya bench --replay`: prose typed character by character, at a set pace, into a document of
//! the real language service — the same backend, jobs, caches, windows and decisions as
//! `laya serve`, and the same JSON-RPC transport, over an in-process pipe instead of stdio. It
//! reports what a writer feels: per-keystroke ghost-text latency, typo re-check time, how often
//! the context had to be prefilled again, and the caches' memory.

use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::{json, Value};

use laya_harness::stats;

use super::client::{self, ask};

pub struct Replay {
    pub text: String,
    pub pace_ms: u64,
    pub limit: usize,
}

/// Runs the replay and returns its report.
pub fn run(r: Replay) -> anyhow::Result<Value> {
    if r.text.trim().is_empty() {
        bail!("the replay text is empty");
    }
    let (mut c, service) = client::start(&["utf-16"])?;
    let start = Instant::now();
    client::wait_for_model(&mut c)?;
    let load_ms = start.elapsed().as_secs_f64() * 1e3;

    let uri = "file:///replay/essay.md";
    c.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": ""}}));
    let (mut line, mut col, mut version) = (0u32, 0u32, 1i64);
    let mut ghost_ms = vec![];
    let (mut shown, mut typed) = (0usize, 0usize);
    // What was shown, as one number: two builds that show the same texts at the same keys agree.
    let mut shown_digest = std::collections::hash_map::DefaultHasher::new();
    let t0 = Instant::now();
    for ch in r.text.chars().take(r.limit) {
        let key_start = Instant::now();
        version += 1;
        let p = json!({"line": line, "character": col});
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": {"start": p, "end": p}, "text": ch.to_string()}]}),
        );
        if ch == '\n' {
            line += 1;
            col = 0;
        } else {
            col += ch.len_utf16() as u32;
        }
        typed += 1;
        if ch != '\n' {
            let t = Instant::now();
            let resp = ask(
                &mut c,
                "textDocument/inlineCompletion",
                json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": col}, "context": {"triggerKind": 2}}),
            )?;
            ghost_ms.push(t.elapsed().as_secs_f64() * 1e3);
            if let Some(items) = resp["result"]["items"].as_array().filter(|a| !a.is_empty()) {
                shown += 1;
                for item in items {
                    item["insertText"].to_string().hash(&mut shown_digest);
                }
            }
        }
        // A writer pauses at the end of a sentence or paragraph: long enough for the spelling
        // check of the edited paragraph to run (its debounce is 250 ms).
        let pace = if matches!(ch, '.' | '!' | '?' | '\n') { r.pace_ms.max(500) } else { r.pace_ms };
        let spent = key_start.elapsed();
        if spent < Duration::from_millis(pace) {
            std::thread::sleep(Duration::from_millis(pace) - spent);
        }
    }
    // Let the last spelling check finish.
    std::thread::sleep(Duration::from_millis(600));
    let server = ask(&mut c, "laya/stats", Value::Null)?;
    service.stop(c)?;
    let e = &server["result"]["engine"];
    let nums = |k: &str| e[k].as_array().into_iter().flatten().filter_map(Value::as_f64).collect::<Vec<f64>>();
    let ghost_jobs = nums("ghost_ms").len();
    Ok(json!({
        "transport": "JSON-RPC over OS pipes to the service of laya serve, in process",
        "characters": typed,
        "pace_ms": r.pace_ms,
        "wall_s": t0.elapsed().as_secs_f64(),
        "model_load_ms": load_ms,
        "ghost_text": stats::latency(ghost_ms),
        "ghost_engine": stats::latency(nums("ghost_ms")),
        "typo_recheck_engine": stats::latency(nums("check_ms")),
        "typo_rechecks_interrupted": e["checks_interrupted"],
        // Where a ghost-text job's time goes: forward passes (each a full trip through the model)
        // and the token positions they computed.
        "forwards_per_ghost_job": stats::counts(nums("ghost_forwards")),
        "token_positions_per_ghost_job": stats::counts(nums("ghost_tokens")),
        "forwards_per_recheck": stats::counts(nums("check_forwards")),
        "token_positions_per_recheck": stats::counts(nums("check_tokens")),
        "speculations": e["speculations"],
        "speculative_forwards": e["speculative_forwards"],
        "letter_steps": e["letter_steps"],
        "letter_steps_skipped": e["letter_steps_skipped"],
        "checked_ahead": e["checked_ahead"],
        "check_ahead_forwards": e["check_ahead_forwards"],
        "suggestions_shown": shown,
        "suggestions_digest": format!("{:016x}", shown_digest.finish()),
        "answered_without_the_model": typed.saturating_sub(ghost_jobs),
        "reused_suggestions": e["reused_suggestions"],
        "reprefill_share": (e["cache_misses"].as_f64().unwrap_or(0.0) + server["result"]["reanchors"].as_f64().unwrap_or(0.0)) / typed.max(1) as f64,
        "stale_dropped": e["stale_dropped"],
        "cache_bytes": e["cache_bytes"],
        "budget_bytes": e["budget_bytes"],
        "peak_rss_bytes": crate::cli::peak_rss_bytes(),
        "load_average": crate::cli::load_average(),
        "cpu": crate::cli::cpu_report(),
    }))
}
