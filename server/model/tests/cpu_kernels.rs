//! Laya's CPU quantized matmul matches MLX's `quantized_matmul` across shapes, group sizes, bit
//! widths, input rows (decode, scoring batches, prefill), thread counts and instruction sets.
//!
//! Tolerance: both sum the same f32 products in a different order; the difference is bounded by
//! about K * eps * sum|x_k w_k|. We require |ours - mlx| <= 1e-5 * K^0.5 * (1 + sum |x||w|) / 4,
//! roughly 1e-4 relative for K = 576, far below any real error (a wrong nibble order or scale
//! is O(1) relative). One input row on AVX2 takes x in 16 bits per 32-block (the largest element
//! to 32767), and on AVX-512 VNNI in 8 bits and 8 more bits of what those missed (each level's
//! largest to 127): that adds at most half a step per element, max|x_block| / 65534 or
//! (max|x_block| / 254) / 254, times the weights' integer part |w - bias|, and the bound grows by
//! the larger of the two.

use laya_model::cpu_kernels;
use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::ops::indexing::TryIndexOp;
use mlx_rs::{ops, random, Array};

fn check(m: i32, n: i32, k: i32, group: i32, bits: i32) {
    let key = random::key((m * 31 + n * 7 + k + group + bits) as u64).unwrap();
    let x = random::normal::<f32>(&[m, k], None, None, &key).unwrap();
    check_with(&x, n, group, bits, &random::split(&key, 2).unwrap().1, 1.0);
}

/// `q16_share`: the share of the 16-bit step allowed (below 1 where every block is wide enough that
/// the kernel also carries its residual).
fn check_with(x: &Array, n: i32, group: i32, bits: i32, key: &Array, q16_share: f32) {
    let (m, k) = (x.shape()[0], x.shape()[1]);
    let w = random::normal::<f32>(&[n, k], None, Some(0.05), key).unwrap();
    let (wq, scales, biases) = ops::quantize(&w, group, bits).unwrap();
    let mlx = ops::quantized_matmul(x, &wq, &scales, &biases, true, group, bits).unwrap();
    let ours = cpu_kernels::quantized_matmul(x, &wq, &scales, &biases, group, bits).unwrap();
    assert_eq!(ours.shape(), &[m, n]);
    let deq = ops::dequantize(&wq, &scales, &biases, group, bits).unwrap();
    let mag = ops::matmul(x.abs().unwrap(), deq.abs().unwrap().t()).unwrap();
    // The one-row step: sum over 32-blocks of max|x_block| / 64516 (254^2, 8 + 8 bits; 16 bits
    // give 65534) * sum over the block of |w - bias|.
    let step = x.abs().unwrap().reshape(&[m, k / 32, 32]).unwrap().max_axis(-1, None).unwrap() / 64516.0f32;
    let bias_each = ops::repeat_axis::<f32>(biases.clone(), group, 1).unwrap();
    let int_part = deq.subtract(&bias_each).unwrap().abs().unwrap().reshape(&[n, k / 32, 32]).unwrap().sum_axis(-1, None).unwrap();
    let q16 = ops::matmul(&step, int_part.t()).unwrap();
    mlx_rs::transforms::eval([&mlx, &ours, &mag, &q16]).unwrap();
    let (a, b, mag, q16) = (mlx.as_slice::<f32>(), ours.as_slice::<f32>(), mag.as_slice::<f32>(), q16.as_slice::<f32>());
    let scale = 1e-5 * (k as f32).sqrt() / 4.0;
    for i in 0..a.len() {
        let tol = scale * (1.0 + mag[i]) + if m == 1 { q16_share * q16[i] } else { 0.0 };
        assert!(
            (a[i] - b[i]).abs() <= tol,
            "M={m} N={n} K={k} g{group} {bits}-bit [{},{}]: mlx {} laya {} (tol {tol})",
            i / n as usize,
            i % n as usize,
            a[i],
            b[i]
        );
    }
}

#[test]
fn matches_mlx_across_shapes() {
    if !ready() {
        eprintln!("Laya's CPU kernels are not built here (no prebuilt MLX): nothing to compare");
        return;
    }
    for bits in [4, 8] {
        for group in [32, 64, 128] {
            // decode (1 row), scoring batches (3, 8), prefill (17, 64); N with tails; K of the
            // default model's layers (576, 1536) and a small one.
            for (m, n, k) in
                [(1, 576, 576), (1, 1536, 576), (1, 576, 1536), (1, 130, 384), (3, 7, 128), (8, 192, 576), (17, 130, 384), (64, 576, 1536)]
            {
                if k % group == 0 {
                    check(m, n, k, group, bits);
                }
            }
        }
    }
}

/// Laya's attention against MLX's sdpa: keys and values are views of a larger cache buffer,
/// queries are the last `l` positions (causal, grouped-query). Probabilities are computed with a
/// polynomial exp (relative error ~2e-7): we allow 1e-5 absolute on outputs of magnitude ~1.
fn check_attention(b: i32, heads: i32, kv_heads: i32, l: i32, t: i32, d: i32) {
    let key = random::key((b * 1000 + heads * 100 + l * 10 + t + d) as u64).unwrap();
    let ks = random::split(&key, 3).unwrap();
    let q = random::normal::<f32>(&[b, heads, l, d], None, None, &key).unwrap();
    let kbuf = random::normal::<f32>(&[b, kv_heads, t + 37, d], None, None, &ks.0).unwrap();
    let vbuf = random::normal::<f32>(&[b, kv_heads, t + 37, d], None, None, &ks.1).unwrap();
    let k = kbuf.try_index((.., .., 0..t, ..)).unwrap();
    let v = vbuf.try_index((.., .., 0..t, ..)).unwrap();
    let scale = 1.0 / (d as f32).sqrt();
    let mask = (l > 1).then_some(ScaledDotProductAttentionMask::Causal);
    let mlx = fast::scaled_dot_product_attention(&q, &k, &v, scale, mask, None).unwrap();
    let ours = cpu_kernels::attention(&q, &k, &v, scale).unwrap();
    mlx_rs::transforms::eval([&mlx, &ours]).unwrap();
    assert_eq!(ours.shape(), mlx.shape());
    let diff = mlx.as_slice::<f32>().iter().zip(ours.as_slice::<f32>()).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(diff < 1e-5, "b{b} h{heads}/{kv_heads} l{l} t{t} d{d}: max diff {diff}");
}

#[test]
fn matches_mlx_attention() {
    if !ready() {
        return;
    }
    // decode (1 query), a keystroke (2), scoring rows (8 x 3), a prompt block (26 of 26);
    // head dims of the default model (64), Qwen3 (128), and one the vector path cannot take (40).
    for (b, h, kvh, l, t, d) in
        [(1, 9, 3, 1, 64, 64), (1, 9, 3, 2, 513, 64), (8, 9, 3, 3, 70, 64), (1, 9, 3, 26, 26, 64), (2, 16, 8, 5, 40, 128), (1, 4, 2, 3, 17, 40)]
    {
        check_attention(b, h, kvh, l, t, d);
    }
    assert!(
        cpu_kernels::attention(
            &Array::from_slice(&[1.0f32; 4], &[1, 1, 1, 4]),
            &Array::from_slice(&[1.0f32; 8], &[1, 1, 2, 4]),
            &Array::from_slice(&[1.0f32; 4], &[1, 1, 1, 4]),
            1.0
        )
        .is_err(),
        "k and v of different shapes"
    );
}

/// Laya's log-softmax against a float64 reference (and MLX's logsumexp, which sums in f32): a
/// vocabulary-sized row, a row not a multiple of the vector width, a -inf entry (a masked token)
/// and large logits. exp is a polynomial (relative error ~2e-7): we allow 1e-5 relative.
#[test]
fn log_softmax_matches_mlx() {
    if !ready() {
        return;
    }
    for (rows, n, scale) in [(1, 49152, 5.0f32), (3, 37, 1.0), (2, 1000, 40.0)] {
        let x = random::normal::<f32>(&[rows, n], None, Some(scale), &random::key(n as u64).unwrap()).unwrap();
        let mut v = x.as_slice::<f32>().to_vec();
        v[1] = f32::NEG_INFINITY;
        let x = Array::from_slice(&v, &[rows, n]);
        let reference: Vec<f64> = v
            .chunks(n as usize)
            .map(|row| {
                let mx = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64;
                mx + row.iter().map(|&t| (t as f64 - mx).exp()).sum::<f64>().ln()
            })
            .collect();
        let mlx = ops::logsumexp_axis(&x, -1, true).unwrap();
        let ours = cpu_kernels::log_softmax(&x, false).unwrap();
        let ours_lse = cpu_kernels::log_softmax(&x, true).unwrap();
        mlx_rs::transforms::eval([&mlx, &ours, &ours_lse]).unwrap();
        assert_eq!(ours.shape(), &[rows, n]);
        assert_eq!(ours_lse.shape(), &[rows, 1]);
        let near = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-5 * (1.0 + b.abs());
        for (r, &want) in reference.iter().enumerate() {
            let got = ours_lse.as_slice::<f32>()[r] as f64;
            assert!(near(got, want), "rows {rows} n {n}: logsumexp {got}, float64 {want}, MLX {}", mlx.as_slice::<f32>()[r]);
            for j in 0..n as usize {
                let (x, lp) = (v[r * n as usize + j] as f64, ours.as_slice::<f32>()[r * n as usize + j] as f64);
                assert!(near(lp, x - want), "rows {rows} n {n} [{r},{j}]: {lp} vs {}", x - want);
            }
        }
    }
    assert!(cpu_kernels::log_softmax(&Array::from_slice(&[1i32, 2], &[2]), false).is_err(), "ints are refused");
}

/// Activations have outliers: a block with one large element and small ones must keep the small
/// ones (the 16-bit step is per 32-block); a row with NaN or infinity gives what MLX gives where
/// that is finite, and no finite number where it is not.
#[test]
fn one_row_with_outliers_or_non_finite_values_matches() {
    if !ready() {
        return;
    }
    let key = random::key(7).unwrap();
    let mut row: Vec<f32> = (0..576).map(|i| ((i * 37 % 101) as f32 - 50.0) * 1e-3).collect();
    row[5] = 300.0;
    row[200] = -1e4;
    row[575] = 1e-30;
    // Every block wide: one element 50 among small ones. The residual makes the 16-bit step's
    // error vanish (without it the error is up to the whole step: a test with 1e-3 of it fails).
    let spiky: Vec<f32> = (0..576)
        .map(|i| {
            if i % 32 == (i / 32) % 32 {
                if i % 64 < 32 {
                    50.0
                } else {
                    -50.0
                }
            } else {
                row[i]
            }
        })
        .collect();
    for bits in [4, 8] {
        for group in [32, 64] {
            check_with(&Array::from_slice(&row, &[1, 576]), 130, group, bits, &key, 1.0);
            check_with(&Array::from_slice(&spiky, &[1, 576]), 130, group, bits, &key, 1e-3);
        }
    }
    let w = random::normal::<f32>(&[64, 576], None, Some(0.05), &key).unwrap();
    for bad in [f32::NAN, f32::INFINITY] {
        let mut r = row.clone();
        r[40] = bad;
        let x = Array::from_slice(&r, &[1, 576]);
        for bits in [4, 8] {
            let (wq, s, b) = ops::quantize(&w, 32, bits).unwrap();
            let mlx = ops::quantized_matmul(&x, &wq, &s, &b, true, 32, bits).unwrap();
            let ours = cpu_kernels::quantized_matmul(&x, &wq, &s, &b, 32, bits).unwrap();
            mlx_rs::transforms::eval([&mlx, &ours]).unwrap();
            for (a, o) in mlx.as_slice::<f32>().iter().zip(ours.as_slice::<f32>()) {
                let close = !a.is_finite() || (a - o).abs() <= 1e-3 * (1.0 + a.abs());
                assert!(a.is_finite() == o.is_finite() && close, "{bad} {bits}-bit: mlx {a} laya {o}");
            }
        }
    }
}

#[test]
fn the_output_head_shape_matches() {
    if ready() {
        check(2, 49152, 576, 32, 8);
    }
}

#[test]
fn bad_arguments_are_errors_not_crashes() {
    if !ready() {
        return;
    }
    let x = Array::from_slice(&[1.0f32; 64], &[1, 64]);
    let w = random::normal::<f32>(&[8, 64], None, None, &random::key(1).unwrap()).unwrap();
    let (wq, s, b) = ops::quantize(&w, 32, 4).unwrap();
    assert!(cpu_kernels::quantized_matmul(&x, &wq, &s, &b, 32, 3).is_err(), "3 bits");
    assert!(cpu_kernels::quantized_matmul(&x, &wq, &s, &b, 16, 4).is_err(), "group 16");
    let x32 = Array::from_slice(&[1.0f32; 32], &[1, 32]);
    let e = cpu_kernels::quantized_matmul(&x32, &wq, &s, &b, 32, 4).unwrap_err();
    assert!(e.to_string().contains("shapes do not match"), "{e}");
}

/// Whether the kernels are built in; configures them first as this process was asked to (a child
/// of `rerun_with` is asked through LAYA_CPU_ISA and LAYA_THREADS, read here as the binary does).
fn ready() -> bool {
    let isa = std::env::var("LAYA_CPU_ISA").ok().map(|v| v.parse().unwrap());
    let threads = std::env::var("LAYA_THREADS").ok().map(|v| v.parse().unwrap());
    cpu_kernels::configure(cpu_kernels::KernelOptions { isa, threads }).unwrap();
    cpu_kernels::available()
}

#[test]
fn other_threads_after_a_kernel_ran_are_an_error() {
    if !ready() {
        return;
    }
    let x = Array::from_slice(&[1f32; 64], &[1, 64]);
    let (wq, s, b) = ops::quantize(Array::from_slice(&[0.5f32; 64 * 64], &[64, 64]), 32, 4).unwrap();
    cpu_kernels::quantized_matmul(&x, &wq, &s, &b, 32, 4).unwrap().eval().unwrap();
    let threads = cpu_kernels::describe().split(", ").nth(1).and_then(|t| t.split(' ').next()?.parse::<usize>().ok()).unwrap();
    let e = cpu_kernels::configure(cpu_kernels::KernelOptions { isa: None, threads: Some(threads + 1) }).unwrap_err();
    assert!(e.to_string().contains("too late"), "{e}");
    cpu_kernels::configure(cpu_kernels::KernelOptions { isa: None, threads: Some(threads) }).unwrap();
}

/// Runs this file's comparisons with MLX again in a child process with other settings: the instruction set
/// and the thread count are chosen once per process.
fn rerun_with(env: &[(&str, &str)]) {
    if std::env::var("LAYA_KERNEL_CHILD").is_ok() || !cpu_kernels::available() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["match", "--test-threads=1"])
        .env("LAYA_KERNEL_CHILD", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{env:?}:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn avx512_without_vnni_matches_too() {
    rerun_with(&[("LAYA_CPU_ISA", "avx512")]);
}

#[test]
fn avx2_path_matches_too() {
    rerun_with(&[("LAYA_CPU_ISA", "avx2")]);
}

#[test]
fn scalar_path_and_one_thread_match_too() {
    rerun_with(&[("LAYA_CPU_ISA", "scalar"), ("LAYA_THREADS", "1")]);
}
