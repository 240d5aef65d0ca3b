//! A loaded model — config, weights, tokenizer — and its forward pass over a KV cache: the
//! Llama block (with Qwen2's q/k/v biases and Qwen3's q/k norms), prefill that reuses the
//! cached prefix, next-token log-probs, and batched scoring of candidate continuations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::ops::indexing::TryIndexOp;
use mlx_rs::{nn, ops, Array, Dtype};

use crate::cache::{KvCache, StepState};
use crate::config::{Arch, ModelConfig};
use crate::error::{ModelError, Result};
use crate::tokenizer::Tokenizer;
use crate::weights::{Layer, Linear, Loader, Weights, GGUF_NAMES, MLX_LM_NAMES};
use crate::{gguf, gguf_tensors, safetensors_check};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Gguf,
    MlxLm,
}

/// Facts about a loaded model, for `laya doctor` and logs.
#[derive(Debug, Clone)]
pub struct ModelInfo {
    pub path: PathBuf,
    pub format: Format,
    pub quantization: String,
    pub weight_bytes: usize,
    pub load_time: Duration,
    pub compute_dtype: Dtype,
    /// Which kernels run the quantized matmuls ("laya AVX-512, 2 threads" or "MLX's").
    pub kernels: String,
    /// Laya's CPU kernels run the quantized matmuls and short attention blocks.
    pub cpu_kernels: bool,
    /// What the check of the GPU against the CPU found, where MLX's default device is a GPU.
    pub gpu_check: Option<String>,
}

/// Models up to this size are checked on the GPU against the CPU when they load (about a
/// second for the default model); larger ones would take minutes on MLX's CPU backend.
const GPU_CHECK_MAX_BYTES: usize = 1 << 30;

/// The text the GPU check runs.
const GPU_CHECK_TEXT: &str = "The quick brown fox jumps over the lazy dog, and then it";

pub struct Model {
    pub config: ModelConfig,
    pub tokenizer: Tokenizer,
    pub info: ModelInfo,
    weights: Weights,
    /// A one-element array standing in for absent inputs of the fused block kernel.
    dummy: Array,
    /// The model was loaded on a GPU: its generic forward takes the GPU's shortcuts (fewer graph
    /// nodes a layer, [`gated`]), chosen once here so that the CPU's path stays as it is.
    gpu: bool,
    /// Forward passes run, and the token positions they computed (rows x length), for profiling
    /// what a decision costs (`laya bench --replay` reports forwards per ghost-text job).
    forwards: std::sync::atomic::AtomicU64,
    forward_tokens: std::sync::atomic::AtomicU64,
}

/// Hidden states kept in a cache and the tokens that followed each (see [`Model::cached_rows`]).
#[derive(Default)]
pub struct CachedRows {
    rows: Vec<Array>,
    tokens: Vec<u32>,
}

/// Log-probs of one candidate continuation.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateScore {
    /// Sum of `per_token`.
    pub total: f32,
    /// Natural-log probability of each token given the context and the tokens before it.
    pub per_token: Vec<f32>,
}

/// What a prefill did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefill {
    /// Tokens taken from the cache.
    pub reused: usize,
    /// Tokens run through the model.
    pub computed: usize,
}

/// Query blocks up to this many tokens (keystrokes, decode steps, scoring) take Laya's CPU
/// attention; longer prefills take MLX's, whose matmuls run on OpenBLAS.
const LAYA_ATTENTION_MAX_QUERIES: usize = 64;

/// Whether MLX runs on the CPU here (then Laya's own kernels take the quantized matmuls).
fn on_cpu() -> bool {
    !matches!(mlx_rs::Device::try_default().and_then(|d| d.get_type()), Ok(mlx_rs::DeviceType::Gpu))
}

/// The dtype activations use: f32 on the CPU, where MLX's 4-bit kernels are 40x slower with f16
/// inputs; on a GPU the checkpoint's own float type, as mlx-lm does: its norms' dtype promotes the
/// activations (f32 for GGUF files, whose norms are f32: SmolLM2's residual stream overflows f16),
/// unless `gpu_dtype` asks for another there.
fn compute_dtype(checkpoint: Dtype, gpu_dtype: Option<Dtype>) -> Dtype {
    match mlx_rs::Device::try_default().and_then(|d| d.get_type()) {
        Ok(mlx_rs::DeviceType::Gpu) => match gpu_dtype {
            Some(d) => d,
            None if matches!(checkpoint, Dtype::Float16 | Dtype::Bfloat16) => checkpoint,
            None => Dtype::Float32,
        },
        _ => Dtype::Float32,
    }
}

/// How to load a model.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    /// Run quantized matmuls through Laya's CPU kernels when MLX runs on the CPU (default: yes,
    /// where they are built; the binary turns them off for LAYA_CPU_KERNELS=0). `false` keeps
    /// MLX's own kernels.
    pub cpu_kernels: bool,
    /// On a CUDA GPU, check the model's answers against the CPU's before using it (default:
    /// yes; the binary turns it off for LAYA_ALLOW_CUDA=1).
    pub check_gpu: bool,
    /// How Laya's CPU kernels run (instruction set, threads): once per process, so every model
    /// of a process must ask for the same.
    pub kernels: crate::cpu_kernels::KernelOptions,
    /// On a GPU, the activation dtype (None: the checkpoint's, f32 for GGUF files; the binary sets
    /// it from LAYA_GPU_DTYPE). The CPU always computes in f32.
    pub gpu_dtype: Option<Dtype>,
    /// On a CUDA GPU, Laya's one-row 4-bit matmul kernel for the large matrices it suits, after a
    /// check against MLX's on the model's own weights (default: yes; the binary turns it off for
    /// LAYA_GPU_KERNELS=0).
    pub gpu_kernels: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self { cpu_kernels: crate::cpu_kernels::available(), check_gpu: true, kernels: Default::default(), gpu_dtype: None, gpu_kernels: true }
    }
}

impl Model {
    /// Loads a GGUF file or an mlx-lm checkpoint folder.
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_with(path, LoadOptions::default())
    }

    /// Loads on MLX's default device. On a CUDA GPU the model is first checked against the CPU
    /// (see [`crate::gpu_check`]); if they disagree it is loaded again on the CPU. Metal is not
    /// checked (it is mlx-lm's home ground). `options.check_gpu = false` skips the check.
    pub fn load_with(path: &Path, options: LoadOptions) -> Result<Self> {
        let mut model = Self::load_on_default_device(path, options)?;
        if !crate::gpu_check::on_gpu() || cfg!(target_os = "macos") {
            return Ok(model);
        }
        if options.gpu_kernels {
            model.use_gpu_qmv();
        }
        if !options.check_gpu {
            model.info.gpu_check = Some("not checked against the CPU (LAYA_ALLOW_CUDA=1)".into());
            return Ok(model);
        }
        if model.info.weight_bytes > GPU_CHECK_MAX_BYTES {
            tracing::warn!("the model is over 1 GB: its answers on the GPU are not checked against the CPU");
            model.info.gpu_check = Some("not checked against the CPU (the model is over 1 GB)".into());
            return Ok(model);
        }
        let check = model.check_gpu_against_cpu(GPU_CHECK_TEXT)?;
        for (stage, d) in &check.stages {
            tracing::debug!("GPU check: {stage}: {d:.2e}");
        }
        if check.agrees() {
            model.info.gpu_check = Some(check.describe());
            return Ok(model);
        }
        tracing::warn!("{}: running on the CPU instead", check.describe());
        drop(model);
        mlx_rs::Device::set_default(&mlx_rs::Device::cpu());
        let mut model = Self::load_on_default_device(path, options)?;
        model.info.gpu_check = Some(format!("{}; running on the CPU instead", check.describe()));
        Ok(model)
    }

    /// Turns on Laya's one-row GPU kernel for the matrices it suits, if it gives MLX's answers on
    /// one matrix of each shape (layer 0's, then the head); MLX's kernel otherwise, with a warning.
    fn use_gpu_qmv(&mut self) {
        let n = self.weights.set_gpu_qmv(true);
        if n == 0 {
            return;
        }
        let (why, worst) = match crate::gpu_qmv::check(&self.weights) {
            Ok(worst) if worst <= crate::gpu_check::TOLERANCE => {
                self.info.kernels = format!("MLX's; Laya's one-row 4-bit GPU kernel for {n} matrices (agrees with MLX's to {worst:.1e})");
                self.use_gpu_gate_up();
                tracing::debug!("{}", self.info.kernels);
                return;
            }
            Ok(worst) => (format!("differs from MLX's by {worst:.2} relative"), worst),
            Err(e) => (format!("failed ({e})"), f32::INFINITY),
        };
        tracing::warn!("Laya's one-row 4-bit GPU kernel {why} on this model's weights: using MLX's kernel instead");
        self.weights.set_gpu_qmv(false);
        self.info.kernels = format!("MLX's (Laya's one-row GPU kernel {why}; difference {worst:.1e})");
    }

    /// Keeps Laya's gate/up kernel where [`Model::use_gpu_qmv`] turned it on if it gives MLX's
    /// answers on layer 0's gate and up (Llama's block only: Gemma's activation is another).
    fn use_gpu_gate_up(&mut self) {
        let first = self.weights.layers.first().and_then(|l| l.gate_up.gpu_gate_up_parts());
        let Some((gate, up)) = first.filter(|_| self.config.gemma.is_none()) else {
            self.weights.clear_gpu_gate_up();
            return;
        };
        match crate::gpu_qmv::gate_up_difference(gate, up) {
            Ok(d) if d <= crate::gpu_check::TOLERANCE => {
                self.info.kernels.push_str(&format!("; gate, up and silu in one kernel (agrees to {d:.1e})"));
            }
            other => {
                let why = match other {
                    Ok(d) => format!("differs from MLX's by {d:.2} relative"),
                    Err(e) => format!("failed ({e})"),
                };
                tracing::warn!("Laya's GPU gate/up kernel {why} on this model's weights: running gate and up apart");
                self.weights.clear_gpu_gate_up();
                self.info.kernels.push_str(&format!("; gate and up apart (the gate/up kernel {why})"));
            }
        }
    }

    fn load_on_default_device(path: &Path, options: LoadOptions) -> Result<Self> {
        let start = Instant::now();
        let meta = std::fs::metadata(path).map_err(|e| ModelError::io(path, e))?;
        let cpu_kernels = options.cpu_kernels && on_cpu() && crate::cpu_kernels::available();
        if cpu_kernels {
            crate::cpu_kernels::configure(options.kernels)?;
        }
        let (config, tokenizer, weights, format) =
            if meta.is_dir() { load_mlx_lm(path, cpu_kernels, options.gpu_dtype)? } else { load_gguf(path, cpu_kernels, options.gpu_dtype)? };
        let info = ModelInfo {
            path: path.to_path_buf(),
            format,
            quantization: weights.describe_quantization(),
            weight_bytes: weights.nbytes(),
            load_time: start.elapsed(),
            compute_dtype: weights.norm.dtype(),
            kernels: if cpu_kernels { crate::cpu_kernels::describe() } else { "MLX's".into() },
            cpu_kernels,
            gpu_check: None,
        };
        Ok(Model {
            config,
            tokenizer,
            info,
            weights,
            dummy: Array::from_slice(&[0f32], &[1]),
            gpu: !on_cpu(),
            forwards: Default::default(),
            forward_tokens: Default::default(),
        })
    }

    fn check_ids(&self, ids: &[u32]) -> Result<()> {
        match ids.iter().find(|&&id| id as usize >= self.config.vocab) {
            Some(&id) => Err(ModelError::TokenOutOfRange { id, vocab: self.config.vocab }),
            None => Ok(()),
        }
    }

    /// Runs `batch` (rows of equal length) after what `cache` holds and extends the cache.
    /// Returns the hidden states after the final norm: [batch, len, hidden].
    fn hidden(&self, batch: &[Vec<u32>], cache: &mut KvCache) -> Result<Array> {
        self.hidden_traced(batch, cache, None)
    }

    /// Forward passes run so far, and the token positions they computed.
    pub fn forward_count(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.forwards.load(Relaxed), self.forward_tokens.load(Relaxed))
    }

    /// [`Model::hidden`], pushing each layer's output onto `trace` when given (for checking one
    /// device against another).
    pub(crate) fn hidden_traced(&self, batch: &[Vec<u32>], cache: &mut KvCache, mut trace: Option<&mut Vec<Array>>) -> Result<Array> {
        let c = &self.config;
        let (b, l) = (batch.len() as i32, batch.first().map_or(0, Vec::len) as i32);
        if b == 0 || l == 0 || batch.iter().any(|r| r.len() != l as usize) {
            return Err(ModelError::Input("a forward needs a non-empty batch of equal-length rows".into()));
        }
        self.forwards.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.forward_tokens.fetch_add((b * l) as u64, std::sync::atomic::Ordering::Relaxed);
        for row in batch {
            self.check_ids(row)?;
        }
        let offset = cache.offset();
        if offset + l as usize > c.context_len {
            return Err(ModelError::Input(format!("{} tokens exceed the model's context of {} tokens", offset + l as usize, c.context_len)));
        }
        let (heads, kv_heads, hd) = (c.n_heads as i32, c.n_kv_heads as i32, c.head_dim as i32);
        let flat: Vec<u32> = batch.iter().flatten().copied().collect();
        let ids = Array::from_slice(&flat, &[b * l]);
        let mut x = self.weights.embed.rows(&ids)?.reshape(&[b, l, c.hidden as i32])?; // [b, l, hidden]
        if x.dtype() != self.info.compute_dtype {
            x = x.as_dtype(self.info.compute_dtype)?;
        }
        if let Some(g) = &c.gemma {
            x = x.multiply(Array::from_f32(g.embed_scale).as_dtype(x.dtype())?)?;
        }
        let scale = 1.0 / (hd as f32).sqrt();
        // On the GPU, one offset array for every rope of the forward: MLX makes one of an integer
        // offset on each call, a small host-written buffer that each kernel then reads.
        let offset_array = self.gpu.then(|| Array::from_int(offset as i32));
        let rope = |a: &Array| -> Result<Array> {
            let r = &c.rope;
            Ok(match (&offset_array, &self.weights.rope_periods) {
                (Some(o), Some(p)) => fast::rope_dynamic(a, hd, r.traditional, None, r.scale, o, p)?,
                (Some(o), None) => fast::rope_dynamic(a, hd, r.traditional, r.base, r.scale, o, None)?,
                (None, Some(p)) => fast::rope(a, hd, r.traditional, None, r.scale, offset as i32, p)?,
                (None, None) => fast::rope(a, hd, r.traditional, r.base, r.scale, offset as i32, None)?,
            })
        };
        let short_block = self.info.cpu_kernels && l as usize <= LAYA_ATTENTION_MAX_QUERIES;
        let one_token = self.gpu && l == 1;
        for (i, layer) in self.weights.layers.iter().enumerate() {
            if let Some(g) = &c.gemma {
                let input =
                    crate::gemma::BlockInput { x: &x, b, l, offset, laya_attention: short_block, rope_periods: self.weights.rope_periods.as_ref() };
                x = crate::gemma::block(c, g, layer, i, input, cache)?;
                if let Some(t) = trace.as_deref_mut() {
                    t.push(x.clone());
                }
                continue;
            }
            // Llama's block only: Gemma's norms, activation and windows are not in it.
            if short_block {
                if let Some(out) = self.fused_block(layer, i, &x, cache, b, l, offset)? {
                    x = out;
                    if let Some(t) = trace.as_deref_mut() {
                        t.push(x.clone());
                    }
                    continue;
                }
            }
            let h = fast::rms_norm(&x, Some(&layer.attn_norm), c.rms_eps)?;
            // [b, l, n * hd] -> [b, l, n, hd] (-> per-head norm) -> [b, n, l, hd]; for one token
            // on the GPU, one reshape to [b, n, 1, hd] (the same values; every graph node costs
            // MLX's CUDA backend microseconds of host work).
            let split = |a: Array, n: i32, norm: &Option<Array>| -> Result<Array> {
                if one_token {
                    let a = a.reshape(&[b, n, 1, hd])?;
                    return Ok(match norm {
                        Some(w) => fast::rms_norm(&a, Some(w), c.rms_eps)?,
                        None => a,
                    });
                }
                let a = a.reshape(&[b, l, n, hd])?;
                let a = match norm {
                    Some(w) => fast::rms_norm(&a, Some(w), c.rms_eps)?,
                    None => a,
                };
                Ok(a.transpose_axes(&[0, 2, 1, 3])?)
            };
            let [q, k, v]: [Array; 3] = layer.qkv.apply(&h)?.try_into().expect("q, k and v");
            let q = rope(&split(q, heads, &layer.q_norm)?)?;
            let k = rope(&split(k, kv_heads, &layer.k_norm)?)?;
            let v = split(v, kv_heads, &None)?;
            let (k, v) = cache.append(i, k, v)?; // [b, kv_heads, offset + l, hd]
                                                 // Causal with the cache: MLX aligns the mask to the last key (query i sees keys
                                                 // up to offset + i); a single query sees everything.
            let a = if short_block {
                crate::cpu_kernels::attention(&q, &k, &v, scale)?
            } else {
                let mask = (l > 1).then_some(ScaledDotProductAttentionMask::Causal);
                fast::scaled_dot_product_attention(&q, &k, &v, scale, mask, None)?
            }; // [b, heads, l, hd]
            let a = if one_token { a.reshape(&[b, 1, heads * hd])? } else { a.transpose_axes(&[0, 2, 1, 3])?.reshape(&[b, l, heads * hd])? };
            x = x.add(layer.o.apply(&a)?)?;
            let h = fast::rms_norm(&x, Some(&layer.mlp_norm), c.rms_eps)?;
            // One kernel of Laya's for a one-row step on the GPU where it is on (gpu_qmv.rs).
            let fused = if self.gpu { layer.gate_up.gate_up_silu(&h)? } else { None };
            let g = match fused {
                Some(g) => g,
                None => {
                    let [gate, up]: [Array; 2] = layer.gate_up.apply(&h)?.try_into().expect("gate and up");
                    // mlx-rs's `nn::silu` compiles a fresh function on every call (a trace and a
                    // fusion each time, about as costly as the layer's other ops together on MLX's
                    // CUDA backend); the GPU takes one compiled once: silu(gate) * up as one kernel.
                    if self.gpu {
                        gated(Gate::Silu, &gate, &up)?
                    } else {
                        nn::silu(gate)?.multiply(up)?
                    }
                }
            };
            x = x.add(layer.down.apply(&g)?)?;
            if let Some(t) = trace.as_deref_mut() {
                t.push(x.clone());
            }
        }
        cache.next_logprobs = None;
        cache.tokens.extend_from_slice(&batch[0]);
        let out = fast::rms_norm(&x, Some(&self.weights.norm), c.rms_eps)?;
        if b == 1 {
            cache.keep_hidden(offset, out.reshape(&[l, c.hidden as i32])?)?;
        }
        Ok(out)
    }

    /// Runs layer `i` as one MLX node with Laya's CPU block kernel, when its weights allow it
    /// (all quantized matmuls on Laya's kernels, stacked q/k/v and gate/up); None otherwise.
    #[allow(clippy::too_many_arguments)]
    fn fused_block(&self, layer: &Layer, i: usize, x: &Array, cache: &mut KvCache, b: i32, l: i32, offset: usize) -> Result<Option<Array>> {
        let c = &self.config;
        let parts = (
            layer.qkv.fused().and_then(Linear::laya_parts),
            layer.o.laya_parts(),
            layer.gate_up.fused().and_then(Linear::laya_parts),
            layer.down.laya_parts(),
        );
        let (Some(qkv), Some(o), Some(gu), Some(down)) = parts else { return Ok(None) };
        if o.5.is_some() || gu.5.is_some() || down.5.is_some() {
            return Ok(None);
        }
        let needed = offset + l as usize;
        let (kbuf, vbuf) = cache.take_buffers(i, b, c.n_kv_heads as i32, c.head_dim as i32, needed, Dtype::Float32)?;
        let prefix = cache.shared_len();
        let dummy = &self.dummy;
        let (prefix_k, prefix_v) = match cache.shared_buffers(i) {
            Some((k, v)) => (k.clone(), v.clone()),
            None if prefix == 0 => (dummy.clone(), dummy.clone()),
            None => return Err(ModelError::Input(format!("layer {i} has no keys in the shared prefix of a fork"))),
        };
        let h = |a: &Array| a.as_ptr();
        let args = crate::cpu_kernels::BlockArgs {
            x: h(x),
            attn_norm: h(&layer.attn_norm),
            mlp_norm: h(&layer.mlp_norm),
            q_norm: h(layer.q_norm.as_ref().unwrap_or(dummy)),
            k_norm: h(layer.k_norm.as_ref().unwrap_or(dummy)),
            rope_periods: h(self.weights.rope_periods.as_ref().unwrap_or(dummy)),
            qkv_w: h(qkv.0),
            qkv_scales: h(qkv.1),
            qkv_biases: h(qkv.2),
            qkv_bias: h(qkv.5.unwrap_or(dummy)),
            o_w: h(o.0),
            o_scales: h(o.1),
            o_biases: h(o.2),
            gate_up_w: h(gu.0),
            gate_up_scales: h(gu.1),
            gate_up_biases: h(gu.2),
            down_w: h(down.0),
            down_scales: h(down.1),
            down_biases: h(down.2),
            prefix_k: h(&prefix_k),
            prefix_v: h(&prefix_v),
            kbuf: h(&kbuf),
            vbuf: h(&vbuf),
            batch: b,
            len: l,
            hidden: c.hidden as i32,
            heads: c.n_heads as i32,
            kv_heads: c.n_kv_heads as i32,
            head_dim: c.head_dim as i32,
            intermediate: c.intermediate as i32,
            prefix: prefix as i32,
            offset: (offset - prefix) as i32,
            cap: kbuf.dim(2),
            rope_traditional: c.rope.traditional as i32,
            qk_norm: c.qk_norm as i32,
            has_qkv_bias: qkv.5.is_some() as i32,
            qkv_group: qkv.3,
            qkv_bits: qkv.4,
            o_group: o.3,
            o_bits: o.4,
            gate_up_group: gu.3,
            gate_up_bits: gu.4,
            down_group: down.3,
            down_bits: down.4,
            eps: c.rms_eps,
            rope_base: c.rope.base,
            rope_scale: c.rope.scale,
        };
        let (out, k, v) = crate::cpu_kernels::block(&args)?;
        drop((kbuf, vbuf)); // so that MLX may write the buffers in place
        cache.put_buffers(i, k, v);
        Ok(Some(out))
    }

    /// Log-softmax over the last axis (the vocabulary): Laya's vectorized kernel on the CPU.
    fn log_softmax(&self, logits: &Array) -> Result<Array> {
        if self.info.cpu_kernels {
            return crate::cpu_kernels::log_softmax(logits, false);
        }
        Ok(logits.subtract(ops::logsumexp_axis(logits, -1, true)?)?)
    }

    /// Logsumexp over the last axis, kept as an axis of 1.
    fn logsumexp(&self, logits: &Array) -> Result<Array> {
        if self.info.cpu_kernels {
            return crate::cpu_kernels::log_softmax(logits, true);
        }
        Ok(ops::logsumexp_axis(logits, -1, true)?)
    }

    fn logits(&self, hidden: &Array) -> Result<Array> {
        let logits = self.weights.head().apply(hidden)?;
        Ok(if logits.dtype() == Dtype::Float32 { logits } else { logits.as_dtype(Dtype::Float32)? })
    }

    /// The model's forward pass: runs `batch` (rows of equal length) after the cached positions
    /// and returns the logits of every position, [batch, len, vocab] f32. The cache may hold
    /// one row (shared by all rows of the batch) or as many rows as the batch.
    pub fn forward(&self, batch: &[Vec<u32>], cache: &mut KvCache) -> Result<Array> {
        let h = self.hidden(batch, cache)?;
        let logits = self.logits(&h)?;
        eval_cache(cache, [&logits])?;
        Ok(logits)
    }

    /// Brings `cache` to exactly `tokens`, computing only what differs from what it holds,
    /// and leaves the next-token log-probs in it.
    pub fn prefill(&self, cache: &mut KvCache, tokens: &[u32]) -> Result<Prefill> {
        if tokens.is_empty() {
            return Err(ModelError::Input("the context is empty: there is nothing to continue".into()));
        }
        self.check_ids(tokens)?;
        if cache.rows() != 1 {
            cache.clear(); // a scoring fork with many rows: start over with one
        }
        let mut reused = cache.trim_to_common_prefix(tokens)?;
        // Tokens a search already stepped to from here: their keys, values and log-probs were
        // kept, so they need no forward.
        let trimmed = reused;
        while reused < tokens.len() && cache.graft(tokens[reused])? {
            reused += 1;
        }
        if reused > trimmed {
            eval_cache(cache, [])?; // a graft leaves the log-probs after it: done below if all were
        }
        if reused == tokens.len() {
            if cache.next_logprobs.is_some() {
                return Ok(Prefill { reused, computed: 0 });
            }
            // Same tokens but the log-probs after them are gone (a trim back to here): kept
            // ones, or the head over the kept hidden state, or recompute the last position.
            let last = reused - 1;
            if let Some(lp) = cache.lookahead_at(last, tokens[last]) {
                cache.next_logprobs = Some(Array::from_slice(&lp, &[lp.len() as i32]));
                return Ok(Prefill { reused, computed: 0 });
            }
            if let Some(row) = cache.hidden_row(last)? {
                let lp = self.head_logprobs(&[row])?.reshape(&[-1])?;
                lp.eval()?;
                cache.next_logprobs = Some(lp);
                return Ok(Prefill { reused, computed: 0 });
            }
            reused -= 1;
            cache.trim(reused)?;
        }
        let new = &tokens[reused..];
        // The log-probs after the old end stay useful: a trim back to it finds them.
        cache.retire_next_logprobs();
        // On the CPU, in blocks that Laya's fused kernels take: a 512-token prompt through MLX's
        // long-query graph costs ~3x as much per token as eight 64-token blocks.
        let block = if self.info.cpu_kernels { LAYA_ATTENTION_MAX_QUERIES } else { new.len() };
        let mut h = None;
        for piece in new.chunks(block) {
            h = Some(self.hidden(&[piece.to_vec()], cache)?);
        }
        let h = h.expect("at least one new token");
        // [1, hidden]: MLX's CUDA quantized matmul fails on 1-D inputs ("SmallVector out of range").
        let last = h.try_index((0, -1))?.reshape(&[1, -1])?;
        let logits = self.logits(&last)?.reshape(&[-1])?; // [vocab]
        let logprobs = self.log_softmax(&logits)?; // [vocab]
        eval_cache(cache, [&logprobs])?;
        cache.next_logprobs = Some(logprobs);
        Ok(Prefill { reused, computed: new.len() })
    }

    /// Appends one token to each row of `cache` (a fork: 1 row is broadcast to all) and returns
    /// the next-token log-probs of every row, [rows, vocab] f32, evaluated.
    pub fn step(&self, cache: &mut KvCache, tokens: &[u32]) -> Result<Array> {
        Ok(self.step_hidden(cache, tokens)?.0)
    }

    /// [`Model::step`], and the hidden states it computed: [rows, hidden].
    fn step_hidden(&self, cache: &mut KvCache, tokens: &[u32]) -> Result<(Array, Array)> {
        let rows: Vec<Vec<u32>> = tokens.iter().map(|&t| vec![t]).collect();
        let h = self.hidden(&rows, cache)?.reshape(&[tokens.len() as i32, -1])?; // [rows, hidden]
        let logits = self.logits(&h)?;
        let logprobs = self.log_softmax(&logits)?;
        eval_cache(cache, [&logprobs, &h])?;
        Ok((logprobs, h))
    }

    /// [`Model::step`] on `fork`, a one-row fork of `base` holding the same tokens, that keeps
    /// in `base` what each token's step computed: its next-token log-probs (a search from the
    /// same context reads them, [`KvCache::lookahead`]) and its keys, values and hidden state
    /// (a prefill that extends `base` by that token runs no forward for it). Returns the
    /// log-probs of each row.
    pub fn step_keeping(&self, base: &mut KvCache, fork: &mut KvCache, tokens: &[u32]) -> Result<Vec<Arc<[f32]>>> {
        let paths: Vec<Vec<u32>> = tokens.iter().map(|&t| vec![t]).collect();
        self.step_keeping_paths(base, fork, &paths)
    }

    /// [`Model::step_keeping`] a few tokens past a context: row r of `fork` holds the context (the
    /// first cached tokens of `base`, or all of them) and then `paths[r]` but its last token (one
    /// row, broadcast, when they all share it), and is stepped by that last token. What each
    /// row's step computed is kept in `base` for the context and the whole path
    /// ([`KvCache::lookahead_path`] once `base` is back at that context; [`Model::prefill`]
    /// grafts it).
    pub fn step_keeping_paths(&self, base: &mut KvCache, fork: &mut KvCache, paths: &[Vec<u32>]) -> Result<Vec<Arc<[f32]>>> {
        let depth = paths.first().map_or(0, |p| p.len().saturating_sub(1));
        let at = fork.offset().saturating_sub(depth);
        let shaped = !paths.is_empty() && paths.iter().all(|p| p.len() == depth + 1);
        let rows_ok = fork.rows() == paths.len() || (fork.rows() == 1 && paths.iter().all(|p| p[..depth] == paths[0][..depth]));
        // Past the context the fork knows the tokens of its first row only.
        let fits = base.rows() == 1
            && at > 0
            && at <= base.offset()
            && shaped
            && rows_ok
            && fork.offset() >= depth
            && fork.tokens[..at] == base.tokens[..at]
            && fork.tokens[at..] == paths[0][..depth];
        if !fits {
            return Err(ModelError::Input("a kept step starts from a fork of a prefilled cache holding each path but its last token".into()));
        }
        let tokens: Vec<u32> = paths.iter().map(|p| p[depth]).collect();
        let (lp, h) = self.step_hidden(fork, &tokens)?;
        let (keys, values) = fork.position_kv(at + depth)?;
        mlx_rs::transforms::eval([&keys, &values])?;
        let v = self.config.vocab;
        let lp = lp.as_slice::<f32>();
        let mut rows = Vec::with_capacity(tokens.len());
        for (r, path) in paths.iter().enumerate() {
            let row: Arc<[f32]> = Arc::from(&lp[r * v..(r + 1) * v]);
            let i = r as i32;
            let step = StepState { keys: keys.clone(), values: values.clone(), row: i, hidden: h.try_index(i..i + 1)? };
            base.keep_lookahead_at(at, path.clone(), row.clone(), Some(step));
            rows.push(row);
        }
        Ok(rows)
    }

    /// Next-token log-probs after what `cache` holds (call [`Model::prefill`] first).
    pub fn next_logprobs(&self, cache: &KvCache) -> Result<Vec<f32>> {
        let lp = cache.next_logprobs.as_ref().ok_or_else(|| ModelError::Input("the cache holds no next-token log-probs: prefill first".into()))?;
        Ok(lp.as_slice::<f32>().to_vec())
    }

    /// Next-token log-probs, [n, vocab] f32, from kept hidden states (rows of [1, hidden]).
    fn head_logprobs(&self, rows: &[Array]) -> Result<Array> {
        let logits = self.logits(&stack_rows(rows)?)?; // [n, vocab]
        self.log_softmax(&logits)
    }

    /// Forks of `cache` cut to each of `lens` cached tokens, each holding the log-probs of the
    /// token after its cut, ready for [`Model::score`] or [`Model::next_logprobs`]. They come
    /// from the hidden states the forwards kept: one head matmul for all, no forward. None for a
    /// length of 0, past the cache, or whose hidden state was not kept.
    pub fn forks_at(&self, cache: &KvCache, lens: &[usize]) -> Result<Vec<Option<KvCache>>> {
        let mut rows = Vec::new();
        let mut which = Vec::with_capacity(lens.len());
        for &len in lens {
            let row = if len == 0 || cache.rows() != 1 { None } else { cache.hidden_row(len - 1)? };
            which.push(row.is_some().then_some(rows.len()));
            rows.extend(row);
        }
        if rows.is_empty() {
            return Ok(vec![None; lens.len()]);
        }
        let lp = self.head_logprobs(&rows)?;
        let each: Vec<Array> = (0..rows.len() as i32).map(|i| lp.try_index(i)).collect::<std::result::Result<_, _>>()?;
        mlx_rs::transforms::eval(each.iter())?;
        lens.iter()
            .zip(which)
            .map(|(&len, w)| {
                w.map(|i| -> Result<KvCache> {
                    let mut fork = cache.fork();
                    fork.trim(len)?;
                    fork.next_logprobs = Some(each[i].clone());
                    Ok(fork)
                })
                .transpose()
            })
            .collect()
    }

    /// What the log-probs of the cached tokens at `positions` (each at least 1) are computed
    /// from, for [`Model::score_with_cached`]: the kept hidden state before each and the token
    /// there. None when a position is 0, past the cache, or its predecessor's state was not kept.
    pub fn cached_rows(&self, cache: &KvCache, positions: &[usize]) -> Result<Option<CachedRows>> {
        let mut rows = Vec::with_capacity(positions.len());
        for &p in positions {
            if p == 0 || p >= cache.offset() || cache.rows() != 1 {
                return Ok(None);
            }
            match cache.hidden_row(p - 1)? {
                Some(r) => rows.push(r),
                None => return Ok(None),
            }
        }
        Ok(Some(CachedRows { rows, tokens: positions.iter().map(|&p| cache.tokens[p]).collect() }))
    }

    /// Scores each candidate continuation of the cached context: one batched forward for all
    /// candidates (right-padded; padding comes after the real tokens, so the causal mask keeps
    /// it from touching them). The cache is left as it was.
    pub fn score(&self, cache: &KvCache, candidates: &[Vec<u32>]) -> Result<Vec<CandidateScore>> {
        Ok(self.score_with_cached(cache, candidates, CachedRows::default())?.0)
    }

    /// [`Model::score`], and the log-probs of `cached`'s tokens (from [`Model::cached_rows`]) in
    /// the same head matmul: the head's weights are a quarter of the model's bytes, read once.
    pub fn score_with_cached(&self, cache: &KvCache, candidates: &[Vec<u32>], cached: CachedRows) -> Result<(Vec<CandidateScore>, Vec<f32>)> {
        let first = cache.next_logprobs.as_ref().ok_or_else(|| ModelError::Input("scoring needs a prefilled context".into()))?;
        if let Some(i) = candidates.iter().position(Vec::is_empty) {
            return Err(ModelError::Input(format!("candidate {i} has no tokens")));
        }
        for c in candidates {
            self.check_ids(c)?;
        }
        let first_ids: Vec<u32> = candidates.iter().map(|c| c[0]).collect();
        let first_lp = first.take_axis(Array::from_slice(&first_ids, &[first_ids.len() as i32]), 0)?;
        // Only candidates of two or more tokens need a forward: a one-token candidate's log-prob is
        // read off the context's. (Padding them to the longest would be most of the rows when
        // most candidates are one token, as a word's alternatives often are.)
        let longer: Vec<&Vec<u32>> = candidates.iter().filter(|c| c.len() > 1).collect();
        let width = longer.iter().map(|c| c.len() - 1).max().unwrap_or(0);
        // Head rows: every position of those after the first (a forward of the candidates but
        // their last tokens), then the cached rows; targets alike.
        let mut rows: Vec<Array> = Vec::new();
        let mut targets: Vec<u32> = Vec::new();
        if width > 0 {
            let pad = |s: &[u32]| -> Vec<u32> { s.iter().copied().chain(std::iter::repeat(0)).take(width).collect() };
            let inputs: Vec<Vec<u32>> = longer.iter().map(|c| pad(&c[..c.len() - 1])).collect();
            targets.extend(longer.iter().flat_map(|c| pad(&c[1..])));
            let mut fork = cache.fork();
            let h = self.hidden(&inputs, &mut fork)?; // [n, width, hidden]
            rows.push(h.reshape(&[(longer.len() * width) as i32, -1])?);
        }
        rows.extend(cached.rows);
        targets.extend(&cached.tokens);
        let lp: Vec<f32> = if rows.is_empty() {
            first_lp.eval()?;
            Vec::new()
        } else {
            let logits = self.logits(&stack_rows(&rows)?)?; // [rows, vocab]
            let picked = logits.take_along_axis(Array::from_slice(&targets, &[targets.len() as i32, 1]), -1)?;
            let lp = picked.subtract(self.logsumexp(&logits)?)?.reshape(&[-1])?;
            mlx_rs::transforms::eval([&lp, &first_lp])?;
            lp.as_slice::<f32>().to_vec()
        };
        let (rest, cached_lp) = lp.split_at(longer.len() * width);
        let first_lp = first_lp.as_slice::<f32>();
        let mut row = 0;
        let scores = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut per_token = vec![first_lp[i]];
                if c.len() > 1 {
                    per_token.extend((0..c.len() - 1).map(|j| rest[row * width + j]));
                    row += 1;
                }
                CandidateScore { total: per_token.iter().sum(), per_token }
            })
            .collect();
        Ok((scores, cached_lp.to_vec()))
    }
}

/// The activation of a gated MLP: SwiGLU's (Llama, Qwen) or GeGLU's tanh approximation (Gemma).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    Silu,
    GeluApprox,
}

thread_local! {
    /// [`gated`]'s compiled functions on this thread, one for each activation and device it ran
    /// on (GPU or not: the GPU check runs the GPU's path on the CPU too): MLX binds a traced graph
    /// to a stream.
    static GATED: std::cell::RefCell<Vec<((Gate, bool), Gated)>> = const { std::cell::RefCell::new(Vec::new()) };
}

type Gated = Box<dyn for<'a> FnMut((&'a Array, &'a Array)) -> std::result::Result<Array, mlx_rs::error::Exception>>;

/// act(gate) * up, compiled once per thread, activation and device (shapeless: any rows, any
/// width): one fused kernel traced once. mlx-rs's `nn::silu` and `nn::gelu_approximate` compile
/// a fresh function on every call, a trace and a fusion each layer of each forward.
pub(crate) fn gated(act: Gate, gate: &Array, up: &Array) -> Result<Array> {
    let key = (act, crate::gpu_check::on_gpu());
    GATED.with(|cell| {
        let mut fns = cell.borrow_mut();
        let i = match fns.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let f: Gated = match act {
                    Gate::Silu => Box::new(mlx_rs::transforms::compile::compile(
                        |(g, u): (&Array, &Array)| -> std::result::Result<Array, mlx_rs::error::Exception> {
                            g.multiply(ops::sigmoid(g)?)?.multiply(u)
                        },
                        true,
                    )),
                    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), as mlx-rs writes it.
                    Gate::GeluApprox => Box::new(mlx_rs::transforms::compile::compile(
                        |(g, u): (&Array, &Array)| -> std::result::Result<Array, mlx_rs::error::Exception> {
                            let cubic = g.add(Array::from_f32(0.044715).multiply(g.power(Array::from_f32(3.0))?)?)?;
                            let inner = ops::sqrt(Array::from_f32(2.0 / std::f32::consts::PI))?.multiply(cubic)?;
                            Array::from_f32(0.5).multiply(g)?.multiply(Array::from_f32(1.0).add(ops::tanh(&inner)?)?)?.multiply(u)
                        },
                        true,
                    )),
                };
                fns.push((key, f));
                fns.len() - 1
            }
        };
        Ok((fns[i].1)((gate, up))?)
    })
}

/// Hidden-state rows ([n_i, hidden] each) as one [n, hidden] input for the head: a lone block is
/// used as it is, without a concatenation node (a scoring forward's rows, a single fork's).
fn stack_rows(rows: &[Array]) -> Result<Array> {
    Ok(match rows {
        [one] => one.clone(),
        _ => ops::concatenate(&rows.iter().collect::<Vec<_>>(), 0)?,
    })
}

/// Evaluates `outputs` together with the cache's keys and values, so that no lazy graph
/// outlives the call (the next keystroke must not re-run this one's work).
fn eval_cache<'a>(cache: &'a KvCache, outputs: impl IntoIterator<Item = &'a Array>) -> Result<()> {
    mlx_rs::transforms::eval(outputs.into_iter().chain(cache.arrays()))?;
    Ok(())
}

fn load_gguf(path: &Path, cpu_kernels: bool, gpu_dtype: Option<Dtype>) -> Result<(ModelConfig, Tokenizer, Weights, Format)> {
    let header = gguf::read_header(path)?;
    let config = ModelConfig::from_gguf(path, &header)?;
    let tokenizer = Tokenizer::from_gguf(path, &header)?;
    check_vocab(path, &config, &tokenizer)?;
    let tensors = gguf_tensors::read_tensors(path, &header)?;
    let checkpoint = tensors.get("output_norm.weight").map(|a| a.dtype()).unwrap_or(Dtype::Float32);
    let dtype = compute_dtype(checkpoint, gpu_dtype);
    let weights = Loader { path, tensors, dtype, cpu_kernels }.load(&config, &GGUF_NAMES)?;
    Ok((config, tokenizer, weights, Format::Gguf))
}

fn load_mlx_lm(dir: &Path, cpu_kernels: bool, gpu_dtype: Option<Dtype>) -> Result<(ModelConfig, Tokenizer, Weights, Format)> {
    let config_path = dir.join("config.json");
    if !config_path.is_file() {
        return Err(ModelError::NotFound {
            path: dir.to_path_buf(),
            hint: "the folder has no config.json; a model folder is an mlx-lm checkpoint (config.json, \
                   *.safetensors, tokenizer.json), for example an mlx-community 4-bit model"
                .into(),
        });
    }
    let config = ModelConfig::from_config_json(&config_path)?;
    let tok_path = dir.join("tokenizer.json");
    if !tok_path.is_file() {
        return Err(ModelError::NotFound { path: tok_path, hint: "mlx-lm folders carry their tokenizer.json".into() });
    }
    let tokenizer = Tokenizer::from_file(&tok_path, config.eos.first().copied())?;
    check_vocab(dir, &config, &tokenizer)?;

    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ModelError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ModelError::NotFound { path: dir.to_path_buf(), hint: "the folder has no *.safetensors weights".into() });
    }
    let mut tensors = HashMap::new();
    for f in &files {
        safetensors_check::check(f)?;
        let part = Array::load_safetensors(f).map_err(|e| ModelError::Corrupt { path: f.clone(), reason: format!("MLX could not read it: {e}") })?;
        tensors.extend(part);
    }
    let checkpoint = tensors.get("model.norm.weight").map(|a| a.dtype()).unwrap_or(Dtype::Float16);
    let names = if config.arch == Arch::Gemma3 { &crate::gemma::MLX_LM_NAMES } else { &MLX_LM_NAMES };
    let weights = Loader { path: dir, tensors, dtype: compute_dtype(checkpoint, gpu_dtype), cpu_kernels }.load(&config, names)?;
    Ok((config, tokenizer, weights, Format::MlxLm))
}

/// The tokenizer may produce fewer ids than the embedding has rows (padded vocabularies), never more.
fn check_vocab(path: &Path, config: &ModelConfig, tok: &Tokenizer) -> Result<()> {
    if tok.vocab_size() > config.vocab {
        return Err(ModelError::Tokenizer {
            path: path.to_path_buf(),
            reason: format!(
                "the tokenizer has {} tokens but the model's vocabulary has only {}: they do not belong together",
                tok.vocab_size(),
                config.vocab
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GPU's shortcuts (one-token reshapes, the compiled silu(gate) * up, one rope offset
    /// array) give exactly the generic path's values: both run here on the CPU with MLX's kernels.
    #[test]
    fn gpu_shortcuts_give_the_generic_paths_values() {
        let home = crate::xdg_home(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"), ".cache").expect("$HOME is set");
        let path = crate::default_model_path_in(&home);
        assert!(path.exists(), "the default model is missing at {}: run `make model`", path.display());
        let mut model = Model::load_with(&path, LoadOptions { cpu_kernels: false, ..Default::default() }).unwrap();
        let run = |m: &Model| -> (Vec<f32>, Vec<f32>, Vec<f32>) {
            let ids = m.tokenizer.encode("The quick brown fox jumps over the lazy dog").unwrap();
            let mut cache = KvCache::new();
            m.prefill(&mut cache, &ids).unwrap();
            let next = m.next_logprobs(&cache).unwrap();
            let mut fork = cache.fork();
            let step = m.step(&mut fork, &[ids[1], ids[2]]).unwrap().as_slice::<f32>().to_vec();
            let candidates = [vec![ids[1], ids[2], ids[3]], vec![ids[4]], vec![ids[5], ids[6]]];
            let scores = m.score(&cache, &candidates).unwrap().into_iter().flat_map(|s| s.per_token).collect();
            (next, step, scores)
        };
        assert!(!model.gpu, "MLX runs on the CPU here");
        let generic = run(&model);
        model.gpu = true;
        assert_eq!(run(&model), generic);
    }
}
