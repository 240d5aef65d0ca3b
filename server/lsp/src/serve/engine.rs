//! The inference thread: the one owner of the model, the lexicon and every document's KV cache.
//! Handlers send it a closed set of jobs and await the reply; jobs for an old version of a
//! document, or whose requester has gone (a cancelled request), are dropped unanswered, and of
//! several queued suggestion jobs for one document only the newest runs. When no job waits, it
//! works out the ghost text the next keystroke will likely ask for ([`Worker::speculate`], for
//! a space; [`Worker::letter_ahead`], for one more letter or a mark that ends the word, at the
//! writer's pace).

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use dashmap::DashMap;
use laya_decide::{Ghost, GhostOptions, Issue, Ranked, Speller, Suggestion, TypedThrough, Vocab};
use laya_model::{KvCache, Model};

use super::pace::{Pace, Work};
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
    Load { model: Option<PathBuf>, lexicon: Option<PathBuf>, reply: Reply<String> },
    /// Ghost text after `before` (the context window up to the cursor); not started after
    /// `deadline` (a suggestion that late would only distract).
    /// `ahead`: whether the ghost text for a following space may be worked out while idle.
    /// `check_from`: where in `before` the paragraph being typed starts, when its spelling check
    /// runs in this window; its settled words may then be scored while idle.
    Ghost {
        doc: String,
        version: i32,
        before: String,
        after: String,
        opts: GhostOptions,
        ahead: bool,
        check_from: Option<usize>,
        deadline: Instant,
        reply: Reply<Option<Ghost>>,
    },
    /// Up to `n` completions after `before`; not started after `deadline`, like ghost text.
    /// `check_from`: as for ghost text.
    Complete { doc: String, version: i32, before: String, n: usize, check_from: Option<usize>, deadline: Instant, reply: Reply<Vec<Suggestion>> },
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
    Rank { context: String, candidates: Vec<String>, reply: Reply<Vec<Ranked>> },
    /// Words the user added to the dictionary.
    AddWords { words: Vec<String> },
    /// The user dictionary's words, replacing those known before (its file changed).
    SetUserWords { words: Vec<String> },
    /// Frees a closed document's cache.
    Close { doc: String },
    SetBudget { bytes: usize },
    Stats { reply: Reply<Stats> },
    /// Ends the thread (after the job it is running): see [`Engine::stop`].
    Stop,
}

impl Job {
    fn doc_version(&self) -> Option<(&str, i32)> {
        match self {
            Job::Ghost { doc, version, .. } | Job::Complete { doc, version, .. } | Job::Check { doc, version, .. } => {
                Some((doc, *version))
            }
            _ => None,
        }
    }

    /// Jobs a writer is waiting for: they go before spelling checks. (Stats and Close too: they
    /// are instant, a status request must not wait behind minutes of checks, and a closed
    /// document's cache is freed at once.)
    fn is_urgent(&self) -> bool {
        matches!(self, Job::Ghost { .. } | Job::Complete { .. } | Job::Rank { .. } | Job::Stats { .. } | Job::Close { .. })
    }

    /// A suggestion job: only the newest one per document is worth running.
    fn is_suggestion(&self) -> bool {
        matches!(self, Job::Ghost { .. } | Job::Complete { .. })
    }

    fn reply_closed(&self) -> bool {
        match self {
            Job::Ghost { reply, .. } => reply.is_closed(),
            Job::Complete { reply, .. } => reply.is_closed(),
            Job::Check { reply, .. } => reply.is_closed(),
            Job::Rank { reply, .. } => reply.is_closed(),
            _ => false,
        }
    }

    fn drop_with(self, e: JobError) {
        let e = Err(e);
        match self {
            Job::Ghost { reply, .. } => drop(reply.send(e.map(|_: ()| None))),
            Job::Complete { reply, .. } => drop(reply.send(e.map(|_: ()| vec![]))),
            Job::Check { reply, .. } => drop(reply.send(e.map(|_: ()| vec![]))),
            Job::Rank { reply, .. } => drop(reply.send(e.map(|_: ()| vec![]))),
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

/// The handle handlers hold.
#[derive(Clone)]
pub struct Engine {
    tx: mpsc::Sender<Job>,
    /// The inference thread, joined by [`Engine::stop`].
    thread: Arc<std::sync::Mutex<Option<std::thread::JoinHandle<()>>>>,
    /// Suggestion jobs sent and not yet started: a running check yields to them.
    urgent: Arc<AtomicUsize>,
    /// The newest version of each open document, written by the text-sync handlers.
    pub versions: Arc<DashMap<String, i32>>,
}

impl Engine {
    /// Starts the inference thread (nothing loaded until a `Load` job).
    pub fn start(budget_bytes: usize) -> Self {
        let (tx, rx) = mpsc::channel();
        let versions: Arc<DashMap<String, i32>> = Arc::new(DashMap::new());
        let v = versions.clone();
        let urgent = Arc::new(AtomicUsize::new(0));
        let u = urgent.clone();
        let thread = std::thread::Builder::new()
            .name("laya-inference".into())
            .spawn(move || Worker::new(budget_bytes, v, u).run(rx))
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

    /// Sends a job built around a fresh reply channel and awaits its answer.
    pub async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Job) -> Result<T, JobError> {
        let (tx, rx) = oneshot::channel();
        self.send(make(tx));
        // The reply is dropped unanswered when the job panicked (or the thread is gone).
        rx.await.unwrap_or_else(|_| Err(JobError::Failed("the decision failed inside Laya; the server log says why".into())))
    }
}

struct DocCache {
    cache: KvCache,
    used: Instant,
}

struct Loaded {
    model: Model,
    vocab: Vocab,
    name: String,
}

struct Worker {
    loaded: Option<Loaded>,
    load_error: String,
    speller: Option<Speller>,
    user_words: Vec<String>,
    caches: HashMap<String, DocCache>,
    /// Documents that have had a cache (to tell a miss from a first use).
    seen: HashSet<String>,
    /// Each document's last ghost text, the text it followed and the options it was made with.
    /// Rule: it only answers a later key when it is what the model would answer there
    /// (laya_decide::typed_through); it never makes an answer depend on which keys were asked.
    last_ghost: HashMap<String, (String, Ghost, GhostOptions)>,
    check_cache: KvCache,
    budget: usize,
    versions: Arc<DashMap<String, i32>>,
    urgent: Arc<AtomicUsize>,
    stats: Stats,
    /// Ghost text to work out while nothing else waits: see [`Worker::speculate`].
    /// Rule for all work done ahead (this, `check_ahead`, `letters`): it only fills the
    /// document's cache (kept steps) and the speller's memo with what the next job would compute
    /// itself, so it changes how fast an answer comes, never what it is. The one exception is
    /// rounding: a step run alone and the same step in a batch of several go through different
    /// kernels (up to 2e-3 in a log-prob on AVX2, ~1e-4 with AVX-512), so a probability within
    /// that of a threshold may fall either side. Caches evicted under the memory budget, and
    /// the kept steps an earlier key left, are the same kind of thing.
    ahead: Option<Speculation>,
    /// Words of a paragraph to score while nothing else waits: see [`Worker::check_ahead`].
    check_ahead: Option<CheckAhead>,
    /// Steps for the next letter to run while nothing else waits: see [`Worker::letter_ahead`].
    letters: Option<Letters>,
    /// The writer's pace and what idle work costs, so idle work does not run into the next key.
    /// Rule: it decides only whether and when idle work runs, never an answer.
    pace: Pace,
}

/// Most letters of the next keystroke whose first step is worked out while idle.
const LETTERS_AHEAD: usize = 3;

/// Whether `g` completes the word at the cursor. It is then at least `threshold` likely (0.5 by
/// default), so the word more likely goes on than ends: the idle time goes to its next letters,
/// not to the ghost text after a space ([`Speculation`]).
fn completes_word(g: &Ghost) -> bool {
    g.replace == 0 && g.insert.starts_with(laya_text::is_word_char)
}

/// The steps the next keystroke needs if it is one more letter of the word at the cursor, or a
/// mark that ends it (",", ".").
struct Letters {
    doc: String,
    version: i32,
    before: String,
    after: String,
    opts: GhostOptions,
    /// The letter the shown suggestion goes on with (typing it needs no model).
    skip: Option<char>,
    /// Planned, once the document's cache holds the context ([`laya_decide::letters_ahead`]).
    plan: Option<VecDeque<laya_decide::LetterStep>>,
}

/// The paragraph being typed (`text[from..]`, after the window's earlier text), whose settled
/// words a spelling check will ask about.
struct CheckAhead {
    doc: String,
    version: i32,
    text: String,
    from: usize,
}

/// The ghost text a document will likely ask for next: the same text and a space, after a word
/// the lexicon knows (the word may be finished).
struct Speculation {
    doc: String,
    version: i32,
    before: String,
    after: String,
    opts: GhostOptions,
}

impl Worker {
    fn new(budget: usize, versions: Arc<DashMap<String, i32>>, urgent: Arc<AtomicUsize>) -> Self {
        Self {
            loaded: None,
            load_error: "the model is still loading".into(),
            speller: None,
            user_words: vec![],
            caches: HashMap::new(),
            last_ghost: HashMap::new(),
            seen: HashSet::new(),
            check_cache: KvCache::new(),
            budget,
            versions,
            urgent,
            stats: Stats::default(),
            ahead: None,
            check_ahead: None,
            letters: None,
            pace: Pace::default(),
        }
    }

    fn run(mut self, rx: mpsc::Receiver<Job>) {
        let mut queue: VecDeque<Job> = VecDeque::new();
        loop {
            while let Ok(j) = rx.try_recv() {
                queue.push_back(j);
            }
            // Idle: work out the ghost text the writer will likely ask for next, then what the
            // next spelling check will ask (once it fits before the next key: until then, wait
            // for a job or for that moment).
            let mut wait = None;
            if queue.is_empty() {
                if let Some(s) = self.ahead.take() {
                    self.speculate(s);
                    continue;
                }
                // After a sentence's end the paragraph's spelling check comes soon (its debounce
                // is shorter than the writer's pause there): the words it will ask about go first.
                let check_first = self.pace.after_sentence_end();
                if !check_first {
                    if let Some(l) = self.letters.take() {
                        self.letter_ahead(l);
                        continue;
                    }
                }
                if let Some(c) = self.check_ahead.take() {
                    match self.pace.fits_after(Work::Check) {
                        Some(d) if d.is_zero() => {
                            self.check_ahead(c);
                            continue;
                        }
                        d => {
                            wait = d;
                            self.check_ahead = Some(c);
                        }
                    }
                }
                if let Some(l) = self.letters.take() {
                    self.letter_ahead(l);
                    continue;
                }
            }
            if queue.is_empty() {
                let job = match wait {
                    Some(d) => match rx.recv_timeout(d) {
                        Err(mpsc::RecvTimeoutError::Timeout) => continue,
                        j => j.map_err(|_| ()),
                    },
                    None => rx.recv().map_err(|_| ()),
                };
                match job {
                    Ok(j) => queue.push_back(j),
                    Err(()) => return, // every handle dropped: the server is shutting down
                }
            }
            while let Ok(j) = rx.try_recv() {
                queue.push_back(j);
            }
            // Urgent jobs first, in order; then the rest.
            let at = queue.iter().position(Job::is_urgent).unwrap_or(0);
            let Some(job) = queue.remove(at) else { continue };
            if matches!(job, Job::Stop) {
                return;
            }
            if job.is_urgent() {
                self.urgent.fetch_sub(1, Ordering::AcqRel);
            }
            // A newer suggestion job of the same kind for the same document makes this one stale
            // (a client may ask for ghost text and completion items on one keystroke: both stand).
            let superseded = job.is_suggestion()
                && job.doc_version().is_some_and(|(d, _)| {
                    queue.iter().any(|q| {
                        std::mem::discriminant(q) == std::mem::discriminant(&job) && q.doc_version().is_some_and(|(d2, _)| d2 == d)
                    })
                });
            let old = job.doc_version().is_some_and(|(d, v)| self.versions.get(d).is_some_and(|cur| *cur > v));
            // Rule: a suggestion that waited past the latency budget is answered with nothing,
            // whatever it would have said (it would only distract now); a newer job for the
            // same document supersedes it. Both depend on timing by design; with a budget longer
            // than the queue's wait, answers depend on the text and the cursor alone.
            let late = matches!(&job, Job::Ghost { deadline, .. } | Job::Complete { deadline, .. } if Instant::now() > *deadline);
            // A job for a document closed meanwhile (its Close may have gone first) would
            // only make a cache nobody frees.
            let gone = job.doc_version().is_some_and(|(d, _)| !self.versions.contains_key(d));
            if superseded || old || late || gone || job.reply_closed() {
                self.stats.stale_dropped += 1;
                job.drop_with(if late && !(superseded || old || gone) { JobError::Late } else { JobError::Stale });
                continue;
            }
            self.stats.jobs += 1;
            // A panic inside a decision must not take the server down: it fails that job only.
            let (kind, t) = match &job {
                Job::Ghost { .. } => (1, Instant::now()),
                // A check's time counts from its asking: the writer waits for it through any
                // work it queued behind.
                Job::Check { asked, .. } => (2, *asked),
                _ => (0, Instant::now()),
            };
            let interrupted_before = self.stats.checks_interrupted;
            let forwards_before = self.loaded.as_ref().map(|l| l.model.forward_count());
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle(job)));
            // A check grows the shared check cache without going through put_cache: keep the
            // total under the budget after every job (least recently used first).
            self.evict("");
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let v = match kind {
                1 => Some(&mut self.stats.ghost_ms),
                2 if self.stats.checks_interrupted == interrupted_before => Some(&mut self.stats.check_ms),
                _ => None,
            };
            if let Some(v) = v {
                keep_recent(v, ms);
            }
            let whole_check = kind == 2 && self.stats.checks_interrupted == interrupted_before;
            if let (Some((f0, t0)), Some((f1, t1))) = (forwards_before, self.loaded.as_ref().map(|l| l.model.forward_count())) {
                let counters = match kind {
                    1 => Some((&mut self.stats.ghost_forwards, &mut self.stats.ghost_tokens)),
                    2 if whole_check => Some((&mut self.stats.check_forwards, &mut self.stats.check_tokens)),
                    _ => None,
                };
                if let Some((f, t)) = counters {
                    keep_recent(f, (f1 - f0) as f64);
                    keep_recent(t, (t1 - t0) as f64);
                }
            }
            if r.is_err() {
                tracing::error!("a decision panicked; the job was dropped");
                self.check_cache = KvCache::new();
            }
        }
    }

    fn model(&self) -> Result<&Loaded, JobError> {
        self.loaded.as_ref().ok_or_else(|| JobError::NoModel(self.load_error.clone()))
    }

    fn doc_cache(&mut self, doc: &str) -> KvCache {
        match self.caches.remove(doc) {
            Some(d) => d.cache,
            None => {
                if !self.seen.insert(doc.to_string()) {
                    self.stats.cache_misses += 1;
                }
                KvCache::new()
            }
        }
    }

    fn put_cache(&mut self, doc: String, cache: KvCache) {
        self.caches.insert(doc.clone(), DocCache { cache, used: Instant::now() });
        self.evict(&doc);
    }

    /// Least-recently-used eviction down to the budget, never the document just used.
    fn evict(&mut self, keep: &str) {
        loop {
            let total: usize = self.caches.values().map(|d| d.cache.nbytes()).sum::<usize>() + self.check_cache.nbytes();
            if total <= self.budget {
                return;
            }
            let victim = self.caches.iter().filter(|(k, _)| k.as_str() != keep).min_by_key(|(_, d)| d.used).map(|(k, _)| k.clone());
            match victim {
                Some(k) => {
                    tracing::debug!("evicting a document cache");
                    self.caches.remove(&k);
                }
                None => {
                    self.check_cache = KvCache::new();
                    return;
                }
            }
        }
    }

    /// Runs a [`Speculation`] and keeps only what it leaves in the document's cache: the kept
    /// steps make the real keystroke's ghost text a lookup ([`laya_model::KvCache::lookahead`]),
    /// the same suggestion without the forward. It runs only when no job waits, and not for a
    /// document that changed meanwhile; a job that arrives during it waits for its end (one
    /// forward or two).
    fn speculate(&mut self, s: Speculation) {
        if self.versions.get(&s.doc).is_none_or(|v| *v != s.version) || !self.caches.contains_key(&s.doc) {
            return;
        }
        let Some(f0) = self.loaded.as_ref().map(|l| l.model.forward_count().0) else { return };
        let mut cache = self.doc_cache(&s.doc);
        let loaded = self.loaded.as_ref().expect("checked above");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            laya_decide::ghost(&loaded.model, &loaded.vocab, self.speller.as_ref(), &mut cache, &s.before, &s.after, &s.opts)
        }));
        self.stats.speculations += 1;
        self.stats.speculative_forwards += loaded.model.forward_count().0 - f0;
        match r {
            Ok(_) => self.put_cache(s.doc, cache),
            Err(_) => tracing::error!("speculative ghost text panicked; the document's cache was dropped"),
        }
    }

    /// Runs one step of the next letter's search, or of a mark after the word
    /// ([`laya_decide::step_ahead`]), likeliest key first, and leaves the rest for the next idle
    /// moment. It runs only when no job waits, for the same document version, and only when the
    /// step should end well before the writer's next key is due (a job that arrives during it
    /// waits for it).
    fn letter_ahead(&mut self, mut l: Letters) {
        if self.versions.get(&l.doc).is_none_or(|v| *v != l.version) || !self.caches.contains_key(&l.doc) {
            return;
        }
        if !self.pace.fits(Work::Step) {
            self.stats.letter_steps_skipped += l.plan.as_ref().map_or(1, |p| p.len()) as u64;
            return;
        }
        let Some(loaded) = self.loaded.as_ref() else { return };
        let Some(cache) = self.caches.get_mut(&l.doc).map(|d| &mut d.cache) else { return };
        if l.plan.is_none() {
            let plan = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                laya_decide::letters_ahead(&loaded.model, &loaded.vocab, cache, &l.before, &l.after, &l.opts, LETTERS_AHEAD, l.skip)
            }));
            match plan {
                Ok(Ok(p)) => l.plan = Some(p.into()),
                Ok(Err(e)) => return tracing::warn!("planning the next letter's steps failed: {e}"),
                Err(_) => return tracing::error!("planning the next letter's steps panicked"),
            }
        }
        let Some(step) = l.plan.as_mut().and_then(VecDeque::pop_front) else { return };
        let t = Instant::now();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| laya_decide::step_ahead(&loaded.model, cache, &step)));
        match r {
            Ok(Ok(true)) => {
                self.pace.note_cost(Work::Step, t.elapsed().as_secs_f64() * 1e3);
                self.stats.letter_steps += 1;
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => return tracing::warn!("a step ahead for the next letter failed: {e}"),
            Err(_) => {
                self.caches.remove(&l.doc);
                return tracing::error!("a step ahead for the next letter panicked; the document's cache was dropped");
            }
        }
        if l.plan.as_ref().is_some_and(|p| !p.is_empty()) {
            self.letters = Some(l);
        }
    }

    /// Scores the settled words of the paragraph being typed ([`Speller::check_ahead`]) on a
    /// fork of the document's cache, so that the spelling check after the writer's pause finds
    /// them scored. It runs only when no job waits, not for a document that changed meanwhile,
    /// and only while a word's forward (a few rows of several tokens, longer than a letter's
    /// step) fits before the next key: mostly where the writer stops at the end of a sentence.
    /// A job that arrives, or the time running out, stops it after the word it is scoring; what
    /// is left waits for the next moment it fits.
    fn check_ahead(&mut self, c: CheckAhead) {
        if self.versions.get(&c.doc).is_none_or(|v| *v != c.version) {
            return;
        }
        let (Some(loaded), Some(speller), Some(d)) = (self.loaded.as_ref(), self.speller.as_ref(), self.caches.get(&c.doc)) else { return };
        let mut fork = d.cache.fork();
        let f0 = loaded.model.forward_count().0;
        let t = Instant::now();
        let (urgent, pace) = (&self.urgent, &self.pace);
        let interrupt = || urgent.load(Ordering::Acquire) > 0 || !pace.fits(Work::Check);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| speller.check_ahead(&loaded.model, &mut fork, &c.text, c.from, &interrupt)));
        let forwards = loaded.model.forward_count().0 - f0;
        self.stats.check_ahead_forwards += forwards;
        if forwards > 0 {
            self.pace.note_cost(Work::Check, t.elapsed().as_secs_f64() * 1e3 / forwards as f64);
        }
        match r {
            Ok(Ok(n)) => self.stats.checked_ahead += n as u64,
            Ok(Err(laya_decide::DecideError::Interrupted)) => self.check_ahead = Some(c),
            Ok(Err(e)) => tracing::warn!("scoring words ahead of the spelling check failed: {e}"),
            Err(_) => tracing::error!("scoring words ahead of the spelling check panicked"),
        }
    }

    fn handle(&mut self, job: Job) {
        match job {
            Job::Load { model, lexicon, reply } => {
                let _ = reply.send(self.load(model, lexicon));
            }
            Job::Ghost { doc, version, before, after, opts, ahead, check_from, reply, .. } => {
                fault_point(&before);
                let started = Instant::now();
                self.pace.note_key(&doc, &before, started);
                self.letters = None;
                // The next key may be one more letter of this word (or the first of the next):
                // its search's first step is worked out while idle, but for the letter the
                // shown suggestion goes on with.
                let letters = |g: Option<&Ghost>| {
                    let skip = g.filter(|g| g.replace == 0).and_then(|g| g.insert.chars().next());
                    Letters { doc: doc.clone(), version, before: before.clone(), after: after.clone(), opts, skip, plan: None }
                };
                self.check_ahead = check_from.map(|from| CheckAhead { doc: doc.clone(), version, text: before.clone(), from });
                // After a word the lexicon knows, a space is a likely next key: its ghost text
                // (the next word, which always needs the model) is worked out while the writer
                // reaches for it.
                let word = laya_text::split_at_cursor(&before).word;
                let word_may_end = ahead
                    && !word.is_empty()
                    && !after.starts_with(laya_text::is_word_char)
                    && self.speller.as_ref().is_some_and(|sp| sp.is_known(word));
                self.ahead = word_may_end.then(|| Speculation {
                    doc: doc.clone(),
                    version,
                    before: format!("{before} "),
                    after: after.clone(),
                    opts,
                });
                // Typing what the last suggestion said: its rest is what the model would say
                // again, when that is known without it (see laya_decide::typed_through). The
                // answer is the same as for a client that never asked about the earlier keys.
                let known = self.last_ghost.get(&doc).filter(|(_, _, o)| *o == opts).and_then(|(b0, g0, _)| {
                    match laya_decide::typed_through(g0, before.strip_prefix(b0.as_str())?, &opts) {
                        TypedThrough::Shows(g) => Some(g),
                        TypedThrough::AskModel => None,
                    }
                });
                if let Some(g) = known {
                    self.stats.reused_suggestions += 1;
                    if ahead {
                        self.letters = Some(letters(Some(&g)));
                    }
                    if completes_word(&g) {
                        self.ahead = None;
                    }
                    let _ = reply.send(Ok(Some(g)));
                    return;
                }
                let mut cache = self.doc_cache(&doc);
                let r = self.model().and_then(|m| {
                    laya_decide::ghost(&m.model, &m.vocab, self.speller.as_ref(), &mut cache, &before, &after, &opts)
                        .map_err(|e| JobError::Failed(e.to_string()))
                });
                if r.is_err() {
                    self.ahead = None;
                }
                if let (true, Ok(g)) = (ahead, &r) {
                    self.letters = Some(letters(g.as_ref()));
                }
                if matches!(&r, Ok(Some(g)) if completes_word(g)) {
                    self.ahead = None;
                }
                match &r {
                    Ok(Some(g)) => {
                        self.last_ghost.insert(doc.clone(), (before, g.clone(), opts));
                    }
                    _ => {
                        self.last_ghost.remove(&doc);
                    }
                }
                let _ = reply.send(r);
                self.put_cache(doc, cache);
            }
            Job::Complete { doc, version, before, n, check_from, reply, .. } => {
                self.pace.note_key(&doc, &before, Instant::now());
                self.check_ahead = check_from.map(|from| CheckAhead { doc: doc.clone(), version, text: before.clone(), from });
                let mut cache = self.doc_cache(&doc);
                let r = self.model().and_then(|m| {
                    laya_decide::complete(&m.model, &m.vocab, &mut cache, &before, n).map_err(|e| JobError::Failed(e.to_string()))
                });
                // Words the lexicon does not know are not offered ("seperate" is in the model too).
                let r = r.map(|v| v.into_iter().filter(|s| self.speller.as_ref().is_none_or(|sp| sp.is_known(&s.word))).collect());
                let _ = reply.send(r);
                self.put_cache(doc, cache);
            }
            Job::Check { doc, paragraphs, ignored, repeated, reply, .. } => {
                let Some(speller) = self.speller.as_ref() else {
                    let _ = reply.send(Err(JobError::NoModel("no lexicon loaded".into())));
                    return;
                };
                let model = self.loaded.as_ref().map(|l| &l.model);
                let urgent = self.urgent.clone();
                let interrupt = move || urgent.load(Ordering::Acquire) > 0;
                let mut out = Vec::with_capacity(paragraphs.len());
                for p in &paragraphs {
                    let skip = |w: &str| {
                        let lw = w.to_lowercase();
                        ignored.contains(&lw) || speller.meant_by_repetition(w, if repeated.contains(&lw) { 2 } else { 1 })
                    };
                    // In the document's window, on a fork of its cache, when it has one: what
                    // the keystrokes computed up to the cursor is not computed again.
                    let doc_fork = p.window.as_ref().and_then(|w| self.caches.get(&doc).map(|d| (w, d.cache.fork())));
                    let (r, context) = match doc_fork {
                        Some((window, mut fork)) => {
                            let text = format!("{window}{}", p.text);
                            (speller.check(model, &mut fork, &text, window.len(), &skip, &interrupt), window.len())
                        }
                        None => (speller.check(model, &mut self.check_cache, &p.text, 0, &skip, &interrupt), 0),
                    };
                    match r {
                        Ok(mut issues) => {
                            for i in &mut issues {
                                i.start -= context;
                                i.end -= context;
                            }
                            out.push(issues)
                        }
                        Err(laya_decide::DecideError::Interrupted) => {
                            // Give back what is done; the caller checks the rest later.
                            self.stats.checks_interrupted += 1;
                            let _ = reply.send(Ok(out));
                            return;
                        }
                        Err(e) => {
                            let _ = reply.send(Err(JobError::Failed(e.to_string())));
                            return;
                        }
                    }
                }
                let _ = reply.send(Ok(out));
            }
            Job::Rank { context, candidates, reply } => {
                let mut cache = std::mem::take(&mut self.check_cache);
                let r = self.model().and_then(|m| {
                    laya_decide::rank(&m.model, &mut cache, &context, &candidates).map_err(|e| JobError::Failed(e.to_string()))
                });
                self.check_cache = cache;
                let _ = reply.send(r);
            }
            Job::AddWords { words } => {
                for w in words {
                    if let Some(s) = self.speller.as_mut() {
                        s.add_user_word(&w);
                    }
                    if !self.user_words.contains(&w) {
                        self.user_words.push(w);
                    }
                }
            }
            Job::SetUserWords { words } => {
                if let Some(s) = self.speller.as_mut() {
                    s.set_user_words(&words);
                }
                self.user_words = words;
            }
            Job::Close { doc } => {
                self.caches.remove(&doc);
                self.seen.remove(&doc);
                self.last_ghost.remove(&doc);
                if self.versions.is_empty() {
                    self.check_cache = KvCache::new(); // the spelling checks' context: no document left
                }
            }
            Job::SetBudget { bytes } => {
                self.budget = bytes;
                self.evict("");
            }
            Job::Stop => {}
            Job::Stats { reply } => {
                let mut s = self.stats.clone();
                s.model = self.loaded.as_ref().map(|l| l.name.clone());
                s.documents_cached = self.caches.len();
                s.cache_bytes = self.caches.values().map(|d| d.cache.nbytes()).sum::<usize>() + self.check_cache.nbytes();
                s.budget_bytes = self.budget;
                let _ = reply.send(Ok(s));
            }
        }
    }

    fn load(&mut self, model: Option<PathBuf>, lexicon: Option<PathBuf>) -> Result<String, JobError> {
        // The lexicon first: typo diagnostics work without a model.
        let lex_path = lexicon.or_else(laya_decide::default_lexicon_path);
        let mut lex_msg = String::new();
        match lex_path.map(|p| laya_decide::Lexicon::load(&p)) {
            Some(Ok(l)) => {
                let mut s = Speller::new(l);
                for w in &self.user_words {
                    s.add_user_word(w);
                }
                self.speller = Some(s);
            }
            Some(Err(e)) => lex_msg = format!("; spelling is off: {e}"),
            None => lex_msg = "; spelling is off: no lexicon found (run `make lexicon` or set lexiconPath)".into(),
        }
        if let Some(p) = model.as_deref().filter(|p| !p.exists()) {
            self.load_error = format!("the modelPath setting names {}, which does not exist{lex_msg}", p.display());
            return Err(JobError::NoModel(self.load_error.clone()));
        }
        let path = laya_model::resolve_model_path(model.as_deref()).map_err(|e| {
            self.load_error = format!("{e}{lex_msg}");
            JobError::NoModel(self.load_error.clone())
        })?;
        self.caches.clear();
        self.check_cache = KvCache::new();
        let start = Instant::now();
        let m = Model::load(&path).map_err(|e| {
            self.load_error = format!("cannot load the model {}: {e}{lex_msg}", path.display());
            JobError::NoModel(self.load_error.clone())
        })?;
        let vocab = Vocab::new(&m).map_err(|e| JobError::Failed(e.to_string()))?;
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let msg = format!("{name} loaded in {:.0} ms{lex_msg}", start.elapsed().as_secs_f64() * 1e3);
        self.loaded = Some(Loaded { model: m, vocab, name });
        Ok(msg)
    }
}

/// Appends a sample, keeping the last 2,000.
fn keep_recent(v: &mut Vec<f64>, x: f64) {
    if v.len() >= 2_000 {
        v.remove(0);
    }
    v.push(x);
}

/// A test seam: with LAYA_FAULT_PANIC_ON=WORD in the environment, a suggestion whose context
/// holds WORD panics, so that the suite can show a panic stays inside its job.
fn fault_point(text: &str) {
    static WORD: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let word = WORD.get_or_init(|| std::env::var("LAYA_FAULT_PANIC_ON").ok().filter(|w| !w.is_empty()));
    if word.as_deref().is_some_and(|w| text.contains(w)) {
        panic!("LAYA_FAULT_PANIC_ON: a planned panic in a decision");
    }
}
