//! The inference thread and its handle: the one owner of the model, the lexicon and every
//! document's KV cache. Handlers send it a closed set of jobs ([`Job`]) and await the reply;
//! jobs for an old version of a document, or whose requester has gone (a cancelled request),
//! are dropped unanswered, and of several queued suggestion jobs for one document only the
//! newest runs. When no job waits, it works ahead for the next keystroke (ahead.rs) at the
//! writer's pace (pace.rs). It knows no LSP: lsp -> engine -> decide -> model -> text.

mod ahead;
mod job;
mod pace;
mod worker;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use dashmap::DashMap;
use tokio::sync::oneshot;

pub use job::{CheckText, Job, JobError, Reply, Stats};
use worker::Worker;

/// The handle handlers hold.
#[derive(Clone)]
pub struct Engine {
    tx: mpsc::Sender<Job>,
    /// The inference thread, joined by [`Engine::stop`].
    thread: Arc<std::sync::Mutex<Option<std::thread::JoinHandle<()>>>>,
    /// Suggestion jobs sent and not yet started: a running check yields to them.
    urgent: Arc<AtomicUsize>,
    /// The newest version of each open document: see [`Engine::set_version`].
    versions: Arc<DashMap<String, i32>>,
}

/// How the engine runs, read once by the binary.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Bytes of KV cache kept for open documents (least recently used evicted first).
    pub budget_bytes: usize,
    /// A fault seam for the suite: a suggestion whose context holds this word panics inside
    /// its job (the test shows the panic stays there). Only builds with the `faults` feature
    /// (the suite's) have the seam; other builds ignore it.
    pub fault_panic_on: Option<String>,
    /// Where the model and the lexicon are when the settings name none, and how to load a model.
    pub locations: Locations,
}

/// Defaults the binary works out from the environment once: the engine reads none itself.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    /// The model when the `modelPath` setting names none (`LAYA_MODEL`, else the default model).
    pub models: laya_model::ModelLocations,
    /// The lexicon when the `lexiconPath` setting names none; None: none was found.
    pub lexicon: Option<std::path::PathBuf>,
    /// The pinyin dictionary (`reading<TAB>hanzi<TAB>count`) for `laya/convert`; None: none found.
    pub pinyin: Option<std::path::PathBuf>,
    pub load: laya_model::LoadOptions,
}

impl Engine {
    /// Starts the inference thread (nothing loaded until a `Load` job).
    pub fn start(opts: EngineOptions) -> Self {
        let (tx, rx) = mpsc::channel();
        let versions: Arc<DashMap<String, i32>> = Arc::new(DashMap::new());
        let v = versions.clone();
        let urgent = Arc::new(AtomicUsize::new(0));
        let u = urgent.clone();
        let thread = std::thread::Builder::new()
            .name("laya-inference".into())
            .spawn(move || Worker::new(opts, v, u).run(rx))
            .expect("spawning the inference thread");
        Self { tx, thread: Arc::new(std::sync::Mutex::new(Some(thread))), urgent, versions }
    }

    /// Stops the inference thread and waits for it. Call before the process exits: a thread
    /// still inside MLX while the C++ runtime tears down its statics aborts the process
    /// (seen as SIGABRT after `exit`, about one run in ten).
    pub fn stop(&self) {
        let _ = self.tx.send(Job::Stop);
        let handle = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(h) = handle {
            let _ = h.join();
        }
    }

    pub fn send(&self, job: Job) {
        if job.is_urgent() {
            self.urgent.fetch_add(1, Ordering::AcqRel);
        }
        // The thread only ends with the process; a send error means it panicked: say so.
        if self.tx.send(job).is_err() {
            tracing::error!("the inference thread is gone");
        }
    }

    /// Records that `doc` is open at `version` (on open and on every change, before the jobs
    /// for that version are sent): jobs for older versions are dropped unrun.
    pub fn set_version(&self, doc: &str, version: i32) {
        self.versions.insert(doc.to_string(), version);
    }

    /// Forgets a closed document (its queued jobs are dropped); send [`Job::Close`] to free its cache.
    pub fn forget(&self, doc: &str) {
        self.versions.remove(doc);
    }

    /// Sends a job built around a fresh reply channel and awaits its answer.
    pub async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Job) -> Result<T, JobError> {
        let (tx, rx) = oneshot::channel();
        self.send(make(tx));
        // The reply is dropped unanswered when the job panicked (or the thread is gone).
        rx.await.unwrap_or_else(|_| Err(JobError::Failed("the decision failed inside Laya; the server log says why".into())))
    }
}
