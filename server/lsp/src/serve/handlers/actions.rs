//! Quick fixes (`textDocument/codeAction`) for Laya's diagnostics and the commands they run
//! (`workspace/executeCommand`): add a word to the dictionary, ignore it in a document.

use std::collections::HashMap;

use serde_json::json;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;

use laya_engine::Job;

use crate::serve::backend::{Backend, CMD_ADD_WORD, CMD_IGNORE};
use crate::serve::proto::{key, to_pos, CODE_REPEATED};
use crate::serve::settings;
pub async fn code_action(b: &Backend, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
    let uri = params.text_document.uri.clone();
    let enc = b.enc();
    let versioned = b.versioned_edits_ok.load(std::sync::atomic::Ordering::Acquire);
    let mut out: Vec<CodeActionOrCommand> = vec![];
    for diag in params.context.diagnostics.iter().filter(|d| d.source.as_deref() == Some("laya")) {
        let Some(data) = &diag.data else { continue };
        let word = data["word"].as_str().unwrap_or_default().to_string();
        // A fix replaces the flagged word only while that word is still what the range holds
        // (a diagnostic from before an edit elsewhere on the line would overwrite other text).
        let version = {
            let Some(d) = b.docs.get(&key(&uri)) else { continue };
            let (s, e) = (d.doc.offset_of(to_pos(diag.range.start), enc), d.doc.offset_of(to_pos(diag.range.end), enc));
            if s > e || d.doc.rope().slice(s..e) != word.as_str() {
                continue;
            }
            d.doc.version()
        };
        let suggestions: Vec<String> = data["suggestions"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect();
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

pub async fn execute_command(b: &Backend, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
    let args = params.arguments;
    match params.command.as_str() {
        CMD_ADD_WORD => {
            let word = args.first().and_then(|v| v.as_str()).ok_or_else(|| Error::invalid_params("expected [word]"))?;
            if word.is_empty() || word.len() > 100 || word.contains(char::is_whitespace) {
                return Err(Error::invalid_params("a dictionary word is one word of at most 100 bytes"));
            }
            b.add_word(word).map_err(|e| Error { code: ErrorCode::InternalError, message: e.into(), data: None })?;
        }
        CMD_IGNORE => {
            let (Some(uri), Some(word)) = (args.first().and_then(|v| v.as_str()), args.get(1).and_then(|v| v.as_str())) else {
                return Err(Error::invalid_params("expected [uri, word]"));
            };
            let Some(mut d) = b.docs.get_mut(uri) else {
                return Err(Error::invalid_params(format!("{uri} is not open")));
            };
            d.ignored.insert(word.to_lowercase());
        }
        other => return Err(Error::invalid_params(format!("unknown command {other}"))),
    }
    b.recheck_all();
    Ok(None)
}

impl Backend {
    pub(crate) fn add_word(&self, word: &str) -> std::result::Result<(), String> {
        let s = self.settings();
        if let Some(path) = s.dictionary() {
            settings::append_word_atomically(&path, word)?;
        }
        self.engine.send(Job::AddWords { words: vec![word.to_string()] });
        Ok(())
    }
}
