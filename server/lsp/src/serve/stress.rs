//! `laya stress`: the language service under fuzzing, load and bad input — the same service as
//! `laya serve`, over JSON-RPC through OS pipes to a service in this process, driven by the
//! test suite's client (laya-harness) — with a summary of what held.
//!
//! - sync: seeded random edits (multi-byte text, surrogate pairs, CRLF, out-of-range and
//!   reversed ranges, stale versions, huge insertions, deletes of everything) in each position
//!   encoding, the server's text compared with laya-harness's reference model of LSP's rules;
//! - bad input: malformed JSON-RPC, unknown methods, wrong parameter types, a lone surrogate,
//!   binary text, a 20 MB document, a line of a million characters, deeply nested Markdown and
//!   a 100 MB message, each followed by a request that must still be answered quickly;
//! - load: many documents typed into at once at a fast typist's rate and at ten times it, with
//!   ghost-text and completion requests in flight; latencies, stale work dropped, memory, and
//!   every cache freed once its document closes.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use laya_harness::{frame, stats, Client, Encoding, LspText, Rng};

use super::client::{self, ask};

/// How long a run is.
#[derive(Debug, Clone)]
pub struct Stress {
    /// Random edits per position encoding (at most), and for how long at most.
    pub fuzz_edits: usize,
    pub fuzz_seconds: f64,
    pub docs: usize,
    /// Seconds of typing at each rate.
    pub load_seconds: f64,
    pub seed: u64,
}

impl Stress {
    pub fn quick() -> Self {
        Stress { fuzz_edits: 1_500, fuzz_seconds: f64::INFINITY, docs: 200, load_seconds: 3.0, seed: 7 }
    }

    pub fn long(minutes: f64) -> Self {
        // Half the time fuzzing (3 encodings), half under load (2 rates).
        Stress { fuzz_edits: usize::MAX, fuzz_seconds: minutes * 60.0 / 6.0, docs: 200, load_seconds: minutes * 60.0 / 4.0, seed: 7 }
    }
}

/// A fast typist: 8 characters a second (about 95 words a minute).
const TYPIST_CHARS_PER_S: f64 = 8.0;

const PIECES: &[&str] = &["a", "word ", "é", "ß", "漢字", "😀", "👩‍👩‍👧", "\n", "\r\n", "\r", "\t", " ", "naïve café ", "e\u{301}", "🇫🇷", "𝕏"];

fn random_text(rng: &mut Rng, max_pieces: usize) -> String {
    (0..rng.below(max_pieces + 1)).map(|_| PIECES[rng.below(PIECES.len())]).collect()
}

/// The sync fuzz in one encoding: returns (edits, comparisons, mismatches).
fn fuzz_sync(enc_name: &'static str, edits: usize, seconds: f64, seed: u64) -> anyhow::Result<(usize, usize, Vec<String>)> {
    let began = Instant::now();
    let enc = Encoding::from_lsp(enc_name).context("an LSP position encoding")?;
    let (mut c, service) = client::start(&[enc_name])?;
    let mut rng = Rng::new(seed);
    let docs = 4;
    let mut models: Vec<LspText> = (0..docs).map(|_| LspText::new("")).collect();
    let mut versions = vec![1i64; docs];
    for d in 0..docs {
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": format!("file:///fuzz/{enc_name}/{d}.md"), "languageId": "markdown", "version": 1, "text": ""}}),
        );
    }
    let (mut compared, mut mismatches, mut done) = (0, vec![], 0);
    for n in 0..edits {
        if n % 10 == 0 && began.elapsed().as_secs_f64() > seconds {
            break;
        }
        done = n + 1;
        let d = rng.below(docs);
        let m = &mut models[d];
        let len = m.chars.len();
        let (a, b) = (rng.below(len + 1), rng.below(len + 1));
        let (mut pa, mut pb) = (m.position_of(a, enc), m.position_of(b, enc));
        let mut text = random_text(&mut rng, 6);
        let roll = rng.below(100);
        let whole = roll < 2; // a whole-document replacement (no range)
        if roll < 4 && !whole {
            (pa, pb) = ((0, 0), (usize::MAX >> 40, 0)); // delete everything through an out-of-range end
            text.clear();
        } else if roll < 10 {
            pb.1 += 1 + rng.below(5); // past the line's end
        } else if roll < 14 {
            pb.0 += 1 + rng.below(3); // past the last line
        } else if roll < 15 {
            text = "prose that goes on ".repeat(5_000 + rng.below(5_000)); // a huge insertion
        }
        // Reversed ranges are sent as they come (a > b half the time).
        m.apply(if whole { None } else { Some((pa, pb)) }, &text, enc);
        // Stale versions now and then: the server applies them anyway, in order.
        versions[d] += if rng.chance(3) { -1 } else { 1 };
        let range = json!({"start": {"line": pa.0, "character": pa.1}, "end": {"line": pb.0, "character": pb.1}});
        let change = if whole { json!({"text": text}) } else { json!({"range": range, "text": text}) };
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": format!("file:///fuzz/{enc_name}/{d}.md"), "version": versions[d]}, "contentChanges": [change]}),
        );
        if n % 10 == 9 || n + 1 == edits {
            let uri = format!("file:///fuzz/{enc_name}/{d}.md");
            let got = c.text_of(&uri).map(|(_, t)| t);
            compared += 1;
            let want = models[d].text();
            if got.as_deref() != Some(want.as_str()) {
                mismatches.push(format!(
                    "{enc_name} edit {n} in doc {d}: server {} chars, expected {}",
                    got.as_ref().map_or(0, |g| g.chars().count()),
                    want.chars().count()
                ));
                models[d] = LspText::new(&got.unwrap_or_default()); // go on from the server's text
            }
        }
    }
    // Invalid requests answer with an error, not a hang.
    let r = ask(
        &mut c,
        "textDocument/inlineCompletion",
        json!({"textDocument": {"uri": "file:///fuzz/none.md"}, "position": {"line": 0, "character": 0}, "context": {"triggerKind": 1}}),
    )?;
    if r.get("error").is_none() {
        mismatches.push(format!("inline completion for a document that is not open answered {r}"));
    }
    service.stop(c)?;
    Ok((done, compared, mismatches))
}

// ---------------------------------------------------------------------------------------

/// One bad-input probe: what was sent, how long until the next request was answered, what came back.
fn probe(c: &mut Client, name: &str, rows: &mut Vec<Value>, send: impl FnOnce(&mut Client)) -> anyhow::Result<()> {
    let t = Instant::now();
    send(c);
    let r = ask(c, "laya/stats", Value::Null).with_context(|| format!("after {name}"))?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let ok = r.get("result").is_some();
    rows.push(json!({"probe": name, "then_answered_ms": ms, "ok": ok}));
    Ok(())
}

fn bad_input(c: &mut Client) -> anyhow::Result<Vec<Value>> {
    let mut rows = vec![];
    let open = |c: &mut Client, uri: &str, text: &str| {
        c.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}));
    };
    probe(c, "malformed JSON", &mut rows, |c| c.raw(b"Content-Length: 30\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 1, \"m"))?;
    probe(c, "a body that is not JSON-RPC", &mut rows, |c| c.raw(&frame(&json!([1, 2, 3]))))?;
    let r = ask(c, "laya/noSuchMethod", json!({}))?;
    rows.push(json!({"probe": "unknown method", "error": r["error"]["code"], "ok": r["error"]["code"] == -32601}));
    let r = ask(c, "textDocument/inlineCompletion", json!({"textDocument": 5, "position": "here"}))?;
    rows.push(json!({"probe": "wrong parameter types", "error": r["error"]["code"], "ok": r["error"]["code"] == -32602}));
    let r = ask(c, "textDocument/completion", json!({"textDocument": {"uri": "file:///x.md"}, "position": {"line": -1, "character": 0}}))?;
    rows.push(json!({"probe": "a negative position", "error": r["error"]["code"], "ok": r.get("error").is_some()}));
    probe(c, "an unknown notification", &mut rows, |c| c.notify("laya/whatever", json!({"a": 1})))?;
    probe(c, "a lone surrogate in the text", &mut rows, |c| {
        // Serialized by hand: serde_json cannot hold half a surrogate pair, and some clients send one.
        let body = r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///bad/surrogate.md","languageId":"markdown","version":1,"text":"a\ud800b"}}}"#;
        c.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
    })?;
    let binary: String = (0..100_000u32).map(|i| char::from_u32(i % 0x250).unwrap_or('\u{fffd}')).collect();
    probe(c, "binary content (control characters, 100k)", &mut rows, |c| open(c, "file:///bad/binary.md", &binary))?;
    let line = "word ".repeat(200_000);
    probe(c, "a line of a million characters", &mut rows, |c| open(c, "file:///bad/line.md", &line))?;
    let nested = format!("{}deep\n{}", "> ".repeat(50_000), "- ".repeat(50_000)) + &"[".repeat(50_000) + &"`".repeat(10_000);
    probe(c, "deeply nested Markdown", &mut rows, |c| open(c, "file:///bad/nested.md", &nested))?;
    let big = "Some prose for a long document. ".repeat(20 * 1024 * 1024 / 32);
    probe(c, "a 20 MB document", &mut rows, |c| open(c, "file:///bad/20mb.md", &big))?;
    // Typing at the end of the 20 MB document and of the long line: answered like any other.
    for (uri, text) in [("file:///bad/20mb.md", &big), ("file:///bad/line.md", &line)] {
        let lines = text.matches('\n').count();
        let t = Instant::now();
        for k in 0..20 {
            let col = if lines == 0 { text.len() + k } else { k };
            let at = json!({"line": lines, "character": col});
            c.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": 2 + k}, "contentChanges": [{"range": {"start": at, "end": at}, "text": "a"}]}),
            );
            let col = col + 1;
            let r = ask(
                c,
                "textDocument/inlineCompletion",
                json!({"textDocument": {"uri": uri}, "position": {"line": lines, "character": col}, "context": {"triggerKind": 2}}),
            )?;
            if r.get("error").is_some() {
                bail!("inline completion in {uri} failed: {r}");
            }
        }
        let name = if uri.contains("20mb") {
            "typing 20 keys at the end of the 20 MB document"
        } else {
            "typing 20 keys at the end of the million-character line"
        };
        rows.push(json!({"probe": name, "per_key_ms": t.elapsed().as_secs_f64() * 1e3 / 20.0, "ok": true}));
    }
    let huge = "x".repeat(100 * 1024 * 1024);
    probe(c, "a 100 MB message", &mut rows, |c| open(c, "file:///bad/100mb.md", &huge))?;
    drop(huge);
    for u in ["surrogate", "binary", "line", "nested", "20mb", "100mb"] {
        c.notify("textDocument/didClose", json!({"textDocument": {"uri": format!("file:///bad/{u}.md")}}));
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------

/// `docs` documents typed into at `rate` characters a second each for `seconds`, with a ghost
/// request after each document's keystrokes of a tick and a completion request now and then.
fn load(c: &mut Client, prose: &[char], docs: usize, rate: f64, seconds: f64, seed: u64) -> anyhow::Result<Value> {
    c.latencies.clear();
    let before = ask(c, "laya/stats", Value::Null).context("stats before the load")?;
    let rss_before = crate::cli::rss_bytes();
    let mut rng = Rng::new(seed);
    let uris: Vec<String> = (0..docs).map(|d| format!("file:///load/{rate}/{d}.md")).collect();
    let mut pos: Vec<(usize, usize, i64)> = vec![(0, 0, 1); docs]; // line, column, version
    let mut src: Vec<usize> = (0..docs).map(|_| rng.below(prose.len())).collect();
    for u in &uris {
        c.notify("textDocument/didOpen", json!({"textDocument": {"uri": u, "languageId": "markdown", "version": 1, "text": ""}}));
    }
    let tick = Duration::from_millis(50);
    let per_tick = rate * tick.as_secs_f64();
    let mut owed = vec![0.0f64; docs];
    let (start, mut keys) = (Instant::now(), 0usize);
    let mut next = Instant::now();
    while start.elapsed().as_secs_f64() < seconds {
        for d in 0..docs {
            owed[d] += per_tick * (0.5 + rng.below(100) as f64 / 100.0);
            let n = owed[d] as usize;
            owed[d] -= n as f64;
            if n == 0 {
                continue;
            }
            let typed: String = (0..n).map(|k| prose[(src[d] + k) % prose.len()]).collect();
            src[d] += n;
            let (line, col, version) = &mut pos[d];
            let at = json!({"line": *line, "character": *col});
            *version += 1;
            c.notify("textDocument/didChange", json!({"textDocument": {"uri": uris[d], "version": *version}, "contentChanges": [{"range": {"start": at, "end": at}, "text": typed}]}));
            for ch in typed.chars() {
                if ch == '\n' {
                    *line += 1;
                    *col = 0;
                } else {
                    *col += ch.len_utf16();
                }
            }
            keys += n;
            let here = json!({"textDocument": {"uri": uris[d]}, "position": {"line": *line, "character": *col}});
            if rng.chance(10) {
                c.fire("completion", "textDocument/completion", here);
            } else {
                let mut p = here;
                p["context"] = json!({"triggerKind": 2});
                c.fire("ghost", "textDocument/inlineCompletion", p);
            }
        }
        next += tick;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let typing_s = start.elapsed().as_secs_f64();
    let unanswered = c.drain(Duration::from_secs(30));
    let open = ask(c, "laya/stats", Value::Null).context("stats under load")?;
    let rss_under_load = crate::cli::rss_bytes();
    // What is live rather than kept by the allocator: main.rs keeps up to 512 MiB of freed heap
    // for speed (M_TRIM_THRESHOLD); hand it back and look again.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    let rss_live = crate::cli::rss_bytes();
    for u in &uris {
        c.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
    }
    let closed = ask(c, "laya/stats", Value::Null).context("stats after closing every document")?;
    let pct = |k: &str| stats::latency(c.latencies.get(k).cloned().unwrap_or_default());
    let e = |s: &Value, k: &str| s["result"]["engine"][k].as_u64().unwrap_or(0);
    Ok(json!({
        "documents": docs,
        "chars_per_s_per_document": rate,
        "typing_s": typing_s,
        "keystrokes": keys,
        "ghost": pct("ghost"),
        "completion": pct("completion"),
        "unanswered_after_30_s": unanswered,
        "stale_dropped": e(&open, "stale_dropped") - e(&before, "stale_dropped"),
        "jobs": e(&open, "jobs") - e(&before, "jobs"),
        "cache_bytes_open": e(&open, "cache_bytes"),
        "rss_bytes_before_load": rss_before,
        "rss_bytes_under_load": rss_under_load,
        "rss_bytes_under_load_trimmed": rss_live,
        "documents_cached_open": e(&open, "documents_cached"),
        "budget_bytes": e(&open, "budget_bytes"),
        "cache_bytes_after_close": e(&closed, "cache_bytes"),
        "documents_cached_after_close": e(&closed, "documents_cached"),
        "documents_open_after_close": closed["result"]["documents_open"],
    }))
}

/// Runs every phase and returns the report.
pub fn run(s: Stress, prose: String) -> anyhow::Result<Value> {
    let mut report = json!({"seed": s.seed});
    let mut sync = vec![];
    for (i, enc) in ["utf-16", "utf-8", "utf-32"].into_iter().enumerate() {
        let t = Instant::now();
        let (edits, compared, mismatches) = fuzz_sync(enc, s.fuzz_edits, s.fuzz_seconds, s.seed + i as u64)?;
        sync.push(json!({"encoding": enc, "edits": edits, "comparisons": compared, "mismatches": mismatches, "seconds": t.elapsed().as_secs_f64()}));
    }
    report["sync"] = json!(sync);

    let (mut c, service) = client::start(&["utf-16"])?;
    let t = Instant::now();
    client::wait_for_model(&mut c)?;
    report["model_load_ms"] = json!(t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    report["bad_input"] = json!(bad_input(&mut c)?);
    report["bad_input_seconds"] = json!(t.elapsed().as_secs_f64());

    let prose: Vec<char> = prose.chars().collect();
    if prose.is_empty() {
        bail!("the prose to type is empty");
    }
    let mut loads = vec![];
    for (i, rate) in [TYPIST_CHARS_PER_S, 10.0 * TYPIST_CHARS_PER_S].into_iter().enumerate() {
        loads.push(load(&mut c, &prose, s.docs, rate, s.load_seconds, s.seed + 10 + i as u64)?);
    }
    report["load"] = json!(loads);
    report["errors_by_code"] = json!(c.errors);
    report["messages"] = json!(c.messages);
    report["diagnostics_published"] = json!(c.diagnostics_published);
    service.stop(c)?;
    report["peak_rss_bytes"] = json!(crate::cli::peak_rss_bytes());
    report["load_average"] = json!(crate::cli::load_average());
    Ok(report)
}
