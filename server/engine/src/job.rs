//! The jobs handlers send the inference thread, what they answer, and the engine's counters.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use laya_decide::{Candidate, Ghost, GhostOptions, Issue, Ranked, Recall, Suggestion};
use tokio::sync::oneshot;

/// What went wrong with a job, for the handler to turn into an LSP answer.
#[derive(Debug, Clone)]
pub enum JobError {
    /// A newer version of the document exists, or a newer request replaced this one.
    Stale,
    /// It waited for the model past its deadline (the latency budget): the moment has passed.
    Late,
    /// The model is not loaded (yet, or it failed to load).
    NoModel(String),
    Failed(String),
}

pub type Reply<T> = oneshot::Sender<Result<T, JobError>>;

/// A paragraph to check. The edited one comes with `window`: the document's text from the
/// start of the ghost text's context window up to the paragraph, when the window starts at or
/// before it; it is then checked after that text, on a fork of the document's cache.
#[derive(Debug, Clone)]
pub struct CheckText {
    pub text: String,
    pub window: Option<String>,
}

pub enum Job {
    /// Loads (or reloads) the model and the lexicon.
    /// `multilingual`: the model for documents in other scripts (default: the fetched one; with
    /// `model` named and this not, `model` serves every document).
    Load {
        model: Option<PathBuf>,
        multilingual: Option<PathBuf>,
        lexicon: Option<PathBuf>,
        reply: Reply<String>,
    },
    /// Ghost text after `before` (the context window up to the cursor); not started after
    /// `deadline` (a suggestion that late would only distract).
    /// `ahead`: whether the ghost text for a following space may be worked out while idle.
    /// `check_from`: where in `before` the paragraph being typed starts, when its spelling check
    /// runs in this window; its settled words may then be scored while idle.
    /// `words`: the writer's words to recall (the document's before the cursor, the workspace's).
    Ghost {
        doc: String,
        version: i32,
        before: String,
        after: String,
        opts: GhostOptions,
        words: (Arc<Recall>, Arc<Recall>),
        ahead: bool,
        check_from: Option<usize>,
        deadline: Instant,
        reply: Reply<Option<Ghost>>,
    },
    /// Up to `n` completions after `before`; not started after `deadline`, like ghost text.
    /// `check_from`: as for ghost text.
    Complete {
        doc: String,
        version: i32,
        before: String,
        n: usize,
        check_from: Option<usize>,
        deadline: Instant,
        reply: Reply<Vec<Suggestion>>,
    },
    /// Issues of each paragraph. `ignored`: words to leave alone in this document; `repeated`:
    /// words used more than once, left alone unless the lexicon knows them (a known word can
    /// still be the wrong one: "their" for "there").
    /// `asked`: when the check was asked for (its time counts from then).
    Check {
        doc: String,
        version: i32,
        paragraphs: Vec<CheckText>,
        ignored: HashSet<String>,
        repeated: HashSet<String>,
        asked: Instant,
        reply: Reply<Vec<Vec<Issue>>>,
    },
    Rank {
        context: String,
        candidates: Vec<String>,
        reply: Reply<Vec<Ranked>>,
    },
    /// Sends a document to the model that covers its script (see the worker's `route`), loading
    /// the multilingual model if it is the first document to need it.
    Route {
        doc: String,
        text: String,
    },
    /// Toneless pinyin to hanzi: the `n` best conversions after `context`, best first.
    Convert {
        pinyin: String,
        context: String,
        n: usize,
        reply: Reply<Vec<Candidate>>,
    },
    /// Words the user added to the dictionary.
    AddWords {
        words: Vec<String>,
    },
    /// The user dictionary's words, replacing those known before (its file changed).
    SetUserWords {
        words: Vec<String>,
    },
    /// Frees a closed document's cache.
    Close {
        doc: String,
    },
    SetBudget {
        bytes: usize,
    },
    Stats {
        reply: Reply<Stats>,
    },
    /// Ends the thread (after the job it is running): see [`Engine::stop`].
    Stop,
}

impl Job {
    pub(crate) fn doc_version(&self) -> Option<(&str, i32)> {
        match self {
            Job::Ghost { doc, version, .. } | Job::Complete { doc, version, .. } | Job::Check { doc, version, .. } => Some((doc, *version)),
            _ => None,
        }
    }

    /// Jobs a writer is waiting for: they go before spelling checks. (Stats and Close too: they
    /// are instant, a status request must not wait behind minutes of checks, and a closed
    /// document's cache is freed at once. A route loads the model a newly opened document needs
    /// before that document's first key asks for it.)
    pub(crate) fn is_urgent(&self) -> bool {
        matches!(
            self,
            Job::Ghost { .. }
                | Job::Complete { .. }
                | Job::Rank { .. }
                | Job::Convert { .. }
                | Job::Stats { .. }
                | Job::Close { .. }
                | Job::Route { .. }
        )
    }

    /// Moves a suggestion's deadline `by` later (it waited on something not its own: a load).
    pub(crate) fn postpone(&mut self, by: std::time::Duration) {
        if let Job::Ghost { deadline, .. } | Job::Complete { deadline, .. } = self {
            *deadline += by;
        }
    }

    /// A suggestion job: only the newest one per document is worth running.
    pub(crate) fn is_suggestion(&self) -> bool {
        matches!(self, Job::Ghost { .. } | Job::Complete { .. })
    }

    pub(crate) fn reply_closed(&self) -> bool {
        match self {
            Job::Ghost { reply, .. } => reply.is_closed(),
            Job::Complete { reply, .. } => reply.is_closed(),
            Job::Check { reply, .. } => reply.is_closed(),
            Job::Rank { reply, .. } => reply.is_closed(),
            Job::Convert { reply, .. } => reply.is_closed(),
            _ => false,
        }
    }

    pub(crate) fn drop_with(self, e: JobError) {
        let e = Err(e);
        match self {
            Job::Ghost { reply, .. } => drop(reply.send(e.map(|_: ()| None))),
            Job::Complete { reply, .. } => drop(reply.send(e.map(|_: ()| vec![]))),
            Job::Check { reply, .. } => drop(reply.send(e.map(|_: ()| vec![]))),
            Job::Rank { reply, .. } => drop(reply.send(e.map(|_: ()| vec![]))),
            Job::Convert { reply, .. } => drop(reply.send(e.map(|_: ()| vec![]))),
            _ => {}
        }
    }
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    pub model: Option<String>,
    pub documents_cached: usize,
    pub cache_bytes: usize,
    pub budget_bytes: usize,
    pub jobs: u64,
    pub stale_dropped: u64,
    /// Ghost texts answered from the previous suggestion (the writer typed what it said).
    pub reused_suggestions: u64,
    /// Suggestion jobs for a document whose cache had been evicted (its context prefilled again).
    pub cache_misses: u64,
    /// Milliseconds the engine spent on recent ghost and check jobs (the last 2,000 of each;
    /// checks that ran to the end, not those that gave way to a keystroke, each from the moment
    /// it was asked, its wait for work in progress included).
    pub ghost_ms: Vec<f64>,
    pub check_ms: Vec<f64>,
    /// Checks that gave way to a keystroke before the end (their rest is checked later).
    pub checks_interrupted: u64,
    /// Words scored ahead of the spelling check while idle, and the forwards that took.
    pub checked_ahead: u64,
    pub check_ahead_forwards: u64,
    /// Forward passes, and token positions computed, by each recent ghost job (0 for one answered
    /// from what the document's cache already held).
    pub ghost_forwards: Vec<f64>,
    pub ghost_tokens: Vec<f64>,
    /// The same for whole spelling checks.
    pub check_forwards: Vec<f64>,
    pub check_tokens: Vec<f64>,
    /// Ghost texts worked out ahead of the keystroke while idle, and the forwards they ran.
    pub speculations: u64,
    pub speculative_forwards: u64,
    /// First steps of the next letter's search (or a mark's after the word) run while idle (a
    /// forward each), and those the writer's pace left no time for.
    pub letter_steps: u64,
    pub letter_steps_skipped: u64,
}
