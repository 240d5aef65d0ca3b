//! Gemma 3 text models (GGUF `gemma3`, mlx-lm `gemma3_text`): their settings, tensor names and
//! transformer block, where they part from the Llama block of `model.rs`.
//!
//! What differs, as mlx-lm's `gemma3_text.py` has it (the parity reference):
//! - embeddings are multiplied by sqrt(hidden) rounded to bf16 (25.25 for 640; llama.cpp uses the
//!   exact 25.298, which moves logits by ~1e-2);
//! - RMS norms before *and after* attention and the MLP, and per-head q/k norms; their weights
//!   are `1 + w` (GGUF files store the sum; mlx-lm folders store `w`, and the loader adds the 1);
//! - GELU (tanh approximation) gates the MLP instead of SiLU;
//! - every `sliding_pattern`-th layer is global (rope base 1e6, scaled when the model says so),
//!   the others local: rope base 1e4 and a sliding window (a query sees itself and the
//!   `sliding_window - 1` positions before it);
//! - attention scale `query_pre_attn_scalar^-0.5`; no logit soft-capping (Gemma 2 had it);
//! - the head is the embedding (tied).
//!
//! The fused CPU block of `model.rs` is Llama's and never runs here; the quantized matmuls and
//! the short-query attention kernel of `cpu_kernels.rs` do.

use std::path::Path;

use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::ops::indexing::TryIndexOp;
use mlx_rs::Array;

use crate::cache::KvCache;
use crate::config::{Arch, ModelConfig, Rope};
use crate::error::{ModelError, Result};
use crate::gguf::GgufHeader;
use crate::weights::{Layer, Naming, Part};

/// Gemma 3's settings beyond the Llama family's.
#[derive(Debug, Clone, PartialEq)]
pub struct Gemma {
    /// Positions a local layer's query sees: itself and the `sliding_window - 1` before it.
    pub sliding_window: usize,
    /// Layer i is global when `(i + 1) % sliding_pattern == 0` (5, 11, 17 of 18), else local.
    pub sliding_pattern: usize,
    /// Rope base of the local layers (the global ones take `ModelConfig::rope`).
    pub local_rope_base: f32,
    /// `query_pre_attn_scalar^-0.5` (1/16 for the 270M).
    pub attn_scale: f32,
    /// What embeddings are multiplied by: sqrt(hidden), rounded to bf16.
    pub embed_scale: f32,
}

impl Gemma {
    pub fn is_global(&self, layer: usize) -> bool {
        (layer + 1).is_multiple_of(self.sliding_pattern)
    }

    /// sqrt(hidden) rounded to bf16 (to nearest, ties to even), as mlx-lm and Hugging Face
    /// (`embed_scale.to(bfloat16)`) scale the embeddings.
    pub fn embed_scale(hidden: usize) -> f32 {
        let bits = (hidden as f32).sqrt().to_bits();
        f32::from_bits(bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000)
    }
}

/// Reads a `gemma3` GGUF's hyper-parameters. llama.cpp's conventions fill what the file leaves
/// out: the pattern of 6 and the local rope base of 10,000 are not stored, and the attention scale
/// is 1/sqrt(key_length) but for the 27B (62 layers), whose query_pre_attn_scalar is hidden/heads.
pub(crate) fn config_from_gguf(path: &Path, h: &GgufHeader) -> Result<ModelConfig> {
    let bad = |reason: String| ModelError::Config { path: path.to_path_buf(), reason };
    let need = |key: &str| -> Result<u64> { h.u64(&format!("gemma3.{key}")).ok_or_else(|| bad(format!("metadata gemma3.{key} is missing"))) };
    for key in ["gemma3.final_logit_softcapping", "gemma3.attn_logit_softcapping"] {
        if h.get(key).is_some() {
            return Err(bad(format!("{key} is set: logit soft-capping (Gemma 2) is not supported")));
        }
    }
    let n_layers = need("block_count")? as usize;
    let n_heads = need("attention.head_count")? as usize;
    let hidden = need("embedding_length")? as usize;
    let head_dim = h.u64("gemma3.attention.key_length").map(|d| d as usize).unwrap_or(256);
    if h.u64("gemma3.attention.value_length").is_some_and(|v| v as usize != head_dim) {
        return Err(bad("keys and values of different lengths are not supported".into()));
    }
    let vocab = h.get("tokenizer.ggml.tokens").and_then(|v| v.as_array()).map(|a| a.len()).ok_or_else(|| ModelError::Tokenizer {
        path: path.to_path_buf(),
        reason: "the file has no vocabulary (tokenizer.ggml.tokens is missing)".into(),
    })?;
    // Gemma 3 4B and larger scale the global layers' positions (linear, factor 8).
    let scale = match h.str("gemma3.rope.scaling.type") {
        Some("linear") => 1.0 / h.f64("gemma3.rope.scaling.factor").unwrap_or(1.0) as f32,
        Some("none") | None => 1.0,
        Some(other) => return Err(bad(format!("rope scaling {other:?} is not supported for gemma3 (none, linear are)"))),
    };
    let query_pre_attn_scalar = if n_layers == 62 { hidden / n_heads.max(1) } else { head_dim };
    Ok(ModelConfig {
        arch: Arch::Gemma3,
        n_layers,
        hidden,
        n_heads,
        n_kv_heads: h.u64("gemma3.attention.head_count_kv").map(|v| v as usize).unwrap_or(n_heads),
        head_dim,
        intermediate: need("feed_forward_length")? as usize,
        vocab,
        rms_eps: h.f64("gemma3.attention.layer_norm_rms_epsilon").unwrap_or(1e-6) as f32,
        // Gemma's GGUF Q/K rows are not permuted: rope rotates split halves (NeoX style).
        rope: Rope { base: h.f64("gemma3.rope.freq_base").unwrap_or(1_000_000.0) as f32, traditional: false, scale, periods: None },
        tie_embeddings: h.tensor("output.weight").is_none(),
        qkv_bias: false,
        qk_norm: true,
        context_len: need("context_length")? as usize,
        eos: h.u64("tokenizer.ggml.eos_token_id").map(|v| vec![v as u32]).unwrap_or_default(),
        gemma: Some(Gemma {
            sliding_window: h.u64("gemma3.attention.sliding_window").unwrap_or(512) as usize,
            sliding_pattern: 6,
            local_rope_base: 10_000.0,
            attn_scale: (query_pre_attn_scalar as f32).powf(-0.5),
            embed_scale: Gemma::embed_scale(hidden),
        }),
    })
}

/// mlx-lm's `gemma3_text` names. Unlike Llama's, `post_attention_layernorm` is the norm of the
/// attention's output; the MLP's input norm is `pre_feedforward_layernorm`. Norms store `w` of
/// `1 + w`.
pub(crate) const MLX_LM_NAMES: Naming = Naming {
    embed: "model.embed_tokens",
    norm: "model.norm",
    head: "lm_head",
    norm_shift: 1.0,
    layer: |i, p| {
        let s = match p {
            Part::AttnNorm => "input_layernorm",
            Part::Q => "self_attn.q_proj",
            Part::K => "self_attn.k_proj",
            Part::V => "self_attn.v_proj",
            Part::O => "self_attn.o_proj",
            Part::QNorm => "self_attn.q_norm",
            Part::KNorm => "self_attn.k_norm",
            Part::PostAttnNorm => "post_attention_layernorm",
            Part::MlpNorm => "pre_feedforward_layernorm",
            Part::PostMlpNorm => "post_feedforward_layernorm",
            Part::Gate => "mlp.gate_proj",
            Part::Up => "mlp.up_proj",
            Part::Down => "mlp.down_proj",
        };
        format!("model.layers.{i}.{s}")
    },
};

/// Where a Gemma block's attention goes: Laya's short-query kernel or MLX's.
pub(crate) struct BlockInput<'a> {
    pub x: &'a Array, // [b, l, hidden]
    pub b: i32,
    pub l: i32,
    /// Positions cached before `x`.
    pub offset: usize,
    /// Run attention through Laya's CPU kernel where no window cuts into the keys it sees.
    pub laya_attention: bool,
    /// The global layers' per-dimension rope periods, where scaling gives them ([head_dim / 2]).
    pub rope_periods: Option<&'a Array>,
}

/// Layer `i` of a Gemma 3 model on `input.x`, extending `cache`: [b, l, hidden] -> [b, l, hidden].
///
/// The cache keeps every position of the local layers too (mlx-lm keeps only the last 512 in a
/// rotating cache); the window is applied by slicing and masking the keys. Memory: 2 x 256 x 4
/// bytes per layer per position, 18 KiB a position for the 270M; trimming the local layers' old
/// positions can come later.
pub(crate) fn block(c: &ModelConfig, g: &Gemma, layer: &Layer, i: usize, input: BlockInput, cache: &mut KvCache) -> Result<Array> {
    let BlockInput { x, b, l, offset, laya_attention, rope_periods } = input;
    let (heads, kv_heads, hd) = (c.n_heads as i32, c.n_kv_heads as i32, c.head_dim as i32);
    let norm = |a: &Array, w: &Array| -> Result<Array> { Ok(fast::rms_norm(a, Some(w), c.rms_eps)?) };
    let post = |name: &str, w: &Option<Array>| -> Result<Array> {
        w.clone().ok_or_else(|| ModelError::Input(format!("Gemma layer {i} has no {name} norm")))
    };
    let global = g.is_global(i);
    let rope = |a: &Array| -> Result<Array> {
        Ok(match (rope_periods, global) {
            (Some(p), true) => fast::rope(a, hd, false, None, c.rope.scale, offset as i32, p)?,
            (None, true) => fast::rope(a, hd, false, c.rope.base, c.rope.scale, offset as i32, None)?,
            (_, false) => fast::rope(a, hd, false, g.local_rope_base, 1.0, offset as i32, None)?,
        })
    };
    // [b, l, n * hd] -> [b, l, n, hd] -> per-head norm -> [b, n, l, hd]
    let split = |a: Array, n: i32, w: Option<&Array>| -> Result<Array> {
        let a = a.reshape(&[b, l, n, hd])?;
        let a = match w {
            Some(w) => norm(&a, w)?,
            None => a,
        };
        Ok(a.transpose_axes(&[0, 2, 1, 3])?)
    };

    let h = norm(x, &layer.attn_norm)?;
    let [q, k, v]: [Array; 3] = layer.qkv.apply(&h)?.try_into().expect("q, k and v");
    let q = rope(&split(q, heads, layer.q_norm.as_ref())?)?; // [b, heads, l, hd]
    let k = rope(&split(k, kv_heads, layer.k_norm.as_ref())?)?;
    let v = split(v, kv_heads, None)?;
    let (k, v) = cache.append(i, k, v)?; // [b, kv_heads, offset + l, hd]
    let total = offset + l as usize;
    let window = if global { usize::MAX } else { g.sliding_window };
    let a = if total <= window {
        // Plain causal attention, aligned to the last key.
        if laya_attention {
            crate::cpu_kernels::attention(&q, &k, &v, g.attn_scale)?
        } else {
            let mask = (l > 1).then_some(ScaledDotProductAttentionMask::Causal);
            fast::scaled_dot_product_attention(&q, &k, &v, g.attn_scale, mask, None)?
        }
    } else if l == 1 {
        // One query: the last `window` keys, all of them visible.
        let from = (total - window) as i32;
        let (k, v) = (k.try_index((.., .., from.., ..))?, v.try_index((.., .., from.., ..))?);
        if laya_attention {
            crate::cpu_kernels::attention(&q, &k, &v, g.attn_scale)?
        } else {
            fast::scaled_dot_product_attention(&q, &k, &v, g.attn_scale, None, None)?
        }
    } else {
        // Keys from the first query's window on; query qi (at offset + qi) sees key kj (at
        // from + kj) when it is not in the future and less than `window` back.
        let from = (offset + 1).saturating_sub(window);
        let n = total - from;
        let visible: Vec<bool> =
            (0..l as usize).flat_map(|qi| (0..n).map(move |kj| from + kj <= offset + qi && offset + qi - (from + kj) < window)).collect();
        let mask = Array::from_slice(&visible, &[l, n as i32]);
        let (k, v) = (k.try_index((.., .., from as i32.., ..))?, v.try_index((.., .., from as i32.., ..))?);
        fast::scaled_dot_product_attention(&q, &k, &v, g.attn_scale, &mask, None)?
    }; // [b, heads, l, hd]
    let a = a.transpose_axes(&[0, 2, 1, 3])?.reshape(&[b, l, heads * hd])?;
    let x = x.add(norm(&layer.o.apply(&a)?, &post("post-attention", &layer.post_attn_norm)?)?)?;

    let h = norm(&x, &layer.mlp_norm)?;
    let [gate, up]: [Array; 2] = layer.gate_up.apply(&h)?.try_into().expect("gate and up");
    let m = layer.down.apply(&crate::model::gated(crate::model::Gate::GeluApprox, &gate, &up)?)?;
    Ok(x.add(norm(&m, &post("post-MLP", &layer.post_mlp_norm)?)?)?)
}
