//! The LSP front's state: open documents (ropes, context windows, what was shown), settings,
//! the model's state, and the helpers every handler shares. It never touches the model: every
//! decision is a job for the inference thread (laya-engine). The handlers are in handlers/, one
//! file per LSP method or family; conversions in proto.rs; spelling checks in diagnostics.rs.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use dashmap::DashMap;
use laya_decide::{Ghost, GhostOptions, Recall, RecallOptions};
use laya_engine::{Engine, Job, JobError};
use laya_text::{Document, PositionEncoding};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::Client;

use super::diagnostics::Checked;
use super::settings::Settings;

/// Characters of context the model sees before the cursor, from MIN to MAX: see
/// [`Document::window_start`].
const WINDOW_MIN: usize = 600;
const WINDOW_MAX: usize = 1500;
/// Documents longer than this many characters are kept in sync and get ghost text and
/// completions, but no spelling diagnostics: a check reads the whole document (paragraph
/// hashes, repeated words), which would hold up every other document for a 20 MB file.
pub const MAX_CHECKED_CHARS: usize = 2_000_000;
/// How much of the rest of the line a suggestion looks at.
pub(crate) const AFTER_MAX: usize = 200;

/// Characters before the cursor whose words ghost text recalls (a bound on the cost of
/// counting them again after an edit behind them).
const RECALL_CHARS: usize = 200_000;

pub const CMD_ADD_WORD: &str = "laya.addToDictionary";
pub const CMD_IGNORE: &str = "laya.ignoreInDocument";

pub(crate) struct Doc {
    pub(crate) doc: Document,
    pub(crate) language: String,
    /// Words the user chose to ignore in this document (lower case).
    pub(crate) ignored: HashSet<String>,
    /// Char index where the model's context window starts: the last [`Document::window_start`], a
    /// function of the text and the cursor (kept for the check of the edited paragraph, which
    /// runs in the same window).
    pub(crate) anchor: usize,
    /// Issues of each paragraph text already checked (by hash of the text). Rule: keyed by the
    /// text and the words left alone, so a result stands exactly while what it read does.
    pub(crate) checked: HashMap<u64, Checked>,
    /// How many times `checked` was emptied because the words a check leaves alone changed (the
    /// user dictionary, a word ignored). Rule: a check asked before the count moved neither
    /// stores nor publishes what it found; the check scheduled with the change does.
    pub(crate) resets: u64,
    /// The last ghost text answered, and what the writer has typed of it since. Rule: it
    /// answers a later request itself only where the model would answer the same
    /// ([`laya_decide::typed_through`]), so a client that asks at every key and one that asks
    /// once after a burst see the same ghost text for the same text and cursor.
    pub(crate) shown: Option<Shown>,
    /// Ghost texts the writer typed past (cursor char index, text): not shown there again.
    /// Rule: only a suggestion that stood on screen for REJECTED_AFTER before the writer typed
    /// something else is rejected; one a fast typist typed over as it appeared was never read,
    /// and whether a client happened to ask for it must not hide it later.
    pub(crate) rejected: HashSet<(usize, String)>,
    /// The same turn-downs by kind of place (the word before, the word suggested): twice turned
    /// down, a suggestion is held back at every such place unless the model is nearly certain
    /// (see [`laya_decide::Rejections`]). Rule: a function of the turn-downs, like `rejected`.
    pub(crate) turned_down: laya_decide::Rejections,
    /// Char index just after the last edit. Rule: a misspelling that ends there is the word
    /// being typed and is not flagged until the writer moves past it (an edit elsewhere counts
    /// as moving past it); at the end of the text it is not even checked.
    pub(crate) last_edit: usize,
    /// The words of the text before the cursor (see [`Inner::document_words`]), counted up to
    /// char `recalled_to`. Rule: a function of the text before `recalled_to`; an edit before it
    /// empties it, and it is counted again.
    pub(crate) recall: Arc<Recall>,
    pub(crate) recalled_to: usize,
    /// Over MAX_CHECKED_CHARS: not checked (the writer was told once).
    pub(crate) too_long: bool,
    /// Diagnostics are on screen for it (to clear when checks are turned off).
    pub(crate) published: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ModelState {
    Loading,
    Ready(String),
    Failed(String),
}

/// The service's state, shared with the tasks it spawns (model loading, spelling checks).
pub struct Inner {
    pub(crate) client: Client,
    pub(crate) engine: Engine,
    pub(crate) docs: Arc<DashMap<String, Doc>>,
    pub(crate) settings: Arc<RwLock<Settings>>,
    pub(crate) encoding: RwLock<PositionEncoding>,
    pub(crate) model_state: Arc<RwLock<ModelState>>,
    /// Times a context window moved (its new start prefilled again).
    pub(crate) reanchors: std::sync::atomic::AtomicU64,
    /// Whether the client takes `window/workDoneProgress/create`.
    pub(crate) progress_ok: std::sync::atomic::AtomicBool,
    /// Whether the client takes versioned edits (`documentChanges`) in a workspace edit.
    pub(crate) versioned_edits_ok: std::sync::atomic::AtomicBool,
    /// The workspace's folders (from `initialize`) and the words its code uses, once scanned
    /// (see `workspace.rs`): left alone like a word the document repeats.
    pub(crate) roots: RwLock<Vec<std::path::PathBuf>>,
    pub(crate) workspace_words: RwLock<Arc<HashSet<String>>>,
    /// The prose of the workspace's prose files, for ghost text to recall.
    pub(crate) workspace_recall: RwLock<Arc<Recall>>,
}

/// The word (or the part of one) that `before` ends with.
pub(crate) fn last_word(before: &str) -> &str {
    let start = before.char_indices().rev().take_while(|&(_, c)| laya_text::is_word_char(c)).last().map_or(before.len(), |(i, _)| i);
    &before[start..]
}

/// How long a ghost text must have been on show before typing something else rejects it: about
/// the time it takes to read a word (a fast typist's keys come every 40-100 ms).
pub(crate) const REJECTED_AFTER: Duration = Duration::from_millis(300);

/// The last ghost text answered for a document.
pub(crate) struct Shown {
    /// Char index of the cursor it was answered at.
    pub(crate) at: usize,
    pub(crate) ghost: Ghost,
    pub(crate) opts: GhostOptions,
    /// What the writer typed at `at` since, all of it a prefix of the suggestion.
    pub(crate) typed: String,
    /// When it was answered (the client shows it from about then).
    pub(crate) since: std::time::Instant,
}

impl Shown {
    /// Char index of the cursor after what was typed of it.
    pub(crate) fn cursor(&self) -> usize {
        self.at + self.typed.chars().count()
    }

    /// The text on show now at [`Shown::cursor`].
    pub(crate) fn rest(&self) -> &str {
        self.ghost.insert.strip_prefix(self.typed.as_str()).unwrap_or_default()
    }
}

/// The text of a document before char `at`: enough of it to tell the word before the cursor.
pub(crate) fn text_before(d: &Doc, at: usize) -> String {
    let at = at.min(d.doc.len_chars());
    d.doc.rope().slice(at.saturating_sub(200)..at).to_string()
}

/// The ghost options of the user's settings.
pub(crate) fn ghost_opts(s: &Settings) -> GhostOptions {
    let d = GhostOptions::default();
    GhostOptions { threshold: s.threshold, recall: s.recall.then(RecallOptions::default), ..d }
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
            roots: RwLock::new(vec![]),
            workspace_words: RwLock::new(Arc::new(HashSet::new())),
            workspace_recall: RwLock::new(Arc::new(Recall::new())),
        }))
    }

    /// Loads the model in the background: handlers keep running (text sync must not wait).
    pub(crate) fn spawn_load(&self) {
        let inner = self.0.clone();
        tokio::spawn(async move { inner.load_model().await });
    }

    /// Reads the workspace's code words on a thread of its own, then checks the open documents
    /// again with them.
    pub(crate) fn spawn_workspace_scan(&self) {
        let roots = self.roots.read().map(|r| r.clone()).unwrap_or_default();
        if roots.is_empty() {
            return;
        }
        let inner = self.0.clone();
        tokio::spawn(async move {
            let Ok(v) = tokio::task::spawn_blocking(move || crate::serve::workspace::scan(&roots)).await else { return };
            tracing::info!(files = v.files, bytes = v.bytes, words = v.words.len(), truncated = v.truncated, "workspace read");
            if let Ok(mut w) = inner.workspace_words.write() {
                *w = Arc::new(v.words);
            }
            if let Ok(mut w) = inner.workspace_recall.write() {
                *w = Arc::new(v.recall);
            }
            inner.recheck_all();
        });
    }
}

impl Inner {
    pub(crate) fn settings(&self) -> Settings {
        self.settings.read().map(|s| s.clone()).unwrap_or_default()
    }

    pub(crate) fn enc(&self) -> PositionEncoding {
        self.encoding.read().map(|e| *e).unwrap_or(PositionEncoding::Utf16)
    }

    /// Loads the model on the inference thread, reporting progress; on failure says why and
    /// keeps serving what needs no model.
    pub(crate) async fn load_model(&self) {
        let s = self.settings();
        if let Ok(mut st) = self.model_state.write() {
            *st = ModelState::Loading;
        }
        // The job goes first: a client slow to answer the progress request must not delay it.
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.engine.send(Job::Load {
            model: s.model_path.clone(),
            multilingual: s.multilingual_model_path.clone(),
            lexicon: s.lexicon_path.clone(),
            reply: tx,
        });
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

    /// The writer's words for ghost text at char `to` of `d`: the document's before the word
    /// being typed there (up to RECALL_CHARS of it), counted on from where the last count
    /// stopped (a few words a keystroke), and the workspace's. Only text before the cursor
    /// counts, as in `laya eval next-word`: the text after it would have to be counted again at
    /// every edit, and the model's window holds only the text before the cursor too.
    pub(crate) fn document_words(&self, d: &mut Doc, to: usize) -> (Arc<Recall>, Arc<Recall>) {
        let near = text_before(d, to);
        let typed = near.len() - laya_text::split_at_cursor(&near).context.len();
        let end = to.min(d.doc.len_chars()) - near[near.len() - typed..].chars().count();
        if end < d.recalled_to {
            d.recall = Arc::new(Recall::new());
            d.recalled_to = 0;
        }
        if d.recalled_to == 0 {
            d.recalled_to = end.saturating_sub(RECALL_CHARS);
        }
        if end > d.recalled_to {
            let text = d.doc.rope().slice(d.recalled_to..end).to_string();
            Arc::make_mut(&mut d.recall).add_prose(&text);
            d.recalled_to = end;
        }
        let workspace = self.workspace_recall.read().map(|w| w.clone()).unwrap_or_default();
        (d.recall.clone(), workspace)
    }

    /// Sets `d`'s context window to end at char `to` ([`Document::window_start`]), counting the moves of
    /// its start (each one prefills the new window).
    pub(crate) fn window_to(&self, d: &mut Doc, to: usize) {
        let anchor = d.doc.window_start(to, WINDOW_MIN, WINDOW_MAX);
        if anchor != d.anchor {
            d.anchor = anchor;
            self.reanchors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// The text after the cursor on its line (at most AFTER_MAX characters): what ghost text must fit.
pub(crate) fn after_cursor(d: &Doc, cursor: usize) -> String {
    let rope = d.doc.rope();
    let line_end = d.doc.line_range(rope.char_to_line(cursor)).map_or(cursor, |r| r.end);
    rope.slice(cursor..line_end.max(cursor).min(cursor + AFTER_MAX)).to_string()
}

/// Where the paragraph holding char `cursor` starts in the text of `d`'s window (a byte offset
/// from its anchor), when the engine may score that paragraph's settled words ahead of its
/// spelling check: work ahead and spelling checks are on, and the check will run in the window.
pub(crate) fn check_from(s: &Settings, d: &Doc, cursor: usize) -> Option<usize> {
    if !(s.work_ahead && s.diagnostics) || d.doc.len_chars() > MAX_CHECKED_CHARS {
        return None;
    }
    d.doc.paragraph_start(cursor).filter(|p| d.anchor <= *p).map(|p| d.doc.rope().slice(d.anchor..p).len_bytes())
}
