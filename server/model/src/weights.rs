//! The model's tensors as MLX arrays: quantized or dense linear layers, norms, the embedding,
//! loaded by name from a GGUF file or an mlx-lm checkpoint, with every shape checked.

use std::collections::HashMap;
use std::path::Path;

use mlx_rs::{ops, Array, Dtype};

use crate::config::ModelConfig;
use crate::error::{ModelError, Result};
use crate::gpu_qmv::QuantizedParts;

/// Bit widths and group sizes MLX's affine quantization supports.
const BITS: [i32; 6] = [2, 3, 4, 5, 6, 8];
const GROUPS: [i32; 3] = [32, 64, 128];

/// A linear map `y = x W^T (+ b)` with `W` of shape [out, in].
pub(crate) struct Linear {
    kind: LinearKind,
    bias: Option<Array>, // [out]
}

enum LinearKind {
    /// MLX affine quantization: `w` [out, in * bits / 32] u32, `scales`/`biases` [out, in / group].
    /// `laya_cpu`: run Laya's CPU kernel instead of MLX's (CPU device, f32, 4/8-bit, group % 32 == 0).
    /// `laya_gpu`: one-row inputs on a CUDA GPU take Laya's kernel ([`crate::gpu_qmv`]): set after
    /// loading, for the matrices it suits, and cleared if it disagrees with MLX's.
    Quantized { w: Array, scales: Array, biases: Array, group_size: i32, bits: i32, laya_cpu: bool, laya_gpu: bool },
    /// [out, in]
    Dense { w: Array },
}

/// A quantized map's parts as Laya's CPU kernels take them: (w, scales, biases, group, bits, bias).
pub(crate) type LayaParts<'a> = (&'a Array, &'a Array, &'a Array, i32, i32, Option<&'a Array>);

impl Linear {
    /// x: [..., in] -> [..., out]
    pub(crate) fn apply(&self, x: &Array) -> Result<Array> {
        let y = match &self.kind {
            LinearKind::Quantized { w, scales, biases, group_size, bits, laya_cpu: true, .. } => {
                crate::cpu_kernels::quantized_matmul(x, w, scales, biases, *group_size, *bits)?
            }
            LinearKind::Quantized { w, scales, biases, group_size, laya_gpu: true, .. }
                if crate::gpu_qmv::takes(x, scales.dim(1) * group_size, scales.dtype()) =>
            {
                crate::gpu_qmv::matmul(x, w, scales, biases, *group_size)?
            }
            LinearKind::Quantized { w, scales, biases, group_size, bits, laya_cpu: false, .. } => {
                ops::quantized_matmul(x, w, scales, biases, true, *group_size, *bits)?
            }
            LinearKind::Dense { w } => ops::matmul(x, w.t())?,
        };
        Ok(match &self.bias {
            Some(b) => y.add(b)?,
            None => y,
        })
    }

    /// (w, scales, biases, group, bits, bias) when this map runs on Laya's CPU kernels.
    pub(crate) fn laya_parts(&self) -> Option<LayaParts<'_>> {
        match &self.kind {
            LinearKind::Quantized { w, scales, biases, group_size, bits, laya_cpu: true, .. } => {
                Some((w, scales, biases, *group_size, *bits, self.bias.as_ref()))
            }
            _ => None,
        }
    }

    /// Rows of the matrix (an embedding lookup): ids [n] -> [n, in].
    pub(crate) fn rows(&self, ids: &Array) -> Result<Array> {
        Ok(match &self.kind {
            LinearKind::Quantized { w, scales, biases, group_size, bits, .. } => {
                ops::dequantize(w.take_axis(ids, 0)?, scales.take_axis(ids, 0)?, &biases.take_axis(ids, 0)?, *group_size, *bits)?
            }
            LinearKind::Dense { w } => w.take_axis(ids, 0)?,
        })
    }

    /// The rows of `parts` stacked into one map, when all store their weights the same way.
    fn stack(parts: &[Linear]) -> Result<Option<Linear>> {
        let cat = |arrays: Vec<&Array>| -> Result<Array> { Ok(ops::concatenate(&arrays, 0)?) };
        let biases: Vec<&Array> = parts.iter().filter_map(|p| p.bias.as_ref()).collect();
        if !(biases.is_empty() || biases.len() == parts.len()) {
            return Ok(None);
        }
        let bias = if biases.is_empty() { None } else { Some(cat(biases)?) };
        let kind = match parts.first().map(|p| &p.kind) {
            Some(LinearKind::Quantized { group_size, bits, laya_cpu, .. }) => {
                let mut w = vec![];
                let mut sc = vec![];
                let mut bi = vec![];
                for p in parts {
                    match &p.kind {
                        LinearKind::Quantized { w: pw, scales, biases, group_size: g, bits: b, laya_cpu: l, .. }
                            if g == group_size && b == bits && l == laya_cpu =>
                        {
                            w.push(pw);
                            sc.push(scales);
                            bi.push(biases);
                        }
                        _ => return Ok(None),
                    }
                }
                LinearKind::Quantized {
                    w: cat(w)?,
                    scales: cat(sc)?,
                    biases: cat(bi)?,
                    group_size: *group_size,
                    bits: *bits,
                    laya_cpu: *laya_cpu,
                    laya_gpu: false,
                }
            }
            Some(LinearKind::Dense { .. }) => {
                let mut w = vec![];
                for p in parts {
                    match &p.kind {
                        LinearKind::Dense { w: pw } => w.push(pw),
                        _ => return Ok(None),
                    }
                }
                LinearKind::Dense { w: cat(w)? }
            }
            None => return Ok(None),
        };
        Ok(Some(Linear { kind, bias }))
    }

    /// "4-bit g32", "8-bit g64", "f32".
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            LinearKind::Quantized { group_size, bits, .. } => format!("{bits}-bit g{group_size}"),
            LinearKind::Dense { w } => format!("{:?}", w.dtype()).to_lowercase(),
        }
    }

    /// Turns Laya's one-row GPU kernel on (where it suits this matrix) or off; returns whether
    /// it is on.
    pub(crate) fn set_gpu_qmv(&mut self, on: bool) -> bool {
        match &mut self.kind {
            LinearKind::Quantized { w, scales, group_size, bits, laya_cpu: false, laya_gpu, .. } => {
                let (rows, cols) = (w.dim(0), scales.dim(1) * *group_size);
                *laya_gpu = on && crate::gpu_qmv::suits(rows, cols, *group_size, *bits, scales.dtype());
                *laya_gpu
            }
            _ => false,
        }
    }

    /// The quantized matrix (w, scales, biases, group) when it takes Laya's GPU kernel.
    pub(crate) fn gpu_qmv_parts(&self) -> Option<QuantizedParts<'_>> {
        match &self.kind {
            LinearKind::Quantized { w, scales, biases, group_size, laya_gpu: true, .. } => Some((w, scales, biases, *group_size)),
            _ => None,
        }
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut v: Vec<&Array> = match &self.kind {
            LinearKind::Quantized { w, scales, biases, .. } => vec![w, scales, biases],
            LinearKind::Dense { w } => vec![w],
        };
        v.extend(self.bias.iter());
        v
    }
}

/// Linear maps of the same input, fused into one matrix (rows stacked) when their storage
/// matches, so a layer runs one matmul for q, k and v and one for gate and up: on MLX's CPU
/// backend each graph node costs microseconds, and a decode step is mostly such overhead.
pub(crate) struct Projections {
    fused: Option<Linear>,
    parts: Vec<Linear>,
    /// Output sizes of the parts, in order.
    sizes: Vec<i32>,
    /// Gate and up, with silu(gate) * up, run as one kernel of Laya's on a CUDA GPU for one-row
    /// inputs ([`crate::gpu_qmv::gate_up_silu`]); set after loading, cleared if it disagrees.
    gpu_gate_up: bool,
}

impl Projections {
    fn new(parts: Vec<Linear>, sizes: Vec<i32>) -> Result<Self> {
        // Only where Laya's CPU kernels run (stacking saves per-node overhead there). On CUDA, MLX
        // 0.32.2 gives wrong results for stacked projections (the load-time GPU check found the
        // forward parting from the CPU's at layer 8, 0.14 relative) or aborts the process with an
        // illegal memory access (on an H100, 2026-12-06; docs/benchmarks.md, "On the H200"). So the
        // GPU keeps mlx-lm's separate projections.
        let on_laya_cpu = parts.iter().all(|p| p.laya_parts().is_some());
        let fused = if on_laya_cpu { Linear::stack(&parts)? } else { None };
        Ok(Self { parts: if fused.is_some() { vec![] } else { parts }, fused, sizes, gpu_gate_up: false })
    }

    /// x: [..., in] -> one [..., size_i] per part.
    pub(crate) fn apply(&self, x: &Array) -> Result<Vec<Array>> {
        match &self.fused {
            Some(f) => {
                let y = f.apply(x)?;
                let mut at = Vec::with_capacity(self.sizes.len());
                let mut end = 0;
                for s in &self.sizes[..self.sizes.len() - 1] {
                    end += s;
                    at.push(end);
                }
                Ok(y.split_at_indices(&at, -1)?)
            }
            None => self.parts.iter().map(|p| p.apply(x)).collect(),
        }
    }

    /// silu(gate) * up of x through Laya's GPU kernel, when these are gate and up, it is on and x
    /// is one row on the GPU; None otherwise (the caller runs the parts).
    pub(crate) fn gate_up_silu(&self, x: &Array) -> Result<Option<Array>> {
        match self.gpu_gate_up_parts() {
            Some((gate, up)) if self.gpu_gate_up && crate::gpu_qmv::takes(x, gate.1.dim(1) * gate.3, gate.1.dtype()) => {
                Ok(Some(crate::gpu_qmv::gate_up_silu(x, gate, up)?))
            }
            _ => Ok(None),
        }
    }

    /// The two matrices, when these are two bias-free maps of one shape that take Laya's GPU kernel.
    pub(crate) fn gpu_gate_up_parts(&self) -> Option<(QuantizedParts<'_>, QuantizedParts<'_>)> {
        match self.parts.as_slice() {
            [a, b] if a.bias.is_none() && b.bias.is_none() => {
                let (pa, pb) = (a.gpu_qmv_parts()?, b.gpu_qmv_parts()?);
                (pa.0.shape() == pb.0.shape() && pa.1.shape() == pb.1.shape() && pa.3 == pb.3).then_some((pa, pb))
            }
            _ => None,
        }
    }

    /// The fused map, when the parts could be stacked.
    pub(crate) fn fused(&self) -> Option<&Linear> {
        self.fused.as_ref()
    }

    fn first(&self) -> Option<&Linear> {
        self.fused.as_ref().or(self.parts.first())
    }

    fn arrays(&self) -> Vec<&Array> {
        self.fused.iter().chain(&self.parts).flat_map(Linear::arrays).collect()
    }

    fn linears(&self) -> impl Iterator<Item = &Linear> {
        self.fused.iter().chain(&self.parts)
    }

    fn linears_mut(&mut self) -> impl Iterator<Item = &mut Linear> {
        self.fused.iter_mut().chain(&mut self.parts)
    }
}

pub(crate) struct Layer {
    pub attn_norm: Array,      // [hidden]
    pub qkv: Projections,      // q [heads * head_dim], k and v [kv_heads * head_dim], of [hidden]
    pub o: Linear,             // [hidden, heads * head_dim]
    pub q_norm: Option<Array>, // [head_dim] (Qwen3)
    pub k_norm: Option<Array>, // [head_dim] (Qwen3)
    pub mlp_norm: Array,       // [hidden]
    pub gate_up: Projections,  // gate and up, [intermediate] each, of [hidden]
    pub down: Linear,          // [hidden, intermediate]
    /// Norms of the attention's and the MLP's outputs, [hidden] (Gemma).
    pub post_attn_norm: Option<Array>,
    pub post_mlp_norm: Option<Array>,
}

pub(crate) struct Weights {
    pub embed: Linear, // [vocab, hidden]
    pub layers: Vec<Layer>,
    pub norm: Array,                 // [hidden]
    pub head: Option<Linear>,        // [vocab, hidden]; None = tied to `embed`
    pub rope_periods: Option<Array>, // [head_dim / 2]
}

impl Weights {
    pub(crate) fn head(&self) -> &Linear {
        self.head.as_ref().unwrap_or(&self.embed)
    }

    pub(crate) fn arrays(&self) -> Vec<&Array> {
        let mut v = self.embed.arrays();
        v.push(&self.norm);
        for l in &self.layers {
            v.extend([&l.attn_norm, &l.mlp_norm]);
            v.extend(l.q_norm.iter().chain(l.k_norm.iter()));
            v.extend(l.post_attn_norm.iter().chain(l.post_mlp_norm.iter()));
            v.extend(l.qkv.arrays());
            v.extend(l.gate_up.arrays());
            for lin in [&l.o, &l.down] {
                v.extend(lin.arrays());
            }
        }
        if let Some(h) = &self.head {
            v.extend(h.arrays());
        }
        v.extend(self.rope_periods.iter());
        v
    }

    /// Every linear map of the layers and the head (not the embedding, which is read by rows), in
    /// order: layer 0's first.
    pub(crate) fn linears(&self) -> Vec<&Linear> {
        let mut v = Vec::new();
        for l in &self.layers {
            v.extend(l.qkv.linears());
            v.push(&l.o);
            v.extend(l.gate_up.linears());
            v.push(&l.down);
        }
        v.push(self.head());
        v
    }

    /// Turns Laya's one-row GPU kernel on or off for every map it suits (see [`Linear::set_gpu_qmv`]);
    /// returns how many take it.
    pub(crate) fn set_gpu_qmv(&mut self, on: bool) -> usize {
        let mut n = 0;
        for l in &mut self.layers {
            for lin in l.qkv.linears_mut().chain(l.gate_up.linears_mut()).chain([&mut l.o, &mut l.down]) {
                n += lin.set_gpu_qmv(on) as usize;
            }
            l.gate_up.gpu_gate_up = on && l.gate_up.gpu_gate_up_parts().is_some();
        }
        n + self.head.as_mut().unwrap_or(&mut self.embed).set_gpu_qmv(on) as usize
    }

    /// Turns the gate/up kernel off in every layer (the single matmuls stay as they are).
    pub(crate) fn clear_gpu_gate_up(&mut self) {
        for l in &mut self.layers {
            l.gate_up.gpu_gate_up = false;
        }
    }

    pub(crate) fn nbytes(&self) -> usize {
        self.arrays().iter().map(|a| a.nbytes()).sum()
    }

    pub(crate) fn describe_quantization(&self) -> String {
        let linear = self.layers.first().and_then(|l| l.qkv.first()).map(Linear::describe).unwrap_or_default();
        format!("{linear} linear layers, {} embedding", self.embed.describe())
    }
}

/// Tensor names of one checkpoint format.
pub(crate) struct Naming {
    pub embed: &'static str,
    pub norm: &'static str,
    pub head: &'static str,
    /// Added to every norm weight as it loads: 1 where the format stores Gemma's `1 + w` as `w`.
    pub norm_shift: f32,
    pub layer: fn(usize, Part) -> String,
}

#[derive(Clone, Copy)]
pub(crate) enum Part {
    AttnNorm,
    Q,
    K,
    V,
    O,
    QNorm,
    KNorm,
    /// Gemma: the norm of the attention's output.
    PostAttnNorm,
    MlpNorm,
    /// Gemma: the norm of the MLP's output.
    PostMlpNorm,
    Gate,
    Up,
    Down,
}

pub(crate) const GGUF_NAMES: Naming = Naming {
    embed: "token_embd",
    norm: "output_norm",
    head: "output",
    norm_shift: 0.0,
    layer: |i, p| {
        let s = match p {
            Part::AttnNorm => "attn_norm",
            Part::Q => "attn_q",
            Part::K => "attn_k",
            Part::V => "attn_v",
            Part::O => "attn_output",
            Part::QNorm => "attn_q_norm",
            Part::KNorm => "attn_k_norm",
            Part::PostAttnNorm => "post_attention_norm",
            Part::MlpNorm => "ffn_norm",
            Part::PostMlpNorm => "post_ffw_norm",
            Part::Gate => "ffn_gate",
            Part::Up => "ffn_up",
            Part::Down => "ffn_down",
        };
        format!("blk.{i}.{s}")
    },
};

pub(crate) const MLX_LM_NAMES: Naming = Naming {
    embed: "model.embed_tokens",
    norm: "model.norm",
    head: "lm_head",
    norm_shift: 0.0,
    layer: |i, p| {
        let s = match p {
            Part::AttnNorm => "input_layernorm",
            Part::Q => "self_attn.q_proj",
            Part::K => "self_attn.k_proj",
            Part::V => "self_attn.v_proj",
            Part::O => "self_attn.o_proj",
            Part::QNorm => "self_attn.q_norm",
            Part::KNorm => "self_attn.k_norm",
            Part::MlpNorm => "post_attention_layernorm",
            // Llama-family folders have no post norms (Gemma's names are in gemma.rs).
            Part::PostAttnNorm => "post_attention_norm (not in this format)",
            Part::PostMlpNorm => "post_mlp_norm (not in this format)",
            Part::Gate => "mlp.gate_proj",
            Part::Up => "mlp.up_proj",
            Part::Down => "mlp.down_proj",
        };
        format!("model.layers.{i}.{s}")
    },
};

/// A quantized matrix's values ([rows, cols * bits / 32] u32, least significant bits first, values
/// running across words) repacked at 8 bits a value: [rows, cols / 4]. The same integers, so the
/// same scales and biases apply.
fn widen_to_8(w: &Array, bits: i32) -> Result<Array> {
    let [rows, words]: [i32; 2] = w.shape().try_into().expect("a quantized matrix is 2-D");
    let bits = bits as usize;
    let cols = words as usize * 32 / bits;
    let src = w.as_slice::<u32>();
    let mask = (1u64 << bits) - 1;
    let mut out = vec![0u32; rows as usize * cols / 4];
    for (row, dst) in src.chunks_exact(words as usize).zip(out.chunks_exact_mut(cols / 4)) {
        for j in 0..cols {
            let (at, off) = (j * bits / 32, j * bits % 32);
            let pair = row[at] as u64 | row.get(at + 1).map_or(0, |&x| (x as u64) << 32);
            dst[j / 4] |= (((pair >> off) & mask) as u32) << (8 * (j % 4));
        }
    }
    Ok(Array::from_slice(&out, &[rows, (cols / 4) as i32]))
}

/// Builds [`Weights`] from a name -> array map, casting floats to `dtype`.
pub(crate) struct Loader<'a> {
    pub path: &'a Path,
    pub tensors: HashMap<String, Array>,
    pub dtype: Dtype,
    /// Use Laya's CPU kernels for the quantized layers they support.
    pub cpu_kernels: bool,
}

impl Loader<'_> {
    fn take(&mut self, name: &str) -> Result<Array> {
        self.tensors.remove(name).ok_or_else(|| ModelError::MissingTensor { path: self.path.to_path_buf(), name: name.into() })
    }

    fn shape_err(&self, name: &str, got: &Array, expected: String) -> ModelError {
        ModelError::TensorShape { path: self.path.to_path_buf(), name: name.into(), got: got.shape().to_vec(), expected }
    }

    fn float(&self, a: Array) -> Result<Array> {
        Ok(if a.dtype() == self.dtype { a } else { a.as_dtype(self.dtype)? })
    }

    fn vector(&mut self, name: &str, len: usize) -> Result<Array> {
        let a = self.take(name)?;
        if a.shape() != [len as i32] {
            return Err(self.shape_err(name, &a, format!("[{len}]")));
        }
        self.float(a)
    }

    /// A norm's weight, plus the format's `norm_shift`.
    fn norm(&mut self, name: &str, len: usize, names: &Naming) -> Result<Array> {
        let w = self.vector(name, len)?;
        Ok(if names.norm_shift == 0.0 { w } else { w.add(Array::from_f32(names.norm_shift).as_dtype(w.dtype())?)? })
    }

    /// `base.weight` (+ `base.scales`, `base.biases` when quantized, + `base.bias` when `bias`).
    fn linear(&mut self, base: &str, out: usize, inp: usize, bias: bool) -> Result<Linear> {
        let wname = format!("{base}.weight");
        let w = self.take(&wname)?;
        let scales = self.tensors.remove(&format!("{base}.scales"));
        let kind = match scales {
            Some(scales) => {
                let biases = self.take(&format!("{base}.biases"))?;
                let (o, wc, sc) = (out as i32, w.shape().get(1).copied().unwrap_or(0), scales.shape().get(1).copied().unwrap_or(0));
                let bits = if wc > 0 && (wc * 32) % inp as i32 == 0 { wc * 32 / inp as i32 } else { 0 };
                let group = if sc > 0 && inp as i32 % sc == 0 { inp as i32 / sc } else { 0 };
                if w.dtype() != Dtype::Uint32 || w.shape() != [o, wc] || scales.shape() != [o, sc] || biases.shape() != scales.shape() {
                    return Err(self.shape_err(&wname, &w, format!("a quantized [{out}, {inp}] matrix")));
                }
                if !BITS.contains(&bits) || !GROUPS.contains(&group) {
                    return Err(ModelError::UnsupportedQuantization {
                        path: self.path.to_path_buf(),
                        detail: format!(
                            "{base} looks like {bits}-bit with group size {group}; MLX's affine quantization \
                             takes {BITS:?} bits and group sizes {GROUPS:?}"
                        ),
                    });
                }
                let laya_cpu = self.cpu_kernels && group % 32 == 0 && self.dtype == Dtype::Float32;
                // Laya's kernels take 4 and 8 bits; other widths (Q5_K and Q5_0/1 of GGUF files:
                // Gemma's Q4_K_M has them) are widened to 8 bits, exactly (same scale and bias),
                // rather than left to MLX's CPU kernels, which are ~20x slower.
                let (w, bits) = if laya_cpu && !matches!(bits, 4 | 8) { (widen_to_8(&w, bits)?, 8) } else { (w, bits) };
                LinearKind::Quantized {
                    w,
                    scales: self.float(scales)?,
                    biases: self.float(biases)?,
                    group_size: group,
                    bits,
                    laya_cpu,
                    laya_gpu: false,
                }
            }
            None => {
                if w.shape() != [out as i32, inp as i32] {
                    return Err(self.shape_err(&wname, &w, format!("[{out}, {inp}]")));
                }
                if !matches!(w.dtype(), Dtype::Float32 | Dtype::Float16 | Dtype::Bfloat16) {
                    return Err(ModelError::UnsupportedQuantization {
                        path: self.path.to_path_buf(),
                        detail: format!("{wname} has dtype {:?} and no scales", w.dtype()),
                    });
                }
                LinearKind::Dense { w: self.float(w)? }
            }
        };
        let bias = if bias { Some(self.vector(&format!("{base}.bias"), out)?) } else { None };
        Ok(Linear { kind, bias })
    }

    pub(crate) fn load(mut self, c: &ModelConfig, names: &Naming) -> Result<Weights> {
        let (h, hd) = (c.hidden, c.head_dim);
        let embed = self.linear(names.embed, c.vocab, h, false)?;
        let mut layers = Vec::with_capacity(c.n_layers);
        for i in 0..c.n_layers {
            let n = |p| (names.layer)(i, p);
            let w = |p| format!("{}.weight", (names.layer)(i, p));
            let (q, kv) = ((c.n_heads * hd) as i32, (c.n_kv_heads * hd) as i32);
            let qkv = vec![
                self.linear(&n(Part::Q), c.n_heads * hd, h, c.qkv_bias)?,
                self.linear(&n(Part::K), c.n_kv_heads * hd, h, c.qkv_bias)?,
                self.linear(&n(Part::V), c.n_kv_heads * hd, h, c.qkv_bias)?,
            ];
            let gate_up = vec![self.linear(&n(Part::Gate), c.intermediate, h, false)?, self.linear(&n(Part::Up), c.intermediate, h, false)?];
            let post_norms = c.gemma.is_some();
            let layer = Layer {
                attn_norm: self.norm(&w(Part::AttnNorm), h, names)?,
                qkv: Projections::new(qkv, vec![q, kv, kv])?,
                o: self.linear(&n(Part::O), h, c.n_heads * hd, false)?,
                q_norm: if c.qk_norm { Some(self.norm(&w(Part::QNorm), hd, names)?) } else { None },
                k_norm: if c.qk_norm { Some(self.norm(&w(Part::KNorm), hd, names)?) } else { None },
                mlp_norm: self.norm(&w(Part::MlpNorm), h, names)?,
                gate_up: Projections::new(gate_up, vec![c.intermediate as i32; 2])?,
                down: self.linear(&n(Part::Down), h, c.intermediate, false)?,
                post_attn_norm: if post_norms { Some(self.norm(&w(Part::PostAttnNorm), h, names)?) } else { None },
                post_mlp_norm: if post_norms { Some(self.norm(&w(Part::PostMlpNorm), h, names)?) } else { None },
            };
            // Materialize the stacked matrices now, one layer at a time, so the separate ones
            // are freed as we go rather than all held until the end.
            mlx_rs::transforms::eval(layer.qkv.arrays().into_iter().chain(layer.gate_up.arrays()))?;
            layers.push(layer);
        }
        let norm = self.norm(&format!("{}.weight", names.norm), h, names)?;
        let head = if c.tie_embeddings { None } else { Some(self.linear(names.head, c.vocab, h, false)?) };
        let rope_periods = match (&c.rope.periods, self.tensors.remove("rope_freqs.weight")) {
            (Some(p), _) => Some(Array::from_slice(p, &[p.len() as i32])),
            // GGUF Llama 3: per-dimension factors that divide the frequency (multiply the period).
            (None, Some(factors)) => {
                if factors.shape() != [hd as i32 / 2] {
                    return Err(self.shape_err("rope_freqs.weight", &factors, format!("[{}]", hd / 2)));
                }
                let p: Vec<f32> = (0..hd / 2).map(|i| c.rope.base.powf(2.0 * i as f32 / hd as f32)).collect();
                Some(Array::from_slice(&p, &[p.len() as i32]).multiply(factors.as_dtype(Dtype::Float32)?)?)
            }
            (None, None) => None,
        };
        let w = Weights { embed, layers, norm, head, rope_periods };
        mlx_rs::transforms::eval(w.arrays())?;
        Ok(w)
    }
}
