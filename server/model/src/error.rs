//! The model crate's error type: every way loading or running a model can fail, with the path
//! and a sentence a user can act on.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },

    #[error("no model at {}: {hint}", path.display())]
    NotFound { path: PathBuf, hint: String },

    #[error("{} is damaged: {reason}", path.display())]
    Corrupt { path: PathBuf, reason: String },

    #[error("{}: unsupported architecture {arch:?}; Laya runs {supported}", path.display())]
    UnsupportedArchitecture { path: PathBuf, arch: String, supported: &'static str },

    #[error("{}: unsupported quantization: {detail}", path.display())]
    UnsupportedQuantization { path: PathBuf, detail: String },

    #[error("{}: invalid model configuration: {reason}", path.display())]
    Config { path: PathBuf, reason: String },

    #[error("{}: missing tensor {name}", path.display())]
    MissingTensor { path: PathBuf, name: String },

    #[error("{}: tensor {name} has shape {got:?}, expected {expected}", path.display())]
    TensorShape { path: PathBuf, name: String, got: Vec<i32>, expected: String },

    #[error("{}: tokenizer: {reason}", path.display())]
    Tokenizer { path: PathBuf, reason: String },

    #[error("token id {id} is outside the model's vocabulary of {vocab}")]
    TokenOutOfRange { id: u32, vocab: usize },

    #[error("invalid input: {0}")]
    Input(String),

    #[error("MLX: {0}")]
    Mlx(String),
}

impl ModelError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound {
            return ModelError::NotFound { path: path.to_path_buf(), hint: "the file does not exist".into() };
        }
        ModelError::Io { path: path.to_path_buf(), source }
    }
}

impl From<mlx_rs::error::Exception> for ModelError {
    fn from(e: mlx_rs::error::Exception) -> Self {
        ModelError::Mlx(e.what().to_string())
    }
}

pub type Result<T, E = ModelError> = std::result::Result<T, E>;
