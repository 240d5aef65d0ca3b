//! Gemma 3 270M (GGUF Q4_K_M) against two references, and its KV cache against itself.
//!
//! - MLX's Python `gemma3_text` (mlx-lm's model class, run live) on the *same* weights: the
//!   test writes the arrays Laya's GGUF reader makes (4-bit and re-quantized 8-bit groups) into an
//!   mlx-lm folder, so only the order of float sums differs. Tolerance 2e-3 (Gemma's logits
//!   reach ~30; what we measured is in the test's output). A wrong norm, window or rope base
//!   moves logits by 0.1 or more.
//! - llama.cpp on the GGUF file itself (`tests/fixtures/gemma3-llamacpp.json`, made by
//!   `tests/reference/gemma3_llamacpp.py`): its Q6_K is exact where ours is re-quantized to 8 bits,
//!   it multiplies by the exact sqrt(640) and its kernels quantize activations to 8 bits. So the
//!   bar is lower: logits within 0.75 at llama.cpp's top 8 and the same top token at nearly
//!   every position.
//!
//! Every sequence starts with BOS (id 2): Gemma without it is lost.

mod common;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::*;
use laya_model::{KvCache, LoadOptions, Model};
use mlx_rs::Array;

const TOL_MLX_PYTHON: f32 = 2e-3;

/// The texts of the parity tests: English, Chinese, code.
const TEXTS: [&str; 3] = [
    PROSE,
    "今天天气真好，我们一起去公园散步吧。春天来了，花都开了，孩子们在草地上跑来跑去。",
    "fn fibonacci(n: u64) -> u64 {\n    match n {\n        0 => 0,\n        1 => 1,\n        _ => fibonacci(n - 1) + fibonacci(n - 2),\n    }\n}\n",
];

fn gemma(test: &str) -> Option<PathBuf> {
    gemma_model_path(test)
}

fn load(path: &Path, cpu_kernels: bool) -> Model {
    Model::load_with(path, LoadOptions { cpu_kernels, ..LoadOptions::default() }).expect("Gemma loads")
}

/// Loads `path` with MLX's kernels and, where built, with Laya's.
fn both_ways(path: &Path) -> Vec<(Model, &'static str)> {
    let mut v = vec![(load(path, false), "MLX kernels")];
    if laya_model::cpu_kernels::available() {
        v.push((load(path, true), "Laya kernels"));
    }
    v
}

/// `[<bos>] + text`'s tokens.
fn ids(model: &Model, text: &str) -> Vec<u32> {
    assert_eq!(model.tokenizer.start(), &[2], "Gemma's sequences start with <bos>");
    let mut ids = model.tokenizer.start().to_vec();
    ids.extend(model.tokenizer.encode(text).unwrap());
    ids
}

/// GGUF tensor base name -> mlx-lm `gemma3_text` module path.
fn mlx_name(base: &str) -> String {
    match base {
        "token_embd" => return "model.embed_tokens".into(),
        "output_norm" => return "model.norm".into(),
        _ => {}
    }
    let (_, rest) = base.split_once('.').expect("blk.N.part");
    let (n, part) = rest.split_once('.').expect("blk.N.part");
    let module = match part {
        "attn_norm" => "input_layernorm",
        "attn_q" => "self_attn.q_proj",
        "attn_k" => "self_attn.k_proj",
        "attn_v" => "self_attn.v_proj",
        "attn_output" => "self_attn.o_proj",
        "attn_q_norm" => "self_attn.q_norm",
        "attn_k_norm" => "self_attn.k_norm",
        "post_attention_norm" => "post_attention_layernorm",
        "ffn_norm" => "pre_feedforward_layernorm",
        "post_ffw_norm" => "post_feedforward_layernorm",
        "ffn_gate" => "mlp.gate_proj",
        "ffn_up" => "mlp.up_proj",
        "ffn_down" => "mlp.down_proj",
        other => panic!("unexpected Gemma tensor {base} ({other})"),
    };
    format!("model.layers.{n}.{module}")
}

/// Writes the arrays Laya's GGUF reader makes of `gguf` as an mlx-lm `gemma3_text` folder
/// (config.json, model.safetensors): norms less the 1 that gemma3_text adds back, the rest as is.
fn export_mlx_lm(gguf: &Path, model: &Model, dir: &Path) {
    let header = laya_model::gguf::read_header(gguf).unwrap();
    let tensors = laya_model::gguf_tensors::read_tensors(gguf, &header, false).unwrap();
    let mut out: HashMap<String, Array> = HashMap::new();
    for (name, a) in tensors {
        let (base, suffix) = name.rsplit_once('.').unwrap();
        let a = if base.ends_with("norm") { a.subtract(Array::from_f32(1.0)).unwrap() } else { a };
        out.insert(format!("{}.{suffix}", mlx_name(base)), a);
    }
    Array::save_safetensors(out, None, dir.join("model.safetensors")).unwrap();
    let c = &model.config;
    let g = c.gemma.as_ref().unwrap();
    let config = serde_json::json!({
        "model_type": "gemma3_text",
        "hidden_size": c.hidden,
        "num_hidden_layers": c.n_layers,
        "intermediate_size": c.intermediate,
        "num_attention_heads": c.n_heads,
        "num_key_value_heads": c.n_kv_heads,
        "head_dim": c.head_dim,
        "rms_norm_eps": c.rms_eps,
        "vocab_size": c.vocab,
        "rope_theta": c.rope.base,
        "rope_local_base_freq": g.local_rope_base,
        "query_pre_attn_scalar": (1.0 / (g.attn_scale * g.attn_scale)).round(),
        "sliding_window": g.sliding_window,
        "sliding_window_pattern": g.sliding_pattern,
        "max_position_embeddings": c.context_len,
        // Each layer's bits and group size are read from its arrays' shapes.
        "quantization": {"group_size": 32, "bits": 4},
    });
    std::fs::write(dir.join("config.json"), serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

/// The exported folder, made once per test process.
fn exported(gguf: &Path, model: &Model) -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        export_mlx_lm(gguf, model, dir.path());
        dir
    })
    .path()
}

/// Positions whose argmax agrees, of all.
fn top1_agreement(a: &[f32], b: &[f32], vocab: usize) -> (usize, usize) {
    let argmax = |r: &[f32]| r.iter().enumerate().fold((0, f32::NEG_INFINITY), |m, (i, &x)| if x > m.1 { (i, x) } else { m }).0;
    let agree = a.chunks(vocab).zip(b.chunks(vocab)).filter(|(x, y)| argmax(x) == argmax(y)).count();
    (agree, a.len() / vocab)
}

#[test]
fn gemma_matches_mlx_python() {
    let Some(path) = gemma("gemma_matches_mlx_python") else { return };
    let _mlx = mlx_lock();
    for (model, how) in both_ways(&path) {
        let dir = exported(&path, &model);
        for text in TEXTS {
            let ids = ids(&model, text);
            let (theirs, vocab) = reference_logits(dir, &ids);
            assert_eq!(vocab, model.config.vocab);
            let ours = laya_logits(&model, &ids);
            let diff = max_abs_diff(&ours, &theirs);
            let (agree, n) = top1_agreement(&ours, &theirs, vocab);
            eprintln!("Gemma vs mlx-lm, {how}, {} tokens of {:?}: max |logit diff| {diff:.2e}, top-1 {agree}/{n}", ids.len(), &text[..12]);
            assert!(diff < TOL_MLX_PYTHON, "{how}: max |logit diff| {diff} on {text:?}");
        }
    }
}

#[test]
fn gemma_next_tokens_smoke() {
    let Some(path) = gemma("gemma_next_tokens_smoke") else { return };
    let _mlx = mlx_lock();
    let model = Model::load(&path).unwrap();
    eprintln!("load {:?} {}", model.info.load_time, model.info.quantization);
    let ids = ids(&model, "今天天气真");
    eprintln!("ids {ids:?}");
    let mut cache = KvCache::new();
    model.prefill(&mut cache, &ids).unwrap();
    let lp = model.next_logprobs(&cache).unwrap();
    let mut top: Vec<(usize, f32)> = lp.iter().copied().enumerate().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (id, l) in &top[..8] {
        eprintln!("{:?} {:.3} p={:.3}", model.tokenizer.token_text(*id as u32).unwrap(), l, l.exp());
    }
}
