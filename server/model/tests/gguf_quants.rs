//! Every GGML quantization Laya reads converts to MLX's affine format without changing a value:
//! small GGUF files of random blocks go through `gguf_tensors::read_tensors`, MLX dequantizes
//! them, and the result is compared with a reference dequantization written here straight from
//! ggml's block layouts (`dequantize_row_*` in ggml-quants.c).
//!
//! Tolerances: the exact types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K) compute `scale q + bias`
//! in f32 as ggml does, so they may differ by an f32 rounding or two (fused multiply-add):
//! 8 EPS of the group's magnitude; a misread value moves it by a whole step, ~1/16 of the group.
//! The re-quantized types (Q2_K, Q3_K, Q6_K, to 8 bits) may differ by half an 8-bit step, the
//! group's span / 510.
//! Bad input (truncated data, rows that are not whole blocks, wrong sizes) must be an error
//! naming the tensor, never a panic.
// The reference keeps ggml's index loops, so that it reads like the C it transcribes.
#![allow(clippy::needless_range_loop)]

mod common;
use common::*;

use std::path::Path;

use laya_model::{gguf, gguf_tensors, Model, ModelError};
use mlx_rs::{ops, Array, Dtype};

// ----- a GGUF writer with tensor data -----

struct Tensor {
    name: String,
    /// GGUF order: innermost first.
    dims: Vec<u64>,
    ty: u32,
    data: Vec<u8>,
}

fn gguf_string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

/// A GGUF v3 file with `meta` (raw key/value bytes, already encoded) and `tensors`.
fn gguf_bytes(meta_count: u64, meta: &[u8], tensors: &[Tensor]) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend((tensors.len() as u64).to_le_bytes());
    b.extend(meta_count.to_le_bytes());
    b.extend(meta);
    let mut offset = 0u64;
    for t in tensors {
        gguf_string(&mut b, &t.name);
        b.extend((t.dims.len() as u32).to_le_bytes());
        for d in &t.dims {
            b.extend(d.to_le_bytes());
        }
        b.extend(t.ty.to_le_bytes());
        b.extend(offset.to_le_bytes());
        offset += (t.data.len() as u64).div_ceil(32) * 32;
    }
    for t in tensors {
        b.resize(b.len().div_ceil(32) * 32, 0);
        b.extend(&t.data);
    }
    b
}

fn write_tensors(path: &Path, tensors: &[Tensor]) {
    std::fs::write(path, gguf_bytes(0, &[], tensors)).unwrap();
}

// ----- random blocks -----

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 32) as u8).collect()
    }
    /// A random normal f16 of magnitude 2^-14 .. 2^3 with a random sign (and, rarely, zero).
    fn half(&mut self) -> [u8; 2] {
        let r = self.next();
        if r.is_multiple_of(61) {
            return [0, 0];
        }
        let exp = 1 + (r >> 8) % 17; // biased exponents 1..=17: 2^-14 .. 2^2
        let bits = (((r >> 20) & 1) << 15) as u16 | (exp as u16) << 10 | ((r >> 32) & 0x3ff) as u16;
        bits.to_le_bytes()
    }
}

/// (ggml type id, name, block values, block bytes, byte offsets of f16 fields)
const TYPES: &[(u32, &str, usize, usize, &[usize])] = &[
    (2, "Q4_0", 32, 18, &[0]),
    (3, "Q4_1", 32, 20, &[0, 2]),
    (6, "Q5_0", 32, 22, &[0]),
    (7, "Q5_1", 32, 24, &[0, 2]),
    (8, "Q8_0", 32, 34, &[0]),
    (10, "Q2_K", 256, 84, &[80, 82]),
    (11, "Q3_K", 256, 110, &[108]),
    (12, "Q4_K", 256, 144, &[0, 2]),
    (13, "Q5_K", 256, 176, &[0, 2]),
    (14, "Q6_K", 256, 210, &[208]),
];

fn random_blocks(rng: &mut Rng, ty: u32, n_blocks: usize) -> Vec<u8> {
    let &(_, _, _, bytes, halves) = TYPES.iter().find(|t| t.0 == ty).unwrap();
    let mut out = Vec::with_capacity(n_blocks * bytes);
    for _ in 0..n_blocks {
        let mut b = rng.bytes(bytes);
        for &at in halves {
            b[at..at + 2].copy_from_slice(&rng.half());
        }
        out.extend(b);
    }
    out
}

// ----- the reference: ggml's dequantize_row_* -----

fn f16(b: &[u8], at: usize) -> f32 {
    let h = u16::from_le_bytes([b[at], b[at + 1]]) as u32;
    let (s, e, m) = (h >> 15, (h >> 10) & 31, h & 1023);
    let mag = match e {
        0 => m as f32 * 2f32.powi(-24),
        31 => {
            if m == 0 {
                f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => (1.0 + m as f32 / 1024.0) * 2f32.powi(e as i32 - 15),
    };
    if s == 1 {
        -mag
    } else {
        mag
    }
}

fn get_scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}

/// ggml's dequantization of one block of type `ty`.
fn reference_block(ty: u32, x: &[u8], y: &mut Vec<f32>) {
    match ty {
        2 | 3 => {
            // block_q4_0 { d; qs[16] }, block_q4_1 { d; m; qs[16] }
            let d = f16(x, 0);
            let (m, qs) = if ty == 3 { (f16(x, 2), &x[4..]) } else { (0.0, &x[2..]) };
            let mut out = [0f32; 32];
            for j in 0..16 {
                let (x0, x1) = ((qs[j] & 0x0F) as i32, (qs[j] >> 4) as i32);
                if ty == 2 {
                    out[j] = (x0 - 8) as f32 * d;
                    out[j + 16] = (x1 - 8) as f32 * d;
                } else {
                    out[j] = x0 as f32 * d + m;
                    out[j + 16] = x1 as f32 * d + m;
                }
            }
            y.extend(out);
        }
        6 | 7 => {
            // block_q5_0 { d; qh[4]; qs[16] }, block_q5_1 { d; m; qh[4]; qs[16] }
            let d = f16(x, 0);
            let (m, rest) = if ty == 7 { (f16(x, 2), &x[4..]) } else { (0.0, &x[2..]) };
            let qh = u32::from_le_bytes(rest[0..4].try_into().unwrap());
            let qs = &rest[4..];
            let mut out = [0f32; 32];
            for j in 0..16 {
                let xh0 = ((qh >> j) << 4) & 0x10;
                let xh1 = (qh >> (j + 12)) & 0x10;
                let x0 = ((qs[j] & 0x0F) as u32 | xh0) as i32;
                let x1 = ((qs[j] >> 4) as u32 | xh1) as i32;
                if ty == 6 {
                    out[j] = (x0 - 16) as f32 * d;
                    out[j + 16] = (x1 - 16) as f32 * d;
                } else {
                    out[j] = x0 as f32 * d + m;
                    out[j + 16] = x1 as f32 * d + m;
                }
            }
            y.extend(out);
        }
        8 => {
            let d = f16(x, 0);
            y.extend(x[2..34].iter().map(|&q| q as i8 as f32 * d));
        }
        10 => {
            // block_q2_K { scales[16]; qs[64]; d; dmin }
            let (d, min) = (f16(x, 80), f16(x, 82));
            let mut q = &x[16..80];
            let mut is = 0;
            for _n in 0..2 {
                let mut shift = 0;
                for _j in 0..4 {
                    let sc = x[is];
                    is += 1;
                    let (dl, ml) = (d * (sc & 0xF) as f32, min * (sc >> 4) as f32);
                    for l in 0..16 {
                        y.push(dl * ((q[l] >> shift) & 3) as i8 as f32 - ml);
                    }
                    let sc = x[is];
                    is += 1;
                    let (dl, ml) = (d * (sc & 0xF) as f32, min * (sc >> 4) as f32);
                    for l in 0..16 {
                        y.push(dl * ((q[l + 16] >> shift) & 3) as i8 as f32 - ml);
                    }
                    shift += 2;
                }
                q = &q[32..];
            }
        }
        11 => {
            // block_q3_K { hmask[32]; qs[64]; scales[12]; d }
            const KMASK1: u32 = 0x03030303;
            const KMASK2: u32 = 0x0f0f0f0f;
            let d_all = f16(x, 108);
            let hm = &x[0..32];
            let mut q = &x[32..96];
            let mut aux = [0u32; 4];
            for (i, a) in aux.iter_mut().take(3).enumerate() {
                *a = u32::from_le_bytes(x[96 + 4 * i..100 + 4 * i].try_into().unwrap());
            }
            let tmp = aux[2];
            aux[2] = ((aux[0] >> 4) & KMASK2) | (((tmp >> 4) & KMASK1) << 4);
            aux[3] = ((aux[1] >> 4) & KMASK2) | (((tmp >> 6) & KMASK1) << 4);
            aux[0] = (aux[0] & KMASK2) | ((tmp & KMASK1) << 4);
            aux[1] = (aux[1] & KMASK2) | (((tmp >> 2) & KMASK1) << 4);
            let scales: Vec<i8> = aux.iter().flat_map(|a| a.to_le_bytes()).map(|b| b as i8).collect();
            let mut is = 0;
            let mut m = 1u8;
            for _n in 0..2 {
                let mut shift = 0;
                for _j in 0..4 {
                    let dl = d_all * (scales[is] as i32 - 32) as f32;
                    is += 1;
                    for l in 0..16 {
                        let h = if hm[l] & m != 0 { 0 } else { 4 };
                        y.push(dl * (((q[l] >> shift) & 3) as i8 - h) as f32);
                    }
                    let dl = d_all * (scales[is] as i32 - 32) as f32;
                    is += 1;
                    for l in 0..16 {
                        let h = if hm[l + 16] & m != 0 { 0 } else { 4 };
                        y.push(dl * (((q[l + 16] >> shift) & 3) as i8 - h) as f32);
                    }
                    shift += 2;
                    m <<= 1;
                }
                q = &q[32..];
            }
        }
        12 | 13 => {
            // block_q4_K { d; dmin; scales[12]; qs[128] }, block_q5_K { d; dmin; scales[12]; qh[32]; qs[128] }
            let (d, min) = (f16(x, 0), f16(x, 2));
            let scales = &x[4..16];
            let (qh, mut ql) = if ty == 13 { (&x[16..48], &x[48..176]) } else { (&x[0..0], &x[16..144]) };
            let mut is = 0;
            let (mut u1, mut u2) = (1u8, 2u8);
            for _j in (0..256).step_by(64) {
                let (sc, m) = get_scale_min_k4(is, scales);
                let (d1, m1) = (d * sc as f32, min * m as f32);
                let (sc, m) = get_scale_min_k4(is + 1, scales);
                let (d2, m2) = (d * sc as f32, min * m as f32);
                for l in 0..32 {
                    let hi = if ty == 13 && qh[l] & u1 != 0 { 16 } else { 0 };
                    y.push(d1 * ((ql[l] & 0xF) + hi) as f32 - m1);
                }
                for l in 0..32 {
                    let hi = if ty == 13 && qh[l] & u2 != 0 { 16 } else { 0 };
                    y.push(d2 * ((ql[l] >> 4) + hi) as f32 - m2);
                }
                ql = &ql[32..];
                is += 2;
                u1 = u1.wrapping_shl(2);
                u2 = u2.wrapping_shl(2);
            }
        }
        14 => {
            // block_q6_K { ql[128]; qh[64]; scales[16] (i8); d }
            let d = f16(x, 208);
            let (mut ql, mut qh, mut sc) = (&x[0..128], &x[128..192], &x[192..208]);
            for _n in 0..2 {
                let mut out = [0f32; 128];
                for l in 0..32 {
                    let is = l / 16;
                    let q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) as i8 - 32;
                    let q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) as i8 - 32;
                    let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i8 - 32;
                    let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i8 - 32;
                    out[l] = d * sc[is] as i8 as f32 * q1 as f32;
                    out[l + 32] = d * sc[is + 2] as i8 as f32 * q2 as f32;
                    out[l + 64] = d * sc[is + 4] as i8 as f32 * q3 as f32;
                    out[l + 96] = d * sc[is + 6] as i8 as f32 * q4 as f32;
                }
                y.extend(out);
                ql = &ql[64..];
                qh = &qh[32..];
                sc = &sc[8..];
            }
        }
        _ => panic!("no reference for type {ty}"),
    }
}

fn reference(ty: u32, data: &[u8]) -> Vec<f32> {
    let &(_, _, _, bytes, _) = TYPES.iter().find(|t| t.0 == ty).unwrap();
    let mut y = vec![];
    for b in data.chunks_exact(bytes) {
        reference_block(ty, b, &mut y);
    }
    y
}

// ----- helpers -----

fn read(path: &Path) -> laya_model::Result<std::collections::HashMap<String, Array>> {
    let header = gguf::read_header(path)?;
    gguf_tensors::read_tensors(path, &header)
}

/// MLX's dequantization of `base`'s arrays: (values, bits).
fn mlx_dequantize(t: &std::collections::HashMap<String, Array>, base: &str, cols: usize) -> (Vec<f32>, i32) {
    let w = &t[&format!("{base}.weight")];
    let (scales, biases) = (&t[&format!("{base}.scales")], &t[&format!("{base}.biases")]);
    assert_eq!(w.dtype(), Dtype::Uint32);
    let bits = w.shape()[1] * 32 / cols as i32;
    assert_eq!(scales.shape()[1] as usize, cols / 32, "{base}: group 32");
    let deq = ops::dequantize(w, scales, biases, 32, bits).unwrap().as_dtype(Dtype::Float32).unwrap();
    (deq.as_slice::<f32>().to_vec(), bits)
}

const EXACT: &[&str] = &["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K"];

/// Worst |ours - reference| per group, as a fraction of the allowed error.
fn worst_error(ours: &[f32], theirs: &[f32], exact: bool) -> f32 {
    assert_eq!(ours.len(), theirs.len());
    let mut worst = 0f32;
    for (a, r) in ours.chunks(32).zip(theirs.chunks(32)) {
        let (lo, hi) = r.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
        let mag = r.iter().fold(0f32, |m, v| m.max(v.abs()));
        let rounding = 8.0 * f32::EPSILON * (mag + (hi - lo)) + f32::MIN_POSITIVE;
        let allowed = if exact { rounding } else { (hi - lo) / 510.0 + rounding };
        for (x, y) in a.iter().zip(r) {
            worst = worst.max((x - y).abs() / allowed);
        }
    }
    worst
}

// ----- tests -----

#[test]
fn every_quantization_dequantizes_as_ggml_does() {
    let _mlx = mlx_lock();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (rows, cols) = (6usize, 512usize);
    let mut tensors = vec![];
    for &(ty, name, per_block, _, _) in TYPES {
        let data = random_blocks(&mut rng, ty, rows * cols / per_block);
        tensors.push(Tensor { name: format!("{name}.weight"), dims: vec![cols as u64, rows as u64], ty, data });
    }
    let path = dir.path().join("all.gguf");
    write_tensors(&path, &tensors);
    let arrays = read(&path).unwrap();
    assert_eq!(arrays.len(), 3 * tensors.len());
    for t in &tensors {
        let name = t.name.strip_suffix(".weight").unwrap();
        let theirs = reference(t.ty, &t.data);
        let (ours, bits) = mlx_dequantize(&arrays, name, cols);
        let exact = EXACT.contains(&name);
        let expected_bits = match name {
            "Q4_0" | "Q4_1" | "Q4_K" => 4,
            "Q5_0" | "Q5_1" | "Q5_K" => 5,
            _ => 8,
        };
        assert_eq!(bits, expected_bits, "{name}");
        assert_eq!(arrays[&t.name].shape(), [rows as i32, (cols * bits as usize / 32) as i32], "{name}");
        let worst = worst_error(&ours, &theirs, exact);
        eprintln!("{name}: {bits}-bit, worst error {worst:.3} of the allowed ({})", if exact { "exact" } else { "re-quantized" });
        assert!(worst <= 1.0, "{name}: worst error {worst} of the allowed");
    }
}

/// The exact types must not be merely close: the checks above allow an f32 rounding; here the
/// values that ggml computes without rounding (Q4_0, Q5_0, Q8_0: d times a small integer) must
/// be bit-identical.
#[test]
fn symmetric_types_are_bit_exact() {
    let _mlx = mlx_lock();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(7);
    let (rows, cols) = (4usize, 256usize);
    for (ty, name) in [(2u32, "Q4_0"), (6, "Q5_0"), (8, "Q8_0")] {
        let data = random_blocks(&mut rng, ty, rows * cols / 32);
        let path = dir.path().join(format!("{name}.gguf"));
        write_tensors(&path, &[Tensor { name: "t.weight".into(), dims: vec![cols as u64, rows as u64], ty, data: data.clone() }]);
        let (ours, _) = mlx_dequantize(&read(&path).unwrap(), "t", cols);
        assert_eq!(ours, reference(ty, &data), "{name}");
    }
}

/// MLX packs 5-bit values across u32 words; its CPU quantized matmul must read them as we pack.
#[test]
fn five_bit_matmul_on_the_cpu_matches_the_dense_product() {
    let _mlx = mlx_lock();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(99);
    let (rows, cols) = (64usize, 256usize);
    for (ty, name) in [(6u32, "Q5_0"), (13, "Q5_K")] {
        let data = random_blocks(&mut rng, ty, rows * cols / TYPES.iter().find(|t| t.0 == ty).unwrap().2);
        let path = dir.path().join(format!("{name}.gguf"));
        write_tensors(&path, &[Tensor { name: "t.weight".into(), dims: vec![cols as u64, rows as u64], ty, data: data.clone() }]);
        let t = read(&path).unwrap();
        let dense = Array::from_slice(&reference(ty, &data), &[rows as i32, cols as i32]);
        let xs: Vec<f32> = (0..3 * cols).map(|_| (rng.next() % 2001) as f32 / 1000.0 - 1.0).collect();
        let x = Array::from_slice(&xs, &[3, cols as i32]);
        let ours = ops::quantized_matmul(&x, &t["t.weight"], &t["t.scales"], &t["t.biases"], true, 32, 5).unwrap();
        let theirs = ops::matmul(&x, dense.t()).unwrap();
        let (a, b) = (ours.as_slice::<f32>().to_vec(), theirs.as_slice::<f32>().to_vec());
        let scale = b.iter().fold(0f32, |m, v| m.max(v.abs()));
        let diff = max_abs_diff(&a, &b);
        assert!(diff <= 1e-5 * scale.max(1.0), "{name}: max |diff| {diff} (outputs up to {scale})");
    }
}

#[test]
fn float_tensors_load_as_they_are() {
    let _mlx = mlx_lock();
    let dir = tempfile::tempdir().unwrap();
    let vals: Vec<f32> = (0..24).map(|i| i as f32 * 0.37 - 3.0).collect();
    let f32_bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    // f16 and bf16 of the same values (bf16: the top half of the f32, truncated).
    let f16_bits: Vec<u16> = vals.iter().map(|&v| f16_from(v)).collect();
    let f16_bytes: Vec<u8> = f16_bits.iter().flat_map(|v| v.to_le_bytes()).collect();
    let bf16_bytes: Vec<u8> = vals.iter().flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes()).collect();
    let path = dir.path().join("floats.gguf");
    write_tensors(
        &path,
        &[
            Tensor { name: "a".into(), dims: vec![6, 4], ty: 0, data: f32_bytes },
            Tensor { name: "b".into(), dims: vec![6, 4], ty: 1, data: f16_bytes.clone() },
            Tensor { name: "c".into(), dims: vec![24], ty: 30, data: bf16_bytes },
        ],
    );
    let t = read(&path).unwrap();
    assert_eq!((t["a"].shape(), t["a"].dtype()), (&[4, 6][..], Dtype::Float32));
    assert_eq!(t["a"].as_slice::<f32>(), &vals[..]);
    assert_eq!((t["b"].shape(), t["b"].dtype()), (&[4, 6][..], Dtype::Float16));
    let b: Vec<f32> = t["b"].as_dtype(Dtype::Float32).unwrap().as_slice::<f32>().to_vec();
    let expected: Vec<f32> = f16_bytes.chunks(2).map(|c| f16(c, 0)).collect();
    assert_eq!(b, expected);
    assert_eq!((t["c"].shape(), t["c"].dtype()), (&[24][..], Dtype::Bfloat16));
    let c: Vec<f32> = t["c"].as_dtype(Dtype::Float32).unwrap().as_slice::<f32>().to_vec();
    for (x, v) in c.iter().zip(&vals) {
        assert_eq!(x.to_bits(), v.to_bits() & 0xffff_0000);
    }
}

/// Round-to-nearest f32 -> f16 for ordinary values (test data only).
fn f16_from(v: f32) -> u16 {
    let b = v.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if v == 0.0 {
        return sign;
    }
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    assert!((1..31).contains(&exp), "{v} is not an ordinary f16");
    let man = b & 0x7f_ffff;
    let rounded = ((exp as u32) << 10 | man >> 13) + u32::from(man & 0x1fff > 0x1000 || (man & 0x1fff == 0x1000 && (man >> 13) & 1 == 1));
    sign | rounded as u16
}

fn expect_corrupt(path: &Path, needles: &[&str]) {
    let e = read(path).expect_err("reading must fail");
    let msg = e.to_string();
    assert!(matches!(e, ModelError::Corrupt { .. }), "{e:?}");
    for n in needles {
        assert!(msg.contains(n), "{msg:?} should mention {n:?}");
    }
}

#[test]
fn k_quant_rows_must_hold_whole_super_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(3);
    for (ty, name) in [(12u32, "Q4_K"), (14, "Q6_K"), (10, "Q2_K")] {
        // 2 rows of 384 values: 768 = 3 blocks of 256 in all, but a row holds 1.5.
        let data = random_blocks(&mut rng, ty, 3);
        let path = dir.path().join(format!("{name}.gguf"));
        write_tensors(&path, &[Tensor { name: "blk.0.attn_q.weight".into(), dims: vec![384, 2], ty, data }]);
        expect_corrupt(&path, &["blk.0.attn_q.weight", name, "256", "384"]);
    }
    // Q5_0: blocks of 32.
    let path = dir.path().join("q5_0.gguf");
    write_tensors(&path, &[Tensor { name: "t.weight".into(), dims: vec![48, 2], ty: 6, data: random_blocks(&mut rng, 6, 3) }]);
    expect_corrupt(&path, &["t.weight", "Q5_0", "32", "48"]);
}

#[test]
fn truncated_tensor_data_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(5);
    for &(ty, name, per_block, _, _) in TYPES {
        let data = random_blocks(&mut rng, ty, 2 * 512 / per_block);
        let bytes = gguf_bytes(0, &[], &[Tensor { name: "t.weight".into(), dims: vec![512, 2], ty, data }]);
        for cut in [1usize, 7, bytes.len() / 3] {
            let path = dir.path().join(format!("{name}-{cut}.gguf"));
            std::fs::write(&path, &bytes[..bytes.len() - cut]).unwrap();
            let e = read(&path).err().unwrap_or_else(|| panic!("{name} cut by {cut} must fail"));
            let msg = e.to_string();
            assert!(matches!(e, ModelError::Corrupt { .. }), "{name}: {e:?}");
            assert!(msg.contains("truncated") || msg.contains("file ends"), "{name}: {msg}");
        }
    }
}

/// The header checks sizes before any data is read; the reader checks again and names the tensor
/// if the file changed in between (here: a header read from one file, the data from another).
#[test]
fn data_that_does_not_match_the_header_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(11);
    let big = dir.path().join("big.gguf");
    let small = dir.path().join("small.gguf");
    write_tensors(&big, &[Tensor { name: "t.weight".into(), dims: vec![256, 64], ty: 12, data: random_blocks(&mut rng, 12, 64) }]);
    write_tensors(&small, &[Tensor { name: "t.weight".into(), dims: vec![256, 1], ty: 12, data: random_blocks(&mut rng, 12, 1) }]);
    let header = gguf::read_header(&big).unwrap();
    let e = gguf_tensors::read_tensors(&small, &header).expect_err("must fail");
    let msg = e.to_string();
    assert!(matches!(e, ModelError::Corrupt { .. }) && msg.contains("t.weight") && msg.contains("Q4_K"), "{msg}");
}

#[test]
fn still_unsupported_types_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for (ty, name) in [(16u32, "IQ"), (15, "Q8_K"), (39, "MXFP4")] {
        let path = dir.path().join(format!("{ty}.gguf"));
        write_tensors(&path, &[Tensor { name: "t.weight".into(), dims: vec![256, 1], ty, data: vec![0; 4096] }]);
        let e = read(&path).expect_err("must fail");
        let msg = e.to_string();
        assert!(matches!(e, ModelError::UnsupportedQuantization { .. }), "{e:?}");
        assert!(msg.contains(name) && msg.contains("Q4_K") && msg.contains("t.weight"), "{msg}");
    }
}

// ----- the default model, re-encoded -----

/// Skips one metadata value of type `ty` at `at`; returns the offset after it.
fn skip_value(b: &[u8], at: usize, ty: u32) -> usize {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap()) as usize;
    match ty {
        0 | 1 | 7 => at + 1,
        2 | 3 => at + 2,
        4..=6 => at + 4,
        10..=12 => at + 8,
        8 => at + 8 + u64_at(at),
        9 => {
            let elem = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
            let n = u64_at(at + 4);
            (0..n).fold(at + 12, |p, _| skip_value(b, p, elem))
        }
        _ => panic!("metadata type {ty}"),
    }
}

/// The default model's file with every Q4_1 tensor re-encoded as Q5_1 (the same d and m, the
/// same 4-bit values with a zero fifth bit): the same model, stored in 5 bits.
fn default_model_as_q5_1() -> (tempfile::TempDir, std::path::PathBuf) {
    let src = default_model_path();
    let b = std::fs::read(&src).unwrap();
    let header = gguf::read_header(&src).unwrap();
    let n_kv = u64::from_le_bytes(b[16..24].try_into().unwrap());
    let mut at = 24;
    for _ in 0..n_kv {
        let klen = u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
        at += 8 + klen;
        let ty = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        at = skip_value(&b, at + 4, ty);
    }
    let meta = &b[24..at];
    let tensors: Vec<Tensor> = header
        .tensors
        .iter()
        .map(|t| {
            let data = &b[t.offset as usize..(t.offset + t.nbytes) as usize];
            let ty = match t.ty {
                gguf::TensorType::F32 => 0,
                gguf::TensorType::Q8_0 => 8,
                gguf::TensorType::Q4_1 => 3,
                other => panic!("the default model has {other:?}"),
            };
            if ty != 3 {
                return Tensor { name: t.name.clone(), dims: t.dims.clone(), ty, data: data.to_vec() };
            }
            let mut out = Vec::with_capacity(data.len() / 20 * 24);
            for blk in data.chunks_exact(20) {
                out.extend(&blk[0..4]); // d, m
                out.extend([0u8; 4]); // qh
                out.extend(&blk[4..20]); // qs
            }
            Tensor { name: t.name.clone(), dims: t.dims.clone(), ty: 7, data: out }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("smollm2-q5_1.gguf");
    std::fs::write(&path, gguf_bytes(n_kv, meta, &tensors)).unwrap();
    (dir, path)
}

/// A 5-bit model gives the 4-bit original's logits: on MLX's kernels as 5 bits, on Laya's CPU
/// kernels (4 and 8 bits only) widened to 8 bits, exactly.
#[test]
fn the_default_model_stored_as_q5_1_gives_the_same_logits() {
    let _mlx = mlx_lock();
    let (_dir, path) = default_model_as_q5_1();
    let original = default_model();
    let ids = original.tokenizer.encode(PROSE).unwrap();
    let theirs = laya_logits(&original, &ids);
    for cpu_kernels in [false, true] {
        let model = Model::load_with(&path, laya_model::LoadOptions { cpu_kernels, ..Default::default() }).unwrap();
        let widened = cpu_kernels && laya_model::cpu_kernels::available();
        let want = if widened { "8-bit g32" } else { "5-bit g32" };
        assert!(model.info.quantization.starts_with(want), "{}", model.info.quantization);
        let diff = max_abs_diff(&laya_logits(&model, &ids), &theirs);
        eprintln!("Q5_1 copy, cpu_kernels {cpu_kernels}: max |logit diff| {diff}");
        assert!(diff < 1e-3, "cpu_kernels {cpu_kernels}: max |logit diff| {diff}");
    }
}
