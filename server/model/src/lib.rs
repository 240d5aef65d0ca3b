//! Laya's engine: loads a 4-bit language model through MLX (GGUF files and mlx-lm folders),
//! runs its forward pass over a KV cache that reuses prefixes, and answers "what are the
//! next-token log-probs after this text" and "how likely is each of these continuations".
//!
//! No LSP, no decisions: those live in `laya-decide` and `laya` (lsp), which depend on this.

mod cache;
mod config;
pub mod cpu_kernels;
mod error;
mod gemma;
pub mod gguf;
pub mod gguf_tensors;
pub mod gpu_check;
mod gpu_qmv;
mod model;
mod paths;
mod runtime;
mod safetensors_check;
mod spm;
mod tokenizer;
mod weights;

pub use cache::{KvCache, STEP as KV_STEP};
pub use config::{Arch, Gemma, ModelConfig, Rope};
pub use error::{ModelError, Result};
pub use mlx_rs::Dtype;
pub use model::{CachedRows, CandidateScore, Format, LoadOptions, Model, ModelInfo, Prefill};
pub use paths::{
    default_model_path_in, multilingual_model_path_in, xdg_home, ModelChoice, ModelLocations, DEFAULT_MODEL_FILE, MULTILINGUAL_MODEL_FILE,
};
pub use runtime::{device_name, mlx_version};
pub use tokenizer::Tokenizer;
