//! Reads a GGUF file's tensors (at the offsets `gguf::read_header` validated) into MLX arrays,
//! converting every supported GGML block quantization into MLX's affine quantization.
//!
//! The arrays are named as MLX's own GGUF loader names them, so `weights::Loader` takes either:
//! a float tensor is `{name}` (f32, f16 or bf16, shape reversed from GGUF's innermost-first dims);
//! a quantized tensor `{base}.weight` becomes `{base}.weight` (u32, [rows, cols * bits / 32]),
//! `{base}.scales` and `{base}.biases` (f32, [rows, cols / 32]), dequantized as `scale * q + bias`
//! with `q` unsigned and packed least significant bits first (5-bit values run across words).
//!
//! | GGML   | MLX               | how                                                          |
//! |--------|-------------------|--------------------------------------------------------------|
//! | Q4_0   | 4-bit, group 32   | exact: d(q - 8) = d q - 8d                                   |
//! | Q4_1   | 4-bit, group 32   | exact: d q + m                                               |
//! | Q5_0   | 5-bit, group 32   | exact: d(q - 16)                                             |
//! | Q5_1   | 5-bit, group 32   | exact: d q + m                                               |
//! | Q8_0   | 8-bit, group 32   | exact: d q (q signed) = d (q + 128) - 128 d                  |
//! | Q4_K   | 4-bit, group 32   | exact: each sub-block of 32 is (d sc) q - dmin m             |
//! | Q5_K   | 5-bit, group 32   | exact, as Q4_K                                               |
//! | Q6_K   | 8-bit, group 32   | re-quantized (see [`requantize8`]): sub-blocks of 16         |
//! | Q3_K   | 8-bit, group 32   | re-quantized: sub-blocks of 16                               |
//! | Q2_K   | 8-bit, group 32   | re-quantized: sub-blocks of 16 with their own mins           |
//!
//! Scales and biases are kept in f32: `d * sc` of a K-quant (an f16 times a 6-bit integer) and
//! `-128 d` do not always fit an f16 (MLX's own loader rounds them to f16, and overflows on the
//! latter for large `d`). MLX's affine groups are 32, 64 or 128 values, so the K-quants' sub-blocks
//! of 16 (Q2_K, Q3_K, Q6_K) have no exact image at their own width; we dequantize them and
//! re-quantize each group of 32 to 8 bits, which costs memory (8.5 bits a weight) but adds an error
//! well under the original quantization step. 4 bits would have added an error of up to a quarter
//! of a Q3_K step (a group spans two sub-blocks of 8 levels each on different grids).

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use mlx_rs::{Array, Dtype};

use crate::error::{ModelError, Result};
use crate::gguf::{GgufHeader, TensorInfo, TensorType};

#[cfg(target_endian = "big")]
compile_error!("the GGUF reader assumes a little-endian machine (GGUF files are little-endian)");

/// Values per MLX group (and per GGML block or sub-block we map onto one).
const GROUP: usize = 32;

/// Reads every tensor of the file `header` was read from.
pub fn read_tensors(path: &Path, header: &GgufHeader) -> Result<HashMap<String, Array>> {
    let mut file = File::open(path).map_err(|e| ModelError::io(path, e))?;
    let mut out = HashMap::with_capacity(header.tensors.len() * 3);
    let mut buf = Vec::new();
    // In file order: the reads then run forwards through the file.
    let mut order: Vec<&TensorInfo> = header.tensors.iter().collect();
    order.sort_by_key(|t| t.offset);
    for t in order {
        for (name, array) in read_tensor(path, &mut file, t, &mut buf)? {
            if out.insert(name.clone(), array).is_some() {
                return Err(corrupt(path, format!("two tensors are named {name}")));
            }
        }
    }
    Ok(out)
}

fn corrupt(path: &Path, reason: String) -> ModelError {
    ModelError::Corrupt { path: path.to_path_buf(), reason }
}

/// The arrays of one tensor: one for a float tensor, weight/scales/biases for a quantized one.
fn read_tensor(path: &Path, file: &mut File, t: &TensorInfo, buf: &mut Vec<u8>) -> Result<Vec<(String, Array)>> {
    let bad = |what: String| corrupt(path, format!("tensor {} ({:?}): {what}", t.name, t.ty));
    let (per_block, block_bytes) = t.ty.block();
    let cols = t.dims.first().copied().unwrap_or(0);
    if t.dims.is_empty() || t.dims.iter().any(|&d| d > i32::MAX as u64) || cols % per_block != 0 {
        return Err(bad(format!("shape {:?} does not hold whole blocks of {per_block} values", t.dims)));
    }
    let elems: u64 = t.dims.iter().product();
    let nbytes = elems / per_block * block_bytes;
    if nbytes != t.nbytes {
        return Err(bad(format!("{} bytes for shape {:?}, expected {nbytes}", t.nbytes, t.dims)));
    }
    buf.clear();
    buf.resize(nbytes as usize, 0);
    file.seek(SeekFrom::Start(t.offset))
        .and_then(|_| file.read_exact(buf))
        .map_err(|e| bad(format!("reading {nbytes} bytes at offset {}: {e} (is the file truncated?)", t.offset)))?;

    // MLX's order: outermost first.
    let shape: Vec<i32> = t.dims.iter().rev().map(|&d| d as i32).collect();
    let dense = |dtype: Dtype| -> Vec<(String, Array)> {
        // SAFETY: `buf` holds exactly `elems` values of `dtype` (checked above), little-endian as
        // MLX stores them; MLX copies the data.
        let a = unsafe { Array::from_raw_data(buf.as_ptr().cast(), &shape, dtype) };
        vec![(t.name.clone(), a)]
    };
    let (bits, convert): (usize, fn(&[u8], &mut Packed)) = match t.ty {
        TensorType::F32 => return Ok(dense(Dtype::Float32)),
        TensorType::F16 => return Ok(dense(Dtype::Float16)),
        TensorType::BF16 => return Ok(dense(Dtype::Bfloat16)),
        TensorType::Q4_0 => (4, q4_0),
        TensorType::Q4_1 => (4, q4_1),
        TensorType::Q5_0 => (5, q5_0),
        TensorType::Q5_1 => (5, q5_1),
        TensorType::Q8_0 => (8, q8_0),
        TensorType::Q4_K => (4, q4_k),
        TensorType::Q5_K => (5, q5_k),
        TensorType::Q6_K => (8, q6_k),
        TensorType::Q3_K => (8, q3_k),
        TensorType::Q2_K => (8, q2_k),
    };
    let groups = (elems as usize) / GROUP;
    let mut p = Packed::new(bits, groups);
    for block in buf.chunks_exact(block_bytes as usize) {
        convert(block, &mut p);
    }
    debug_assert_eq!(p.scales.len(), groups);
    debug_assert_eq!(p.w.len(), groups * GROUP * bits / 32);

    let base = t.name.strip_suffix(".weight").ok_or_else(|| ModelError::UnsupportedQuantization {
        path: path.to_path_buf(),
        detail: format!("tensor {} is {:?}, but only `.weight` tensors may be quantized", t.name, t.ty),
    })?;
    let last = shape.len() - 1;
    let mut wshape = shape.clone();
    wshape[last] = (cols as usize * bits / 32) as i32;
    let mut sshape = shape;
    sshape[last] = (cols as usize / GROUP) as i32;
    Ok(vec![
        (t.name.clone(), Array::from_slice(&p.w, &wshape)),
        (format!("{base}.scales"), Array::from_slice(&p.scales, &sshape)),
        (format!("{base}.biases"), Array::from_slice(&p.biases, &sshape)),
    ])
}

/// MLX affine groups being filled: packed values, one scale and one bias per group.
struct Packed {
    bits: usize,
    w: Vec<u32>,
    scales: Vec<f32>,
    biases: Vec<f32>,
}

impl Packed {
    fn new(bits: usize, groups: usize) -> Self {
        Self { bits, w: Vec::with_capacity(groups * GROUP * bits / 32), scales: Vec::with_capacity(groups), biases: Vec::with_capacity(groups) }
    }

    /// Appends one group: 32 unsigned values below 2^bits, least significant bits first.
    #[inline]
    fn group(&mut self, q: &[u8; GROUP], scale: f32, bias: f32) {
        self.scales.push(scale);
        self.biases.push(bias);
        match self.bits {
            4 => {
                for w in q.chunks_exact(8) {
                    self.w.push(w.iter().rev().fold(0u32, |acc, &v| (acc << 4) | v as u32));
                }
                return;
            }
            8 => {
                self.w.extend(q.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
                return;
            }
            _ => {}
        }
        let bits = self.bits;
        let mut acc: u64 = 0;
        let mut n = 0;
        for &v in q {
            debug_assert!((v as u32) < (1 << bits));
            acc |= (v as u64) << n;
            n += bits;
            if n >= 32 {
                self.w.push(acc as u32);
                acc >>= 32;
                n -= 32;
            }
        }
        debug_assert_eq!(n, 0); // 32 values of any width end on a word
    }
}

/// IEEE half precision to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: m * 2^-24.
            let v = m as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

#[inline]
fn half(b: &[u8], at: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[at], b[at + 1]]))
}

/// Nibbles of a 32-value GGML block: value j is the low nibble of byte j, value j + 16 the high.
#[inline]
fn nibbles16(qs: &[u8], q: &mut [u8; GROUP]) {
    for j in 0..16 {
        q[j] = qs[j] & 0x0f;
        q[j + 16] = qs[j] >> 4;
    }
}

/// block_q4_0: d (f16), qs[16]; x = d (q - 8).
fn q4_0(b: &[u8], p: &mut Packed) {
    let d = half(b, 0);
    let mut q = [0u8; GROUP];
    nibbles16(&b[2..18], &mut q);
    p.group(&q, d, -8.0 * d);
}

/// block_q4_1: d, m (f16), qs[16]; x = d q + m.
fn q4_1(b: &[u8], p: &mut Packed) {
    let mut q = [0u8; GROUP];
    nibbles16(&b[4..20], &mut q);
    p.group(&q, half(b, 0), half(b, 2));
}

/// The fifth bits of a 32-value block: bit j of the little-endian u32 `qh` is value j's.
#[inline]
fn fifth_bits(qh: &[u8], q: &mut [u8; GROUP]) {
    let qh = u32::from_le_bytes([qh[0], qh[1], qh[2], qh[3]]);
    for (j, v) in q.iter_mut().enumerate() {
        *v |= (((qh >> j) & 1) as u8) << 4;
    }
}

/// block_q5_0: d (f16), qh[4], qs[16]; x = d (q - 16).
fn q5_0(b: &[u8], p: &mut Packed) {
    let d = half(b, 0);
    let mut q = [0u8; GROUP];
    nibbles16(&b[6..22], &mut q);
    fifth_bits(&b[2..6], &mut q);
    p.group(&q, d, -16.0 * d);
}

/// block_q5_1: d, m (f16), qh[4], qs[16]; x = d q + m.
fn q5_1(b: &[u8], p: &mut Packed) {
    let mut q = [0u8; GROUP];
    nibbles16(&b[8..24], &mut q);
    fifth_bits(&b[4..8], &mut q);
    p.group(&q, half(b, 0), half(b, 2));
}

/// block_q8_0: d (f16), qs[32] (i8); x = d q = d (q + 128) - 128 d.
fn q8_0(b: &[u8], p: &mut Packed) {
    let d = half(b, 0);
    let mut q = [0u8; GROUP];
    for (v, &s) in q.iter_mut().zip(&b[2..34]) {
        *v = s ^ 0x80; // i8 + 128 as u8
    }
    p.group(&q, d, -128.0 * d);
}

/// Sub-block `j`'s 6-bit (scale, min) of the 12 packed bytes of Q4_K and Q5_K: for j < 4 the low
/// 6 bits of bytes j and j + 4; otherwise the nibbles of byte j + 4 topped with the high 2 bits of
/// bytes j - 4 and j.
#[inline]
fn scale_min_k4(j: usize, s: &[u8]) -> (u8, u8) {
    if j < 4 {
        (s[j] & 63, s[j + 4] & 63)
    } else {
        ((s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4))
    }
}

/// block_q4_K: d, dmin (f16), scales[12], qs[128]. Sub-block j (32 values) is
/// (d sc_j) q - dmin m_j; its 4-bit values are the low (even j) or high (odd j) nibbles of
/// qs[32 (j / 2) ..][..32].
fn q4_k(b: &[u8], p: &mut Packed) {
    let (d, dmin) = (half(b, 0), half(b, 2));
    let (sc, qs) = (&b[4..16], &b[16..144]);
    let mut q = [0u8; GROUP];
    for j in 0..8 {
        let chunk = &qs[32 * (j / 2)..][..32];
        let shift = 4 * (j % 2);
        for (v, &c) in q.iter_mut().zip(chunk) {
            *v = (c >> shift) & 0x0f;
        }
        let (s, m) = scale_min_k4(j, sc);
        p.group(&q, d * s as f32, -(dmin * m as f32));
    }
}

/// block_q5_K: d, dmin (f16), scales[12], qh[32], qs[128]: Q4_K's layout plus a fifth bit, bit j
/// of qh[l] for value l of sub-block j.
fn q5_k(b: &[u8], p: &mut Packed) {
    let (d, dmin) = (half(b, 0), half(b, 2));
    let (sc, qh, qs) = (&b[4..16], &b[16..48], &b[48..176]);
    let mut q = [0u8; GROUP];
    for j in 0..8 {
        let chunk = &qs[32 * (j / 2)..][..32];
        let shift = 4 * (j % 2);
        for ((v, &c), &h) in q.iter_mut().zip(chunk).zip(qh) {
            *v = ((c >> shift) & 0x0f) | (((h >> j) & 1) << 4);
        }
        let (s, m) = scale_min_k4(j, sc);
        p.group(&q, d * s as f32, -(dmin * m as f32));
    }
}

/// Re-quantizes 32 floats to 8-bit affine: bias = min, scale = (max - min) / 255,
/// q = round((x - min) / scale). Worst error: half a step, (max - min) / 510, plus f32 rounding.
/// For Q6_K (values d sc q, q in [-32, 31], two sub-blocks of 16 per group) the group spans at most
/// 64 d max|sc|, so the error is at most 64/510 ~ 1/8 of the coarser sub-block's Q6_K step
/// d max|sc|; for Q3_K (q in [-4, 3]) at most 8/510 ~ 1/64 of its step; for Q2_K (dl q - ml,
/// q in [0, 3], own mins) at most (max - min) / 510 of the group's span.
fn requantize8(x: &[f32; GROUP], p: &mut Packed) {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &v in x {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let scale = (hi - lo) / 255.0;
    let mut q = [0u8; GROUP];
    if scale > 0.0 && scale.is_finite() {
        let inv = 1.0 / scale;
        for (o, &v) in q.iter_mut().zip(x) {
            *o = ((v - lo) * inv).round().clamp(0.0, 255.0) as u8;
        }
        p.group(&q, scale, lo);
    } else {
        // All equal (or not finite: keep what the file says, MLX will propagate it).
        p.group(&q, if scale.is_finite() { 0.0 } else { scale }, lo);
    }
}

/// block_q6_K: ql[128], qh[64], scales[16] (i8), d (f16). Each half of 128 values uses ql[64],
/// qh[32] and 8 scales (one per 16 values): value l + 32 i (i = 0..4, l = 0..32) is
/// d sc[l / 16 + 2 i] (q - 32), with q's low 4 bits from ql (i = 0, 1: low nibbles of
/// ql[l + 32 i]; i = 2, 3: high nibbles of ql[l + 32 (i - 2)]) and high 2 bits from qh[l] >> 2 i.
fn q6_k(b: &[u8], p: &mut Packed) {
    let d = half(b, 208);
    let mut y = [0f32; 256];
    for h in 0..2 {
        let (ql, qh, sc) = (&b[64 * h..][..64], &b[128 + 32 * h..][..32], &b[192 + 8 * h..][..8]);
        let y = &mut y[128 * h..][..128];
        for l in 0..32 {
            for i in 0..4 {
                let low = (ql[l + 32 * (i % 2)] >> (4 * (i / 2))) & 0x0f;
                let high = (qh[l] >> (2 * i)) & 3;
                let q = (low | (high << 4)) as i32 - 32;
                let s = sc[l / 16 + 2 * i] as i8 as f32;
                y[l + 32 * i] = d * s * q as f32;
            }
        }
    }
    for g in y.chunks_exact(GROUP) {
        requantize8(g.try_into().expect("32 values"), p);
    }
}

/// block_q3_K: hmask[32], qs[64], scales[12], d (f16). 16 sub-blocks of 16 with 6-bit scales
/// (minus 32): scale i's low 4 bits are nibble i / 8 of byte i % 8, its high 2 bits are bits
/// 2 (i / 4) of byte 8 + i % 4. Each half h (128 values) uses qs[32 h..][..32]; its 4 groups of 32
/// (j = 0..4) take 2 bits at shift 2 j, and subtract 4 unless bit 4 h + j of hmask[l] is set.
fn q3_k(b: &[u8], p: &mut Packed) {
    let (hm, qs, sb, d) = (&b[0..32], &b[32..96], &b[96..108], half(b, 108));
    let scale = |i: usize| -> f32 {
        let low = (sb[i % 8] >> (4 * (i / 8))) & 0x0f;
        let high = (sb[8 + i % 4] >> (2 * (i / 4))) & 3;
        ((low | (high << 4)) as i32 - 32) as f32
    };
    let mut y = [0f32; GROUP];
    for h in 0..2 {
        let q = &qs[32 * h..][..32];
        for j in 0..4 {
            let bit = 4 * h + j;
            let (d1, d2) = (d * scale(8 * h + 2 * j), d * scale(8 * h + 2 * j + 1));
            for l in 0..32 {
                let v = ((q[l] >> (2 * j)) & 3) as i32 - if hm[l] >> bit & 1 == 1 { 0 } else { 4 };
                y[l] = if l < 16 { d1 } else { d2 } * v as f32;
            }
            requantize8(&y, p);
        }
    }
}

/// block_q2_K: scales[16] (low nibble scale, high nibble min), qs[64], d, dmin (f16). 16
/// sub-blocks of 16, value = d sc q - dmin m with 2-bit q; each half h uses qs[32 h..][..32] and
/// its 4 groups of 32 (j = 0..4) take 2 bits at shift 2 j (sub-blocks 8 h + 2 j and + 1).
fn q2_k(b: &[u8], p: &mut Packed) {
    let (sc, qs, d, dmin) = (&b[0..16], &b[16..80], half(b, 80), half(b, 82));
    let mut y = [0f32; GROUP];
    for h in 0..2 {
        let q = &qs[32 * h..][..32];
        for j in 0..4 {
            for l in 0..32 {
                let s = sc[8 * h + 2 * j + l / 16];
                let (dl, ml) = (d * (s & 0x0f) as f32, dmin * (s >> 4) as f32);
                y[l] = dl * ((q[l] >> (2 * j)) & 3) as f32 - ml;
            }
            requantize8(&y, p);
        }
    }
}
