//! Laya's decisions over a model — the next word, the ranking of candidates — as plain Rust
//! types. No LSP, no JSON: the `laya` crate converts these at its edge.

mod complete;
mod rank;

pub use complete::{complete, Suggestion, SuggestionKind, Vocab};
pub use rank::{rank, Ranked};

#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error(transparent)]
    Model(#[from] laya_model::ModelError),
    #[error("{0}")]
    Input(String),
}

pub type Result<T, E = DecideError> = std::result::Result<T, E>;
