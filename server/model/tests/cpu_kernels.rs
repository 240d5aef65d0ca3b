//! Laya's CPU quantized matmul matches MLX's `quantized_matmul` across shapes, group sizes, bit
//! widths, input rows (decode, scoring batches, prefill), thread counts and instruction sets.
//!
//! Tolerance: both sum the same f32 products in a different order; the difference is bounded by
//! about K * eps * sum|x_k w_k|. We require |ours - mlx| <= 1e-5 * K^0.5 * (1 + sum |x||w|) / 4,
//! roughly 1e-4 relative for K = 576, far below any real error (a wrong nibble order or scale
//! is O(1) relative).

use laya_model::cpu_kernels;
use mlx_rs::{ops, random, Array};

fn check(m: i32, n: i32, k: i32, group: i32, bits: i32) {
    let key = random::key((m * 31 + n * 7 + k + group + bits) as u64).unwrap();
    let x = random::normal::<f32>(&[m, k], None, None, &key).unwrap();
    let w = random::normal::<f32>(&[n, k], None, Some(0.05), &random::split(&key, 2).unwrap().1).unwrap();
    let (wq, scales, biases) = ops::quantize(&w, group, bits).unwrap();
    let mlx = ops::quantized_matmul(&x, &wq, &scales, &biases, true, group, bits).unwrap();
    let ours = cpu_kernels::quantized_matmul(&x, &wq, &scales, &biases, group, bits).unwrap();
    assert_eq!(ours.shape(), &[m, n]);
    let deq = ops::dequantize(&wq, &scales, &biases, group, bits).unwrap();
    let mag = ops::matmul(&x.abs().unwrap(), &deq.abs().unwrap().t()).unwrap();
    mlx_rs::transforms::eval([&mlx, &ours, &mag]).unwrap();
    let (a, b, mag) = (mlx.as_slice::<f32>(), ours.as_slice::<f32>(), mag.as_slice::<f32>());
    let scale = 1e-5 * (k as f32).sqrt() / 4.0;
    for i in 0..a.len() {
        let tol = scale * (1.0 + mag[i]);
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
    if !cpu_kernels::available() {
        eprintln!("Laya's CPU kernels are not built here (no prebuilt MLX): nothing to compare");
        return;
    }
    for bits in [4, 8] {
        for group in [32, 64, 128] {
            // decode (1 row), scoring batches (3, 8), prefill (17, 64); N with tails; K of the
            // default model's layers (576, 1536) and a small one.
            for (m, n, k) in [(1, 576, 576), (1, 1536, 576), (1, 576, 1536), (3, 7, 128), (8, 192, 576), (17, 130, 384), (64, 576, 1536)] {
                if k % group == 0 {
                    check(m, n, k, group, bits);
                }
            }
        }
    }
}

#[test]
fn the_output_head_shape_matches() {
    if cpu_kernels::available() {
        check(2, 49152, 576, 32, 8);
    }
}

#[test]
fn bad_arguments_are_errors_not_crashes() {
    if !cpu_kernels::available() {
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

/// Runs this file's shape test again in a child process with other settings: the instruction set
/// and the thread count are chosen once per process.
fn rerun_with(env: &[(&str, &str)]) {
    if std::env::var("LAYA_KERNEL_CHILD").is_ok() || !cpu_kernels::available() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "matches_mlx_across_shapes", "--test-threads=1"])
        .env("LAYA_KERNEL_CHILD", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{env:?}:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn avx2_path_matches_too() {
    rerun_with(&[("LAYA_CPU_ISA", "avx2")]);
}

#[test]
fn scalar_path_and_one_thread_match_too() {
    rerun_with(&[("LAYA_CPU_ISA", "scalar"), ("LAYA_THREADS", "1")]);
}
