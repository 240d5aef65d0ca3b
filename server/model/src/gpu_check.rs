//! The check that MLX's GPU gives the CPU's answers: the same weights run on both devices
//! (a prefill traced layer by layer, a batched decode step, candidate scoring) and compared.
//! A GPU backend that disagrees is not used: wrong suggestions are worse than slow ones.

use mlx_rs::{Array, Device, DeviceType};

use crate::cache::KvCache;
use crate::error::{ModelError, Result};
use crate::model::Model;

/// Largest relative difference (|gpu - cpu| / max(1, |cpu|)) taken as agreement. Reordered
/// float sums differ by ~1e-6 here; a broken kernel or a race differs by orders more.
pub const TOLERANCE: f32 = 1e-2;

/// What the check found.
#[derive(Debug, Clone)]
pub struct GpuCheck {
    /// Each compared output ("layer 3", "next-token log-probs", ...) and its relative difference.
    pub stages: Vec<(String, f32)>,
}

impl GpuCheck {
    pub fn worst(&self) -> f32 {
        self.stages.iter().map(|s| s.1).fold(0.0, f32::max)
    }

    pub fn agrees(&self) -> bool {
        self.worst() <= TOLERANCE
    }

    /// The first output where the devices part, for messages.
    pub fn first_difference(&self) -> Option<&(String, f32)> {
        self.stages.iter().find(|s| s.1 > TOLERANCE)
    }

    pub fn describe(&self) -> String {
        match self.first_difference() {
            None => format!("GPU agrees with the CPU (largest relative difference {:.1e})", self.worst()),
            Some((stage, d)) => format!("GPU DIFFERS from the CPU from {stage} on (relative difference {d:.2})"),
        }
    }
}

/// Everything one device computed, evaluated.
struct Run {
    layers: Vec<Array>,
    next: Array,
    step: Array,
    scores: Vec<f32>,
}

impl Model {
    /// Runs the check on `text` (a few words); the default device is the GPU afterwards.
    pub fn check_gpu_against_cpu(&self, text: &str) -> Result<GpuCheck> {
        let tokens = self.tokenizer.encode(text)?;
        if tokens.len() < 4 {
            return Err(ModelError::Input("the GPU check needs a text of at least 4 tokens".into()));
        }
        let cpu = self.run_on(&Device::cpu(), &tokens);
        let gpu = self.run_on(&Device::gpu(), &tokens);
        Device::set_default(&Device::gpu());
        let (cpu, gpu) = (cpu?, gpu?);
        let mut stages = Vec::new();
        for (i, (c, g)) in cpu.layers.iter().zip(&gpu.layers).enumerate() {
            stages.push((format!("layer {i}"), difference(c, g)?));
        }
        stages.push(("next-token log-probs".into(), difference(&cpu.next, &gpu.next)?));
        stages.push(("a 4-row decode step".into(), difference(&cpu.step, &gpu.step)?));
        let scores = cpu.scores.iter().zip(&gpu.scores).map(|(c, g)| (c - g).abs() / c.abs().max(1.0)).fold(0.0, f32::max);
        stages.push(("candidate scores".into(), scores));
        Ok(GpuCheck { stages })
    }

    fn run_on(&self, device: &Device, tokens: &[u32]) -> Result<Run> {
        Device::set_default(device);
        let (context, rest) = tokens.split_at(tokens.len() - 3);
        let mut layers = Vec::new();
        let mut cache = KvCache::new();
        self.hidden_traced(&[context.to_vec()], &mut cache, Some(&mut layers))?;
        mlx_rs::transforms::eval(layers.iter())?;
        let mut cache = KvCache::new();
        self.prefill(&mut cache, context)?;
        let next = cache.next_logprobs.clone().expect("a prefill leaves next-token log-probs");
        let candidates = vec![rest.to_vec(), rest[..1].to_vec(), vec![rest[1], rest[0]]];
        let scores = self.score(&cache, &candidates)?.into_iter().map(|s| s.total).collect();
        let mut fork = cache.fork();
        let step = self.step(&mut fork, &[rest[0], rest[1], rest[2], rest[0]])?;
        Ok(Run { layers, next, step, scores })
    }
}

/// max |g - c| / max(1, max |c|), computed on the CPU.
fn difference(c: &Array, g: &Array) -> Result<f32> {
    if c.shape() != g.shape() {
        return Ok(f32::INFINITY);
    }
    mlx_rs::with_device(Device::cpu(), || relative_difference(c, g, 1.0))
}

/// max |other - reference| / max(floor, max |reference|) in f32, on the default device; infinite
/// where the difference is not a number.
pub(crate) fn relative_difference(reference: &Array, other: &Array, floor: f32) -> Result<f32> {
    let (r, o) = (reference.as_dtype(mlx_rs::Dtype::Float32)?, other.as_dtype(mlx_rs::Dtype::Float32)?);
    let diff = o.subtract(&r)?.abs()?.max(None)?.item_exact::<f32>();
    let scale = r.abs()?.max(None)?.item_exact::<f32>().max(floor);
    Ok(if diff.is_nan() { f32::INFINITY } else { diff / scale })
}

/// Whether MLX's default device is a GPU.
pub(crate) fn on_gpu() -> bool {
    matches!(Device::try_default().and_then(|d| d.get_type()), Ok(DeviceType::Gpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_difference_is_scaled_by_the_reference_above_its_floor() {
        let reference = Array::from_slice(&[1.0f32, -2.0], &[2]);
        let other = Array::from_slice(&[1.0f32, -1.5], &[2]);
        assert_eq!(relative_difference(&reference, &other, 1.0).unwrap(), 0.25);
        let small = Array::from_slice(&[0.01f32, -0.02], &[2]);
        let near = Array::from_slice(&[0.01f32, -0.015], &[2]);
        assert!((relative_difference(&small, &near, f32::MIN_POSITIVE).unwrap() - 0.25).abs() < 1e-6);
        assert!((relative_difference(&small, &near, 1.0).unwrap() - 0.005).abs() < 1e-7);
        let nan = Array::from_slice(&[f32::NAN, 0.0], &[2]);
        assert_eq!(relative_difference(&reference, &nan, 1.0).unwrap(), f32::INFINITY);
        assert_eq!(difference(&reference, &Array::from_slice(&[1.0f32], &[1])).unwrap(), f32::INFINITY);
    }
}
