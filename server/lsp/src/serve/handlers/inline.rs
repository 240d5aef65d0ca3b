//! Ghost text: `textDocument/inlineCompletion` (LSP 3.18), and the ghost text the server asks
//! for itself after Enter. What shows depends on the text and the cursor, not on which keys a
//! client asked at (see the rules on `Doc::shown` and `Doc::rejected`).

use std::time::Duration;

use laya_decide::{Ghost, TypedThrough};
use laya_engine::{Job, JobError, Reply};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use crate::serve::backend::{after_cursor, check_from, ghost_opts, text_before, Backend, Shown};
use crate::serve::proto::{from_pos, job_error, key, to_pos};
use crate::serve::settings::Settings;
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

impl Backend {
    /// After a line break typed (Enter), most clients ask for no ghost text: the next key, the
    /// first letter of a line or paragraph, would then find the document's cache behind by the
    /// line break and run two forwards (its prefill, then the word's first step). So the server
    /// asks the engine for that ghost text itself, shown to no one: the engine runs it when it
    /// is free, and then works out the likeliest first letters while idle, as after any key. A
    /// newer key, the server's or the client's, supersedes it in the queue; a client that asks
    /// right after Enter finds the cache warm.
    pub(crate) fn warm_after_line_break(&self, uri: &str, cursor: usize) {
        let s = self.settings();
        let Some(mut d) = self.docs.get_mut(uri) else { return };
        if !(s.ghost_text && s.work_ahead && s.serves(&d.language)) {
            return;
        }
        self.window_to(&mut d, cursor);
        let before = d.doc.rope().slice(d.anchor..cursor).to_string();
        let words = self.document_words(&mut d, cursor);
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.engine.send(ghost_job(&s, uri, d.doc.version(), before, after_cursor(&d, cursor), check_from(&s, &d, cursor), words, tx));
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
        let (version, before, after, cursor, replace_from, prefix, check_from, words) = {
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
                        let items = if d.rejected.contains(&(cursor, g.insert.clone())) || d.turned_down.holds_back(&text_before(&d, cursor), &g) {
                            vec![]
                        } else {
                            vec![InlineCompletionItem {
                                insert_text: g.insert,
                                filter_text: None,
                                range: Some(Range::new(pos, pos)),
                                command: None,
                                insert_text_format: None,
                            }]
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
            let words = self.document_words(&mut d, from);
            (d.doc.version(), before, after, cursor, from, prefix, check_from, words)
        };
        let invoked = params.context.trigger_kind == InlineCompletionTriggerKind::INVOKED;
        let g = self.engine.ask(|reply| ghost_job(&s, &uri, version, before.clone(), after, check_from, words, reply)).await;
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
            if !d.rejected.contains(&(cursor, g.insert.clone())) && !d.turned_down.holds_back(&before, &g) {
                let (start_char, text) = replacement(&before, &prefix, replace_from, g.replace, &g.insert);
                let range = Range::new(from_pos(d.doc.position_of(start_char, enc)), pos);
                // Always a range, an empty one at the cursor for a plain continuation: without
                // one VS Code replaces the whole word at the cursor, to the end of the line, and
                // drops a suggestion ("lin" after "Ber") that does not begin with that word.
                let full = Some(range);
                d.shown = Some(Shown { at: cursor, ghost: g.clone(), opts: ghost_opts(&s), typed: String::new(), since: std::time::Instant::now() });
                items.push(InlineCompletionItem { insert_text: text, filter_text: None, range: full, command: None, insert_text_format: None });
            }
        }
        drop(d);
        if invoked && prefix.is_empty() {
            // Asked for explicitly: alternatives too.
            if let Ok(more) = self
                .engine
                .ask(|reply| Job::Complete {
                    doc: uri.clone(),
                    version,
                    before: before.clone(),
                    n: 3,
                    check_from: None,
                    deadline: std::time::Instant::now() + Duration::from_millis(s.latency_budget_ms),
                    reply,
                })
                .await
            {
                for sug in more {
                    if sug.insert.is_empty() || items.iter().any(|i| i.insert_text == sug.insert) {
                        continue;
                    }
                    items.push(InlineCompletionItem {
                        insert_text: sug.insert,
                        filter_text: None,
                        range: Some(Range::new(pos, pos)),
                        command: None,
                        insert_text_format: None,
                    });
                }
            }
        }
        Ok(Some(InlineCompletionResponse::List(InlineCompletionList { items })))
    }

    pub async fn inline_completion(&self, params: InlineCompletionParams) -> Result<Option<InlineCompletionResponse>> {
        self.ghost_items(params).await
    }
}

/// The ghost-text job for `before` (the window up to the cursor), with the user's settings.
#[allow(clippy::too_many_arguments)]
fn ghost_job(
    s: &Settings,
    uri: &str,
    version: i32,
    before: String,
    after: String,
    check_from: Option<usize>,
    words: (std::sync::Arc<laya_decide::Recall>, std::sync::Arc<laya_decide::Recall>),
    reply: Reply<Option<Ghost>>,
) -> Job {
    Job::Ghost {
        doc: uri.to_string(),
        version,
        before,
        after,
        opts: ghost_opts(s),
        words,
        ahead: s.work_ahead,
        check_from,
        deadline: std::time::Instant::now() + Duration::from_millis(s.latency_budget_ms),
        reply,
    }
}

#[cfg(test)]
mod tests {
    use super::replacement;

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
