//! End-to-end: how clients really ask. The same sentences typed and asked about at every key,
//! after a burst, when idle, and cancelled and reissued (the client-behaviour matrix); completion
//! with and without a context; Neovim's and Emacs's own clients; cancellation.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// How a client asks for ghost text as the writer types: every client in use does one of these.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Asking {
    /// After every key, waiting for the answer (Neovim's inline completion, the replay).
    EveryKey,
    /// Once at the end of a burst of keys (a client whose debounce is longer than the typist's gap).
    Debounced,
    /// Only when the writer is idle: 300 ms after the last key.
    Idle,
    /// After every key, cancelling the request before (VS Code with a typist faster than it).
    CancelReissue,
}

/// A writer typing `bursts` into a document that holds `text`, with pauses between the bursts,
/// asked about as `how` asks. At the end of every burst each client asks (every client asks
/// when the writer stops): ghost text automatically, ghost text invoked (its first item),
/// completion invoked and completion with no context (their labels). Returns those answers.
fn type_as_client_asks(how: Asking, text: &str, bursts: &[&str]) -> Vec<Value> {
    let mut c = Client::start(json!({"latencyBudgetMs": 60000, "debounceMs": 5000}));
    wait_for_model(&mut c);
    let uri = "file:///tmp/laya-test/matrix.md";
    c.open(uri, "markdown", text);
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    let (mut line, mut col, mut version) = (lines.len() as u32 - 1, lines.last().unwrap().encode_utf16().count() as u32, 1i64);
    let inline = |line: u32, col: u32, kind: u32| json!({"textDocument": {"uri": uri}, "position": pos(line, col), "context": {"triggerKind": kind}});
    let ghost_of = |r: &Value| r["result"]["items"][0]["insertText"].as_str().unwrap_or("").to_string();
    let mut answers = vec![];
    let mut pending: Option<i64> = None;
    for burst in bursts {
        for ch in burst.chars() {
            version += 1;
            let change = match ch {
                '\n' => json!({"range": {"start": pos(line, col), "end": pos(line, col)}, "text": "\n"}),
                '\u{8}' => json!({"range": {"start": pos(line, col - 1), "end": pos(line, col)}, "text": ""}),
                ch => json!({"range": {"start": pos(line, col), "end": pos(line, col)}, "text": ch.to_string()}),
            };
            c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}));
            match ch {
                '\n' => {
                    lines.push(String::new());
                    (line, col) = (line + 1, 0);
                }
                '\u{8}' => {
                    lines[line as usize].pop();
                    col -= 1;
                }
                ch => {
                    lines[line as usize].push(ch);
                    col += ch.len_utf16() as u32;
                }
            }
            match how {
                Asking::EveryKey => {
                    let r = c.request("textDocument/inlineCompletion", inline(line, col, 2));
                    assert!(r.get("error").is_none(), "{r}");
                }
                Asking::CancelReissue => {
                    if let Some(id) = pending.take() {
                        c.notify("$/cancelRequest", json!({"id": id}));
                    }
                    let id = c.fresh_id();
                    c.send(&json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/inlineCompletion", "params": inline(line, col, 2)}));
                    pending = Some(id);
                }
                Asking::Debounced | Asking::Idle => {}
            }
            std::thread::sleep(Duration::from_millis(30)); // a fast typist: 30 ms a key
        }
        if how == Asking::Idle {
            std::thread::sleep(Duration::from_millis(300));
        }
        // The writer stops: the last request is answered (the client shows it), or made now.
        let auto = match pending.take() {
            Some(id) => loop {
                let r = c.next_answer(Duration::from_secs(60));
                if r["id"] == id {
                    break r;
                }
            },
            None => c.request("textDocument/inlineCompletion", inline(line, col, 2)),
        };
        let invoked = c.request("textDocument/inlineCompletion", inline(line, col, 1));
        let labels = |r: &Value| r["result"]["items"].as_array().map_or(vec![], |a| a.iter().map(|i| i["label"].clone()).collect::<Vec<_>>());
        let with_context = c.request("textDocument/completion", inline(line, col, 1));
        let without = c.request("textDocument/completion", json!({"textDocument": {"uri": uri}, "position": pos(line, col)}));
        answers.push(json!({
            "at": format!("{:?}", lines.join("\n")),
            "ghost": ghost_of(&auto),
            "invoked": ghost_of(&invoked),
            "completion": labels(&with_context),
            "completion_without_context": labels(&without),
        }));
        // A pause long enough to read what is shown (and to reject it by typing on).
        std::thread::sleep(Duration::from_millis(700));
    }
    let (_, server_text) = c.text(uri);
    assert_eq!(server_text, lines.join("\n"), "the server's copy of the text");
    c.shutdown().unwrap();
    answers
}

/// The client-behaviour matrix: the same sentences typed at a fast typist's pace and asked
/// about in each way clients ask give the same ghost text and items for the same text and
/// cursor — mid-word, after a space, after a rejection, after Enter.
#[test]
fn ghost_text_and_items_depend_on_the_text_not_on_how_the_client_asks() {
    let scenarios: [(&str, &str, &[&str]); 5] = [
        // Mid-word, the keys sent with no request between them (issue 23's report): the rest of
        // the word shows to its last letter, asked at every key or not.
        ("mid-word", "I received the letter yesterday. I would like to thank you for your ", &["hel", "p me"]),
        // After a space, then typing what was shown.
        ("after a space", "", &["The capital of France is ", "Pa"]),
        // "Paris" shown and read after the space, "L" typed instead, then deleted.
        ("after a rejection", "The capital of France is", &[" ", "L", "\u{8}"]),
        ("after Enter", "We went to the market on Sunday.", &["\nThe capital of France is P", "\n"]),
        // "Paris" typed over as it appeared (a fast typist never read it), then deleted: it shows.
        ("typed over unread", "The capital of France is", &[" L\u{8}"]),
    ];
    let modes = [Asking::EveryKey, Asking::Debounced, Asking::Idle, Asking::CancelReissue];
    let runs: Vec<(Asking, Vec<Vec<Value>>)> = std::thread::scope(|s| {
        let handles: Vec<_> = modes
            .iter()
            .map(|&how| s.spawn(move || (how, scenarios.iter().map(|(_, text, bursts)| type_as_client_asks(how, text, bursts)).collect())))
            .collect();
        handles.into_iter().map(|h| h.join().expect("a client run")).collect()
    });
    let (_, reference) = &runs[0];
    for (how, answers) in &runs[1..] {
        for (k, (name, _, _)) in scenarios.iter().enumerate() {
            assert_eq!(&answers[k], &reference[k], "{name}: {how:?} differs from {:?}", runs[0].0);
        }
    }
    let ghosts: Vec<Vec<&str>> = reference.iter().map(|a| a.iter().map(|x| x["ghost"].as_str().unwrap()).collect()).collect();
    eprintln!("matrix answers: {reference:?}");
    assert_eq!(ghosts[0], ["p", ""], "mid-word");
    for a in reference.iter().flatten() {
        let labels = a["completion"].as_array().unwrap();
        let unique: std::collections::HashSet<_> = labels.iter().collect();
        assert_eq!(unique.len(), labels.len(), "a completion offered twice: {a}");
    }
    assert_eq!(ghosts[1], ["Paris", "ris"], "after a space");
    assert_eq!(ghosts[2][0], "Paris", "the suggestion before the rejection");
    assert_eq!(ghosts[2][2], "", "a suggestion typed past after it was read is not shown there again");
    assert_eq!(ghosts[3][0], "aris", "after Enter");
    assert_eq!(ghosts[4], ["Paris"], "a suggestion typed over before it could be read is no rejection");
    // A request without a context is an explicit one (Neovim's omnifunc): next words after a space.
    assert_eq!(reference[1][0]["completion_without_context"][0], "Paris", "{:?}", reference[1]);
}

/// Completion items must not catch the Enter that ends a line; an explicit request for ghost
/// text gets alternatives; a completion selected in the editor's menu is continued, not repeated.
#[test]
fn completion_leaves_enter_alone_and_inline_items_follow_the_trigger() {
    let mut c = Client::start(json!({"threshold": 0.05, "latencyBudgetMs": 20000}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let uri = "file:///tmp/laya-test/enter.md";
    c.open(uri, "markdown", "I went to the park\nWe saw th\nThe capital of France is \nHe works at the Univ");
    let complete = |c: &mut Client, line: u32, col: u32, kind: u32| {
        let r =
            c.request("textDocument/completion", json!({"textDocument": {"uri": uri}, "position": pos(line, col), "context": {"triggerKind": kind}}));
        assert!(r.get("error").is_none(), "{r}");
        r["result"]["items"].as_array().cloned().unwrap_or_default()
    };
    // A finished word at the end of a line: no menu, whatever the trigger.
    for kind in [1, 3] {
        assert!(complete(&mut c, 0, 18, kind).is_empty(), "a menu after a whole word at the end of a line (trigger {kind})");
    }
    // Part of a word: the rest of it, never the part itself.
    let items = complete(&mut c, 1, 9, 1);
    assert!(!items.is_empty(), "completions inside a word");
    assert!(items.iter().all(|i| i["label"] != "th" && i["label"].as_str().unwrap().starts_with("th")), "{items:?}");
    // After a space: next words when asked, not when re-asked as the writer types on.
    assert!(!complete(&mut c, 2, 25, 1).is_empty(), "next words when invoked");
    assert!(complete(&mut c, 2, 25, 3).is_empty(), "no menu popping up after a space");

    // Ghost text: one item when automatic; asked for explicitly at the same place, alternatives.
    let inline = |c: &mut Client, ctx: Value| {
        let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(2, 25), "context": ctx}));
        r["result"]["items"].as_array().cloned().unwrap_or_default()
    };
    let auto = inline(&mut c, json!({"triggerKind": 2}));
    assert_eq!(auto.len(), 1, "{auto:?}");
    assert_eq!(auto[0]["insertText"], "Paris");
    let asked = inline(&mut c, json!({"triggerKind": 1}));
    assert!(asked.len() >= 2 && asked[0]["insertText"] == "Paris", "{asked:?}");

    // A completion selected in the menu ("Univ" typed, "University" selected): the ghost text
    // goes on from it, and the item covers the typed part with the selection's text first.
    let sel = json!({"range": {"start": pos(3, 16), "end": pos(3, 20)}, "text": "University"});
    let r = c.request(
        "textDocument/inlineCompletion",
        json!({"textDocument": {"uri": uri}, "position": pos(3, 20), "context": {"triggerKind": 2, "selectedCompletionInfo": sel}}),
    );
    let item = &r["result"]["items"][0];
    assert!(item["insertText"].as_str().is_some_and(|t| t.starts_with("University of")), "{r}");
    assert_eq!(item["range"], json!({"start": pos(3, 16), "end": pos(3, 20)}), "{r}");
    c.shutdown().unwrap();
}

#[test]
fn neovim_gets_a_diagnostic_and_a_completion() {
    let args = ["--headless", "-n", "-u", "NONE", "-i", "NONE", "-c"].map(String::from);
    let mut args = args.to_vec();
    args.push(format!("luafile {}", editor_script("nvim_lsp.lua")));
    let v = run_editor("nvim", "LAYA_NVIM", "notes.md", &args);
    assert_eq!(v["attached"], true, "{v}");
    let d = &v["diagnostics"][0];
    assert_eq!((d["lnum"].as_i64(), d["col"].as_i64(), d["end_col"].as_i64()), (Some(0), Some(7), Some(14)), "{v}");
    assert!(d["message"].as_str().unwrap().contains("receive"), "{v}");
    assert_eq!(v["completions"][0], "Paris", "{v}");
    // Its omnifunc asks with no context after "is ": an explicit request, answered with next words.
    assert_eq!(v["omnifunc"][0], "Paris", "{v}");
}

#[test]
fn emacs_eglot_gets_a_diagnostic_and_a_completion() {
    let args = ["--batch".to_string(), "-Q".into(), "-l".into(), editor_script("eglot.el")];
    let v = run_editor("emacs", "LAYA_EMACS", "notes.txt", &args);
    assert_eq!(v["diagnostics"][0]["beg"], 7, "{v}");
    assert!(v["diagnostics"][0]["text"].as_str().unwrap().contains("receive"), "{v}");
    assert_eq!(v["completions"][0], "Paris", "{v}");
}

// ---------------------------------------------------------------------------------------
// Robustness: faults, privacy, and the quick run of `laya stress` (fuzzing, load, bad input).

/// `$/cancelRequest`: a request cancelled while it waits behind a long job for the model is
/// answered RequestCancelled at once, without waiting for that job, and the server goes on.
#[test]
fn a_cancelled_request_is_answered_at_once() {
    let mut c = Client::start(json!({"latencyBudgetMs": 60000}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let uri = "file:///tmp/laya-test/cancel.md";
    c.open(uri, "markdown", "The capital of France is ");
    // A ranking of many long candidates after a long context holds the model for seconds.
    let context = "A long paragraph of prose to keep the model busy for a while. ".repeat(30);
    let candidates: Vec<String> = (0..48).map(|i| format!(" candidate number {i}, followed by a good many words of its own")).collect();
    let (rank_id, ghost_id) = (c.fresh_id(), c.fresh_id());
    c.send(&json!({"jsonrpc": "2.0", "id": rank_id, "method": "laya/rank", "params": {"context": context, "candidates": candidates}}));
    c.send(&json!({"jsonrpc": "2.0", "id": ghost_id, "method": "textDocument/inlineCompletion",
                   "params": {"textDocument": {"uri": uri}, "position": pos(0, 25), "context": {"triggerKind": 1}}}));
    let sent = Instant::now();
    c.notify("$/cancelRequest", json!({"id": ghost_id}));
    let mut answers: Vec<(Value, Duration)> = vec![];
    while answers.len() < 2 {
        let r = c.next_answer(Duration::from_secs(120));
        answers.push((r, sent.elapsed()));
    }
    let (ghost, ghost_at) = answers.iter().find(|(r, _)| r["id"] == ghost_id).cloned().unwrap();
    let (rank, rank_at) = answers.iter().find(|(r, _)| r["id"] == rank_id).cloned().unwrap();
    assert_eq!(ghost["error"]["code"], -32800, "{ghost}");
    assert!(rank["result"]["ranked"].as_array().is_some_and(|a| a.len() == 48), "{rank}");
    assert!(ghost_at < rank_at, "the cancelled request was answered after the long job ({ghost_at:?}, {rank_at:?})");
    // And the next request is served as usual.
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, 25), "context": {"triggerKind": 2}}));
    assert_eq!(r["result"]["items"][0]["insertText"], "Paris", "{r}");
    c.shutdown().unwrap();
}
