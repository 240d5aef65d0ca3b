//! Text sync: `didOpen`, `didChange` (incremental, applied before any `.await`, in the order
//! sent) and `didClose`; what was shown and rejected follows the edits.

use std::collections::{HashMap, HashSet};

use tower_lsp_server::ls_types::*;

use laya_engine::Job;
use laya_text::Document;

use crate::serve::backend::{text_before, Backend, Doc, REJECTED_AFTER};
use crate::serve::proto::{key, to_pos};
pub async fn did_open(b: &Backend, params: DidOpenTextDocumentParams) {
    let td = params.text_document;
    let uri = key(&td.uri);
    b.engine.set_version(&uri, td.version);
    let len = td.text.chars().count();
    // The model for the document's script is loaded now, not at its first key (a load takes
    // longer than a suggestion may wait).
    let head: String = td.text.chars().take(4096).collect();
    // Say once why a document in another script gets no spelling diagnostics.
    if let Some(script) = laya_text::dominant_script(&head).filter(|s| !s.is_latin()) {
        let name = uri.rsplit('/').next().unwrap_or(&uri).to_string();
        let msg = format!(
            "Laya: {name} is mostly in {script:?} script: its suggestions come from the multilingual model, and the \
             spelling check, which knows English only, leaves its words alone."
        );
        let client = b.client.clone();
        tokio::spawn(async move { client.log_message(MessageType::INFO, msg).await });
    }
    b.engine.send(Job::Route { doc: uri.clone(), text: head });
    b.docs.insert(
        uri.clone(),
        Doc {
            doc: Document::new(&td.text, td.version),
            language: td.language_id,
            ignored: HashSet::new(),
            anchor: 0,
            checked: HashMap::new(),
            resets: 0,
            shown: None,
            rejected: HashSet::new(),
            turned_down: Default::default(),
            recall: Default::default(),
            recalled_to: 0,
            last_edit: len + 1,
            too_long: false,
            published: false,
        },
    );
    b.schedule_check(uri, 0);
}

pub async fn did_change(b: &Backend, params: DidChangeTextDocumentParams) {
    // Applied before any .await: handlers may run concurrently, but each starts in order.
    let uri = key(&params.text_document.uri);
    let version = params.text_document.version;
    let enc = b.enc();
    let mut line_break_at = None;
    {
        let Some(mut d) = b.docs.get_mut(&uri) else {
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
            if edit.start_char < d.recalled_to {
                // Counted text changed: counted again at the next ghost text.
                d.recall = Default::default();
                d.recalled_to = 0;
            }
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
                            let before = text_before(&d, sh.at);
                            d.turned_down.record(&before, &sh.ghost);
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
    b.engine.set_version(&uri, version);
    if let Some(cursor) = line_break_at {
        b.warm_after_line_break(&uri, cursor);
    }
    b.schedule_check(uri, b.settings().debounce_ms);
}

pub async fn did_close(b: &Backend, params: DidCloseTextDocumentParams) {
    let uri = key(&params.text_document.uri);
    b.docs.remove(&uri);
    b.engine.forget(&uri);
    b.engine.send(Job::Close { doc: uri });
    b.client.publish_diagnostics(params.text_document.uri, vec![], None).await;
}
