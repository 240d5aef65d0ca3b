//! End-to-end: the real `laya` binary on the default model — what a newcomer types and what
//! an editor integration parses (`--json` is one object on stdout), and the errors they see.

use std::process::{Command, Output};

use serde_json::Value;

fn laya(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_laya")).args(args).output().expect("laya runs")
}

fn json(args: &[&str]) -> Value {
    let out = laya(args);
    assert!(out.status.success(), "laya {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.trim_end().lines().count(), 1, "--json prints one line: {stdout}");
    let v: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert!(v["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0) || ["doctor", "bench"].contains(&args[0]), "{v}");
    v
}

fn fails_with(args: &[&str], env: &[(&str, &str)], needles: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_laya")).args(args).envs(env.iter().copied()).output().unwrap();
    assert!(!out.status.success(), "laya {args:?} should fail");
    assert!(out.stdout.is_empty(), "errors go to stderr, not stdout");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
}

#[test]
fn complete_puts_paris_first() {
    let v = json(&["complete", "--json", "The capital of France is"]);
    let first = &v["suggestions"][0];
    assert_eq!(first["insert"], " Paris", "{v}");
    assert_eq!(first["kind"], "next_word");
    assert!((first["prob"].as_f64().unwrap() - 0.77).abs() < 0.01, "{v}");
}

#[test]
fn complete_inside_a_word_continues_what_is_typed() {
    let v = json(&["complete", "--json", "-n", "3", "It was a bright cold day in Apr"]);
    let s = v["suggestions"].as_array().unwrap();
    assert!(s.len() <= 3);
    assert_eq!(s[0]["insert"], "il", "{v}");
    assert_eq!(s[0]["word"], "April");
    assert_eq!(s[0]["kind"], "complete_word");
    for x in s {
        assert!(x["word"].as_str().unwrap().starts_with("Apr"), "every completion keeps the typed letters: {v}");
    }
}

#[test]
fn complete_after_a_space_does_not_repeat_it() {
    let v = json(&["complete", "--json", "I would like to thank you for your "]);
    let s = v["suggestions"].as_array().unwrap();
    // The next word itself, no space before it ("dedication" and "help" are about as likely).
    assert!(s.iter().all(|x| x["insert"] == x["word"] && !x["insert"].as_str().unwrap().starts_with(' ')), "{v}");
    assert!(s.iter().take(2).any(|x| x["insert"] == "help"), "{v}");
}

#[test]
fn rank_puts_help_before_banana() {
    let v = json(&["rank", "--json", "--context", "I would like to thank you for your", "banana", "help"]);
    let r = v["ranked"].as_array().unwrap();
    assert_eq!(r[0]["candidate"], "help");
    assert_eq!(r[1]["candidate"], "banana");
    assert!(r[0]["logprob"].as_f64().unwrap() > r[1]["logprob"].as_f64().unwrap() + 5.0);
    assert_eq!(r[0]["scored_as"], " help", "whole words get their leading space");
}

#[test]
fn doctor_reports_the_engine_and_the_model() {
    let v = json(&["doctor", "--json"]);
    assert_eq!(v["mlx"], "0.32.2");
    assert_eq!(v["architecture"], "llama");
    assert_eq!(v["format"], "GGUF");
    assert_eq!(v["layers"], 30);
    assert!(v["parameters"].as_u64().unwrap() > 130_000_000);
    assert!(v["model"].as_str().unwrap().ends_with("SmolLM2-135M-Instruct.Q4_1.gguf"));
    assert!(v["load_ms"].as_f64().unwrap() > 0.0);
}

#[test]
fn version_names_mlx_and_the_device() {
    let out = laya(&["--version"]);
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.starts_with("laya 0.1.0") && s.contains("MLX 0.32.2") && s.contains("device"), "{s}");
}

#[test]
fn help_lists_every_command() {
    let s = String::from_utf8(laya(&["--help"]).stdout).unwrap();
    for cmd in ["complete", "rank", "check", "doctor", "bench", "eval", "serve"] {
        assert!(s.contains(cmd), "{s}");
    }
}

#[test]
fn errors_say_what_and_what_to_do() {
    fails_with(&["complete", "--model", "/nope/model.gguf", "Hi"], &[], &["/nope/model.gguf", "does not exist"]);
    fails_with(&["complete", "Hi"], &[("LAYA_MODEL", "/nope/env.gguf")], &["/nope/env.gguf", "LAYA_MODEL"]);
    let empty = tempfile::tempdir().unwrap();
    fails_with(
        &["doctor"],
        &[("XDG_CACHE_HOME", empty.path().to_str().unwrap()), ("LAYA_MODEL", "")],
        &["default model is not installed", "make model"],
    );
    fails_with(&["complete", ""], &[], &["TEXT is empty"]);
    fails_with(&["rank", "--context", "", "a"], &[], &["--context is empty"]);
    fails_with(&["complete", "-n", "0", "Hi"], &[], &["0"]);
    let notes = empty.path().join("notes.txt");
    std::fs::write(&notes, "hello").unwrap();
    fails_with(&["doctor", "--model", notes.to_str().unwrap()], &[], &["not a GGUF file"]);
}

#[test]
fn bench_quick_runs_every_workload_and_reports_well_formed_json() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("bench.svg");
    let out = dir.path().join("bench.json");
    let v = json(&["bench", "--quick", "--json", "--peers", "none", "--svg", svg.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let w = &v["engines"]["laya"]["workloads"];
    for name in ["prefill_64", "prefill_512", "decode_64", "decode_512", "score_8", "append_2"] {
        let m = w[name]["median_ms"].as_f64().unwrap_or(0.0);
        assert!(m > 0.0 && w[name]["p10_ms"].as_f64().unwrap() <= m && m <= w[name]["p90_ms"].as_f64().unwrap(), "{name}: {}", w[name]);
        assert_eq!(w[name]["reps"], 3);
    }
    assert_eq!(w["score_8"]["check"]["totals"].as_array().unwrap().len(), 8);
    assert!(v["engines"]["laya"]["peak_rss_bytes"].as_u64().unwrap() > 100_000_000);
    // Which CPU, which of its features, and what the kernels used of them.
    assert!(v["cpu"]["features"].is_array() && v["cpu"]["kernels"].as_str().is_some_and(|k| !k.is_empty()), "{}", v["cpu"]);
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(saved["engines"]["laya"]["workloads"]["decode_64"]["reps"], 3);
}

#[test]
fn bench_runs_its_peers_on_the_same_tokens() {
    // make test sets up both peers (.deps/llamacpp and .deps/pyref).
    let v = json(&["bench", "--quick", "--json", "--only", "decode_64,score_8,append_2"]);
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v}");
    for peer in ["llama.cpp", "mlx-python"] {
        let e = &v["engines"][peer];
        assert!(e["workloads"]["decode_64"]["median_ms"].as_f64().is_some(), "{peer}: {e}");
        let ratio = v["ratios"][peer]["decode_64"].as_f64().unwrap();
        assert!(ratio > 0.0, "{peer}");
        // Same model, same tokens: the same next token after the 64-token prompt + 1.
        assert_eq!(e["workloads"]["decode_64"]["check"]["argmax"], v["engines"]["laya"]["workloads"]["decode_64"]["check"]["argmax"], "{peer}");
        // Candidate scores agree to a few tenths of a nat (llama.cpp's batching moves them ~0.2).
        let ours = v["engines"]["laya"]["workloads"]["score_8"]["check"]["totals"].as_array().unwrap().clone();
        let theirs = e["workloads"]["score_8"]["check"]["totals"].as_array().unwrap();
        for (a, b) in ours.iter().zip(theirs) {
            assert!((a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 0.35, "{peer}: {ours:?} vs {theirs:?}");
        }
    }
}

#[test]
fn bench_rejects_bad_arguments() {
    fails_with(&["bench", "--only", "nonsense"], &[], &["nonsense"]);
    fails_with(&["bench", "--reps", "0", "--peers", "none"], &[], &["--reps must be at least 1"]);
}

fn data(name: &str) -> String {
    format!("{}/../../tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn check_finds_a_misspelling_and_a_confused_word() {
    let v = json(&["check", "--json", "I will recieve the letter, and than we will see."]);
    let issues = v["issues"].as_array().unwrap();
    assert_eq!(issues[0]["word"], "recieve", "{v}");
    assert_eq!(issues[0]["kind"], "misspelling");
    assert_eq!(issues[0]["suggestions"][0], "receive", "{v}");
    assert!(issues.iter().any(|i| i["word"] == "than" && i["suggestions"][0] == "then"), "{v}");
    let v = json(&["check", "--json", "The Zorblat server at https://exmaple.org runs `cargo tset` fine."]);
    assert_eq!(v["issues"], serde_json::json!([]), "names, URLs and code are left alone: {v}");
}

#[test]
fn check_catches_the_everyday_slips_and_leaves_their_right_uses_alone() {
    for (text, slip) in [
        // At a text's very start, after the paragraph break the model reads first, "its" here
        // leads by 2.0 nats, under the common sets' 2.5; one sentence before it, by 5.2.
        ("Look at the clouds. I think its going to rain.", ("its", "it's")),
        ("I hope their going to the park.", ("their", "they're")),
        ("I think your right about this.", ("your", "you're")),
        // The first word is read as the start of a paragraph.
        ("Your welcome.", ("Your", "You're")),
        ("Both are preceded by an return statement.", ("an", "a")),
    ] {
        let v = json(&["check", "--json", text]);
        let flagged: Vec<(&str, &str)> =
            v["issues"].as_array().unwrap().iter().map(|i| (i["word"].as_str().unwrap(), i["suggestions"][0].as_str().unwrap())).collect();
        assert_eq!(flagged, [slip], "{v}");
    }
    let v = json(&["check", "--json", "It's going to rain on their picnic. You're welcome to bring your dog; its bark is worse than its bite."]);
    assert_eq!(v["issues"], serde_json::json!([]), "right uses are left alone: {v}");
    let v = json(&["check", "--json", "It takes an hour and a half. This is an unusual case, a useful one, and an SQL query."]);
    assert_eq!(v["issues"], serde_json::json!([]), "a and an by sound, not by letter: {v}");
    // A rarer word of a set is not a slip for being rarer, first word or not.
    let v = json(&["check", "--json", "Thorough work pays. Witch hunts were common."]);
    assert_eq!(v["issues"], serde_json::json!([]), "{v}");
}

#[test]
fn text_that_starts_with_a_dash_is_text_not_an_option() {
    // Every Markdown list item starts so; options may still come before or after it.
    let v = json(&["check", "- I recieved the letter.", "--json"]);
    assert_eq!(v["issues"][0]["word"], "recieved", "{v}");
    assert_eq!(v["issues"][0]["start"], 4, "{v}");
    let v = json(&["complete", "--json", "-n", "2", "- The capital of France is"]);
    assert_eq!(v["suggestions"][0]["insert"], " Paris", "{v}");
    let v = json(&["rank", "--json", "--context", "- The capital of France is", "Paris", "London"]);
    assert_eq!(v["ranked"][0]["candidate"], "Paris", "{v}");
    // `-` alone still reads stdin, and a missing text is still an error.
    fails_with(&["check", "--json"], &[], &["TEXT"]);
}

#[test]
fn check_judges_a_word_with_the_slip_beside_it_corrected() {
    // "teh" after it made "recieved" look as likely as "received": both are flagged.
    let v = json(&["check", "--json", "I recieved teh letter yesterday."]);
    let flagged: Vec<(&str, &str)> =
        v["issues"].as_array().unwrap().iter().map(|i| (i["word"].as_str().unwrap(), i["suggestions"][0].as_str().unwrap())).collect();
    assert_eq!(flagged, [("recieved", "received"), ("teh", "the")], "{v}");
}

#[test]
fn check_flags_a_word_typed_twice_and_leaves_meant_repetitions_alone() {
    for (text, word) in
        [("He is the the best player.", "the"), ("Please send it to to me by Friday.", "to"), ("Look at the clouds. I think it it will rain.", "it")]
    {
        let v = json(&["check", "--json", text]);
        let issues = v["issues"].as_array().unwrap();
        assert_eq!(issues.len(), 1, "{text}: {v}");
        let i = &issues[0];
        assert_eq!(i["kind"], "repeated_word", "{v}");
        assert_eq!(i["suggestions"][0], "", "its fix deletes it: {v}");
        // The issue spans the space before the second word and it: deleting it leaves the
        // sentence with one word and one space.
        let (s, e) = (i["start"].as_u64().unwrap() as usize, i["end"].as_u64().unwrap() as usize);
        assert_eq!(&text[s..e], format!(" {word}"), "{v}");
        let fixed = format!("{}{}", &text[..s], &text[e..]);
        assert!(!fixed.contains(&format!("{word} {word}")) && !fixed.contains("  "), "{fixed}");
    }
    for text in ["By then I had had enough.", "He said that that was fine.", "She was very very happy.", "It was a long, long day."] {
        let v = json(&["check", "--json", text]);
        assert_eq!(v["issues"], serde_json::json!([]), "{text}: {v}");
    }
}

#[test]
fn check_takes_a_whole_file_longer_than_the_model_can_read_at_once() {
    // 45 KB of Alice (11,000 tokens; the model reads 8,192): checked a stretch at a time, with
    // the offsets of the whole text. It used to fail with "tokens exceed the model's context".
    let alice = std::fs::read_to_string(format!("{}/../../data/dev/prose/fiction-alice.txt", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let text = format!("It was a seperate matter.\n\n{}\n\nShe would recieve the letter tomorrow.\n", alice.trim_end());
    let path = std::env::temp_dir().join(format!("laya-check-long-{}.txt", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_laya")).args(["check", "--json", "-"]).stdin(std::fs::File::open(&path).unwrap()).output().unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(&str, usize, &str)> = v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["word"].as_str().unwrap(), i["start"].as_u64().unwrap() as usize, i["suggestions"][0].as_str().unwrap_or("")))
        .collect();
    // Carroll's own odd words ("skurried", "arrum") are flagged in between; every offset is
    // the word's in the whole text.
    assert_eq!(found.first(), Some(&("seperate", text.find("seperate").unwrap(), "separate")), "{v}");
    assert_eq!(found.last(), Some(&("recieve", text.find("recieve").unwrap(), "receive")), "{v}");
    for (word, start, _) in &found {
        assert_eq!(&text[*start..*start + word.len()], *word);
    }
}

#[test]
fn eval_reports_well_formed_numbers_on_the_samples() {
    let v = json_any(&["eval", "typos", "--json", &data("typos-sample.tsv")]);
    assert_eq!(v["pairs"], 60, "{v}");
    for k in ["top1", "top3", "top5"] {
        assert!((0.0..=1.0).contains(&v[k].as_f64().unwrap()), "{v}");
    }
    assert!(v["top5"].as_f64().unwrap() >= v["top1"].as_f64().unwrap());
    let v = json_any(&["eval", "context", "--json", "--limit", "6", "--seed", "3", &data("context-sample.jsonl")]);
    assert_eq!(v["texts"], 6, "{v}");
    assert!(v["false_alarms_per_1000_words"].as_f64().is_some() && v["latency"]["p50_ms"].as_f64().is_some(), "{v}");
    let v = json_any(&["eval", "next-word", "--json", "--limit", "80", &data("prose-sample.txt")]);
    let ks = v["keystroke_savings"].as_f64().unwrap();
    assert!((0.0..1.0).contains(&ks) && v["characters"].as_u64().unwrap() >= 80, "{v}");
    assert!(v["next_word"]["words"].as_u64().unwrap() > 5, "{v}");
}

/// `--peer` runs the real spell checkers (`make spell-peers`) on the same items: a line with two
/// labelled errors is one text, and a flag on either is no false alarm.
#[test]
fn eval_runs_the_peers_on_the_same_items() {
    let dir = tempfile::tempdir().unwrap();
    let typos = dir.path().join("t.tsv");
    std::fs::write(&typos, "recieve\treceive\nbeleive\tbelieve\n").unwrap();
    let v = json_any(&["eval", "typos", "--json", "--peer", "aspell", "--peer", "hunspell", typos.to_str().unwrap()]);
    for peer in ["aspell", "hunspell"] {
        assert_eq!(v["peers"][peer]["top1"], 1.0, "{v}");
        assert!(v["peers"][peer]["version"].as_str().unwrap().contains("really"), "{v}");
    }
    let cases = dir.path().join("c.jsonl");
    let line = "I recieved teh letter yesterday.";
    let rec = |s: usize, e: usize, c: &str| serde_json::json!({"text": line, "start": s, "end": e, "correct": c}).to_string();
    std::fs::write(
        &cases,
        format!("{}\n{}\n{}\n", rec(2, 10, "received"), rec(11, 14, "the"), serde_json::json!({"text": "A clean line of prose."})),
    )
    .unwrap();
    let v = json_any(&["eval", "context", "--json", "--peer", "harper", "--peer", "cspell", cases.to_str().unwrap()]);
    assert_eq!((v["texts"].as_u64(), v["errors"].as_u64()), (Some(2), Some(2)), "{v}");
    assert_eq!(v["peers"]["harper"]["detection_recall"], 1.0, "{v}");
    assert_eq!(v["peers"]["harper"]["false_alarms"], 0, "{v}");
    assert!(v["peers"]["cspell"]["detection_recall"].as_f64().unwrap() >= 0.5, "{v}");
    fails_with(&["eval", "typos", "--peer", "harper", typos.to_str().unwrap()], &[], &["does not suggest for words alone", "eval context"]);
}

/// `--workspace` names a folder of the writer's text (and recalls the writer's words); without
/// it or `--recall` they are left out.
#[test]
fn eval_next_word_recalls_the_workspace_and_says_when_it_is_not_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "The Quorvath engine runs. Quorvath is fast.\n").unwrap();
    let file = data("prose-sample.txt");
    let v = json_any(&["eval", "next-word", "--json", "--limit", "40", "--workspace", dir.path().to_str().unwrap(), &file]);
    assert_eq!((v["recall"].as_bool(), v["workspace"]["files"].as_u64(), v["workspace"]["words"].as_u64()), (Some(true), Some(1), Some(7)), "{v}");
    let v = json_any(&["eval", "next-word", "--json", "--limit", "40", &file]);
    assert_eq!(v["recall"], false, "{v}");
    let missing = dir.path().join("nowhere");
    fails_with(&["eval", "next-word", "--workspace", missing.to_str().unwrap(), &file], &[], &["--workspace", "nowhere"]);
    fails_with(&["eval", "next-word", "--workspace", &file, &file], &[], &["is not a folder"]);
}

#[test]
fn eval_says_which_line_is_bad() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&bad, "teh\tthe\nno tab here\n").unwrap();
    fails_with(&["eval", "typos", bad.to_str().unwrap()], &[], &["bad.tsv:2", "typo<TAB>correct"]);
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"text\": \"a teh b\", \"start\": 2, \"end\": 9, \"error\": \"teh\", \"correct\": \"the\"}\n").unwrap();
    fails_with(&["eval", "context", bad.to_str().unwrap()], &[], &["bad.jsonl:1", "outside the text"]);
}

#[test]
fn bench_replay_types_into_the_language_service() {
    let v = json_any(&["bench", "--replay", "--quick", "--chars", "40", "--pace-ms", "10", "--json"]);
    assert_eq!(v["characters"], 40, "{v}");
    assert!(v["ghost_text"]["n"].as_u64().unwrap() > 30, "{v}");
    assert!(v["ghost_text"]["p50_ms"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["cache_bytes"].as_u64().unwrap() > 0, "{v}");
}

/// Like `json`, for commands whose output has no single latency.
fn json_any(args: &[&str]) -> Value {
    let out = laya(args);
    assert!(out.status.success(), "laya {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// The pinyin dictionary `make pinyin` builds, or None (the test says why it is skipped).
fn pinyin_dict() -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.deps/pinyin/zh.tsv");
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("skipped: no pinyin dictionary at {}: run `make pinyin`", p.display());
        None
    }
}

#[test]
fn convert_gives_json_candidates_best_first() {
    let Some(dict) = pinyin_dict() else { return };
    let v = json(&["convert", "--json", "--pinyin", "ni hao", "--n", "3", "--dict", dict.to_str().unwrap()]);
    let c = v["candidates"].as_array().unwrap();
    assert!(!c.is_empty() && c.len() <= 3, "{v}");
    assert!(c.iter().any(|x| x["text"] == "你好"), "{v}");
    for x in c {
        assert_eq!(x["text"].as_str().unwrap().chars().count(), 2, "{v}");
        assert!(x["logprob"].as_f64().unwrap() < 0.0, "{v}");
    }
    fails_with(&["convert", "--pinyin", "ni3hao", "--dict", dict.to_str().unwrap()], &[], &["not pinyin", "'3'"]);
    fails_with(&["convert", "--pinyin", "ni hao", "--dict", "/nonexistent/zh.tsv"], &[], &["/nonexistent/zh.tsv"]);
}

#[test]
fn convert_from_stdin_answers_every_line_and_survives_bad_ones() {
    let Some(dict) = pinyin_dict() else { return };
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_laya"))
        .args(["convert", "--pinyin", "-", "--n", "2", "--dict", dict.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all("xi'an\nnot pinyin 1\n\nzhong\n".as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(lines[0]["candidates"].as_array().is_some_and(|c| c.iter().any(|x| x["text"] == "西安")), "{}", lines[0]);
    assert!(lines[1]["error"].as_str().unwrap().contains("not pinyin"), "{}", lines[1]);
    assert!(lines[2]["error"].as_str().unwrap().contains("empty"), "{}", lines[2]);
    assert_eq!(lines[3]["candidates"].as_array().unwrap().len(), 2, "{}", lines[3]);
}

#[test]
fn rime_converts_a_few_rows() {
    let helper = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.deps/peers/rime/laya-rime");
    if !helper.is_file() {
        eprintln!("skipped: Rime's helper is not built at {}: run `make spell-peers`", helper.display());
        return;
    }
    use std::io::Write;
    let mut child = Command::new(&helper)
        .arg(helper.parent().unwrap().join("user"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"ni hao\nxi'an\nzhongguo\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().collect::<Vec<_>>(), ["你好", "西安", "中国"], "{text}");
}
