//! `textDocument/completion`: the rest of the word being typed, or next words after a space
//! when asked (a request without a context is asked), as completion items.

use std::time::Duration;

use laya_decide::SuggestionKind;
use laya_engine::{Job, JobError};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use crate::serve::backend::{check_from, last_word, Backend};
use crate::serve::proto::{from_pos, job_error, key, to_pos};
pub async fn completion(b: &Backend, params: CompletionParams) -> Result<Option<CompletionResponse>> {
    let s = b.settings();
    let uri = key(&params.text_document_position.text_document.uri);
    let pos = params.text_document_position.position;
    let enc = b.enc();
    // A request without a context is an explicit one: Neovim's `vim.lsp.omnifunc` (0.7-0.10,
    // bound to a key) and `buf_request_sync` send none. Emacs eglot always sends Invoked (1),
    // Helix Invoked for its own and its idle requests (which need two letters of a word
    // typed); only a trigger character (2) or a re-request of an incomplete list (3, as the
    // writer types on in a word) is the client asking by itself.
    let invoked = params.context.as_ref().is_none_or(|c| c.trigger_kind == CompletionTriggerKind::INVOKED);
    let (version, before, word_start, at_line_end, check_from) = {
        let Some(mut d) = b.docs.get_mut(&uri) else {
            return Err(Error::invalid_params(format!("{uri} is not open")));
        };
        if !s.completion || !s.serves(&d.language) {
            return Ok(None);
        }
        let cursor = d.doc.offset_of(to_pos(pos), enc);
        b.window_to(&mut d, cursor);
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
    let r = b
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
        let longer =
            sugg.iter().filter(|x| x.kind == SuggestionKind::CompleteWord && x.word != typed).map(|x| x.logprob).fold(f32::NEG_INFINITY, f32::max);
        if own.is_some_and(|o| o >= longer) {
            return Ok(None);
        }
    }
    let Some(d) = b.docs.get(&uri) else { return Ok(None) };
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
