//! The inference thread's loop: the one owner of the model, the lexicon and every document's KV
//! cache. It takes urgent jobs first, drops stale, superseded, late and abandoned ones, runs
//! each inside catch_unwind (a panic fails that job only), and works ahead when idle (ahead.rs).

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use laya_decide::{Ghost, GhostOptions, PinyinDict, Speller, TypedThrough, Vocab};
use laya_model::{KvCache, Model, ModelChoice};

use crate::ahead::{completes_word, CheckAhead, Letters, Speculation};
use crate::job::{Job, JobError, Stats};
use crate::pace::{Pace, Work};
use crate::{EngineOptions, Locations};

pub(crate) struct DocCache {
    pub(crate) cache: KvCache,
    pub(crate) used: Instant,
}

pub(crate) struct Loaded {
    pub(crate) model: Model,
    pub(crate) vocab: Vocab,
    pub(crate) name: String,
}

pub(crate) struct Worker {
    /// The model of Latin-script text, or the one model the settings (or LAYA_MODEL) name.
    pub(crate) loaded: Option<Loaded>,
    pub(crate) load_error: String,
    /// Whether a model was named: then every document uses `loaded`, whatever its script.
    pub(crate) named: bool,
    /// The multilingual model, loaded the first time a document needs it (Chinese, Japanese,
    /// Cyrillic, ... text, with no model named); its error when it could not be loaded.
    pub(crate) multilingual: Option<Result<Loaded, String>>,
    /// The `multilingualModelPath` setting, when it names one.
    pub(crate) multilingual_path: Option<PathBuf>,
    /// Which model each document's cache belongs to (by the script of its text so far).
    pub(crate) doc_models: HashMap<String, ModelChoice>,
    /// The pinyin dictionary, read the first time a conversion is asked for (or why it could not be).
    pub(crate) pinyin: Option<Result<PinyinDict, String>>,
    pub(crate) speller: Option<Speller>,
    pub(crate) user_words: Vec<String>,
    pub(crate) caches: HashMap<String, DocCache>,
    /// Documents that have had a cache (to tell a miss from a first use).
    pub(crate) seen: HashSet<String>,
    /// Each document's last ghost text, the text it followed and the options it was made with.
    /// Rule: it only answers a later key when it is what the model would answer there
    /// (laya_decide::typed_through); it never makes an answer depend on which keys were asked.
    pub(crate) last_ghost: HashMap<String, (String, Ghost, GhostOptions)>,
    pub(crate) check_cache: KvCache,
    pub(crate) budget: usize,
    /// See [`EngineOptions::fault_panic_on`].
    pub(crate) fault_panic_on: Option<String>,
    /// See [`EngineOptions::locations`].
    pub(crate) locations: Locations,
    pub(crate) versions: Arc<DashMap<String, i32>>,
    pub(crate) urgent: Arc<AtomicUsize>,
    pub(crate) stats: Stats,
    /// Ghost text to work out while nothing else waits: see [`Worker::speculate`].
    /// Rule for all work done ahead (this, `check_ahead`, `letters`): it only fills the
    /// document's cache (kept steps) and the speller's memo with what the next job would compute
    /// itself, so it changes how fast an answer comes, never what it is. The one exception is
    /// rounding: a step run alone and the same step in a batch of several go through different
    /// kernels (up to 2e-3 in a log-prob on AVX2, ~1e-4 with AVX-512), so a probability within
    /// that of a threshold may fall either side. Caches evicted under the memory budget, and
    /// the kept steps an earlier key left, are the same kind of thing.
    pub(crate) ahead: Option<Speculation>,
    /// Words of a paragraph to score while nothing else waits: see [`Worker::check_ahead`].
    pub(crate) check_ahead: Option<CheckAhead>,
    /// Steps for the next letter to run while nothing else waits: see [`Worker::letter_ahead`].
    pub(crate) letters: Option<Letters>,
    /// The writer's pace and what idle work costs, so idle work does not run into the next key.
    /// Rule: it decides only whether and when idle work runs, never an answer.
    pub(crate) pace: Pace,
    /// Time the last job spent loading a model: the jobs that waited through it get it added
    /// to their deadlines (a first Chinese document's load is not the writer's to wait out).
    pub(crate) loading: Duration,
}

impl Worker {
    pub(crate) fn new(opts: EngineOptions, versions: Arc<DashMap<String, i32>>, urgent: Arc<AtomicUsize>) -> Self {
        Self {
            budget: opts.budget_bytes,
            fault_panic_on: opts.fault_panic_on,
            locations: opts.locations,
            loaded: None,
            load_error: "the model is still loading".into(),
            named: false,
            multilingual: None,
            multilingual_path: None,
            doc_models: HashMap::new(),
            pinyin: None,
            speller: None,
            user_words: vec![],
            caches: HashMap::new(),
            last_ghost: HashMap::new(),
            seen: HashSet::new(),
            check_cache: KvCache::new(),
            versions,
            urgent,
            stats: Stats::default(),
            ahead: None,
            check_ahead: None,
            letters: None,
            pace: Pace::default(),
            loading: Duration::ZERO,
        }
    }

    pub(crate) fn run(mut self, rx: mpsc::Receiver<Job>) {
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
                    queue.iter().any(|q| std::mem::discriminant(q) == std::mem::discriminant(&job) && q.doc_version().is_some_and(|(d2, _)| d2 == d))
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
                Job::Ghost { .. } => (Timed::Ghost, Instant::now()),
                // A check's time counts from its asking: the writer waits for it through any
                // work it queued behind.
                Job::Check { asked, .. } => (Timed::Check, *asked),
                _ => (Timed::Other, Instant::now()),
            };
            let interrupted_before = self.stats.checks_interrupted;
            let forwards_before = self.forward_count();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle(job)));
            // A check grows the shared check cache without going through put_cache: keep the
            // total under the budget after every job (least recently used first).
            self.evict(None);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let whole_check = kind == Timed::Check && self.stats.checks_interrupted == interrupted_before;
            let v = match kind {
                Timed::Ghost => Some(&mut self.stats.ghost_ms),
                Timed::Check if whole_check => Some(&mut self.stats.check_ms),
                _ => None,
            };
            if let Some(v) = v {
                keep_recent(v, ms);
            }
            if let (Some((f0, t0)), Some((f1, t1))) = (forwards_before, self.forward_count()) {
                let counters = match kind {
                    Timed::Ghost => Some((&mut self.stats.ghost_forwards, &mut self.stats.ghost_tokens)),
                    Timed::Check if whole_check => Some((&mut self.stats.check_forwards, &mut self.stats.check_tokens)),
                    _ => None,
                };
                if let Some((f, t)) = counters {
                    keep_recent(f, (f1 - f0) as f64);
                    keep_recent(t, (t1 - t0) as f64);
                }
            }
            // Rule: the time a job spent loading a model does not count against the latency
            // budget of the jobs that waited for it. Every job sent before the load ended is in
            // the queue now, and each gets the whole load's time (one that came in during it
            // gets a little more than it waited).
            if !self.loading.is_zero() {
                while let Ok(j) = rx.try_recv() {
                    queue.push_back(j);
                }
                for j in queue.iter_mut() {
                    j.postpone(self.loading);
                }
                self.loading = Duration::ZERO;
            }
            if r.is_err() {
                tracing::error!("a decision panicked; the job was dropped");
                self.check_cache = KvCache::new();
            }
        }
    }

    /// Forwards and tokens run so far, by every loaded model together.
    fn forward_count(&self) -> Option<(u64, u64)> {
        let loaded = self.loaded.as_ref()?.model.forward_count();
        let multi = match &self.multilingual {
            Some(Ok(l)) => l.model.forward_count(),
            _ => (0, 0),
        };
        Some((loaded.0 + multi.0, loaded.1 + multi.1))
    }

    /// Routes `doc` by the script of `text` (its text before the cursor): a document in Latin
    /// script (or one a named model serves) uses `loaded`, any other the multilingual model,
    /// loaded here the first time one needs it. A text without letters keeps the document's
    /// route. A document that changes route loses its cache (its tokens belong to the other
    /// model). Where the multilingual model is missing, the default serves, and the log says why.
    fn route(&mut self, doc: &str, text: &str) -> ModelChoice {
        let was = self.doc_models.get(doc).copied();
        let choice = self.choice_for(text).or(was).unwrap_or(ModelChoice::Default);
        if was.is_some_and(|w| w != choice) {
            self.caches.remove(doc);
            self.last_ghost.remove(doc);
        }
        self.doc_models.insert(doc.to_string(), choice);
        self.ready(choice);
        choice
    }

    /// The model for `text`'s script (every text's, when a model is named); None for a text
    /// without letters.
    fn choice_for(&self, text: &str) -> Option<ModelChoice> {
        if self.named {
            return Some(ModelChoice::Default);
        }
        laya_text::dominant_script(text).map(|s| ModelChoice::for_script(Some(s)))
    }

    /// Makes `choice`'s model ready: the multilingual one is loaded the first time it is asked
    /// for (once: a failure is kept, and the default serves).
    fn ready(&mut self, choice: ModelChoice) {
        if choice != ModelChoice::Multilingual || self.multilingual.is_some() {
            return;
        }
        let path = self.multilingual_path.clone().unwrap_or_else(|| self.locations.models.multilingual.clone());
        let r = self.load_model(&path);
        match &r {
            Ok(l) => tracing::info!("{} loaded for text that is not in Latin script", l.name),
            Err(e) => tracing::warn!("the multilingual model is not available, so the default serves text of other scripts: {e}"),
        }
        self.multilingual = Some(r);
    }

    /// The model a route leads to: the multilingual one when it is loaded, else `loaded`.
    pub(crate) fn model_for(&self, choice: ModelChoice) -> Result<&Loaded, JobError> {
        pick_model(&self.loaded, &self.multilingual, choice).ok_or_else(|| JobError::NoModel(self.load_error.clone()))
    }

    pub(crate) fn doc_cache(&mut self, doc: &str) -> KvCache {
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

    pub(crate) fn put_cache(&mut self, doc: String, cache: KvCache) {
        self.caches.insert(doc.clone(), DocCache { cache, used: Instant::now() });
        self.evict(Some(&doc));
    }

    /// Least-recently-used eviction down to the budget, never the document just used.
    fn evict(&mut self, keep: Option<&str>) {
        loop {
            let total: usize = self.caches.values().map(|d| d.cache.nbytes()).sum::<usize>() + self.check_cache.nbytes();
            if total <= self.budget {
                return;
            }
            let victim = self.caches.iter().filter(|(k, _)| Some(k.as_str()) != keep).min_by_key(|(_, d)| d.used).map(|(k, _)| k.clone());
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

    fn handle(&mut self, job: Job) {
        match job {
            Job::Load { model, multilingual, lexicon, reply } => {
                let _ = reply.send(self.load(model, multilingual, lexicon));
            }
            Job::Ghost { doc, version, before, after, opts, ahead, check_from, words, reply, .. } => {
                self.fault_point(&before);
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
                self.route(&doc, &before);
                // After a word the lexicon knows, a space is a likely next key: its ghost text
                // (the next word, which always needs the model) is worked out while the writer
                // reaches for it.
                let word = laya_text::split_at_cursor(&before).word;
                let word_may_end = ahead
                    && !word.is_empty()
                    && !after.starts_with(laya_text::is_word_char)
                    && self.speller.as_ref().is_some_and(|sp| sp.is_known(word));
                self.ahead =
                    word_may_end.then(|| Speculation { doc: doc.clone(), version, before: format!("{before} "), after: after.clone(), opts });
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
                let choice = self.doc_models.get(&doc).copied().unwrap_or(ModelChoice::Default);
                let mut cache = self.doc_cache(&doc);
                let recalls = laya_decide::Recalls { document: &words.0, workspace: &words.1 };
                let r = self.model_for(choice).and_then(|m| {
                    laya_decide::ghost(&m.model, &m.vocab, self.speller.as_ref(), Some(&recalls), &mut cache, &before, &after, &opts)
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
                let choice = self.route(&doc, &before);
                let mut cache = self.doc_cache(&doc);
                let r = self
                    .model_for(choice)
                    .and_then(|m| laya_decide::complete(&m.model, &m.vocab, &mut cache, &before, n).map_err(|e| JobError::Failed(e.to_string())));
                // Words the lexicon does not know are not offered ("seperate" is in the model too).
                let r = r.map(|v| v.into_iter().filter(|s| self.speller.as_ref().is_none_or(|sp| sp.may_offer(&s.word))).collect());
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
                    let doc_fork = p
                        .window
                        .as_ref()
                        .filter(|_| self.doc_models.get(&doc).is_none_or(|&c| c == ModelChoice::Default))
                        .and_then(|w| self.caches.get(&doc).map(|d| (w, d.cache.fork())));
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
                let choice = self.choice_for(&context).unwrap_or(ModelChoice::Default);
                self.ready(choice);
                let mut cache = KvCache::new();
                let r = self
                    .model_for(choice)
                    .and_then(|m| laya_decide::rank(&m.model, &mut cache, &context, &candidates).map_err(|e| JobError::Failed(e.to_string())));
                let _ = reply.send(r);
            }
            Job::Route { doc, text } => {
                self.route(&doc, &text);
            }
            Job::Convert { pinyin, context, n, reply } => {
                // Converting to hanzi is the multilingual model's job, unless a model is named.
                let choice = if self.named { ModelChoice::Default } else { ModelChoice::Multilingual };
                self.ready(choice);
                if self.pinyin.is_none() {
                    self.pinyin = Some(match &self.locations.pinyin {
                        Some(p) => PinyinDict::load(p).map_err(|e| e.to_string()),
                        None => Err("no pinyin dictionary found (run `make pinyin`, or set LAYA_PINYIN_DICT)".into()),
                    });
                }
                let r = match self.pinyin.as_ref().expect("set above") {
                    Err(e) => Err(JobError::NoModel(e.clone())),
                    Ok(dict) => self.model_for(choice).and_then(|m| {
                        laya_decide::convert(&m.model, &mut KvCache::new(), dict, &pinyin, &context, n).map_err(|e| JobError::Failed(e.to_string()))
                    }),
                };
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
                self.doc_models.remove(&doc);
                self.seen.remove(&doc);
                self.last_ghost.remove(&doc);
                if self.versions.is_empty() {
                    self.check_cache = KvCache::new(); // the spelling checks' context: no document left
                }
            }
            Job::SetBudget { bytes } => {
                self.budget = bytes;
                self.evict(None);
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

    /// The suite's fault seam ([`EngineOptions::fault_panic_on`]): a suggestion whose context
    /// holds that word panics, so a test can show a panic stays inside its job.
    fn fault_point(&self, text: &str) {
        if cfg!(feature = "faults") && self.fault_panic_on.as_deref().is_some_and(|w| text.contains(w)) {
            panic!("a planned panic in a decision (fault_panic_on)");
        }
    }

    fn load(&mut self, model: Option<PathBuf>, multilingual: Option<PathBuf>, lexicon: Option<PathBuf>) -> Result<String, JobError> {
        // The lexicon first: typo diagnostics work without a model.
        let lex_path = lexicon.or_else(|| self.locations.lexicon.clone());
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
        let path = self.locations.models.resolve(model.as_deref()).map_err(|e| {
            self.load_error = format!("{e}{lex_msg}");
            JobError::NoModel(self.load_error.clone())
        })?;
        self.caches.clear();
        self.doc_models.clear();
        self.last_ghost.clear();
        self.check_cache = KvCache::new();
        self.named = multilingual.is_none() && (model.is_some() || self.locations.models.from_env.is_some());
        self.multilingual_path = multilingual;
        self.multilingual = None;
        let start = Instant::now();
        let loaded = self.load_model(&path).map_err(|reason| {
            self.load_error = format!("{reason}{lex_msg}");
            JobError::NoModel(self.load_error.clone())
        })?;
        let msg = format!("{} loaded in {:.0} ms{lex_msg}", loaded.name, start.elapsed().as_secs_f64() * 1e3);
        self.loaded = Some(loaded);
        Ok(msg)
    }

    /// Loads one model and its vocabulary index, or says why it could not.
    fn load_model(&mut self, path: &std::path::Path) -> Result<Loaded, String> {
        let start = Instant::now();
        let r = Self::read_model(&self.locations, path);
        self.loading += start.elapsed();
        r
    }

    fn read_model(locations: &Locations, path: &std::path::Path) -> Result<Loaded, String> {
        let m = Model::load_with(path, locations.load).map_err(|e| format!("cannot load the model {}: {e}", path.display()))?;
        let vocab = Vocab::new(&m).map_err(|e| format!("indexing the vocabulary of {}: {e}", path.display()))?;
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Ok(Loaded { model: m, vocab, name })
    }
}

/// The model `doc`'s cache belongs to, as last routed (for work done ahead), from the worker's
/// fields alone so that its caches and counters stay free to borrow.
pub(crate) fn model_of_doc<'a>(
    loaded: &'a Option<Loaded>,
    multilingual: &'a Option<Result<Loaded, String>>,
    doc_models: &HashMap<String, ModelChoice>,
    doc: &str,
) -> Option<&'a Loaded> {
    pick_model(loaded, multilingual, doc_models.get(doc).copied().unwrap_or(ModelChoice::Default))
}

/// The model a route leads to: the multilingual one when it is loaded, else `loaded`.
fn pick_model<'a>(loaded: &'a Option<Loaded>, multilingual: &'a Option<Result<Loaded, String>>, choice: ModelChoice) -> Option<&'a Loaded> {
    match (choice, multilingual) {
        (ModelChoice::Multilingual, Some(Ok(l))) => Some(l),
        _ => loaded.as_ref(),
    }
}

/// Appends a sample, keeping the last 2,000.
fn keep_recent(v: &mut Vec<f64>, x: f64) {
    if v.len() >= 2_000 {
        v.remove(0);
    }
    v.push(x);
}

/// Which jobs' time and forwards the stats keep.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timed {
    Ghost,
    Check,
    Other,
}
