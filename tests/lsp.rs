//! End-to-end: the real `laya serve` binary with the real default model, driven over stdio as
//! an editor drives it — open, type character by character, ask for ghost text and completions,
//! receive diagnostics, apply a quick fix, add a word, close — and thousands of random edits
//! checked against the server's copy of the text.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use laya_harness::{Encoding, LspText, Rng};
use serde_json::{json, Value};

#[test]
fn typing_gets_ghost_text_and_completions() {
    // The suite runs many servers at once on a small machine: a request must not be dropped
    // for waiting past the default 200 ms latency budget, which is about speed, not behaviour.
    let mut c = Client::start(json!({"latencyBudgetMs": 20000}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let uri = "file:///tmp/laya-test/capital.md";
    let text = "The capital of France is";
    c.open(uri, "markdown", text);
    let (mut col, mut version) = (text.len() as u32, 1i64);
    type_chars(&mut c, uri, &mut col, &mut version, " ");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
    assert_eq!(r["result"]["items"][0]["insertText"], "Paris", "{r}");
    // Typing what the ghost text says keeps the rest of it.
    type_chars(&mut c, uri, &mut col, &mut version, "Pa");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
    assert_eq!(r["result"]["items"][0]["insertText"], "ris", "{r}");
    // With an empty range at the cursor: with none, VS Code replaces the word at the cursor and
    // drops a continuation that does not begin with it ("ris" after "Pa").
    assert_eq!(r["result"]["items"][0]["range"], json!({"start": pos(0, col), "end": pos(0, col)}), "{r}");
    // The same as completion items, replacing the typed part of the word.
    let r = c.request("textDocument/completion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 1}}));
    let items = r["result"]["items"].as_array().expect("completion items");
    assert_eq!(items[0]["label"], "Paris", "{r}");
    assert_eq!(items[0]["textEdit"]["range"]["start"], pos(0, col - 2), "{r}");
    assert_eq!(items[0]["textEdit"]["newText"], "Paris");
    // Inside inline code there is nothing to suggest.
    let (v, t) = c.text(uri);
    assert_eq!((v, t.as_str()), (version, "The capital of France is Pa"));
    version += 1;
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": "Run `cargo "}]}));
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, 11), "context": {"triggerKind": 2}}));
    let items = r["result"]["items"].as_array().map_or(0, Vec::len);
    assert_eq!(items, 0, "no ghost text in code: {r}");
    // A misspelled word being typed is corrected: the item replaces what was typed.
    let typo = "file:///tmp/laya-test/typo.md";
    c.open(typo, "markdown", "Please seperat");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": typo}, "position": pos(0, 14), "context": {"triggerKind": 2}}));
    assert_eq!(r["result"]["items"][0]["insertText"], "separate", "{r}");
    assert_eq!(r["result"]["items"][0]["range"], json!({"start": pos(0, 7), "end": pos(0, 14)}), "{r}");
    // Ranking over LSP.
    let r = c.request("laya/rank", json!({"context": "I would like a cup of", "candidates": [" car", " tea"]}));
    assert_eq!(r["result"]["ranked"][0]["candidate"], " tea", "{r}");
    let r = c.request("laya/rank", json!({"context": "x", "candidates": []}));
    assert!(r["error"]["message"].as_str().unwrap().contains("candidates"), "{r}");
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": typo}}));
    let r = c.request("laya/stats", Value::Null);
    assert_eq!(r["result"]["documents_open"], 0, "{r}");
    assert_eq!(r["result"]["engine"]["documents_cached"], 0, "closing frees the cache: {r}");
    c.shutdown().unwrap();
}

#[test]
fn the_space_after_a_known_word_is_worked_out_while_idle() {
    let mut c = Client::start(json!({"latencyBudgetMs": 20000}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let uri = "file:///tmp/laya-test/ahead.md";
    let text = "The capital of France is";
    c.open(uri, "markdown", text);
    let col = text.len() as u32;
    // Ghost text inside "is": a word the lexicon knows, so a space may come next.
    c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
    let engine = |c: &mut Client| c.request("laya/stats", Value::Null)["result"]["engine"].clone();
    let t = Instant::now();
    while engine(&mut c)["speculations"].as_u64().unwrap_or(0) == 0 {
        assert!(t.elapsed().as_secs() < 60, "nothing was worked out ahead: {}", engine(&mut c));
        std::thread::sleep(Duration::from_millis(50));
    }
    let ahead = engine(&mut c);
    assert!(ahead["speculative_forwards"].as_u64().unwrap() >= 1, "{ahead}");
    // The space: the same suggestion, with no forward of its own.
    let (mut col, mut version) = (col, 1i64);
    type_chars(&mut c, uri, &mut col, &mut version, " ");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
    assert_eq!(r["result"]["items"][0]["insertText"], "Paris", "{r}");
    let after = engine(&mut c);
    let forwards = after["ghost_forwards"].as_array().unwrap();
    assert_eq!(forwards.len(), ahead["ghost_forwards"].as_array().unwrap().len() + 1, "{after}");
    assert_eq!(forwards.last().unwrap().as_f64(), Some(0.0), "the space's ghost text ran a forward: {after}");
    // After a space nothing of a word is typed: nothing more is worked out.
    assert_eq!(after["speculations"], ahead["speculations"], "{after}");
    // Nor after a known word ("par") whose shown completion ("Paris") says it more likely goes on.
    let (mut col, mut version) = (0u32, 1i64);
    let other = "file:///tmp/laya-test/ahead-par.md";
    c.open(other, "markdown", "");
    type_chars(&mut c, other, &mut col, &mut version, "The capital of France is Par");
    let r =
        c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": other}, "position": pos(0, col), "context": {"triggerKind": 2}}));
    assert_eq!(r["result"]["items"][0]["insertText"], "is", "{r}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(engine(&mut c)["speculations"], ahead["speculations"], "a space was worked out after a word shown to go on");
    // And with `workAhead` off, nothing is worked out ahead at all.
    c.notify("workspace/didChangeConfiguration", json!({"settings": {"laya": {"latencyBudgetMs": 20000, "workAhead": false}}}));
    let other = "file:///tmp/laya-test/ahead-off.md";
    c.open(other, "markdown", "The capital of Germany is");
    let r =
        c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": other}, "position": pos(0, 25), "context": {"triggerKind": 2}}));
    assert!(r["error"].is_null(), "{r}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(engine(&mut c)["speculations"], ahead["speculations"]);
    c.shutdown().unwrap();
}

#[test]
fn the_next_letters_first_steps_are_worked_out_while_idle_at_the_writers_pace() {
    let mut c = Client::start(json!({"latencyBudgetMs": 20000}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let engine = |c: &mut Client| c.request("laya/stats", Value::Null)["result"]["engine"].clone();
    let uri = "file:///tmp/laya-test/letters.md";
    c.open(uri, "markdown", "");
    let (mut col, mut version) = (0u32, 1i64);
    // Typed at a steady pace, with ghost text asked at every key: the pace is learnt, and after
    // each key the first steps of the likeliest next letters are run while idle.
    for ch in "I would like a cup of tea".chars() {
        type_chars(&mut c, uri, &mut col, &mut version, &ch.to_string());
        let r =
            c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
        assert!(r["error"].is_null(), "{r}");
        std::thread::sleep(Duration::from_millis(150));
    }
    // With `workAhead` off, none (counted from the first key after the change: what the key
    // before planned may still run until then).
    c.notify("workspace/didChangeConfiguration", json!({"settings": {"laya": {"latencyBudgetMs": 20000, "workAhead": false}}}));
    type_chars(&mut c, uri, &mut col, &mut version, " ");
    c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
    let on = engine(&mut c);
    assert!(on["letter_steps"].as_u64().unwrap() >= 1, "no letter was worked out ahead: {on}");
    for ch in "and".chars() {
        type_chars(&mut c, uri, &mut col, &mut version, &ch.to_string());
        c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
        std::thread::sleep(Duration::from_millis(150));
    }
    assert_eq!(engine(&mut c)["letter_steps"], on["letter_steps"]);
    c.shutdown().unwrap();
}

#[test]
fn after_enter_the_server_works_out_the_next_line_itself_so_its_first_letter_runs_fewer_forwards() {
    let mut c = Client::start(json!({"latencyBudgetMs": 20000}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let engine = |c: &mut Client| c.request("laya/stats", Value::Null)["result"]["engine"].clone();
    // A line typed with ghost text asked at each key, then Enter twice with none asked (as most
    // clients do), a pause, and the first letter of the next paragraph: the forwards its job ran.
    let first_letter_forwards = |c: &mut Client, uri: &str| {
        c.open(uri, "markdown", "");
        let (mut col, mut version) = (0u32, 1i64);
        for ch in "We went to the market on Sunday.".chars() {
            type_chars(c, uri, &mut col, &mut version, &ch.to_string());
            c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
        }
        for line in 1..=2 {
            version += 1;
            c.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version},
                       "contentChanges": [{"range": {"start": pos(line - 1, col), "end": pos(line - 1, col)}, "text": "\n"}]}),
            );
            col = 0;
        }
        std::thread::sleep(Duration::from_millis(1500));
        version += 1;
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": {"start": pos(2, 0), "end": pos(2, 0)}, "text": "T"}]}),
        );
        let r =
            c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(2, 1), "context": {"triggerKind": 2}}));
        assert!(r["error"].is_null(), "{r}");
        engine(c)["ghost_forwards"].as_array().unwrap().last().unwrap().as_f64().unwrap()
    };
    let on = first_letter_forwards(&mut c, "file:///tmp/laya-test/enter-on.md");
    c.notify("workspace/didChangeConfiguration", json!({"settings": {"laya": {"latencyBudgetMs": 20000, "workAhead": false}}}));
    let off = first_letter_forwards(&mut c, "file:///tmp/laya-test/enter-off.md");
    assert!(on < off, "the first letter after Enter ran {on} forwards with the line worked out ahead, {off} without");
    c.shutdown().unwrap();
}

#[test]
fn the_words_of_a_paragraph_are_scored_as_they_settle_and_its_check_finds_them_done() {
    // A debounce longer than a keystroke takes here: no check runs while the sentence is typed.
    let mut c = Client::start(json!({"latencyBudgetMs": 20000, "debounceMs": 1500}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let engine = |c: &mut Client| c.request("laya/stats", Value::Null)["result"]["engine"].clone();
    let type_sentence = |c: &mut Client, uri: &str, text: &str| {
        c.open(uri, "markdown", "");
        let (mut col, mut version) = (0u32, 1i64);
        for ch in text.chars() {
            type_chars(c, uri, &mut col, &mut version, &ch.to_string());
            let r = c.request(
                "textDocument/inlineCompletion",
                json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}),
            );
            assert!(r["error"].is_null(), "{r}");
        }
        let d = c.wait_for("diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty())
        });
        let flagged: Vec<String> =
            d["params"]["diagnostics"].as_array().unwrap().iter().map(|x| x["data"]["word"].as_str().unwrap().to_string()).collect();
        assert_eq!(flagged, ["then"], "{d}");
        assert_eq!(d["params"]["diagnostics"][0]["data"]["suggestions"][0], "than", "{d}");
    };
    type_sentence(&mut c, "file:///tmp/laya-test/settle.md", "My house is bigger then yours, and I like it.");
    let e = engine(&mut c);
    // "then" was scored once "like" was finished, between keystrokes; the check after the pause
    // found every word scored and ran no forward.
    assert!(e["checked_ahead"].as_u64().unwrap() >= 1 && e["check_ahead_forwards"].as_u64().unwrap() >= 1, "{e}");
    let checks = e["check_forwards"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "one whole check: {e}");
    assert_eq!(checks[0].as_f64(), Some(0.0), "the check ran a forward of its own: {e}");
    // With `workAhead` off nothing is scored ahead, and the check finds the same.
    c.notify("workspace/didChangeConfiguration", json!({"settings": {"laya": {"latencyBudgetMs": 20000, "debounceMs": 1500, "workAhead": false}}}));
    type_sentence(&mut c, "file:///tmp/laya-test/settle-off.md", "Her car is faster then mine, and she likes it.");
    let off = engine(&mut c);
    assert_eq!((&off["checked_ahead"], &off["check_ahead_forwards"]), (&e["checked_ahead"], &e["check_ahead_forwards"]), "{off}");
    assert!(off["check_forwards"].as_array().unwrap().last().unwrap().as_f64().unwrap() >= 1.0, "{off}");
    c.shutdown().unwrap();
}

#[test]
fn misspellings_get_diagnostics_and_quick_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let dict = dir.path().join("words.txt");
    let mut c = Client::start(json!({"userDictionary": dict, "debounceMs": 50}));
    let uri = "file:///tmp/laya-test/letter.md";
    c.open(uri, "markdown", "I will recieve the letter tomorrow.\n\nOur Laya server is at `htpp://x`.\n");
    let d = c.wait_for("diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty())
    });
    let diags = d["params"]["diagnostics"].as_array().unwrap().clone();
    assert_eq!(diags.len(), 1, "only the misspelling; not the name or the code: {d}");
    let diag = &diags[0];
    assert_eq!(diag["range"], json!({"start": pos(0, 7), "end": pos(0, 14)}), "{d}");
    assert_eq!(diag["severity"], 3, "Information by default");
    let r = c.request("textDocument/codeAction", json!({"textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}}));
    let actions = r["result"].as_array().unwrap();
    assert_eq!(actions[0]["title"], "Replace with \"receive\"", "{r}");
    assert!(actions.iter().any(|a| a["command"]["command"] == "laya.addToDictionary"), "{r}");
    assert!(actions.iter().any(|a| a["command"]["command"] == "laya.ignoreInDocument"), "{r}");
    // Apply the fix as an editor would: the edit comes back as a change.
    c.apply_edit(uri, 2, &actions[0]["edit"]["changes"][uri][0]);
    c.wait_for("the diagnostic to clear", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 2 && m["params"]["diagnostics"] == json!([])
    });
    assert!(c.text(uri).1.starts_with("I will receive the letter"));
    // A made-up name that looks like a slip ("Flowr"; one no slip explains is not flagged at
    // all), added to the dictionary, stays alone from then on (and is saved).
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"range": {"start": pos(0, 0), "end": pos(0, 0)}, "text": "Flowr. "}]}),
    );
    c.wait_for("a diagnostic for the new word", |m| {
        m["params"]["version"] == 3 && m["params"]["diagnostics"].as_array().is_some_and(|a| a.len() == 1)
    });
    let r = c.request("workspace/executeCommand", json!({"command": "laya.addToDictionary", "arguments": ["Flowr"]}));
    assert!(r.get("error").is_none(), "{r}");
    c.wait_for("the diagnostic to clear", |m| m["params"]["version"] == 3 && m["params"]["diagnostics"] == json!([]));
    assert_eq!(std::fs::read_to_string(&dict).unwrap(), "Flowr\n");
    let r = c.request("workspace/executeCommand", json!({"command": "laya.addToDictionary", "arguments": ["two words"]}));
    assert!(r["error"]["message"].as_str().unwrap().contains("one word"), "{r}");
    // A word still being typed at the end of the text is left alone; once the writer moves
    // past it, it is checked.
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"range": {"start": pos(3, 0), "end": pos(3, 0)}, "text": "We recieve"}]}));
    c.wait_for("no diagnostic while the word is typed", |m| m["params"]["version"] == 4 && m["params"]["diagnostics"] == json!([]));
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 5}, "contentChanges": [{"range": {"start": pos(3, 10), "end": pos(3, 10)}, "text": " it"}]}),
    );
    let d = c.wait_for("the finished word's diagnostic", |m| {
        m["params"]["version"] == 5 && m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty())
    });
    assert_eq!(d["params"]["diagnostics"][0]["range"], json!({"start": pos(3, 3), "end": pos(3, 10)}), "{d}");
    // So is a word typed inside the text, here in a code span the editor closed ("`Initia|`");
    // a slip in an identifier is flagged once the writer moves on.
    let change = |c: &mut Client, version: i32, line: u32, col: u32, text: &str| {
        let range = json!({"start": pos(line, col), "end": pos(line, col)});
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": text}]}),
        );
    };
    let mentions = |m: &Value, word: &str| {
        m["params"]["diagnostics"].as_array().is_some_and(|a| a.iter().any(|d| d["message"].as_str().unwrap_or("").contains(word)))
    };
    change(&mut c, 6, 0, 0, "See `` for teh rest. ");
    change(&mut c, 7, 0, 5, "Initia");
    // The slip after it says that its paragraph was checked.
    let d = c.wait_for("the first line's diagnostics", |m| m["params"]["version"] == 7 && mentions(m, "\"teh\""));
    assert!(!mentions(&d, "Initia"), "{d}");
    change(&mut c, 8, 0, 11, "lze");
    change(&mut c, 9, 3, 13, " now");
    c.wait_for("the identifier's diagnostic", |m| m["params"]["version"] == 9 && mentions(m, "\"Initialze\""));
    c.shutdown().unwrap();
}

/// Two words typed as one get a diagnostic whose first quick fix puts the space back; one word
/// typed as two, one whose fix takes it out.
#[test]
fn two_words_typed_as_one_are_fixed_with_the_space_put_back() {
    let mut c = Client::start(json!({"debounceMs": 50}));
    let uri = "file:///tmp/laya-test/joined.md";
    c.open(uri, "markdown", "They help eachother when they can.\n");
    let d = c.wait_for("diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty())
    });
    let diag = d["params"]["diagnostics"][0].clone();
    assert_eq!(diag["range"], json!({"start": pos(0, 10), "end": pos(0, 19)}), "{d}");
    let r = c.request("textDocument/codeAction", json!({"textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}}));
    let actions = r["result"].as_array().unwrap();
    assert_eq!(actions[0]["title"], "Replace with \"each other\"", "{r}");
    c.apply_edit(uri, 2, &actions[0]["edit"]["changes"][uri][0]);
    c.wait_for("the diagnostic to clear", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 2 && m["params"]["diagnostics"] == json!([])
    });
    assert_eq!(c.text(uri).1, "They help each other when they can.\n");
    // And one word typed as two: the fix takes the space out.
    let uri = "file:///tmp/laya-test/apart.md";
    c.open(uri, "markdown", "She walked in to the room.\n");
    let d = c.wait_for("diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri
            && m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty())
    });
    let diag = d["params"]["diagnostics"][0].clone();
    assert_eq!(diag["range"], json!({"start": pos(0, 11), "end": pos(0, 16)}), "{d}");
    assert_eq!(diag["message"], "\"in to\" may be one word: into?", "{d}");
    let r = c.request("textDocument/codeAction", json!({"textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}}));
    c.apply_edit(uri, 2, &r["result"][0]["edit"]["changes"][uri][0]);
    c.wait_for("the diagnostic to clear", |m| m["params"]["uri"] == uri && m["params"]["version"] == 2 && m["params"]["diagnostics"] == json!([]));
    assert_eq!(c.text(uri).1, "She walked into the room.\n");
    c.shutdown().unwrap();
}

/// Two slips side by side are both flagged (each judged with the other corrected), and a word
/// typed twice gets a diagnostic whose quick fix deletes the second one and its space.
#[test]
fn clustered_typos_and_a_doubled_word_get_diagnostics_and_fixes() {
    let mut c = Client::start(json!({"debounceMs": 50, "latencyBudgetMs": 20000}));
    let uri = "file:///tmp/laya-test/cluster.md";
    c.open(uri, "markdown", "I recieved teh letter yesterday.\n\nHe is the the best player on the team.\n");
    let d = c.wait_for("three diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["diagnostics"].as_array().is_some_and(|a| a.len() >= 3)
    });
    let diags = d["params"]["diagnostics"].as_array().unwrap().clone();
    let ranges: Vec<(&Value, &Value)> = diags.iter().map(|d| (&d["range"], &d["code"])).collect();
    assert_eq!(
        ranges,
        [
            (&json!({"start": pos(0, 2), "end": pos(0, 10)}), &json!("misspelling")),
            (&json!({"start": pos(0, 11), "end": pos(0, 14)}), &json!("misspelling")),
            (&json!({"start": pos(2, 9), "end": pos(2, 13)}), &json!("repeated-word")),
        ],
        "{d}"
    );
    let doubled = &diags[2];
    assert_eq!(doubled["message"], "\"the\" is typed twice", "{d}");
    let r =
        c.request("textDocument/codeAction", json!({"textDocument": {"uri": uri}, "range": doubled["range"], "context": {"diagnostics": [doubled]}}));
    let actions = r["result"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "a doubled word is no word for the dictionary: {r}");
    assert_eq!(actions[0]["title"], "Delete the second \"the\"", "{r}");
    let edit = &actions[0]["edit"]["changes"][uri][0];
    assert_eq!(edit["newText"], "", "{r}");
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": edit["range"], "text": ""}]}));
    let d = c.wait_for("the doubled word's diagnostic to go", |m| m["params"]["version"] == 2);
    assert_eq!(d["params"]["diagnostics"].as_array().map(Vec::len), Some(2), "{d}");
    assert_eq!(c.text(uri).1, "I recieved teh letter yesterday.\n\nHe is the best player on the team.\n");
    c.shutdown().unwrap();
}

/// A confused word is checked however often the document uses it; turning diagnostics off
/// clears them; a `null` configuration changes nothing; another dictionary replaces the words
/// of the one before.
#[test]
fn confused_words_settings_and_dictionaries() {
    let dir = tempfile::tempdir().unwrap();
    let (words, none) = (dir.path().join("words.txt"), dir.path().join("none.txt"));
    std::fs::write(&words, "recieve\n").unwrap();
    let mut c = Client::start(json!({"debounceMs": 50, "userDictionary": words}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let uri = "file:///tmp/laya-test/than.md";
    c.open(uri, "markdown", "I will recieve the letter, and than we will see.\n\nMy house is bigger than yours.\n");
    let d = c.wait_for("diagnostics", |m| m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty()));
    let diags = d["params"]["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "the first \"than\" only; \"recieve\" is in the dictionary: {d}");
    assert_eq!(diags[0]["data"]["word"], "than", "{d}");
    assert_eq!(diags[0]["data"]["suggestions"][0], "then", "{d}");
    c.notes.clear();
    c.notify("workspace/didChangeConfiguration", json!({"settings": {"laya": {"diagnostics": false}}}));
    c.wait_for("the diagnostics to clear", |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["diagnostics"] == json!([]));
    c.notify("workspace/didChangeConfiguration", json!({"settings": null}));
    c.notify("workspace/didChangeConfiguration", json!({"settings": {"laya": {"diagnostics": true, "userDictionary": none}}}));
    let d = c.wait_for("diagnostics with the other dictionary", |m| m["params"]["diagnostics"].as_array().is_some_and(|a| a.len() == 2));
    let flagged: Vec<&str> = d["params"]["diagnostics"].as_array().unwrap().iter().map(|x| x["data"]["word"].as_str().unwrap()).collect();
    assert_eq!(flagged, ["recieve", "than"], "{d}");
    // A quick fix is offered only while its range still holds the word.
    let diag = d["params"]["diagnostics"][0].clone();
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": pos(0, 0), "end": pos(0, 0)}, "text": "So "}]}),
    );
    let r = c.request("textDocument/codeAction", json!({"textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}}));
    assert_eq!(r["result"], json!([]), "no fix for a range that moved: {r}");
    let r = c.request("laya/stats", Value::Null);
    assert!(r["result"]["engine"]["jobs"].as_u64().is_some(), "the server still answers: {r}");
    c.shutdown().unwrap();
}

#[test]
fn a_model_that_cannot_load_is_reported_and_spelling_still_works() {
    let mut c = Client::start(json!({"modelPath": "/nonexistent/model.gguf", "debounceMs": 0, "diagnosticSeverity": "warning"}));
    let m = c.wait_for("an error message", |m| m["method"] == "window/showMessage");
    assert!(m["params"]["message"].as_str().unwrap().contains("/nonexistent/model.gguf"), "{m}");
    // An empty configuration (Zed sends one after start-up) keeps the initializationOptions.
    c.notify("workspace/didChangeConfiguration", json!({"settings": {}}));
    let uri = "file:///tmp/laya-test/nomodel.txt";
    c.open(uri, "plaintext", "This sentense has a typo.");
    let d = c.wait_for("diagnostics", |m| m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty()));
    assert_eq!(d["params"]["diagnostics"][0]["data"]["suggestions"][0], "sentence", "{d}");
    assert_eq!(d["params"]["diagnostics"][0]["severity"], 2, "still Warning: {d}");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, 5), "context": {"triggerKind": 2}}));
    assert!(r["result"].is_null(), "no ghost text without a model, and no error: {r}");
    let r = c.request("initialize", json!({"capabilities": {}}));
    assert!(r.get("error").is_some(), "a second initialize is refused: {r}");
    c.shutdown().unwrap();
}

#[test]
fn bad_settings_are_refused_with_a_reason() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_laya")).arg("serve").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "initializationOptions": {"threshold": 7}}})
        .to_string();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    drop(stdin); // stdin closed: the server must exit on its own
    let out = child.wait_with_output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("threshold must be between 0 and 1"), "{s}");
}

/// Whether char index `i` falls between the \r and \n of a CRLF (no LSP position names it).
fn mid_crlf(chars: &[char], i: usize) -> bool {
    i > 0 && i < chars.len() && chars[i - 1] == '\r' && chars[i] == '\n'
}

#[test]
fn thousands_of_random_edits_keep_the_server_in_sync() {
    let mut c = Client::start(json!({"languages": ["markdown"], "ghostText": false, "diagnostics": false}));
    let uri = "file:///tmp/laya-test/fuzz.txt";
    // The expected text follows LSP's rules as laya-harness's reference model writes them out.
    let mut expected = LspText::new("héllo wörld\r\nsecond 😀 line\nthird");
    c.open(uri, "plaintext", &expected.text());
    let pieces = ["a", "é", "中", "😀", "👍🏽", "\r\n", "\n", "\r", " ", "word ", "", "𝄞x"];
    let mut rng = Rng::new(0x5eed);
    let n: usize = std::env::var("LAYA_FUZZ_EDITS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let mut version = 1;
    for step in 0..n {
        let len = expected.chars.len();
        let (a, b) = loop {
            let a = rng.below(len + 1);
            let b = (a + rng.below(6)).min(len);
            if !mid_crlf(&expected.chars, a) && !mid_crlf(&expected.chars, b) {
                break (a, b);
            }
        };
        let (pa, pb) = (expected.position_of(a, Encoding::Utf16), expected.position_of(b, Encoding::Utf16));
        let text: String = (0..rng.below(3)).map(|_| pieces[rng.below(pieces.len())]).collect();
        version += 1;
        let change = if step % 500 == 499 {
            // Now and then the whole document at once.
            let whole = format!("replaced {step}\n{}", expected.text());
            expected.apply(None, &whole, Encoding::Utf16);
            json!({"text": whole})
        } else {
            expected.apply(Some((pa, pb)), &text, Encoding::Utf16);
            let at = |(l, c): (usize, usize)| pos(l as u32, c as u32);
            json!({"range": {"start": at(pa), "end": at(pb)}, "text": text})
        };
        c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}));
        // After every edit, as the issue asks: a divergence is caught at the edit that made it.
        {
            let (v, t) = c.text(uri);
            assert_eq!(v, version);
            assert_eq!(t, expected.text(), "after edit {step}");
        }
    }
    c.shutdown().unwrap();
}

/// The quick stress run: its own checks (no mismatch after thousands of odd edits, every bad
/// input answered, every request answered, every cache freed) must all hold.
#[test]
fn stress_quick_run_holds() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("stress.json");
    let out = Command::new(env!("CARGO_BIN_EXE_laya"))
        .args(["stress", "--quick", "--out"])
        .arg(&report)
        .current_dir(env!("CARGO_MANIFEST_DIR").to_string() + "/../..")
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}\n{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let sync = r["sync"].as_array().unwrap();
    assert_eq!(sync.len(), 3, "utf-16, utf-8 and utf-32: {r}");
    for s in sync {
        assert_eq!(s["edits"], 1500, "{s}");
        assert_eq!(s["mismatches"], json!([]), "{s}");
    }
    let probes = r["bad_input"].as_array().unwrap();
    assert!(probes.len() >= 14 && probes.iter().all(|p| p["ok"] == true), "{r}");
    for l in r["load"].as_array().unwrap() {
        assert_eq!(l["documents"], 200, "{l}");
        assert_eq!(l["unanswered_after_30_s"], 0, "{l}");
        assert!(l["ghost"]["n"].as_u64().unwrap() > 100, "requests were in flight: {l}");
        assert!(l["stale_dropped"].as_u64().unwrap() > 0, "stale work was dropped: {l}");
        assert!(l["cache_bytes_open"].as_u64() <= l["budget_bytes"].as_u64(), "{l}");
        assert_eq!((l["cache_bytes_after_close"].as_u64(), l["documents_open_after_close"].as_u64()), (Some(0), Some(0)), "{l}");
    }
    assert!(table.contains("sync fuzz, utf-16") && table.contains("load, 200 docs"), "{table}");
}

/// Runs a whole session of `laya serve` under strace: it opens no network socket and reads no
/// file but the model, the lexicon, the user dictionary and what the process itself is made of;
/// and nothing the user typed appears in its log at the default level.
#[test]
fn the_server_opens_no_socket_and_reads_only_its_own_files_and_logs_no_text() {
    let strace = which("strace", "LAYA_STRACE");
    let dir = tempfile::tempdir().unwrap();
    let (trace, log, dict) = (dir.path().join("trace"), dir.path().join("stderr"), dir.path().join("words.txt"));
    let mut cmd = Command::new(strace);
    cmd.args(["-f", "-qq", "-e", "trace=%network,%file", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_laya"))
        .arg("serve")
        .env_remove("LAYA_LOG")
        .stderr(std::fs::File::create(&log).unwrap());
    let mut c = Client::start_cmd(cmd, json!({"userDictionary": dict, "debounceMs": 50}));
    let uri = "file:///tmp/laya-test/secret.md";
    c.open(uri, "markdown", "My pasword is Quuxlemonade and I recieve mail at home.\n");
    c.wait_for("diagnostics", |m| m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty()));
    let (mut col, mut version) = (55, 1);
    type_chars(&mut c, uri, &mut col, &mut version, " Th");
    c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 1}}));
    let r = c.request("workspace/executeCommand", json!({"command": "laya.addToDictionary", "arguments": ["Quuxlemonade"]}));
    assert!(r.get("error").is_none(), "{r}");
    c.shutdown().unwrap();

    let trace = std::fs::read_to_string(&trace).unwrap();
    for l in trace.lines() {
        assert!(!(l.contains("socket(AF_INET") || l.contains("connect(") || l.contains("bind(") || l.contains("sendto(")), "network use: {l}");
    }
    let model = std::fs::canonicalize(default_model()).unwrap();
    let allowed = |p: &str| {
        let ours = p == model.to_string_lossy() || p.ends_with("lexicon/en.tsv") || p.starts_with(&*dir.path().to_string_lossy());
        let the_process = p.starts_with("/proc/")
            || p.starts_with("/sys/")
            || p.starts_with("/dev/")
            || p.contains(".so")
            || p.starts_with("/etc/ld.so")
            || p.starts_with("/usr/lib/locale")
            || p.starts_with("/usr/share/zoneinfo")
            || p.ends_with("/.deps/mlx-cpu/mlx/lib")
            || p == env!("CARGO_BIN_EXE_laya");
        ours || the_process
    };
    let mut opened = vec![];
    for l in trace.lines().filter(|l| (l.contains("open(") || l.contains("openat(")) && !l.contains("= -1")) {
        let path = l.split('"').nth(1).unwrap_or("");
        opened.push(path.to_string());
        assert!(allowed(path), "laya serve opened {path}: {l}");
    }
    assert!(opened.iter().any(|p| *p == model.to_string_lossy()), "the model was read: {opened:?}");
    assert!(opened.iter().any(|p| p.starts_with(&*dir.path().to_string_lossy())), "the dictionary was written: {opened:?}");
    let log = std::fs::read_to_string(&log).unwrap();
    for secret in ["Quuxlemonade", "pasword", "recieve", "mail at home"] {
        assert!(!log.contains(secret), "the log holds the user's text ({secret}):\n{log}");
    }
}

/// `shutdown` and `exit` while requests are in flight, and a client that goes away in the
/// middle of a request: the server exits cleanly and promptly either way.
#[test]
fn shutdown_mid_work_and_a_vanished_client_end_the_server_cleanly() {
    for vanish in [false, true] {
        let mut c = Client::start(json!({}));
        let uri = "file:///tmp/laya-test/busy.md";
        c.open(uri, "markdown", &"A long paragraph of prose to keep the model busy. ".repeat(40));
        for i in 0..30 {
            let id = c.fresh_id();
            c.send(&json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/inlineCompletion",
                           "params": {"textDocument": {"uri": uri}, "position": pos(0, 100 + i), "context": {"triggerKind": 1}}}));
        }
        let start = Instant::now();
        if vanish {
            let mut child = c.vanish().expect("the suite started the server");
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    assert!(status.success(), "exit status after the client vanished: {status}");
                    break;
                }
                assert!(start.elapsed() < Duration::from_secs(20), "laya serve did not exit after its client went away");
                std::thread::sleep(Duration::from_millis(20));
            }
        } else {
            c.shutdown().unwrap();
        }
        assert!(start.elapsed() < Duration::from_secs(20));
    }
}

/// A user dictionary path that cannot be used is refused when the settings arrive, naming the
/// file and the reason (later writes that fail say so the same way: see append_word_atomically).
#[test]
fn an_unusable_dictionary_path_is_refused_with_the_reason() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_laya")).arg("serve").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Under a regular file, so that not even root can create it.
    let opts = json!({"userDictionary": "/etc/hostname/laya-words.txt"});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "initializationOptions": opts}}).to_string();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("userDictionary") && s.contains("/etc/hostname/laya-words.txt") && s.contains("Not a directory"), "{s}");
}

/// A truncated model file: the server says what is wrong with it and keeps checking spelling.
#[test]
fn a_truncated_model_is_reported_and_spelling_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.gguf");
    let bytes = std::fs::read(default_model()).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let mut c = Client::start(json!({"modelPath": cut, "debounceMs": 50}));
    let m = c.wait_for("a message about the model", |m| m["method"] == "window/showMessage");
    let text = m["params"]["message"].as_str().unwrap();
    assert!(text.contains("cut.gguf") && text.contains("truncated"), "{m}");
    c.open("file:///tmp/laya-test/t.md", "markdown", "It would recieve the data.\n");
    c.wait_for("diagnostics", |m| m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty()));
    c.shutdown().unwrap();
}

/// A panic inside one decision (planted with LAYA_FAULT_PANIC_ON) fails that request only: the
/// next suggestion, in another document, comes as usual and the server exits cleanly.
#[test]
fn a_panic_inside_a_decision_stays_inside_its_request() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_laya"));
    cmd.arg("serve").env("LAYA_FAULT_PANIC_ON", "Kaboomword").stderr(Stdio::null());
    let mut c = Client::start_cmd(cmd, json!({}));
    wait_for_model(&mut c);
    let bad = "file:///tmp/laya-test/bad.md";
    c.open(bad, "markdown", "Kaboomword is what I wrote and then the\n");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": bad}, "position": pos(0, 39), "context": {"triggerKind": 1}}));
    assert!(r.get("error").is_some(), "the planted panic fails the request: {r}");
    let good = "file:///tmp/laya-test/good.md";
    c.open(good, "markdown", "The capital of France is Pa\n");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": good}, "position": pos(0, 27), "context": {"triggerKind": 1}}));
    let first = r["result"]["items"][0]["insertText"].as_str().unwrap_or_default().to_string();
    assert!(first.ends_with("ris"), "the next suggestion comes as usual: {r}");
    c.shutdown().unwrap();
}

/// A word the workspace's code uses is the project's name for something, not a typo: with the
/// workspace folder given, "rwlock" (an identifier in its source) is left alone in its docs;
/// without it, it is flagged. The slip beside it is flagged either way.
#[test]
fn words_of_the_workspace_code_are_not_misspellings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lock.rs"), "pub struct Guard { rwlock: usize }\n").unwrap();
    let root = format!("file://{}", dir.path().display());
    let text = "Run the rwlock test before you recieve the reply.\n";
    let flagged = |c: &mut Client, uri: &str| -> Vec<String> {
        c.open(uri, "markdown", text);
        let d = c.wait_for("diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty())
        });
        let mut words: Vec<String> = d["params"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                let (s, e) = (x["range"]["start"]["character"].as_u64().unwrap() as usize, x["range"]["end"]["character"].as_u64().unwrap() as usize);
                text[s..e].to_string()
            })
            .collect();
        words.sort();
        words
    };
    // Without a workspace.
    let mut c = Client::start(json!({"debounceMs": 50}));
    assert_eq!(flagged(&mut c, "file:///tmp/laya-test/no-workspace.md"), ["recieve", "rwlock"]);
    // With one: its scan ends before the first check, or the check after the scan clears it.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_laya"));
    cmd.arg("serve").env("XDG_CONFIG_HOME", "/nonexistent/laya-test-config").stderr(Stdio::inherit());
    let mut c = Client::spawn(cmd).unwrap();
    let r = c.request("initialize", json!({"processId": null, "rootUri": root, "capabilities": {}, "initializationOptions": {"debounceMs": 50}}));
    assert!(r.get("result").is_some(), "{r}");
    c.notify("initialized", json!({}));
    let uri = format!("{root}/README.md");
    c.open(&uri, "markdown", text);
    let d = c.wait_for("only the slip flagged", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["diagnostics"].as_array().is_some_and(|a| a.len() == 1)
    });
    assert_eq!(d["params"]["diagnostics"][0]["range"]["start"]["character"], 31, "{d}");
}

/// A name the document used pages before the cursor, out of the model's window, is recalled
/// when its first letters are typed; and one the workspace's notes use, in another document.
#[test]
fn ghost_text_recalls_the_writers_own_words_from_the_document_and_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "The Vantrexil cluster went down. We moved Vantrexil to spare disks.\n").unwrap();
    let root = format!("file://{}", dir.path().display());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_laya"));
    cmd.arg("serve").env("XDG_CONFIG_HOME", "/nonexistent/laya-test-config").stderr(Stdio::inherit());
    let mut c = Client::spawn(cmd).unwrap();
    let r = c.request(
        "initialize",
        json!({"processId": null, "rootUri": root, "capabilities": {}, "initializationOptions": {"latencyBudgetMs": 20000, "recall": true}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    c.notify("initialized", json!({}));
    let filler = "The weather was mild and the days were long, so we walked by the river most evenings. ".repeat(30);
    let text = format!("The report was written by Quorvath Delling. Later Quorvath moved to the coast.\n\n{filler}\n\nIn June we called Quor");
    let uri = format!("{root}/story.md");
    c.open(&uri, "markdown", &text);
    // Asked until the model has loaded (and, for the workspace's word, its scan is done).
    let until = |c: &mut Client, uri: &str, col: usize, want: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let r = c.request(
                "textDocument/inlineCompletion",
                json!({"textDocument": {"uri": uri}, "position": pos(4, col as u32), "context": {"triggerKind": 1}}),
            );
            if r["result"]["items"][0]["insertText"] == want {
                return;
            }
            assert!(Instant::now() < deadline, "never {want:?}: {r}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    until(&mut c, &uri, "In June we called Quor".len(), "vath");
    let other = format!("{root}/plan.md");
    let line = "Next week we restart Vantr";
    c.open(&other, "markdown", &format!("Notes.\n\n\n\n{line}"));
    until(&mut c, &other, line.len(), "exil");
    c.shutdown().unwrap();
}

/// A ghost text read and typed past twice after the same word is held back at the next such
/// place, unless the model is nearly certain; typed over before it could be read, it is not.
#[test]
fn a_suggestion_turned_down_twice_after_a_word_is_held_back_there() {
    let ask = |c: &mut Client, uri: &str, col: u32| -> Value {
        let r =
            c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
        r["result"]["items"][0]["insertText"].clone()
    };
    let run = |pause: bool| -> Vec<Value> {
        // Without the writer's words, which would hold "Paris" back too: "Rome" and "Lyon" were
        // written after "France is" (see the next test for them).
        let mut c = Client::start(json!({"latencyBudgetMs": 20000, "recall": false}));
        wait_for_model(&mut c);
        let uri = "file:///tmp/laya-test/capitals.md";
        let text = "The capital of France is ";
        c.open(uri, "markdown", text);
        let (mut col, mut version) = (text.len() as u32, 1i64);
        let mut answers = vec![ask(&mut c, uri, col)];
        // After "is", "Paris" each time (the model: 0.77, 0.89, 0.77; never nearly certain).
        for next in ["Rome. Everyone knows the capital of France is ", "Lyon. Wrong. The true capital of France is "] {
            if pause {
                std::thread::sleep(Duration::from_millis(400)); // read, then typed past
            }
            type_chars(&mut c, uri, &mut col, &mut version, next);
            answers.push(ask(&mut c, uri, col));
        }
        answers
    };
    assert_eq!(run(false), [json!("Paris"), json!("Paris"), json!("Paris")], "typed over unread: shown every time");
    assert_eq!(run(true), [json!("Paris"), json!("Paris"), Value::Null], "read and turned down twice: held back");
}

#[test]
fn the_first_suggestion_in_another_script_waits_for_its_model_without_going_stale() {
    // A latency budget far shorter than the multilingual model's load: the load is not the
    // suggestion's wait, so it is answered once the model is in, not dropped as late.
    let mut c = Client::start(json!({"latencyBudgetMs": 100}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let uri = "file:///tmp/laya-test/first-zh.md";
    c.open(uri, "markdown", "中华人民共");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, 5), "context": {"triggerKind": 2}}));
    let ghost = r["result"]["items"][0]["insertText"].as_str().unwrap_or_else(|| panic!("no ghost text: {r}"));
    assert!(ghost.starts_with("和"), "{r}");
    c.shutdown().unwrap();
}

#[test]
fn a_chinese_document_is_served_by_the_multilingual_model() {
    let mut c = Client::start(json!({"latencyBudgetMs": 20000}));
    c.wait_for("the model to load", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    // Typed as an input method commits it, a character at a time, with a character outside
    // the BMP first (two UTF-16 units) so that every later position depends on counting right.
    let uri = "file:///tmp/laya-test/zh.md";
    c.open(uri, "markdown", "𠀋");
    let (mut col, mut version) = (2u32, 1i64);
    type_chars(&mut c, uri, &mut col, &mut version, "。中华人民共");
    let r = c.request("laya/documentText", json!({"uri": uri}));
    assert_eq!(r["result"]["text"], "𠀋。中华人民共", "{r}");
    let r = c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
    let ghost = r["result"]["items"][0]["insertText"].as_str().unwrap_or_else(|| panic!("no ghost text: {r}"));
    assert!(ghost.starts_with("和"), "{r}");
    assert_eq!(r["result"]["items"][0]["range"], json!({"start": pos(0, col), "end": pos(0, col)}), "{r}");
    let r = c.request("laya/stats", Value::Null);
    assert!(r["result"]["engine"]["model"].as_str().is_some(), "{r}");
    // Chinese is not checked against the English lexicon: no diagnostics for it.
    let d = c.wait_for("diagnostics", |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri);
    assert_eq!(d["params"]["diagnostics"], json!([]), "{d}");
    let note = c.wait_for("the note on spelling", |m| {
        m["method"] == "window/logMessage" && m["params"]["message"].as_str().is_some_and(|t| t.contains("zh.md"))
    });
    assert!(note["params"]["message"].as_str().unwrap().contains("Han script"), "{note}");
    // Ranking and converting pinyin over LSP, as an input-method front-end asks.
    let r = c.request("laya/rank", json!({"context": "今天天气真", "candidates": ["好", "不错", "晴朗", "糟糕"]}));
    assert_eq!(r["result"]["ranked"][0]["candidate"], "好", "{r}");
    let r = c.request("laya/convert", json!({"pinyin": "zhong guo", "n": 3}));
    assert_eq!(r["result"]["candidates"][0]["text"], "中国", "{r}");
    assert!(r["result"]["candidates"][0]["logprob"].as_f64().is_some(), "{r}");
    let r = c.request("laya/convert", json!({"pinyin": "not pinyin at all!"}));
    assert!(r["error"]["message"].as_str().is_some(), "{r}");
    let r = c.request("laya/convert", json!({"pinyin": "ni hao", "n": 0}));
    assert!(r["error"]["message"].as_str().unwrap().contains("1 to 50"), "{r}");
    c.shutdown().unwrap();
}

/// A misspelling that ends a sentence, typed at a writer's pace with ghost text asked at each
/// key, then "." and Enter, gets its diagnostic: the last word of a line is finished once the
/// writer moves past it, like any other.
#[test]
fn a_misspelling_before_the_full_stop_and_enter_is_flagged() {
    let mut c = Client::start(json!({"debounceMs": 250}));
    wait_for_model(&mut c);
    let uri = "file:///tmp/laya-test/enter.md";
    c.open(uri, "markdown", "");
    let (mut col, mut version) = (0u32, 1i64);
    for ch in "They can help, and we recieve.".chars() {
        type_chars(&mut c, uri, &mut col, &mut version, &ch.to_string());
        c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos(0, col), "context": {"triggerKind": 2}}));
        std::thread::sleep(Duration::from_millis(80));
    }
    version += 1;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version},
               "contentChanges": [{"range": {"start": pos(0, col), "end": pos(0, col)}, "text": "\n"}]}),
    );
    let d = c.wait_for("the diagnostic of the sentence's last word", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["version"] == version
            && m["params"]["diagnostics"].as_array().is_some_and(|a| !a.is_empty())
    });
    assert_eq!(d["params"]["diagnostics"][0]["range"], json!({"start": pos(0, 22), "end": pos(0, 29)}), "{d}");
    c.shutdown().unwrap();
}
