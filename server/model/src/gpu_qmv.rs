//! Laya's own one-row 4-bit matmul on a CUDA GPU (the kernels in `gpu_qmv/`), JIT-compiled by MLX
//! through mlx-c's `mlx_fast_cuda_kernel_*` (mlx-rs wraps only Metal's), where it is faster than
//! MLX's: one-row inputs (a decode step) times large 4-bit matrices, and an MLP's gate, up and
//! silu(gate) * up in one kernel. Also the load-time check that they give MLX's answers on the
//! model's own weights.
//!
//! MLX 0.32.2's one-row kernel reads a Qwen3-8B step's large matrices at about a quarter of an
//! H100's bandwidth (docs/benchmarks.md, "On the H200"). A custom kernel costs more host work per
//! call than MLX's own, so small matrices stay on MLX's ([`MIN_ELEMENTS`]).

use std::cell::RefCell;
use std::ffi::CString;

use mlx_rs::{ops, Array, Dtype, Stream};

use crate::error::{ModelError, Result};
use crate::weights::Weights;

/// Matrices of at least this many values (rows x columns) take Laya's kernel. Measured on an H100
/// (`bench/cuda_qmv_bench.cu`, `bench/cuda_qmv_kernel.py`): it wins on Qwen3-8B's q/o (4096 x
/// 4096), gate/up, down and head, and loses on its k/v (1024 x 4096) and on every matrix of the
/// default model, where MLX's lower host work per call counts for more than the bandwidth.
pub(crate) const MIN_ELEMENTS: i64 = 16 << 20;

/// The kernel's helpers and body: MLX wraps the body in a `__global__` function of the inputs
/// and outputs named below, with the template arguments as compile-time constants.
const HEADER: &str = include_str!("gpu_qmv/header.cuh");
const OUTPUT: &str = "out";

/// The two kernels: one matmul, or gate and up with the activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    Matmul,
    GateUp,
}

impl Body {
    fn name(self) -> &'static str {
        match self {
            Body::Matmul => "laya_qmv4",
            Body::GateUp => "laya_gate_up4",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Body::Matmul => include_str!("gpu_qmv/body.cuh"),
            Body::GateUp => include_str!("gpu_qmv/gate_up.cuh"),
        }
    }

    fn inputs(self) -> &'static [&'static str] {
        match self {
            Body::Matmul => &["x", "w", "scales", "biases"],
            Body::GateUp => &["x", "w", "scales", "biases", "w2", "scales2", "biases2"],
        }
    }
}

/// Warps a block.
const WARPS: i32 = 4;

/// Whether a quantized matrix (4-bit, `group`, [rows, cols]) in activations of `dtype` may take
/// Laya's kernel: decided once at load; [`takes`] adds the input's checks at each call.
pub(crate) fn suits(rows: i32, cols: i32, group: i32, bits: i32, dtype: Dtype) -> bool {
    bits == 4
        && matches!(group, 32 | 64 | 128)
        && cols % 32 == 0
        && i64::from(rows) * i64::from(cols) >= MIN_ELEMENTS
        && matches!(dtype, Dtype::Float32 | Dtype::Float16 | Dtype::Bfloat16)
        && !cfg!(target_os = "macos")
}

/// Whether `x` is one row the kernel takes, against scales of `scales_dtype`, on the GPU.
pub(crate) fn takes(x: &Array, cols: i32, scales_dtype: Dtype) -> bool {
    x.size() == cols as usize && x.dtype() == scales_dtype && crate::gpu_check::on_gpu()
}

/// Rows a warp and loop unrolling for a matrix of `rows` x `cols`: the best of those timed on an
/// H100 for each of Qwen3-8B's shapes (`bench/cuda_qmv_bench.cu`; other shapes take the nearest).
fn tiling(body: Body, rows: i32, cols: i32) -> (i32, i32) {
    if body == Body::GateUp {
        (2, 4) // gate and up of 12288 x 4096 together (4 rows a warp with unrolling by 2: 1.5x slower)
    } else if cols > 4096 {
        (4, 8) // down, 4096 x 12288
    } else if (8192..65536).contains(&rows) {
        (8, 2) // gate/up, 12288 x 4096
    } else {
        (2, 4) // q/o and the head
    }
}

/// mlx-c's kernel: built once per thread, with a launch configuration kept per shape (the
/// configuration is copied at each call; building it is most of the host work otherwise).
struct Kernel {
    body: Body,
    raw: mlx_sys::mlx_fast_cuda_kernel,
    stream: Stream,
    configs: Vec<((Dtype, i32, i32, i32), Config)>,
}

struct Config(mlx_sys::mlx_fast_cuda_kernel_config);

impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: `raw` came from mlx_fast_cuda_kernel_new and is freed once, here.
        unsafe { mlx_sys::mlx_fast_cuda_kernel_free(self.raw) }
    }
}

impl Drop for Config {
    fn drop(&mut self) {
        // SAFETY: built by mlx_fast_cuda_kernel_config_new and freed once, here.
        unsafe { mlx_sys::mlx_fast_cuda_kernel_config_free(self.0) }
    }
}

thread_local! {
    /// The kernel of this thread (MLX's streams and graphs are per thread, as [`crate::model`]'s
    /// compiled functions are).
    static KERNELS: RefCell<Vec<Kernel>> = const { RefCell::new(Vec::new()) };
}

fn failed(what: &str) -> ModelError {
    ModelError::Mlx(format!("Laya's GPU matmul kernel: {what} failed"))
}

fn c(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| failed("a name with a NUL"))
}

impl Kernel {
    fn new(body: Body) -> Result<Self> {
        let (name, header, source, output) = (c(body.name())?, c(HEADER)?, c(body.source())?, c(OUTPUT)?);
        let inputs = body.inputs().iter().map(|n| c(n)).collect::<Result<Vec<_>>>()?;
        // SAFETY: the C strings outlive the calls, which copy them; the vectors are freed here.
        unsafe {
            let input_names = mlx_sys::mlx_vector_string_new();
            for n in &inputs {
                mlx_sys::mlx_vector_string_append_value(input_names, n.as_ptr());
            }
            let output_names = mlx_sys::mlx_vector_string_new_value(output.as_ptr());
            let raw = mlx_sys::mlx_fast_cuda_kernel_new(name.as_ptr(), input_names, output_names, source.as_ptr(), header.as_ptr(), true, 0);
            mlx_sys::mlx_vector_string_free(input_names);
            mlx_sys::mlx_vector_string_free(output_names);
            if raw.ctx.is_null() {
                return Err(failed("building the kernel"));
            }
            Ok(Kernel { body, raw, stream: Stream::gpu(), configs: Vec::new() })
        }
    }

    /// The launch configuration for x of `dtype` times a [rows, cols] matrix in groups of `group`;
    /// the output is [rows] (the caller reshapes).
    fn config(&mut self, dtype: Dtype, rows: i32, cols: i32, group: i32) -> Result<&Config> {
        let key = (dtype, rows, cols, group);
        if let Some(i) = self.configs.iter().position(|(k, _)| *k == key) {
            return Ok(&self.configs[i].1);
        }
        let (rows_a_warp, unroll) = tiling(self.body, rows, cols);
        let blocks = (rows + rows_a_warp * WARPS - 1) / (rows_a_warp * WARPS);
        let [t, k, n, g, r, u] = ["T", "K", "N", "G", "R", "U"].map(c);
        let (t, k, n, g, r, u) = (t?, k?, n?, g?, r?, u?);
        // SAFETY: the config is freed by `Config`'s drop; the name strings outlive the calls,
        // which copy them.
        let config = unsafe { Config(mlx_sys::mlx_fast_cuda_kernel_config_new()) };
        if config.0.ctx.is_null() {
            return Err(failed("a launch configuration"));
        }
        let raw = config.0;
        let shape = [rows];
        let ints = [(&k, cols), (&n, rows), (&g, group), (&r, rows_a_warp), (&u, unroll)];
        // SAFETY: as above.
        let ok = unsafe {
            mlx_sys::mlx_fast_cuda_kernel_config_add_output_arg(raw, shape.as_ptr(), 1, dtype.into()) == 0
                && mlx_sys::mlx_fast_cuda_kernel_config_set_grid(raw, blocks * 32 * WARPS, 1, 1) == 0
                && mlx_sys::mlx_fast_cuda_kernel_config_set_thread_group(raw, 32 * WARPS, 1, 1) == 0
                && mlx_sys::mlx_fast_cuda_kernel_config_add_template_arg_dtype(raw, t.as_ptr(), dtype.into()) == 0
                && ints.iter().all(|(name, v)| mlx_sys::mlx_fast_cuda_kernel_config_add_template_arg_int(raw, name.as_ptr(), *v) == 0)
        };
        if !ok {
            return Err(failed("a launch configuration"));
        }
        self.configs.push((key, config));
        Ok(&self.configs.last().expect("just pushed").1)
    }
}

/// x [..., K] (one row: every leading dimension 1) times the 4-bit [N, K] matrix (w [N, K / 8]
/// u32, scales and biases [N, K / group] of x's dtype), transposed: [..., N], as
/// `ops::quantized_matmul(x, w, scales, biases, true, group, 4)` computes it, on the GPU.
pub(crate) fn matmul(x: &Array, w: &Array, scales: &Array, biases: &Array, group: i32) -> Result<Array> {
    let (rows, cols) = (w.dim(0), scales.dim(1) * group);
    one_row(x, cols, scales, biases)?;
    like_x(x, launch(Body::Matmul, x, &[w, scales, biases], rows, cols, group)?, rows)
}

/// An error unless `x` is one row of `cols` values of the dtype of `scales` and `biases`.
fn one_row(x: &Array, cols: i32, scales: &Array, biases: &Array) -> Result<()> {
    if x.size() != cols as usize || scales.dtype() != x.dtype() || biases.dtype() != x.dtype() {
        return Err(ModelError::Input(format!("Laya's GPU matmul takes one row of {cols} values of its scales' dtype")));
    }
    Ok(())
}

/// A kernel's output [rows] in x's shape with its last dimension `rows`.
fn like_x(x: &Array, out: Array, rows: i32) -> Result<Array> {
    let mut shape = x.shape().to_vec();
    match shape.last_mut() {
        Some(last) => *last = rows,
        None => shape.push(rows),
    }
    Ok(if shape.len() == 1 { out } else { out.reshape(&shape)? })
}

/// silu(x Wg^T) * (x Wu^T) for one row x [..., K] and two 4-bit [N, K] matrices (w, scales,
/// biases, group each) of the same shape: [..., N], as MLX's two matmuls and [`crate::model`]'s
/// `gated` compute it, on the GPU.
pub(crate) fn gate_up_silu(x: &Array, gate: QuantizedParts<'_>, up: QuantizedParts<'_>) -> Result<Array> {
    let ((w, scales, biases, group), (w2, scales2, biases2, group2)) = (gate, up);
    let (rows, cols) = (w.dim(0), scales.dim(1) * group);
    if w.shape() != w2.shape() || scales.shape() != scales2.shape() || group != group2 || scales2.dtype() != x.dtype() || biases2.dtype() != x.dtype()
    {
        return Err(ModelError::Input("Laya's GPU gate/up kernel takes two matrices of one shape and dtype".into()));
    }
    one_row(x, cols, scales, biases)?;
    like_x(x, launch(Body::GateUp, x, &[w, scales, biases, w2, scales2, biases2], rows, cols, group)?, rows)
}

/// A quantized matrix as the kernels take it: (w, scales, biases, group).
pub(crate) type QuantizedParts<'a> = (&'a Array, &'a Array, &'a Array, i32);

/// Runs `body` on x and `weights` (in its inputs' order after x): [rows].
fn launch(body: Body, x: &Array, weights: &[&Array], rows: i32, cols: i32, group: i32) -> Result<Array> {
    KERNELS.with(|cell| -> Result<Array> {
        let mut kernels = cell.borrow_mut();
        let i = match kernels.iter().position(|k| k.body == body) {
            Some(i) => i,
            None => {
                kernels.push(Kernel::new(body)?);
                kernels.len() - 1
            }
        };
        let kernel = &mut kernels[i];
        let raw = kernel.raw;
        let stream = kernel.stream.as_ptr();
        let config = kernel.config(x.dtype(), rows, cols, group)?.0;
        // SAFETY: the input handles are live arrays the vector copies (it holds references);
        // on success the output vector holds one fresh array, which we copy out before freeing
        // the vector. The kernel reads only inside its inputs (row and column bounds are its
        // compile-time N and K, checked against the arrays by the callers) and writes each of
        // its N outputs once.
        unsafe {
            let inputs = mlx_sys::mlx_vector_array_new();
            for a in std::iter::once(x).chain(weights.iter().copied()) {
                mlx_sys::mlx_vector_array_append_value(inputs, a.as_ptr());
            }
            let mut outputs = mlx_sys::mlx_vector_array_new();
            let status = mlx_sys::mlx_fast_cuda_kernel_apply(&mut outputs, raw, inputs, config, stream);
            mlx_sys::mlx_vector_array_free(inputs);
            let mut out = mlx_sys::mlx_array_new();
            let got = status == 0 && mlx_sys::mlx_vector_array_size(outputs) == 1 && mlx_sys::mlx_vector_array_get(&mut out, outputs, 0) == 0;
            mlx_sys::mlx_vector_array_free(outputs);
            if !got {
                mlx_sys::mlx_array_free(out);
                return Err(failed("a launch"));
            }
            Ok(Array::from_ptr(out))
        }
    })
}

/// A fixed, irregular row of `cols` values in [-1, 1] of `dtype`: the fractional parts of
/// i * golden ratio, every third one negated and halved.
fn probe(cols: i32, dtype: Dtype) -> Result<Array> {
    let values: Vec<f32> = (0..cols).map(|i| ((i as f32 * 0.618_034).fract() * 2.0 - 1.0) * if i % 3 == 0 { 1.0 } else { -0.5 }).collect();
    Ok(Array::from_slice(&values, &[1, cols]).as_dtype(dtype)?)
}

/// max |ours - mlx| / max |mlx|, in f32 (the outputs may be small: no floor under the scale).
fn relative(ours: &Array, mlx: &Array) -> Result<f32> {
    crate::gpu_check::relative_difference(mlx, ours, f32::MIN_POSITIVE)
}

/// The largest difference between Laya's gate/up kernel and MLX's two matmuls and silu(gate) *
/// up (as [`crate::model`]'s `gated` computes it), relative to the largest of MLX's outputs.
pub(crate) fn gate_up_difference(gate: QuantizedParts<'_>, up: QuantizedParts<'_>) -> Result<f32> {
    let x = probe(gate.1.dim(1) * gate.3, gate.1.dtype())?;
    let ours = gate_up_silu(&x, gate, up)?;
    let g = ops::quantized_matmul(&x, gate.0, gate.1, gate.2, true, gate.3, 4)?;
    let u = ops::quantized_matmul(&x, up.0, up.1, up.2, true, up.3, 4)?;
    let mlx = crate::model::gated(crate::model::Gate::Silu, &g, &u)?;
    let d = relative(&ours, &mlx)?;
    tracing::debug!("Laya's GPU gate/up kernel on {:?} matrices: {d:.1e} from MLX's", gate.0.shape());
    Ok(d)
}

/// The largest difference between Laya's kernel and MLX's on `w` (one row of inputs spread over
/// [-1, 1] in x's dtype), relative to the largest of MLX's outputs. Runs on the GPU.
pub(crate) fn difference(w: &Array, scales: &Array, biases: &Array, group: i32) -> Result<f32> {
    let x = probe(scales.dim(1) * group, scales.dtype())?;
    let ours = matmul(&x, w, scales, biases, group)?;
    let mlx = ops::quantized_matmul(&x, w, scales, biases, true, group, 4)?;
    relative(&ours, &mlx)
}

/// The largest [`difference`] over one matrix of each shape that takes the kernel (the first in
/// [`Weights::linears`]'s order: layer 0's, then the head's), so that each compiled variant of
/// the kernel is checked once. An error when one fails to compile or run.
pub(crate) fn check(weights: &Weights) -> Result<f32> {
    let mut seen: Vec<(Vec<i32>, Dtype, i32)> = Vec::new();
    let mut worst = 0f32;
    for (w, scales, biases, group) in weights.linears().into_iter().filter_map(|l| l.gpu_qmv_parts()) {
        let key = (w.shape().to_vec(), scales.dtype(), group);
        if seen.contains(&key) {
            continue;
        }
        let d = difference(w, scales, biases, group)?;
        tracing::debug!("Laya's GPU matmul kernel on a {:?} matrix: {d:.1e} from MLX's", w.shape());
        worst = worst.max(d);
        seen.push(key);
    }
    Ok(worst)
}

// The kernels themselves need a CUDA GPU: the load-time check above and bench/cuda_qmv_bench.cu
// test them there. What the CPU can test is which matrices they are given.
#[cfg(all(test, not(target_os = "macos")))]
mod tests {
    use super::*;

    #[test]
    fn only_large_4_bit_matrices_take_the_kernel() {
        let f16 = Dtype::Float16;
        // Qwen3-8B (group 64): q/o, gate/up, down and the head do; k/v does not.
        for (rows, cols) in [(4096, 4096), (12288, 4096), (4096, 12288), (151936, 4096)] {
            assert!(suits(rows, cols, 64, 4, f16), "{rows} x {cols}");
        }
        assert!(!suits(1024, 4096, 64, 4, f16));
        assert!(!suits(12288, 4096, 64, 8, f16));
        // The default model (SmolLM2-135M, f32 on the GPU): none, nor its 8-bit head.
        for (rows, cols) in [(576, 576), (192, 576), (1536, 576), (576, 1536)] {
            assert!(!suits(rows, cols, 32, 4, Dtype::Float32), "{rows} x {cols}");
        }
        assert!(!suits(49152, 576, 32, 8, Dtype::Float32));
    }
}
