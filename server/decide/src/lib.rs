//! Laya's decisions over a model — the next word, the ranking of candidates — as plain Rust
//! types. No LSP, no JSON: the `laya` crate converts these at its edge.

mod complete;
mod errors;
mod ghost;
mod lexicon;
mod phonetic;
mod pinyin;
mod rank;
mod recall;
mod rejections;
mod slips;
mod syllables;
mod typo;
mod verbs;

pub use complete::{complete, complete_with, Suggestion, SuggestionKind, Vocab};
pub use ghost::{adds_enough, ghost, letters_ahead, step_ahead, typed_through, Ghost, GhostOptions, LetterStep, Recalls, TypedThrough};
pub use lexicon::{match_case, Entry, Lexicon, Near, LEXICON_RELATIVE};
pub use pinyin::{convert, convert_with, Candidate, ConvertOptions, PinyinDict, Word, PINYIN_RELATIVE};
pub use rank::{rank, Ranked};
pub use recall::{Recall, RecallOptions, Recalled, MAX_WORDS as RECALL_MAX_WORDS};
pub use rejections::Rejections;
pub use syllables::{is_syllable, segment, Pinyin, Syllable};
pub use typo::{word_counts, Correction, Issue, IssueKind, Speller, SpellerOptions};

#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error(transparent)]
    Model(#[from] laya_model::ModelError),
    #[error("{0}")]
    Input(String),
    /// The caller asked to stop (more urgent work is waiting).
    #[error("interrupted")]
    Interrupted,
}

pub type Result<T, E = DecideError> = std::result::Result<T, E>;
