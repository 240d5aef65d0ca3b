//! A model's shape and numerics (layers, heads, rope, norms), read from GGUF metadata or from an
//! mlx-lm `config.json`, checked for consistency before any tensor is loaded.

use std::path::Path;

use serde::Deserialize;

use crate::error::{ModelError, Result};
pub use crate::gemma::Gemma;
use crate::gguf::GgufHeader;

pub const SUPPORTED_GGUF_ARCHS: &str = "GGUF files of the \"llama\" (SmolLM2, Llama) and \"gemma3\" (Gemma 3 text) architectures";
pub const SUPPORTED_MLX_ARCHS: &str = "mlx-lm folders of model_type \"llama\", \"qwen2\", \"qwen3\" or \"gemma3_text\"";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    Llama,
    Qwen2,
    Qwen3,
    /// Gemma 3 text models (see `gemma.rs`).
    Gemma3,
}

impl Arch {
    pub fn name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Qwen2 => "qwen2",
            Arch::Qwen3 => "qwen3",
            Arch::Gemma3 => "gemma3",
        }
    }
}

/// Rotary position embedding settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Rope {
    pub base: f32,
    /// Interleaved pairs (GGUF Llama, whose Q/K rows are pre-permuted) rather than split halves.
    pub traditional: bool,
    /// Linear position scaling (1.0 = none).
    pub scale: f32,
    /// Per-dimension periods replacing `base^(2i/d)` (Llama 3 scaling), `head_dim / 2` long.
    pub periods: Option<Vec<f32>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    pub arch: Arch,
    pub n_layers: usize,
    pub hidden: usize,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_dim: usize,
    pub intermediate: usize,
    /// Rows of the embedding table (may exceed the tokenizer's ids: padded vocabularies).
    pub vocab: usize,
    pub rms_eps: f32,
    pub rope: Rope,
    pub tie_embeddings: bool,
    /// q/k/v projections carry a bias (Qwen2).
    pub qkv_bias: bool,
    /// RMS norms on queries and keys per head, before rope (Qwen3).
    pub qk_norm: bool,
    pub context_len: usize,
    pub eos: Vec<u32>,
    /// Gemma 3's block and attention settings; None for the Llama family.
    pub gemma: Option<Gemma>,
}

impl ModelConfig {
    fn check(self, path: &Path) -> Result<Self> {
        let bad = |reason: String| Err(ModelError::Config { path: path.to_path_buf(), reason });
        if self.n_layers == 0 || self.hidden == 0 || self.n_heads == 0 || self.vocab == 0 {
            return bad(format!("empty dimensions: {self:?}"));
        }
        if self.n_kv_heads == 0 || !self.n_heads.is_multiple_of(self.n_kv_heads) {
            return bad(format!("{} attention heads cannot share {} key/value heads", self.n_heads, self.n_kv_heads));
        }
        if self.head_dim == 0 || !self.head_dim.is_multiple_of(2) {
            return bad(format!("head dimension {} must be even", self.head_dim));
        }
        // Written so that NaN fails too.
        let in_range = self.rms_eps > 0.0 && self.rms_eps < 1.0 && self.rope.base > 1.0;
        if !in_range {
            return bad(format!("rms eps {} / rope base {} out of range", self.rms_eps, self.rope.base));
        }
        if let Some(g) = &self.gemma {
            let ok = g.sliding_window > 0 && g.sliding_pattern > 0 && g.local_rope_base > 1.0 && g.attn_scale > 0.0 && g.embed_scale > 0.0;
            if !ok {
                return bad(format!("Gemma settings out of range: {g:?}"));
            }
        }
        Ok(self)
    }

    /// Reads a Llama-architecture GGUF's hyper-parameters.
    pub fn from_gguf(path: &Path, h: &GgufHeader) -> Result<Self> {
        let arch = h.str("general.architecture").unwrap_or("(none)");
        if arch == "gemma3" {
            return crate::gemma::config_from_gguf(path, h)?.check(path);
        }
        if arch != "llama" {
            return Err(ModelError::UnsupportedArchitecture { path: path.to_path_buf(), arch: arch.into(), supported: SUPPORTED_GGUF_ARCHS });
        }
        let need = |key: &str| -> Result<u64> {
            h.u64(&format!("llama.{key}"))
                .ok_or_else(|| ModelError::Config { path: path.to_path_buf(), reason: format!("metadata llama.{key} is missing") })
        };
        let n_heads = need("attention.head_count")? as usize;
        let hidden = need("embedding_length")? as usize;
        let head_dim = h.u64("llama.rope.dimension_count").map(|d| d as usize).unwrap_or(hidden / n_heads.max(1));
        let vocab = match h.u64("llama.vocab_size") {
            Some(v) => v as usize,
            None => h.get("tokenizer.ggml.tokens").and_then(|v| v.as_array()).map(|a| a.len()).ok_or_else(|| ModelError::Tokenizer {
                path: path.to_path_buf(),
                reason: "the file has no vocabulary (tokenizer.ggml.tokens is missing)".into(),
            })?,
        };
        let scale = match h.str("llama.rope.scaling.type") {
            Some("linear") => 1.0 / h.f64("llama.rope.scaling.factor").unwrap_or(1.0) as f32,
            Some("none") | None => 1.0,
            Some(other) if h.tensor("rope_freqs.weight").is_some() => {
                let _ = other; // Llama 3 style: the factors travel as the rope_freqs tensor.
                1.0
            }
            Some(other) => {
                return Err(ModelError::Config {
                    path: path.to_path_buf(),
                    reason: format!("rope scaling {other:?} is not supported (none, linear, llama3 are)"),
                })
            }
        };
        let eos = h.u64("tokenizer.ggml.eos_token_id").map(|v| vec![v as u32]).unwrap_or_default();
        ModelConfig {
            arch: Arch::Llama,
            n_layers: need("block_count")? as usize,
            hidden,
            n_heads,
            n_kv_heads: h.u64("llama.attention.head_count_kv").map(|v| v as usize).unwrap_or(n_heads),
            head_dim,
            intermediate: need("feed_forward_length")? as usize,
            vocab,
            rms_eps: h.f64("llama.attention.layer_norm_rms_epsilon").unwrap_or(1e-5) as f32,
            rope: Rope {
                base: h.f64("llama.rope.freq_base").unwrap_or(10000.0) as f32,
                traditional: true,
                scale,
                periods: None, // filled from the rope_freqs tensor when present
            },
            tie_embeddings: h.tensor("output.weight").is_none(),
            qkv_bias: false,
            qk_norm: false,
            context_len: need("context_length")? as usize,
            eos,
            gemma: None,
        }
        .check(path)
    }

    /// Reads an mlx-lm / Hugging Face `config.json`.
    pub fn from_config_json(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::io(path, e))?;
        let c: HfConfig =
            serde_json::from_str(&text).map_err(|e| ModelError::Config { path: path.to_path_buf(), reason: format!("config.json: {e}") })?;
        let arch = match c.model_type.as_str() {
            "llama" | "mistral" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            "qwen3" => Arch::Qwen3,
            "gemma3_text" => Arch::Gemma3,
            other => {
                return Err(ModelError::UnsupportedArchitecture { path: path.to_path_buf(), arch: other.into(), supported: SUPPORTED_MLX_ARCHS })
            }
        };
        let gemma = arch == Arch::Gemma3;
        let n_heads = c.num_attention_heads;
        // mlx-lm's gemma3_text defaults where its config.json says nothing.
        let head_dim = c.head_dim.unwrap_or(if gemma { 256 } else { c.hidden_size / n_heads.max(1) });
        let base = c.rope_theta.unwrap_or(if gemma { 1_000_000.0 } else { 10000.0 });
        let (scale, periods) = rope_scaling(path, c.rope_scaling.as_ref(), base, head_dim)?;
        let eos = match c.eos_token_id {
            Some(serde_json::Value::Number(n)) => n.as_u64().map(|v| vec![v as u32]).unwrap_or_default(),
            Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_u64()).map(|v| v as u32).collect(),
            _ => vec![],
        };
        ModelConfig {
            arch,
            n_layers: c.num_hidden_layers,
            hidden: c.hidden_size,
            n_heads,
            n_kv_heads: c.num_key_value_heads.unwrap_or(n_heads),
            head_dim,
            intermediate: c.intermediate_size,
            vocab: c.vocab_size,
            rms_eps: c.rms_norm_eps.unwrap_or(1e-6),
            rope: Rope { base, traditional: c.rope_traditional.unwrap_or(false), scale, periods },
            tie_embeddings: c.tie_word_embeddings.unwrap_or(true),
            qkv_bias: arch == Arch::Qwen2 || c.attention_bias.unwrap_or(false),
            qk_norm: matches!(arch, Arch::Qwen3 | Arch::Gemma3),
            context_len: c.max_position_embeddings.unwrap_or(if gemma { 32768 } else { 4096 }),
            eos,
            gemma: gemma.then(|| Gemma {
                sliding_window: c.sliding_window.unwrap_or(512),
                sliding_pattern: c.sliding_window_pattern.unwrap_or(6),
                local_rope_base: c.rope_local_base_freq.unwrap_or(10000.0),
                attn_scale: c.query_pre_attn_scalar.unwrap_or(256.0).powf(-0.5),
                embed_scale: Gemma::embed_scale(c.hidden_size),
            }),
        }
        .check(path)
    }

    /// Parameters, counting each quantized weight once as the value it stands for.
    pub fn parameter_count(&self) -> u64 {
        let (h, i, hd) = (self.hidden as u64, self.intermediate as u64, self.head_dim as u64);
        let attn = h * hd * (self.n_heads as u64) * 2 + h * hd * (self.n_kv_heads as u64) * 2;
        let mlp = 3 * h * i;
        // Gemma adds norms after attention and the MLP, and q/k norms.
        let norms = if self.gemma.is_some() { 4 * h + 2 * hd } else { 2 * h };
        let per_layer = attn + mlp + norms;
        let emb = self.vocab as u64 * h * if self.tie_embeddings { 1 } else { 2 };
        per_layer * self.n_layers as u64 + emb + h
    }
}

/// `rope_scaling` of config.json -> (linear scale, per-dimension periods).
fn rope_scaling(path: &Path, s: Option<&serde_json::Value>, base: f32, head_dim: usize) -> Result<(f32, Option<Vec<f32>>)> {
    let Some(s) = s.filter(|s| !s.is_null()) else { return Ok((1.0, None)) };
    let kind = s.get("rope_type").or_else(|| s.get("type")).and_then(|v| v.as_str()).unwrap_or("default");
    let num = |k: &str, d: f64| s.get(k).and_then(|v| v.as_f64()).unwrap_or(d);
    match kind {
        "default" => Ok((1.0, None)),
        "linear" => Ok((1.0 / num("factor", 1.0) as f32, None)),
        "llama3" => {
            let factor = num("factor", 8.0);
            let low = num("low_freq_factor", 1.0);
            let high = num("high_freq_factor", 4.0);
            let old_ctx = num("original_max_position_embeddings", 8192.0);
            let low_wavelen = old_ctx / low;
            let high_wavelen = old_ctx / high;
            let periods = (0..head_dim / 2)
                .map(|i| {
                    let p = (base as f64).powf(2.0 * i as f64 / head_dim as f64);
                    let wavelen = 2.0 * std::f64::consts::PI * p;
                    let p = if wavelen > low_wavelen {
                        p * factor
                    } else if wavelen > high_wavelen {
                        let smooth = (old_ctx / wavelen - low) / (high - low);
                        p / ((1.0 - smooth) / factor + smooth)
                    } else {
                        p
                    };
                    p as f32
                })
                .collect();
            Ok((1.0, Some(periods)))
        }
        other => Err(ModelError::Config {
            path: path.to_path_buf(),
            reason: format!("rope_scaling type {other:?} is not supported (default, linear, llama3 are)"),
        }),
    }
}

#[derive(Deserialize)]
struct HfConfig {
    model_type: String,
    hidden_size: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    num_attention_heads: usize,
    num_key_value_heads: Option<usize>,
    head_dim: Option<usize>,
    vocab_size: usize,
    rms_norm_eps: Option<f32>,
    rope_theta: Option<f32>,
    rope_traditional: Option<bool>,
    rope_scaling: Option<serde_json::Value>,
    tie_word_embeddings: Option<bool>,
    attention_bias: Option<bool>,
    max_position_embeddings: Option<usize>,
    eos_token_id: Option<serde_json::Value>,
    // gemma3_text
    query_pre_attn_scalar: Option<f32>,
    sliding_window: Option<usize>,
    sliding_window_pattern: Option<usize>,
    rope_local_base_freq: Option<f32>,
}
