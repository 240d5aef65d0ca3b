//! The LSP front of `laya serve`: text sync on ropes, settings, and turning the engine's
//! decisions into inline completions, completion items, diagnostics and quick fixes. It never
//! touches the model: every decision is a job for the inference thread (see engine.rs).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use dashmap::DashMap;
use laya_decide::{Ghost, GhostOptions, Issue, IssueKind, SuggestionKind, TypedThrough};
use laya_text::{Document, PositionEncoding};
use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::engine::{CheckText, Engine, Job, JobError, Reply};
use super::settings::Settings;

/// Characters of context the model sees before the cursor, from MIN to MAX: see [`window_start`].
const WINDOW_MIN: usize = 600;
const WINDOW_MAX: usize = 1500;
/// How far the cursor moves before the window's start moves (MAX - MIN).
const WINDOW_STEP: usize = WINDOW_MAX - WINDOW_MIN;
/// Documents longer than this many characters are kept in sync and get ghost text and
/// completions, but no spelling diagnostics: a check reads the whole document (paragraph
/// hashes, repeated words), which would hold up every other document for a 20 MB file.
pub const MAX_CHECKED_CHARS: usize = 2_000_000;
/// How much of the rest of the line a suggestion looks at.
const AFTER_MAX: usize = 200;

pub const CMD_ADD_WORD: &str = "laya.addToDictionary";
pub const CMD_IGNORE: &str = "laya.ignoreInDocument";
/// The diagnostic code of a doubled word ("the the"), whose one fix deletes the second.
const CODE_REPEATED: &str = "repeated-word";

struct Doc {
    doc: Document,
    language: String,
    /// Words the user chose to ignore in this document (lower case).
    ignored: HashSet<String>,
    /// Char index where the model's context window starts: the last [`window_start`], a
    /// function of the text and the cursor (kept for the check of the edited paragraph, which
    /// runs in the same window).
    anchor: usize,
    /// Issues of each paragraph text already checked (by hash of the text). Rule: keyed by the
    /// text and the words left alone, so a result stands exactly while what it read does.
    checked: HashMap<u64, Checked>,
    /// The last ghost text answered, and what the writer has typed of it since. Rule: it
    /// answers a later request itself only where the model would answer the same
    /// ([`laya_decide::typed_through`]), so a client that asks at every key and one that asks
    /// once after a burst see the same ghost text for the same text and cursor.
    shown: Option<Shown>,
    /// Ghost texts the writer typed past (cursor char index, text): not shown there again.
    /// Rule: only a suggestion that stood on screen for REJECTED_AFTER before the writer typed
    /// something else is rejected; one a fast typist typed over as it appeared was never read,
    /// and whether a client happened to ask for it must not hide it later.
    rejected: HashSet<(usize, String)>,
    /// Char index just after the last edit. Rule: a misspelling that ends there, at the end of
    /// the text, is the word being typed and is not flagged until the writer moves past it
    /// (an edit elsewhere counts as moving past it).
    last_edit: usize,
    /// Over MAX_CHECKED_CHARS: not checked (the writer was told once).
    too_long: bool,
    /// Diagnostics are on screen for it (to clear when checks are turned off).
    published: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum ModelState {
    Loading,
    Ready(String),
    Failed(String),
}

/// The service's state, shared with the tasks it spawns (model loading, spelling checks).
pub struct Inner {
    client: Client,
    engine: Engine,
    docs: Arc<DashMap<String, Doc>>,
    settings: Arc<RwLock<Settings>>,
    encoding: RwLock<PositionEncoding>,
    model_state: Arc<RwLock<ModelState>>,
    /// Times a context window moved (its new start prefilled again).
    reanchors: std::sync::atomic::AtomicU64,
    /// Whether the client takes `window/workDoneProgress/create`.
    progress_ok: std::sync::atomic::AtomicBool,
    /// Whether the client takes versioned edits (`documentChanges`) in a workspace edit.
    versioned_edits_ok: std::sync::atomic::AtomicBool,
}

fn to_pos(p: Position) -> laya_text::Position {
    laya_text::Position::new(p.line, p.character)
}

fn from_pos(p: laya_text::Position) -> Position {
    Position::new(p.line, p.character)
}

fn key(uri: &Uri) -> String {
    uri.as_str().to_string()
}

/// Marks the key of a paragraph checked without the word being typed at its end.
const WORD_BEING_TYPED: u64 = 0x9e37_79b9_7f4a_7c15;

/// A paragraph's issues, and which of its words the check left alone (lower case, sorted).
struct Checked {
    left_alone: Vec<String>,
    issues: Vec<Issue>,
}

impl Checked {
    /// Whether these issues still hold when the check leaves `skip` alone. They do while every
    /// word left alone still is: a word newly left alone (used once more elsewhere, ignored) may
    /// have been flagged, and publishing drops it; a word no longer left alone (its other use
    /// deleted) was never looked at, so the paragraph is checked again.
    fn holds(&self, skip: &HashSet<String>) -> bool {
        self.left_alone.iter().all(|w| skip.contains(w))
    }
}

/// A paragraph's key in [`Doc::checked`]: its text.
fn check_key(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The words of `text` that `skip` holds (lower case, sorted, once each).
fn left_alone(text: &str, skip: &HashSet<String>) -> Vec<String> {
    let mut left: Vec<String> = laya_text::words(text).into_iter().map(|(s, e)| text[s..e].to_lowercase()).filter(|w| skip.contains(w)).collect();
    left.sort_unstable();
    left.dedup();
    left
}

/// What an inline item replaces and with what. `before` is the context the suggestion followed:
/// the document up to `from` (a selected completion's start, else the cursor) and then `prefix`
/// (the selected completion's text, else nothing); the suggestion replaces the last `replace`
/// bytes of `before` with `insert`. The item covers the document from the returned char index
/// to the cursor, and its text is the selected completion's (less what the suggestion
/// replaces of it) and the suggestion.
fn replacement(before: &str, prefix: &str, from: usize, replace: usize, insert: &str) -> (usize, String) {
    let kept = prefix.len().saturating_sub(replace);
    let kept = (0..=kept).rev().find(|&k| prefix.is_char_boundary(k)).unwrap_or(0);
    let into_doc = replace.saturating_sub(prefix.len());
    let doc_part = &before[..before.len() - prefix.len()];
    let chars_into_doc = doc_part.get(doc_part.len().saturating_sub(into_doc)..).map_or(0, |t| t.chars().count());
    (from.saturating_sub(chars_into_doc), format!("{}{insert}", &prefix[..kept]))
}

/// The word (or the part of one) that `before` ends with.
fn last_word(before: &str) -> &str {
    let start = before.char_indices().rev().take_while(|&(_, c)| laya_text::is_word_char(c)).last().map_or(before.len(), |(i, _)| i);
    &before[start..]
}

fn job_error(e: JobError) -> Error {
    match e {
        JobError::Stale => Error { code: ErrorCode::ServerError(-32800), message: "superseded by a newer edit".into(), data: None },
        JobError::Late => Error { code: ErrorCode::ServerError(-32800), message: "dropped: it waited longer than latencyBudgetMs".into(), data: None },
        JobError::NoModel(m) => Error { code: ErrorCode::ServerError(-32803), message: format!("the model is not ready: {m}").into(), data: None },
        JobError::Failed(m) => Error { code: ErrorCode::InternalError, message: m.into(), data: None },
    }
}

/// How long a ghost text must have been on show before typing something else rejects it: about
/// the time it takes to read a word (a fast typist's keys come every 40-100 ms).
const REJECTED_AFTER: Duration = Duration::from_millis(300);

/// The last ghost text answered for a document.
struct Shown {
    /// Char index of the cursor it was answered at.
    at: usize,
    ghost: Ghost,
    opts: GhostOptions,
    /// What the writer typed at `at` since, all of it a prefix of the suggestion.
    typed: String,
    /// When it was answered (the client shows it from about then).
    since: std::time::Instant,
}

impl Shown {
    /// Char index of the cursor after what was typed of it.
    fn cursor(&self) -> usize {
        self.at + self.typed.chars().count()
    }

    /// The text on show now at [`Shown::cursor`].
    fn rest(&self) -> &str {
        self.ghost.insert.strip_prefix(self.typed.as_str()).unwrap_or_default()
    }
}

/// The ghost options of the user's settings.
fn ghost_opts(s: &Settings) -> GhostOptions {
    GhostOptions { threshold: s.threshold, ..GhostOptions::default() }
}

/// Where the model's context window for a cursor at char `to` starts: a function of the text
/// and the cursor alone, so that what a suggestion reads does not depend on where the cursor
/// was when a client last asked. The whole text up to WINDOW_MAX; past that, the start of the
/// sentence holding the last multiple of WINDOW_STEP at least WINDOW_MIN before the cursor
/// (after a space near it when no sentence starts near: a very long line). It stays put while
/// the cursor moves within a WINDOW_STEP, so each keystroke reuses the cached prefix, and the
/// window holds WINDOW_MIN to WINDOW_MAX characters (and the rest of that first sentence).
fn window_start(doc: &Document, to: usize) -> usize {
    if to <= WINDOW_MAX {
        return 0;
    }
    let grid = (to - WINDOW_MIN) / WINDOW_STEP * WINDOW_STEP;
    let anchor = doc.sentence_start_before(grid).min(to);
    if to - anchor <= WINDOW_MAX + WINDOW_MIN {
        return anchor;
    }
    let skip = doc.rope().chars_at(grid).take(100).position(char::is_whitespace).map_or(0, |n| n + 1);
    (grid + skip).min(to)
}

/// What tower-lsp-server serves: a handle on the shared state.
pub struct Backend(Arc<Inner>);

impl std::ops::Deref for Backend {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl Backend {
    pub fn new(client: Client, engine: Engine, settings: Settings) -> Self {
        Self(Arc::new(Inner {
            client,
            engine,
            docs: Arc::new(DashMap::new()),
            settings: Arc::new(RwLock::new(settings)),
            encoding: RwLock::new(PositionEncoding::Utf16),
            model_state: Arc::new(RwLock::new(ModelState::Loading)),
            progress_ok: std::sync::atomic::AtomicBool::new(false),
            versioned_edits_ok: std::sync::atomic::AtomicBool::new(false),
            reanchors: std::sync::atomic::AtomicU64::new(0),
        }))
    }

    /// Loads the model in the background: handlers keep running (text sync must not wait).
    fn spawn_load(&self) {
        let inner = self.0.clone();
        tokio::spawn(async move { inner.load_model().await });
    }
}

impl Inner {

    fn settings(&self) -> Settings {
        self.settings.read().map(|s| s.clone()).unwrap_or_default()
    }

    fn enc(&self) -> PositionEncoding {
        self.encoding.read().map(|e| *e).unwrap_or(PositionEncoding::Utf16)
    }

    /// Loads the model on the inference thread, reporting progress; on failure says why and
    /// keeps serving what needs no model.
    async fn load_model(&self) {
        let s = self.settings();
        if let Ok(mut st) = self.model_state.write() {
            *st = ModelState::Loading;
        }
        // The job goes first: a client slow to answer the progress request must not delay it.
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.engine.send(Job::Load { model: s.model_path.clone(), lexicon: s.lexicon_path.clone(), reply: tx });
        let progress = if self.progress_ok.load(std::sync::atomic::Ordering::Acquire) {
            let token = ProgressToken::String("laya/load".into());
            match self.client.create_work_done_progress(token.clone()).await {
                Ok(()) => Some(self.client.progress(token, "Laya").with_message("loading the model").begin().await),
                Err(_) => None,
            }
        } else {
            None
        };
        let r = rx.await.unwrap_or_else(|_| Err(JobError::Failed("the inference thread stopped".into())));
        let (state, msg) = match r {
            Ok(m) => (ModelState::Ready(m.clone()), m),
            Err(JobError::NoModel(m) | JobError::Failed(m)) => (ModelState::Failed(m.clone()), m),
            Err(JobError::Stale | JobError::Late) => (ModelState::Failed("stale".into()), "stale".into()),
        };
        if let Some(p) = progress {
            p.finish_with_message(msg.clone()).await;
        }
        match &state {
            ModelState::Ready(_) => {
                tracing::info!("{msg}");
                self.client.log_message(MessageType::INFO, format!("Laya: {msg}")).await;
            }
            _ => {
                tracing::error!("{msg}");
                self.client
                    .show_message(MessageType::ERROR, format!("Laya: {msg}. Suggestions are off; spelling works if the lexicon loaded."))
                    .await;
            }
        }
        if let Ok(mut st) = self.model_state.write() {
            *st = state;
        }
        // Documents opened while loading get their diagnostics now.
        self.recheck_all();
    }

    /// Sets `d`'s context window to end at char `to` ([`window_start`]), counting the moves of
    /// its start (each one prefills the new window).
    fn window_to(&self, d: &mut Doc, to: usize) {
        let anchor = window_start(&d.doc, to);
        if anchor != d.anchor {
            d.anchor = anchor;
            self.reanchors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Checks every open document again now, from scratch (after the model, the lexicon, the
    /// dictionary or settings change, earlier results no longer hold).
    fn recheck_all(&self) {
        let uris: Vec<String> = self
            .docs
            .iter_mut()
            .map(|mut d| {
                d.checked.clear();
                d.key().clone()
            })
            .collect();
        for u in uris {
            self.schedule_check(u, 0);
        }
    }

    /// Re-checks a document after `delay_ms` if it has not changed meanwhile, and publishes
    /// its diagnostics. Only paragraphs whose text changed go to the engine.
    fn schedule_check(&self, uri: String, delay_ms: u64) {
        let docs = self.docs.clone();
        let engine = self.engine.clone();
        let client = self.client.clone();
        let settings = self.settings();
        let enc = self.enc();
        let scheduled = self.docs.get(&uri).map(|d| d.doc.version());
        let newly_too_long = self.docs.get_mut(&uri).and_then(|mut d| {
            let over = d.doc.len_chars() > MAX_CHECKED_CHARS;
            let news = over && !d.too_long;
            d.too_long = over;
            news.then(|| d.doc.len_chars())
        });
        if let Some(n) = newly_too_long {
            let client = self.client.clone();
            let uri = uri.clone();
            tokio::spawn(async move {
                let name = uri.rsplit('/').next().unwrap_or(&uri).to_string();
                let msg = format!(
                    "Laya: {name} has {n} characters; spelling is checked in documents of up to {MAX_CHECKED_CHARS}. \
                     Ghost text and completions still work."
                );
                client.show_message(MessageType::INFO, msg).await;
                if let Ok(url) = uri.parse::<Uri>() {
                    client.publish_diagnostics(url, vec![], None).await;
                }
            });
            return;
        }
        tokio::spawn(async move {
            let mut delay = delay_ms;
            loop {
                if delay > 0 {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                }
                // Debounce: an edit since this check was scheduled has scheduled its own.
                if docs.get(&uri).map(|d| d.doc.version()) != scheduled {
                    return;
                }
                // Interrupted by typing: try again after the next quiet spell.
                if check_once(&docs, &engine, &client, &settings, enc, &uri).await {
                    return;
                }
                delay = settings.debounce_ms.max(50);
            }
        });
    }

}

/// One spelling pass over a document; false when the engine stopped early for urgent work.
async fn check_once(docs: &DashMap<String, Doc>, engine: &Engine, client: &Client, settings: &Settings, enc: PositionEncoding, uri: &String) -> bool {
    {
        {
            let mut clear = false;
            let Some((version, paragraphs, keys, todo, repeated, ignored, last_edit)) = ({
                let Some(mut d) = docs.get_mut(uri) else { return true };
                if !settings.diagnostics || !settings.serves(&d.language) || d.doc.len_chars() > MAX_CHECKED_CHARS {
                    // Checks are off here now: what they published must not stay on screen.
                    clear = std::mem::take(&mut d.published);
                    d.checked.clear();
                    None
                } else {
                    let text = d.doc.text();
                    let mut paragraphs = paragraphs(&text);
                    let edited = paragraphs.iter().position(|p| (p.0..=p.0 + p.1.chars().count()).contains(&d.last_edit));
                    // The word being typed at the end of the document is not shown until it is
                    // finished (see below), so it is not checked either: a pause inside a word
                    // would score it as a misspelling against a dozen candidates for nothing.
                    // The paragraph goes without it, under a key of its own.
                    let mut cut = None;
                    if let Some(i) = edited.filter(|_| d.last_edit == d.doc.len_chars()) {
                        let p = &mut paragraphs[i];
                        let keep = p.1.trim_end_matches(laya_text::is_word_char).len();
                        if p.0 + p.1.chars().count() == d.last_edit && keep < p.1.len() {
                            p.1.truncate(keep);
                            cut = Some(i);
                        }
                    }
                    // A word spelled the same way more than once is meant (a name, a term): it is
                    // not a misspelling. It can still be a confused word ("their" for "there").
                    let counts = laya_decide::word_counts(&text);
                    let repeated: HashSet<String> = counts.into_iter().filter(|(_, n)| *n > 1).map(|(w, _)| w).collect();
                    let skip: HashSet<String> = repeated.union(&d.ignored).cloned().collect();
                    // Each paragraph's key, once: it reads the paragraph's words.
                    let keys: Vec<u64> = paragraphs
                        .iter()
                        .enumerate()
                        .map(|(i, p)| check_key(&p.1) ^ if cut == Some(i) { WORD_BEING_TYPED } else { 0 })
                        .collect();
                    let mut todo: Vec<(CheckText, u64, Vec<String>)> = vec![];
                    let mut queued = HashSet::new();
                    for (i, (p, &k)) in paragraphs.iter().zip(&keys).enumerate() {
                        if !d.checked.get(&k).is_some_and(|c| c.holds(&skip)) && queued.insert(k) {
                            // The edited paragraph is checked in the ghost text's window when
                            // that starts before it: on the document's cache, already filled.
                            let window = (edited == Some(i) && d.anchor <= p.0).then(|| d.doc.rope().slice(d.anchor..p.0).to_string());
                            todo.push((CheckText { text: p.1.clone(), window }, k, left_alone(&p.1, &skip)));
                        }
                    }
                    Some((d.doc.version(), paragraphs, keys, todo, repeated, d.ignored.clone(), d.last_edit))
                }
            }) else {
                if clear {
                    if let Ok(url) = uri.parse::<Uri>() {
                        client.publish_diagnostics(url, vec![], None).await;
                    }
                }
                return true;
            };
            let url: Uri = match uri.parse() {
                Ok(u) => u,
                Err(_) => return true,
            };
            let found = if todo.is_empty() {
                vec![]
            } else {
                match engine.ask(|reply| Job::Check { doc: uri.clone(), version, paragraphs: todo.iter().map(|t| t.0.clone()).collect(), ignored: ignored.clone(), repeated: repeated.clone(), asked: std::time::Instant::now(), reply }).await {
                    Ok(f) => f,
                    Err(JobError::Stale) => return true, // a newer edit checks again
                    Err(JobError::NoModel(m)) => {
                        tracing::debug!("spelling check waits: {m}");
                        return true;
                    }
                    Err(e) => {
                        tracing::warn!("spelling check failed: {e:?}");
                        return true;
                    }
                }
            };
            let complete = found.len() == todo.len();
            let diags = {
                let Some(mut d) = docs.get_mut(uri) else { return true };
                for ((_, k, left_alone), issues) in todo.into_iter().zip(found) {
                    d.checked.insert(k, Checked { left_alone, issues });
                }
                let live: HashSet<u64> = keys.iter().copied().collect();
                d.checked.retain(|h, _| live.contains(h));
                if d.doc.version() != version {
                    return true; // changed while we checked: the newer check publishes
                }
                let severity = settings.severity();
                let mut diags = vec![];
                for ((start_char, text), k) in paragraphs.iter().zip(&keys) {
                    let Some(c) = d.checked.get(k) else { continue };
                    for i in &c.issues {
                        let w = i.word.to_lowercase();
                        if ignored.contains(&w) || (i.kind == IssueKind::Misspelling && repeated.contains(&w)) {
                            continue;
                        }
                        let s = start_char + text[..i.start].chars().count();
                        let e = start_char + text[..i.end].chars().count();
                        if e == last_edit && i.kind == IssueKind::Misspelling && e == d.doc.len_chars().min(last_edit) {
                            continue; // still being typed at the end of the text
                        }
                        diags.push(diagnostic(&d.doc, enc, s, e, i, severity));
                    }
                }
                d.published = !diags.is_empty();
                diags
            };
            client.publish_diagnostics(url, diags, Some(version)).await;
            complete
        }
    }
}

impl Backend {
    /// After a line break typed (Enter), most clients ask for no ghost text: the next key, the
    /// first letter of a line or paragraph, would then find the document's cache behind by the
    /// line break and run two forwards (its prefill, then the word's first step). So the server
    /// asks the engine for that ghost text itself, shown to no one: the engine runs it when it
    /// is free, and then works out the likeliest first letters while idle, as after any key. A
    /// newer key, the server's or the client's, supersedes it in the queue; a client that asks
    /// right after Enter finds the cache warm.
    fn warm_after_line_break(&self, uri: &str, cursor: usize) {
        let s = self.settings();
        let Some(mut d) = self.docs.get_mut(uri) else { return };
        if !(s.ghost_text && s.work_ahead && s.serves(&d.language)) {
            return;
        }
        self.window_to(&mut d, cursor);
        let before = d.doc.rope().slice(d.anchor..cursor).to_string();
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.engine.send(ghost_job(&s, uri, d.doc.version(), before, after_cursor(&d, cursor), check_from(&s, &d, cursor), tx));
        // The answer is not shown; the receiver only has to outlive the job (a closed reply
        // would tell the engine nobody wants it).
        tokio::spawn(async move {
            let _ = rx.await;
        });
    }

    async fn ghost_items(&self, params: InlineCompletionParams) -> Result<Option<InlineCompletionResponse>> {
        let s = self.settings();
        let uri = key(&params.text_document_position.text_document.uri);
        let pos = params.text_document_position.position;
        let enc = self.enc();
        let (version, before, after, cursor, replace_from, prefix, check_from) = {
            let Some(mut d) = self.docs.get_mut(&uri) else {
                return Err(Error::invalid_params(format!("{uri} is not open")));
            };
            if !s.ghost_text || !s.serves(&d.language) {
                return Ok(None);
            }
            let cursor = d.doc.offset_of(to_pos(pos), enc);
            let automatic = params.context.trigger_kind == InlineCompletionTriggerKind::AUTOMATIC;
            if automatic && params.context.selected_completion_info.is_none() {
                if let Some(sh) = d.shown.as_ref().filter(|sh| sh.cursor() == cursor && sh.opts == ghost_opts(&s)) {
                    // The writer is typing what the last suggestion said: its rest is what the
                    // model would say again, when that is known without it.
                    if let TypedThrough::Shows(g) = laya_decide::typed_through(&sh.ghost, &sh.typed, &sh.opts) {
                        let items = if d.rejected.contains(&(cursor, g.insert.clone())) {
                            vec![]
                        } else {
                            vec![InlineCompletionItem { insert_text: g.insert, filter_text: None, range: None, command: None, insert_text_format: None }]
                        };
                        return Ok(Some(InlineCompletionResponse::List(InlineCompletionList { items })));
                    }
                }
            }
            let (from, prefix) = match &params.context.selected_completion_info {
                // A completion item is selected in the editor's menu: continue as if it were typed.
                // It is a whole word, and the ghost text must add to it: the next words, after a
                // space.
                Some(sel) => {
                    let text = if sel.text.ends_with(laya_text::is_word_char) { format!("{} ", sel.text) } else { sel.text.clone() };
                    (d.doc.offset_of(to_pos(sel.range.start), enc), text)
                }
                None => (cursor, String::new()),
            };
            self.window_to(&mut d, from);
            let before = format!("{}{prefix}", d.doc.rope().slice(d.anchor..from));
            let after = after_cursor(&d, cursor);
            let check_from = if prefix.is_empty() { check_from(&s, &d, cursor) } else { None };
            (d.doc.version(), before, after, cursor, from, prefix, check_from)
        };
        let invoked = params.context.trigger_kind == InlineCompletionTriggerKind::INVOKED;
        let g = self.engine.ask(|reply| ghost_job(&s, &uri, version, before.clone(), after, check_from, reply)).await;
        let g = match g {
            Ok(g) => g,
            Err(JobError::NoModel(_) | JobError::Late) => return Ok(None), // nothing to show (yet, or any more)
            Err(e) => return Err(job_error(e)),
        };
        let mut items = vec![];
        let Some(mut d) = self.docs.get_mut(&uri) else { return Ok(None) };
        if d.doc.version() != version {
            return Err(job_error(JobError::Stale));
        }
        if let Some(g) = g {
            if !d.rejected.contains(&(cursor, g.insert.clone())) {
                let (start_char, text) = replacement(&before, &prefix, replace_from, g.replace, &g.insert);
                let range = Range::new(from_pos(d.doc.position_of(start_char, enc)), pos);
                let full = if g.replace > 0 || !prefix.is_empty() { Some(range) } else { None };
                d.shown = Some(Shown { at: cursor, ghost: g.clone(), opts: ghost_opts(&s), typed: String::new(), since: std::time::Instant::now() });
                items.push(InlineCompletionItem { insert_text: text, filter_text: None, range: full, command: None, insert_text_format: None });
            }
        }
        drop(d);
        if invoked && prefix.is_empty() {
            // Asked for explicitly: alternatives too.
            if let Ok(more) = self.engine.ask(|reply| Job::Complete { doc: uri.clone(), version, before: before.clone(), n: 3, check_from: None, deadline: std::time::Instant::now() + Duration::from_millis(s.latency_budget_ms), reply }).await {
                for sug in more {
                    if sug.insert.is_empty() || items.iter().any(|i| i.insert_text == sug.insert) {
                        continue;
                    }
                    items.push(InlineCompletionItem { insert_text: sug.insert, filter_text: None, range: None, command: None, insert_text_format: None });
                }
            }
        }
        Ok(Some(InlineCompletionResponse::List(InlineCompletionList { items })))
    }

    pub async fn inline_completion(&self, params: InlineCompletionParams) -> Result<Option<InlineCompletionResponse>> {
        self.ghost_items(params).await
    }

    pub async fn rank(&self, params: RankParams) -> Result<Value> {
        if params.candidates.is_empty() {
            return Err(Error::invalid_params("candidates is empty"));
        }
        if params.context.is_empty() {
            return Err(Error::invalid_params("context is empty"));
        }
        let ranked = self
            .engine
            .ask(|reply| Job::Rank { context: params.context.clone(), candidates: params.candidates.clone(), reply })
            .await
            .map_err(job_error)?;
        Ok(json!({
            "ranked": ranked.iter().map(|r| json!({"candidate": r.candidate, "index": r.index, "logprob": r.logprob, "tokens": r.tokens})).collect::<Vec<_>>()
        }))
    }

    /// The server's copy of a document (for tests and for checking sync from a client).
    pub async fn document_text(&self, params: TextDocumentIdentifier) -> Result<Value> {
        let d = self.docs.get(&key(&params.uri)).ok_or_else(|| Error::invalid_params(format!("{} is not open", params.uri.as_str())))?;
        Ok(json!({"version": d.doc.version(), "text": d.doc.text()}))
    }

    pub async fn stats(&self) -> Result<Value> {
        let s = self.engine.ask(|reply| Job::Stats { reply }).await.map_err(job_error)?;
        let state = self.model_state.read().map(|s| s.clone()).unwrap_or(ModelState::Loading);
        Ok(json!({
            "model_state": match state { ModelState::Loading => "loading".to_string(), ModelState::Ready(_) => "ready".into(), ModelState::Failed(m) => format!("failed: {m}") },
            "engine": s,
            "documents_open": self.docs.len(),
            "reanchors": self.reanchors.load(std::sync::atomic::Ordering::Relaxed),
        }))
    }

    fn add_word(&self, word: &str) -> std::result::Result<(), String> {
        let s = self.settings();
        if let Some(path) = s.dictionary() {
            super::settings::append_word_atomically(&path, word)?;
        }
        self.engine.send(Job::AddWords { words: vec![word.to_string()] });
        for mut d in self.docs.iter_mut() {
            d.checked.clear();
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
pub struct RankParams {
    pub context: String,
    pub candidates: Vec<String>,
}

/// Paragraphs of a text (runs of non-blank lines): (first char index, text).
/// The text after the cursor on its line (at most AFTER_MAX characters): what ghost text must fit.
fn after_cursor(d: &Doc, cursor: usize) -> String {
    let rope = d.doc.rope();
    let line_end = d.doc.line_range(rope.char_to_line(cursor)).map_or(cursor, |r| r.end);
    rope.slice(cursor..line_end.max(cursor).min(cursor + AFTER_MAX)).to_string()
}

/// The ghost-text job for `before` (the window up to the cursor), with the user's settings.
fn ghost_job(s: &Settings, uri: &str, version: i32, before: String, after: String, check_from: Option<usize>, reply: Reply<Option<Ghost>>) -> Job {
    Job::Ghost {
        doc: uri.to_string(),
        version,
        before,
        after,
        opts: ghost_opts(s),
        ahead: s.work_ahead,
        check_from,
        deadline: std::time::Instant::now() + Duration::from_millis(s.latency_budget_ms),
        reply,
    }
}

/// Where the paragraph holding char `cursor` starts in the text of `d`'s window (a byte offset
/// from its anchor), when the engine may score that paragraph's settled words ahead of its
/// spelling check: work ahead and spelling checks are on, and the check will run in the window.
fn check_from(s: &Settings, d: &Doc, cursor: usize) -> Option<usize> {
    if !(s.work_ahead && s.diagnostics) || d.doc.len_chars() > MAX_CHECKED_CHARS {
        return None;
    }
    paragraph_start(&d.doc, cursor).filter(|p| d.anchor <= *p).map(|p| d.doc.rope().slice(d.anchor..p).len_bytes())
}

/// Char index where the paragraph holding char `at` starts (as [`paragraphs`] splits them), or
/// None when `at` is on a blank line.
fn paragraph_start(doc: &Document, at: usize) -> Option<usize> {
    let rope = doc.rope();
    let blank = |l: usize| rope.line(l).chars().all(char::is_whitespace);
    let mut line = rope.char_to_line(at);
    if blank(line) {
        return None;
    }
    while line > 0 && !blank(line - 1) {
        line -= 1;
    }
    Some(rope.line_to_char(line))
}

fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    let mut cur: Option<(usize, String)> = None;
    let mut at = 0usize;
    for line in text.split_inclusive('\n') {
        let n = line.chars().count();
        if line.trim().is_empty() {
            if let Some(p) = cur.take() {
                out.push(p);
            }
        } else {
            match &mut cur {
                Some((_, t)) => t.push_str(line),
                None => cur = Some((at, line.to_string())),
            }
        }
        at += n;
    }
    out.extend(cur);
    out
}

fn diagnostic(doc: &Document, enc: PositionEncoding, s: usize, e: usize, i: &Issue, severity: DiagnosticSeverity) -> Diagnostic {
    let range = Range::new(from_pos(doc.position_of(s, enc)), from_pos(doc.position_of(e, enc)));
    let sugg: Vec<String> = i.suggestions.iter().take(5).map(|c| c.word.clone()).collect();
    let message = match (i.kind, sugg.first()) {
        (IssueKind::Misspelling, Some(b)) => format!("\"{}\" may be misspelled: {b}?", i.word),
        (IssueKind::Misspelling, None) => format!("\"{}\" is not in the dictionary", i.word),
        (IssueKind::RealWord, Some(b)) => format!("\"{}\" may be the wrong word here: {b}?", i.word),
        (IssueKind::RealWord, None) => format!("\"{}\" may be the wrong word here", i.word),
        (IssueKind::Repeated, _) => format!("\"{}\" is typed twice", i.word.trim_start()),
    };
    Diagnostic {
        range,
        severity: Some(severity),
        code: Some(NumberOrString::String(match i.kind {
            IssueKind::Misspelling => "misspelling".into(),
            IssueKind::RealWord => "confused-word".into(),
            IssueKind::Repeated => CODE_REPEATED.into(),
        })),
        source: Some("laya".into()),
        message,
        data: Some(json!({"word": i.word, "suggestions": sugg})),
        ..Default::default()
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        if let Some(opts) = params.initialization_options {
            match Settings::from_value(&opts) {
                Ok(s) => {
                    if let Ok(mut cur) = self.settings.write() {
                        *cur = s;
                    }
                }
                Err(e) => return Err(Error::invalid_params(format!("initializationOptions: {e}"))),
            }
        }
        self.engine.send(Job::SetBudget { bytes: self.settings().budget_bytes() });
        let s = self.settings();
        if let Some(path) = s.dictionary() {
            match super::settings::read_words(&path) {
                Ok(words) => self.engine.send(Job::SetUserWords { words }),
                Err(e) if s.user_dictionary.is_some() => return Err(Error::invalid_params(format!("userDictionary: {e}"))),
                Err(e) => tracing::warn!("the default user dictionary: {e}"),
            }
        }
        let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        self.progress_ok.store(progress, std::sync::atomic::Ordering::Release);
        let versioned = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false);
        self.versioned_edits_ok.store(versioned, std::sync::atomic::Ordering::Release);
        // Position encodings: UTF-8 or UTF-32 when offered (cheaper than UTF-16), else UTF-16.
        let offered: Vec<PositionEncodingKind> =
            params.capabilities.general.and_then(|g| g.position_encodings).unwrap_or_default();
        let (enc, kind) = if offered.contains(&PositionEncodingKind::UTF8) {
            (PositionEncoding::Utf8, PositionEncodingKind::UTF8)
        } else if offered.contains(&PositionEncodingKind::UTF32) {
            (PositionEncoding::Utf32, PositionEncodingKind::UTF32)
        } else {
            (PositionEncoding::Utf16, PositionEncodingKind::UTF16)
        };
        if let Ok(mut e) = self.encoding.write() {
            *e = enc;
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(kind),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                })),
                completion_provider: Some(CompletionOptions { resolve_provider: Some(false), ..Default::default() }),
                inline_completion_provider: Some(OneOf::Left(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                    ..Default::default()
                })),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![CMD_ADD_WORD.into(), CMD_IGNORE.into()],
                    ..Default::default()
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo { name: "laya".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.spawn_load();
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let td = params.text_document;
        let uri = key(&td.uri);
        self.engine.versions.insert(uri.clone(), td.version);
        let len = td.text.chars().count();
        self.docs.insert(
            uri.clone(),
            Doc {
                doc: Document::new(&td.text, td.version),
                language: td.language_id,
                ignored: HashSet::new(),
                anchor: 0,
                checked: HashMap::new(),
                shown: None,
                rejected: HashSet::new(),
                last_edit: len + 1,
                too_long: false,
                published: false,
            },
        );
        self.schedule_check(uri, 0);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        // Applied before any .await: handlers may run concurrently, but each starts in order.
        let uri = key(&params.text_document.uri);
        let version = params.text_document.version;
        let enc = self.enc();
        let mut line_break_at = None;
        {
            let Some(mut d) = self.docs.get_mut(&uri) else {
                tracing::warn!("didChange for a document that is not open");
                return;
            };
            if let Err(e) = d.doc.check_version(version) {
                // The client applied these changes to its copy in this order: so do we.
                tracing::warn!("didChange: {e}; applying it anyway to stay in sync");
            }
            for ch in params.content_changes {
                let edit = match d.doc.apply_change(ch.range.map(|r| laya_text::Range::new(to_pos(r.start), to_pos(r.end))), &ch.text, enc) {
                    Ok(e) => e,
                    Err(e) => {
                        tracing::error!("didChange could not be applied: {e}");
                        continue;
                    }
                };
                d.anchor = edit.map_char(d.anchor);
                d.last_edit = edit.new_end_char;
                line_break_at = (edit.removed_chars() == 0 && ch.text.ends_with('\n')).then_some(edit.new_end_char);
                // Typing what a shown ghost text says keeps the rest of it on show; typing
                // something else rejects it there.
                if let Some(mut sh) = d.shown.take() {
                    let at = sh.cursor();
                    if edit.start_char == at && edit.removed_chars() == 0 && !ch.text.is_empty() {
                        match sh.rest().strip_prefix(ch.text.as_str()) {
                            Some(rest) if !rest.is_empty() => {
                                sh.typed.push_str(&ch.text);
                                d.shown = Some(sh);
                            }
                            Some(_) => {}
                            None if sh.since.elapsed() >= REJECTED_AFTER => {
                                let rest = sh.rest().to_string();
                                d.rejected.insert((at, rest));
                            }
                            None => {}
                        }
                    }
                }
                // Rejections after the edit move with the text they were made at.
                let (start, old_end, new_end) = (edit.start_char, edit.start_char + edit.removed_chars(), edit.new_end_char);
                if d.rejected.iter().any(|(at, _)| *at > start) {
                    d.rejected = std::mem::take(&mut d.rejected)
                        .into_iter()
                        .filter_map(|(at, t)| match at {
                            at if at <= start => Some((at, t)),
                            at if at >= old_end => Some((at - old_end + new_end, t)),
                            _ => None, // its text was replaced
                        })
                        .collect();
                }
                if d.rejected.len() > 256 {
                    d.rejected.clear();
                }
            }
            let newest = version.max(d.doc.version());
            d.doc.set_version(newest);
        }
        self.engine.versions.insert(uri.clone(), version);
        if let Some(cursor) = line_break_at {
            self.warm_after_line_break(&uri, cursor);
        }
        self.schedule_check(uri, self.settings().debounce_ms);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = key(&params.text_document.uri);
        self.docs.remove(&uri);
        self.engine.versions.remove(&uri);
        self.engine.send(Job::Close { doc: uri });
        self.client.publish_diagnostics(params.text_document.uri, vec![], None).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        // Keys given override the current settings; keys left out keep theirs (Zed sends `{}`
        // right after start-up, which must not undo the initializationOptions).
        let v = params.settings.get("laya").cloned().unwrap_or(params.settings);
        if !v.is_object() {
            // `null` (a client that only says "something changed"): nothing to apply.
            tracing::debug!("didChangeConfiguration without settings: kept the current ones");
            return;
        }
        let merged = match (serde_json::to_value(self.settings()), v) {
            (Ok(Value::Object(mut cur)), Value::Object(new)) => {
                for (k, val) in new {
                    if val.is_null() {
                        cur.remove(&k);
                    } else {
                        cur.insert(k, val);
                    }
                }
                Value::Object(cur)
            }
            (_, other) => other,
        };
        match Settings::from_value(&merged) {
            Ok(new) => {
                let old = self.settings();
                let reload = new.model_path != old.model_path || new.lexicon_path != old.lexicon_path;
                if let Ok(mut cur) = self.settings.write() {
                    *cur = new.clone();
                }
                self.engine.send(Job::SetBudget { bytes: new.budget_bytes() });
                // The dictionary is read again (another file, or this one edited by hand): its
                // words replace the ones known before.
                if let Some(path) = new.dictionary() {
                    match super::settings::read_words(&path) {
                        Ok(words) => self.engine.send(Job::SetUserWords { words }),
                        Err(e) => self.client.show_message(MessageType::ERROR, format!("Laya settings: userDictionary: {e}")).await,
                    }
                }
                if reload {
                    self.spawn_load();
                }
                self.recheck_all();
            }
            Err(e) => self.client.show_message(MessageType::ERROR, format!("Laya settings: {e}")).await,
        }
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let s = self.settings();
        let uri = key(&params.text_document_position.text_document.uri);
        let pos = params.text_document_position.position;
        let enc = self.enc();
        // A request without a context is an explicit one: Neovim's `vim.lsp.omnifunc` (0.7-0.10,
        // bound to a key) and `buf_request_sync` send none. Emacs eglot always sends Invoked (1),
        // Helix Invoked for its own and its idle requests (which need two letters of a word
        // typed); only a trigger character (2) or a re-request of an incomplete list (3, as the
        // writer types on in a word) is the client asking by itself.
        let invoked = params.context.as_ref().is_none_or(|c| c.trigger_kind == CompletionTriggerKind::INVOKED);
        let (version, before, word_start, at_line_end, check_from) = {
            let Some(mut d) = self.docs.get_mut(&uri) else {
                return Err(Error::invalid_params(format!("{uri} is not open")));
            };
            if !s.completion || !s.serves(&d.language) {
                return Ok(None);
            }
            let cursor = d.doc.offset_of(to_pos(pos), enc);
            self.window_to(&mut d, cursor);
            let before = d.doc.rope().slice(d.anchor..cursor).to_string();
            let word = last_word(&before).to_string();
            let n = word.chars().count();
            // Next words after a space only when asked for: clients ask by themselves as a word
            // is typed (and say "invoked" then too), never after a space.
            if !invoked && n == 0 {
                return Ok(None);
            }
            let line = d.doc.rope().char_to_line(cursor);
            let line_end = d.doc.line_range(line).map_or(cursor, |r| r.end);
            let at_line_end = d.doc.rope().slice(cursor..line_end.max(cursor)).chars().all(char::is_whitespace);
            (d.doc.version(), before, cursor - n, at_line_end, check_from(&s, &d, cursor))
        };
        if !laya_text::is_prose_at(&before, before.len()) {
            return Ok(None);
        }
        let r = self
            .engine
            .ask(|reply| Job::Complete {
                doc: uri.clone(),
                version,
                before: before.clone(),
                n: 5,
                check_from,
                deadline: std::time::Instant::now() + Duration::from_millis(s.latency_budget_ms),
                reply,
            })
            .await;
        let sugg = match r {
            Ok(s) => s,
            Err(JobError::NoModel(_) | JobError::Late) => return Ok(None), // nothing to show (yet, or any more)
            Err(e) => return Err(job_error(e)),
        };
        // A word that reads as finished, at the end of a line, gets no menu however the request
        // came: the Enter that follows is meant for a new line, not for "there" after "the".
        // Finished: the model finds the word as typed likelier than any longer one ("the"), not
        // a word's beginning that happens to be one too ("Pa" before "Paris").
        let typed = last_word(&before);
        if at_line_end && !typed.is_empty() {
            let own = sugg.iter().find(|x| x.kind == SuggestionKind::CompleteWord && x.word == typed).map(|x| x.logprob);
            let longer = sugg.iter().filter(|x| x.kind == SuggestionKind::CompleteWord && x.word != typed).map(|x| x.logprob).fold(f32::NEG_INFINITY, f32::max);
            if own.is_some_and(|o| o >= longer) {
                return Ok(None);
            }
        }
        let Some(d) = self.docs.get(&uri) else { return Ok(None) };
        let start = from_pos(d.doc.position_of(word_start, enc));
        let items: Vec<CompletionItem> = sugg
            .iter()
            .enumerate()
            // Inside a word, the rest of it (not the word as typed: accepting it would do
            // nothing but eat a key); after a space, the next word.
            .filter(|(_, x)| match typed {
                "" => x.kind == SuggestionKind::NextWord,
                typed => x.kind == SuggestionKind::CompleteWord && x.word != typed,
            })
            .map(|(i, x)| {
                let (range, text) = match x.kind {
                    SuggestionKind::CompleteWord => (Range::new(start, pos), x.word.clone()),
                    SuggestionKind::NextWord => (Range::new(pos, pos), x.insert.clone()),
                };
                CompletionItem {
                    label: x.word.clone(),
                    kind: Some(CompletionItemKind::TEXT),
                    detail: Some(format!("{:.0}%", 100.0 * x.logprob.exp())),
                    sort_text: Some(format!("{i:02}")),
                    filter_text: Some(x.word.clone()),
                    preselect: Some(false),
                    text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text: text })),
                    ..Default::default()
                }
            })
            .collect();
        Ok(Some(CompletionResponse::List(CompletionList { is_incomplete: true, items })))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri.clone();
        let enc = self.enc();
        let versioned = self.versioned_edits_ok.load(std::sync::atomic::Ordering::Acquire);
        let mut out: Vec<CodeActionOrCommand> = vec![];
        for diag in params.context.diagnostics.iter().filter(|d| d.source.as_deref() == Some("laya")) {
            let Some(data) = &diag.data else { continue };
            let word = data["word"].as_str().unwrap_or_default().to_string();
            // A fix replaces the flagged word only while that word is still what the range holds
            // (a diagnostic from before an edit elsewhere on the line would overwrite other text).
            let version = {
                let Some(d) = self.docs.get(&key(&uri)) else { continue };
                let (s, e) = (d.doc.offset_of(to_pos(diag.range.start), enc), d.doc.offset_of(to_pos(diag.range.end), enc));
                if s > e || d.doc.rope().slice(s..e) != word.as_str() {
                    continue;
                }
                d.doc.version()
            };
            let suggestions: Vec<String> =
                data["suggestions"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect();
            let repeated = diag.code == Some(NumberOrString::String(CODE_REPEATED.into()));
            for (i, s) in suggestions.iter().enumerate() {
                let te = TextEdit { range: diag.range, new_text: s.clone() };
                // Versioned where the client takes it: an edit for an older text is refused there.
                let edit = if versioned {
                    WorkspaceEdit {
                        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                            text_document: OptionalVersionedTextDocumentIdentifier { uri: uri.clone(), version: Some(version) },
                            edits: vec![OneOf::Left(te)],
                        }])),
                        ..Default::default()
                    }
                } else {
                    WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), vec![te])])), ..Default::default() }
                };
                let title = if repeated { format!("Delete the second \"{}\"", word.trim_start()) } else { format!("Replace with \"{s}\"") };
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diag.clone()]),
                    edit: Some(edit),
                    is_preferred: Some(i == 0),
                    ..Default::default()
                }));
            }
            if repeated {
                continue; // a word typed twice is no word to add to a dictionary
            }
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Add \"{word}\" to the dictionary"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diag.clone()]),
                command: Some(Command::new(format!("Add \"{word}\" to the dictionary"), CMD_ADD_WORD.into(), Some(vec![json!(word)]))),
                ..Default::default()
            }));
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Ignore \"{word}\" in this document"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diag.clone()]),
                command: Some(Command::new(
                    format!("Ignore \"{word}\" in this document"),
                    CMD_IGNORE.into(),
                    Some(vec![json!(uri.as_str()), json!(word)]),
                )),
                ..Default::default()
            }));
        }
        Ok(Some(out))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let args = params.arguments;
        match params.command.as_str() {
            CMD_ADD_WORD => {
                let word = args.first().and_then(|v| v.as_str()).ok_or_else(|| Error::invalid_params("expected [word]"))?;
                if word.is_empty() || word.len() > 100 || word.contains(char::is_whitespace) {
                    return Err(Error::invalid_params("a dictionary word is one word of at most 100 bytes"));
                }
                self.add_word(word).map_err(|e| Error { code: ErrorCode::InternalError, message: e.into(), data: None })?;
            }
            CMD_IGNORE => {
                let (Some(uri), Some(word)) = (args.first().and_then(|v| v.as_str()), args.get(1).and_then(|v| v.as_str())) else {
                    return Err(Error::invalid_params("expected [uri, word]"));
                };
                let Some(mut d) = self.docs.get_mut(uri) else {
                    return Err(Error::invalid_params(format!("{uri} is not open")));
                };
                d.ignored.insert(word.to_lowercase());
            }
            other => return Err(Error::invalid_params(format!("unknown command {other}"))),
        }
        self.recheck_all();
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_window_depends_on_the_text_and_the_cursor_alone() {
        let sentence = "The quick brown fox jumps over the lazy dog again. ";
        let doc = Document::new(&sentence.repeat(100), 1);
        let len = doc.len_chars();
        assert_eq!(window_start(&doc, WINDOW_MAX), 0, "a short text is read whole");
        let mut moves = 0;
        let mut last = 0;
        for to in (WINDOW_MAX..len).step_by(7) {
            let start = window_start(&doc, to);
            assert!(to - start >= WINDOW_MIN.min(to) && to - start <= WINDOW_MAX + sentence.len(), "{to}: {start}");
            assert_eq!(doc.sentence_start_before(start), start, "{to}: starts a sentence");
            moves += usize::from(start != last);
            last = start;
        }
        assert!(moves <= (len - WINDOW_MAX) / WINDOW_STEP + 1, "it moves once a step, not at every key: {moves}");
        // A line with no sentence start in reach: after a space near the grid point.
        let doc = Document::new(&"word ".repeat(1000), 1);
        let start = window_start(&doc, 4000);
        assert!((WINDOW_MIN..=WINDOW_MAX).contains(&(4000 - start)), "{start}");
        assert_eq!(doc.rope().char(start - 1), ' ');
    }

    #[test]
    fn an_inline_item_replaces_only_what_its_suggestion_replaces() {
        // No selected completion: "Please seperat|" -> "separate" over the typed word.
        assert_eq!(replacement("Please seperat", "", 14, 7, "separate"), (7, "separate".into()));
        // A plain continuation: nothing replaced, inserted at the cursor.
        assert_eq!(replacement("I went to the ", "", 14, 0, "store"), (14, "store".into()));
        // A selected completion "seperat" over "sep|" (from = 4): the suggestion corrects the
        // selected text, so the item is the correction alone, from the selection's start.
        assert_eq!(replacement("Yes seperat", "seperat", 4, 7, "separate"), (4, "separate".into()));
        // It corrects only the end of the selected text: the rest of the selection stays.
        assert_eq!(replacement("Yes the", "the", 4, 0, " end"), (4, "the end".into()));
        assert_eq!(replacement("Yes thx", "thx", 4, 1, "e"), (4, "the".into()));
        // It reaches back past the selection into the document ("a selected" -> ...).
        assert_eq!(replacement("I écrit x", "x", 8, 3, "yz"), (6, "yz".into()));
    }
}
