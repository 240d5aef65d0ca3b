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
    assert!(v["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0) || args[0] == "doctor", "{v}");
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
    assert_eq!(v["suggestions"][0]["insert"], "help", "{v}");
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
    for cmd in ["complete", "rank", "doctor"] {
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
