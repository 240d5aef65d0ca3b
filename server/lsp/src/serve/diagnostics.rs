//! Spelling diagnostics: when a document is checked (debounced after edits, again after the
//! model, the lexicon, the dictionary or settings change), which paragraphs go to the engine
//! (only those whose text changed), and publishing what it found.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use dashmap::DashMap;
use laya_decide::{Issue, IssueKind};
use laya_engine::{CheckText, Engine, Job, JobError};
use laya_text::PositionEncoding;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::Client;

use super::backend::{Doc, Inner, MAX_CHECKED_CHARS};
use super::proto::diagnostic;
use super::settings::Settings;

/// Marks the key of a paragraph checked without the word being typed at its end.
const WORD_BEING_TYPED: u64 = 0x9e37_79b9_7f4a_7c15;

/// A paragraph's issues, and which of its words the check left alone (lower case, sorted).
pub(crate) struct Checked {
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

impl Inner {
    /// Checks every open document again now, from scratch (after the model, the lexicon, the
    /// dictionary or settings change, earlier results no longer hold).
    pub(crate) fn recheck_all(&self) {
        let uris: Vec<String> = self
            .docs
            .iter_mut()
            .map(|mut d| {
                d.checked.clear();
                d.resets += 1;
                d.key().clone()
            })
            .collect();
        for u in uris {
            self.schedule_check(u, 0);
        }
    }

    /// Re-checks a document after `delay_ms` if it has not changed meanwhile, and publishes
    /// its diagnostics. Only paragraphs whose text changed go to the engine.
    pub(crate) fn schedule_check(&self, uri: String, delay_ms: u64) {
        let docs = self.docs.clone();
        let engine = self.engine.clone();
        let client = self.client.clone();
        let settings = self.settings();
        let enc = self.enc();
        let workspace = self.workspace_words.read().map(|w| w.clone()).unwrap_or_default();
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
                if check_once(&docs, &engine, &client, &settings, enc, &uri, &workspace).await {
                    return;
                }
                delay = settings.debounce_ms.max(50);
            }
        });
    }
}

/// One spelling pass over a document; false when the engine stopped early for urgent work.
async fn check_once(
    docs: &DashMap<String, Doc>,
    engine: &Engine,
    client: &Client,
    settings: &Settings,
    enc: PositionEncoding,
    uri: &String,
    workspace: &HashSet<String>,
) -> bool {
    {
        {
            let mut clear = false;
            let Some((version, resets, paragraphs, keys, todo, repeated, ignored, last_edit)) = ({
                let Some(mut d) = docs.get_mut(uri) else { return true };
                if !settings.diagnostics || !settings.serves(&d.language) || d.doc.len_chars() > MAX_CHECKED_CHARS {
                    // Checks are off here now: what they published must not stay on screen.
                    clear = std::mem::take(&mut d.published);
                    d.checked.clear();
                    None
                } else {
                    let text = d.doc.text();
                    let mut paragraphs = laya_text::paragraphs(&text);
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
                    // So is a word the workspace's code uses.
                    let counts = laya_decide::word_counts(&text);
                    let repeated: HashSet<String> = counts.into_iter().filter(|(w, n)| *n > 1 || workspace.contains(w)).map(|(w, _)| w).collect();
                    let skip: HashSet<String> = repeated.union(&d.ignored).cloned().collect();
                    // Each paragraph's key, once: it reads the paragraph's words.
                    let keys: Vec<u64> =
                        paragraphs.iter().enumerate().map(|(i, p)| check_key(&p.1) ^ if cut == Some(i) { WORD_BEING_TYPED } else { 0 }).collect();
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
                    Some((d.doc.version(), d.resets, paragraphs, keys, todo, repeated, d.ignored.clone(), d.last_edit))
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
                match engine
                    .ask(|reply| Job::Check {
                        doc: uri.clone(),
                        version,
                        paragraphs: todo.iter().map(|t| t.0.clone()).collect(),
                        ignored: ignored.clone(),
                        repeated: repeated.clone(),
                        asked: std::time::Instant::now(),
                        reply,
                    })
                    .await
                {
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
                if d.resets != resets {
                    // A word was added to the dictionary or ignored while this check ran: what
                    // it found may flag that word, and the check the change scheduled publishes.
                    return true;
                }
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
                        if e == last_edit && i.kind == IssueKind::Misspelling {
                            // Still being typed, wherever it is: at the end of the text, in a
                            // code span the editor closed ("`Initia|`"), inside a sentence.
                            continue;
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
