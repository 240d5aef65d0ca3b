//! What the model crate's integration tests share: the default model, the Python MLX reference
//! (`tests/reference/mlx_reference.py` in the `.deps/pyref` venv that `make test` sets up), and
//! one lock so that only one test at a time drives MLX.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use laya_model::{KvCache, Model};

static MLX: Mutex<()> = Mutex::new(());

/// Serializes tests that run MLX (one thread owns the model, in tests as in the server).
pub fn mlx_lock() -> MutexGuard<'static, ()> {
    MLX.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The default model where `make model` puts it (the tests read the environment themselves,
/// as the binary does).
pub fn default_model_path() -> PathBuf {
    let cache = laya_model::xdg_home(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"), ".cache").expect("$HOME is set");
    let p = laya_model::default_model_path_in(&cache);
    assert!(p.exists(), "the default model is missing at {}: run `make model`", p.display());
    p
}

/// Gemma 3 270M's file name where `make model` puts it, beside the default model.
pub const GEMMA_MODEL_FILE: &str = "gemma-3-270m-q4_k_m.gguf";

/// Gemma 3 270M in the per-user cache (`<cache>/laya/models/gemma-3-270m-q4_k_m.gguf`), or None
/// after saying on stderr that `test` is skipped and how to fetch the file.
pub fn gemma_model_path(test: &str) -> Option<PathBuf> {
    let cache = laya_model::xdg_home(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"), ".cache").expect("$HOME is set");
    let p = cache.join("laya").join("models").join(GEMMA_MODEL_FILE);
    if p.exists() {
        return Some(p);
    }
    eprintln!("SKIPPED {test}: Gemma 3 is missing at {} (run `make model` to fetch it)", p.display());
    None
}

pub fn default_model() -> Model {
    Model::load(&default_model_path()).expect("the default model loads")
}

fn python() -> PathBuf {
    let py = repo().join(".deps/pyref/bin/python");
    assert!(py.exists(), "the Python reference is missing at {}: run scripts/bootstrap-pyref.sh (make test does)", py.display());
    py
}

/// Runs the reference script; returns its stdout's JSON line.
pub fn reference(args: &[&str]) -> serde_json::Value {
    let out = Command::new(python()).arg(repo().join("tests/reference/mlx_reference.py")).args(args).output().expect("the Python reference runs");
    assert!(out.status.success(), "reference {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("the reference prints JSON")
}

/// Logits of every position from MLX's Python forward (mlx-lm's model classes), f32 weights.
pub fn reference_logits(model: &Path, ids: &[u32]) -> (Vec<f32>, usize) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("logits.f32");
    let tokens = ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let info = reference(&["logits", "--model", model.to_str().unwrap(), "--tokens", &tokens, "--out", out.to_str().unwrap(), "--float32"]);
    let bytes = std::fs::read(&out).unwrap();
    let logits: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    let vocab = info["vocab"].as_u64().unwrap() as usize;
    assert_eq!(logits.len(), ids.len() * vocab);
    (logits, vocab)
}

/// [`reference_logits`] of the last `tail` positions only: [tail * vocab].
pub fn reference_logits_tail(model: &Path, ids: &[u32], tail: usize) -> (Vec<f32>, usize) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("logits.f32");
    let tokens = ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let args =
        ["logits", "--model", model.to_str().unwrap(), "--tokens", &tokens, "--out", out.to_str().unwrap(), "--float32", "--tail", &tail.to_string()];
    let info = reference(&args);
    let bytes = std::fs::read(&out).unwrap();
    let logits: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    let vocab = info["vocab"].as_u64().unwrap() as usize;
    assert_eq!(logits.len(), tail.min(ids.len()) * vocab);
    (logits, vocab)
}

/// A tiny random-weight mlx-lm checkpoint (config.json, model.safetensors, tokenizer.json).
pub fn make_checkpoint(arch: &str, bits: u32, group: u32, seed: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    reference(&[
        "make-checkpoint",
        "--arch",
        arch,
        "--bits",
        &bits.to_string(),
        "--group-size",
        &group.to_string(),
        "--seed",
        &seed.to_string(),
        "--out",
        dir.path().to_str().unwrap(),
        "--dtype",
        "float32",
    ]);
    dir
}

/// Logits of every position of `ids` from Laya's forward, as a flat [seq * vocab] vector.
pub fn laya_logits(model: &Model, ids: &[u32]) -> Vec<f32> {
    let mut cache = KvCache::new();
    let logits = model.forward(&[ids.to_vec()], &mut cache).unwrap();
    logits.as_slice::<f32>().to_vec()
}

/// Largest |a - b|.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// log-softmax of each row of `logits` ([rows * vocab]).
pub fn log_softmax(logits: &[f32], vocab: usize) -> Vec<f32> {
    logits
        .chunks(vocab)
        .flat_map(|row| {
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let lse = m + row.iter().map(|x| (x - m).exp()).sum::<f32>().ln();
            row.iter().map(move |x| x - lse)
        })
        .collect()
}

pub const PROSE: &str = "The quick brown fox jumps over the lazy dog. It was a bright cold day in April, and the clocks were striking thirteen.";
