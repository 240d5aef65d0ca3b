//! Laya's own CPU kernels (cpu/*.cpp: quantized matmul, attention, log-softmax, a whole block),
//! called in place of MLX's scalar CPU ones: custom MLX primitives, so they stay inside MLX's lazy
//! graph. Only built where the build links a
//! prebuilt MLX on x86-64; elsewhere `available()` is false and MLX's kernels run.

use mlx_rs::Array;

use crate::error::{ModelError, Result};

#[cfg(laya_cpu_kernels)]
mod ffi {
    use std::ffi::{c_char, c_int, c_void};
    extern "C" {
        pub fn laya_quantized_matmul(
            out: *mut *mut c_void,
            x: *const c_void,
            w: *const c_void,
            scales: *const c_void,
            biases: *const c_void,
            group: c_int,
            bits: c_int,
            err: *mut c_char,
            err_len: usize,
        ) -> c_int;
        pub fn laya_attention(
            out: *mut *mut c_void,
            q: *const c_void,
            k: *const c_void,
            v: *const c_void,
            scale: f32,
            err: *mut c_char,
            err_len: usize,
        ) -> c_int;
        pub fn laya_block(outs: *mut *mut c_void, args: *const super::BlockArgs, err: *mut c_char, err_len: usize) -> c_int;
        pub fn laya_block_args_size() -> usize;
        pub fn laya_log_softmax(out: *mut *mut c_void, x: *const c_void, lse_only: c_int, err: *mut c_char, err_len: usize) -> c_int;
        pub fn laya_cpu_configure(isa_cap: c_int, threads: c_int) -> c_int;
        pub fn laya_cpu_isa() -> c_int;
        pub fn laya_cpu_threads() -> c_int;
    }
}

/// Whether the kernels are built in (x86-64 with a prebuilt MLX). [`crate::LoadOptions`] says
/// whether a model uses them.
pub fn available() -> bool {
    cfg!(laya_cpu_kernels)
}

/// An instruction set the kernels may use at most (tests and benchmarks compare them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Scalar,
    Avx2,
    Avx512,
    /// AVX-512 with VNNI: one-row matmuls take x in 8 bits (`vpdpbusd`).
    Avx512Vnni,
}

impl std::str::FromStr for Isa {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "scalar" => Ok(Isa::Scalar),
            "avx2" => Ok(Isa::Avx2),
            "avx512" => Ok(Isa::Avx512),
            "avx512-vnni" => Ok(Isa::Avx512Vnni),
            _ => Err(format!("unknown instruction set {s:?} (scalar, avx2, avx512 or avx512-vnni)")),
        }
    }
}

/// How the kernels run: chosen once per process, before the first kernel runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelOptions {
    /// At most this instruction set (default: the best the CPU has).
    pub isa: Option<Isa>,
    /// This many threads (default: one per core).
    pub threads: Option<usize>,
}

/// Sets how the kernels run. Both choices are made once per process: asking again for the same
/// is fine, asking for other ones after a kernel ran is an error.
pub fn configure(options: KernelOptions) -> Result<()> {
    if options == KernelOptions::default() {
        return Ok(());
    }
    #[cfg(laya_cpu_kernels)]
    {
        let isa = options.isa.map_or(-1, |i| match i {
            Isa::Scalar => 0,
            Isa::Avx2 => 2,
            Isa::Avx512 => 3,
            Isa::Avx512Vnni => 4,
        });
        let threads = options.threads.map_or(0, |t| t.clamp(1, 64) as std::ffi::c_int);
        // SAFETY: a plain C function over two ints.
        if unsafe { ffi::laya_cpu_configure(isa, threads) } != 0 {
            return Err(ModelError::Mlx(format!("the CPU kernels already run as {}; {options:?} comes too late", describe())));
        }
    }
    Ok(())
}

/// "avx512 x 2 threads", "avx2 x 2 threads", "scalar x 1 threads", or why they are off.
pub fn describe() -> String {
    #[cfg(laya_cpu_kernels)]
    if available() {
        // SAFETY: plain C functions without arguments.
        let (isa, threads) = unsafe { (ffi::laya_cpu_isa(), ffi::laya_cpu_threads()) };
        let isa = match isa {
            4 => "AVX-512 VNNI",
            3 => "AVX-512",
            2 => "AVX2+FMA",
            _ => "scalar",
        };
        return format!("laya {isa}, {threads} threads");
    }
    "MLX's".into()
}

/// Calls one of the kernels' C entry points, which store a new array handle or an error message.
#[cfg(laya_cpu_kernels)]
fn call(what: &str, f: impl FnOnce(*mut *mut std::ffi::c_void, *mut std::ffi::c_char, usize) -> std::ffi::c_int) -> Result<Array> {
    let mut out: *mut std::ffi::c_void = std::ptr::null_mut();
    let mut err = [0 as std::ffi::c_char; 512];
    if f(&mut out, err.as_mut_ptr(), err.len()) != 0 {
        // SAFETY: the kernel wrote a NUL-terminated message into `err`.
        let msg = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
        return Err(ModelError::Mlx(format!("{what}: {msg}")));
    }
    // SAFETY: on success `out` is a fresh heap mlx::core::array in mlx-c's handle layout; the
    // returned Array owns and frees it.
    Ok(unsafe { Array::from_ptr(mlx_sys::mlx_array { ctx: out }) })
}

#[cfg(not(laya_cpu_kernels))]
fn call(what: &str, _f: impl FnOnce(*mut *mut std::ffi::c_void, *mut std::ffi::c_char, usize) -> std::ffi::c_int) -> Result<Array> {
    Err(ModelError::Mlx(format!("{what}: Laya's CPU kernels are not built into this binary")))
}

/// x [..., K] f32 times the affine-quantized [N, K] matrix (w, scales, biases; f32 scales and
/// biases), transposed: [..., N]. Same contract as `mlx_rs::ops::quantized_matmul(.., true, ..)`.
pub fn quantized_matmul(x: &Array, w: &Array, scales: &Array, biases: &Array, group: i32, bits: i32) -> Result<Array> {
    // SAFETY (both calls): the ctx pointers are live mlx::core::array objects owned by the arguments.
    call("laya quantized matmul", |out, err, len| {
        #[cfg(laya_cpu_kernels)]
        return unsafe {
            ffi::laya_quantized_matmul(out, x.as_ptr().ctx, w.as_ptr().ctx, scales.as_ptr().ctx, biases.as_ptr().ctx, group, bits, err, len)
        };
        #[allow(unreachable_code)]
        {
            let _ = (out, err, len, x, w, scales, biases, group, bits);
            1
        }
    })
}

/// Causal attention of q [B, H, L, D] over k, v [B, KVH, T, D] (f32; KVH divides H): query i
/// sees keys 0..=T-L+i. k and v may be views of a larger cache buffer. Returns [B, H, L, D].
pub fn attention(q: &Array, k: &Array, v: &Array, scale: f32) -> Result<Array> {
    call("laya attention", |out, err, len| {
        #[cfg(laya_cpu_kernels)]
        return unsafe { ffi::laya_attention(out, q.as_ptr().ctx, k.as_ptr().ctx, v.as_ptr().ctx, scale, err, len) };
        #[allow(unreachable_code)]
        {
            let _ = (out, err, len, q, k, v, scale);
            1
        }
    })
}

/// Row-wise log-softmax of x [..., V] (f32): x minus each row's logsumexp. With `lse_only`, just
/// the logsumexps, [..., 1]. Same results as MLX's `logsumexp_axis(x, -1, true)` (and
/// `x - logsumexp`), vectorized where MLX's CPU backend is not on x86.
pub fn log_softmax(x: &Array, lse_only: bool) -> Result<Array> {
    call("laya log-softmax", |out, err, len| {
        #[cfg(laya_cpu_kernels)]
        return unsafe { ffi::laya_log_softmax(out, x.as_ptr().ctx, lse_only as std::ffi::c_int, err, len) };
        #[allow(unreachable_code)]
        {
            let _ = (out, err, len, x, lse_only);
            1
        }
    })
}

/// The arguments of one fused transformer block, shared with the C++ side field for field
/// (cpu/block.cpp, `LayaBlockArgs`; its size is checked on every call): 23 array handles ([1]-sized
/// dummies for the norms, rope periods and bias a model lacks), 21 ints (flags 0 or 1), 3 floats.
/// The handles are borrowed from arrays that must outlive the call.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct BlockArgs {
    pub x: mlx_sys::mlx_array,
    pub attn_norm: mlx_sys::mlx_array,
    pub mlp_norm: mlx_sys::mlx_array,
    pub q_norm: mlx_sys::mlx_array,
    pub k_norm: mlx_sys::mlx_array,
    pub rope_periods: mlx_sys::mlx_array,
    pub qkv_w: mlx_sys::mlx_array,
    pub qkv_scales: mlx_sys::mlx_array,
    pub qkv_biases: mlx_sys::mlx_array,
    pub qkv_bias: mlx_sys::mlx_array,
    pub o_w: mlx_sys::mlx_array,
    pub o_scales: mlx_sys::mlx_array,
    pub o_biases: mlx_sys::mlx_array,
    pub gate_up_w: mlx_sys::mlx_array,
    pub gate_up_scales: mlx_sys::mlx_array,
    pub gate_up_biases: mlx_sys::mlx_array,
    pub down_w: mlx_sys::mlx_array,
    pub down_scales: mlx_sys::mlx_array,
    pub down_biases: mlx_sys::mlx_array,
    /// A fork's shared prefix (its parent's buffers, [1, kv_heads, >= prefix, head_dim]), read
    /// for positions `0..prefix`; [1]-sized dummies when `prefix` is 0.
    pub prefix_k: mlx_sys::mlx_array,
    pub prefix_v: mlx_sys::mlx_array,
    pub kbuf: mlx_sys::mlx_array,
    pub vbuf: mlx_sys::mlx_array,
    pub batch: i32,
    pub len: i32,
    pub hidden: i32,
    pub heads: i32,
    pub kv_heads: i32,
    pub head_dim: i32,
    pub intermediate: i32,
    pub prefix: i32,
    /// Positions in `kbuf`/`vbuf` before this block (they follow the prefix's), and their room.
    pub offset: i32,
    pub cap: i32,
    pub rope_traditional: i32,
    pub qk_norm: i32,
    pub has_qkv_bias: i32,
    pub qkv_group: i32,
    pub qkv_bits: i32,
    pub o_group: i32,
    pub o_bits: i32,
    pub gate_up_group: i32,
    pub gate_up_bits: i32,
    pub down_group: i32,
    pub down_bits: i32,
    pub eps: f32,
    pub rope_base: f32,
    pub rope_scale: f32,
}

/// One transformer block in one MLX node (see cpu/block.cpp, `LayaBlock`). Returns (output, keys,
/// values), the two new KV buffers taking the place of the ones passed in.
pub(crate) fn block(args: &BlockArgs) -> Result<(Array, Array, Array)> {
    #[cfg(laya_cpu_kernels)]
    {
        // SAFETY: a plain C function without arguments.
        if unsafe { ffi::laya_block_args_size() } != std::mem::size_of::<BlockArgs>() {
            return Err(ModelError::Mlx("laya block: BlockArgs and LayaBlockArgs differ (rebuild the kernels)".into()));
        }
        let mut outs: [*mut std::ffi::c_void; 3] = [std::ptr::null_mut(); 3];
        let mut err = [0 as std::ffi::c_char; 512];
        // SAFETY: `args` holds live array handles (the caller's arrays outlive the call) laid out
        // as LayaBlockArgs (same size, same field order); on success it stores three fresh heap
        // arrays that the returned Arrays own.
        let rc = unsafe { ffi::laya_block(outs.as_mut_ptr(), args, err.as_mut_ptr(), err.len()) };
        if rc != 0 {
            // SAFETY: NUL-terminated message written by the kernel.
            let msg = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
            return Err(ModelError::Mlx(format!("laya block: {msg}")));
        }
        // SAFETY: see above.
        let [a, b, c] = outs.map(|p| unsafe { Array::from_ptr(mlx_sys::mlx_array { ctx: p }) });
        return Ok((a, b, c));
    }
    #[allow(unreachable_code)]
    {
        let _ = args;
        Err(ModelError::Mlx("laya block: Laya's CPU kernels are not built into this binary".into()))
    }
}
