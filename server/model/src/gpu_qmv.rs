//! Laya's own one-row 4-bit matmul on a CUDA GPU (the kernel in `gpu_qmv/`), JIT-compiled by MLX
//! through mlx-c's `mlx_fast_cuda_kernel_*` (mlx-rs wraps only Metal's), where it is faster than
//! MLX's: one-row inputs (a decode step) times large 4-bit matrices. Also the load-time check that
//! it gives MLX's answers on the model's own weights.
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
const SOURCE: &str = include_str!("gpu_qmv/body.cuh");
const INPUTS: [&str; 4] = ["x", "w", "scales", "biases"];
const OUTPUT: &str = "out";

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
fn tiling(rows: i32, cols: i32) -> (i32, i32) {
    if cols > 4096 {
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
    static KERNEL: RefCell<Option<Kernel>> = const { RefCell::new(None) };
}

fn failed(what: &str) -> ModelError {
    ModelError::Mlx(format!("Laya's GPU matmul kernel: {what} failed"))
}

fn c(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| failed("a name with a NUL"))
}

impl Kernel {
    fn new() -> Result<Self> {
        let (name, header, source, output) = (c("laya_qmv4")?, c(HEADER)?, c(SOURCE)?, c(OUTPUT)?);
        let inputs = INPUTS.map(c).into_iter().collect::<Result<Vec<_>>>()?;
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
            Ok(Kernel { raw, stream: Stream::gpu(), configs: Vec::new() })
        }
    }

    /// The launch configuration for x of `dtype` times a [rows, cols] matrix in groups of `group`;
    /// the output is [rows] (the caller reshapes).
    fn config(&mut self, dtype: Dtype, rows: i32, cols: i32, group: i32) -> Result<&Config> {
        let key = (dtype, rows, cols, group);
        if let Some(i) = self.configs.iter().position(|(k, _)| *k == key) {
            return Ok(&self.configs[i].1);
        }
        let (rows_a_warp, unroll) = tiling(rows, cols);
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
    if x.size() != cols as usize || scales.dtype() != x.dtype() || biases.dtype() != x.dtype() {
        return Err(ModelError::Input(format!("Laya's GPU matmul takes one row of {cols} values of its scales' dtype")));
    }
    let out = KERNEL.with(|cell| -> Result<Array> {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(Kernel::new()?);
        }
        let kernel = slot.as_mut().expect("just built");
        let raw = kernel.raw;
        let stream = kernel.stream.as_ptr();
        let config = kernel.config(x.dtype(), rows, cols, group)?.0;
        // SAFETY: the input handles are live arrays the vector copies (it holds references);
        // on success the output vector holds one fresh array, which we copy out before freeing
        // the vector. The kernel reads only inside its inputs (row and column bounds are its
        // compile-time N and K, checked against the arrays above) and writes each of its N
        // outputs once.
        unsafe {
            let inputs = mlx_sys::mlx_vector_array_new();
            for a in [x, w, scales, biases] {
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
    })?;
    let mut shape = x.shape().to_vec();
    match shape.last_mut() {
        Some(last) => *last = rows,
        None => shape.push(rows),
    }
    Ok(if shape.len() == 1 { out } else { out.reshape(&shape)? })
}

/// The largest difference between Laya's kernel and MLX's on `w` (one row of inputs spread over
/// [-1, 1] in x's dtype), relative to the largest of MLX's outputs. Runs on the GPU.
pub(crate) fn difference(w: &Array, scales: &Array, biases: &Array, group: i32) -> Result<f32> {
    let cols = scales.dim(1) * group;
    // A fixed, irregular row: the fractional parts of i * golden ratio, spread to [-1, 1].
    let values: Vec<f32> = (0..cols).map(|i| ((i as f32 * 0.618_034).fract() * 2.0 - 1.0) * if i % 3 == 0 { 1.0 } else { -0.5 }).collect();
    let x = Array::from_slice(&values, &[1, cols]).as_dtype(scales.dtype())?;
    let ours = matmul(&x, w, scales, biases, group)?.as_dtype(Dtype::Float32)?;
    let mlx = ops::quantized_matmul(&x, w, scales, biases, true, group, 4)?.as_dtype(Dtype::Float32)?;
    let diff = ours.subtract(&mlx)?.abs()?.max(None)?.item_exact::<f32>();
    let scale = mlx.abs()?.max(None)?.item_exact::<f32>().max(f32::MIN_POSITIVE);
    Ok(if diff.is_nan() { f32::INFINITY } else { diff / scale })
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
