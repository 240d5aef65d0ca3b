//! `initialize`, `initialized` and `shutdown`: settings from initializationOptions, the
//! client's capabilities (progress, versioned edits, position encodings), ours, and the model's load.

use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use laya_engine::Job;
use laya_text::PositionEncoding;

use crate::serve::backend::{Backend, CMD_ADD_WORD, CMD_IGNORE};
use crate::serve::settings::{self, Settings};
pub async fn initialize(b: &Backend, params: InitializeParams) -> Result<InitializeResult> {
    if let Some(opts) = params.initialization_options {
        match Settings::from_value(&opts) {
            Ok(s) => {
                if let Ok(mut cur) = b.settings.write() {
                    *cur = s;
                }
            }
            Err(e) => return Err(Error::invalid_params(format!("initializationOptions: {e}"))),
        }
    }
    b.engine.send(Job::SetBudget { bytes: b.settings().budget_bytes() });
    // The workspace's folders, read after `initialized` (see `workspace.rs`).
    #[allow(deprecated)] // root_uri: older clients send only it
    let roots: Vec<std::path::PathBuf> = match (&params.workspace_folders, &params.root_uri) {
        (Some(folders), _) if !folders.is_empty() => folders.iter().filter_map(|f| file_path(&f.uri)).collect(),
        (_, Some(uri)) => file_path(uri).into_iter().collect(),
        _ => vec![],
    };
    if let Ok(mut r) = b.roots.write() {
        *r = roots;
    }
    let s = b.settings();
    if let Some(path) = s.dictionary() {
        match settings::read_words(&path) {
            Ok(words) => b.engine.send(Job::SetUserWords { words }),
            Err(e) if s.user_dictionary.is_some() => return Err(Error::invalid_params(format!("userDictionary: {e}"))),
            Err(e) => tracing::warn!("the default user dictionary: {e}"),
        }
    }
    let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
    b.progress_ok.store(progress, std::sync::atomic::Ordering::Release);
    let versioned = params.capabilities.workspace.as_ref().and_then(|w| w.workspace_edit.as_ref()).and_then(|e| e.document_changes).unwrap_or(false);
    b.versioned_edits_ok.store(versioned, std::sync::atomic::Ordering::Release);
    // Position encodings: UTF-8 or UTF-32 when offered (cheaper than UTF-16), else UTF-16.
    let offered: Vec<PositionEncodingKind> = params.capabilities.general.and_then(|g| g.position_encodings).unwrap_or_default();
    let (enc, kind) = if offered.contains(&PositionEncodingKind::UTF8) {
        (PositionEncoding::Utf8, PositionEncodingKind::UTF8)
    } else if offered.contains(&PositionEncodingKind::UTF32) {
        (PositionEncoding::Utf32, PositionEncodingKind::UTF32)
    } else {
        (PositionEncoding::Utf16, PositionEncodingKind::UTF16)
    };
    if let Ok(mut e) = b.encoding.write() {
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
            execute_command_provider: Some(ExecuteCommandOptions { commands: vec![CMD_ADD_WORD.into(), CMD_IGNORE.into()], ..Default::default() }),
            ..Default::default()
        },
        server_info: Some(ServerInfo { name: "laya".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
        offset_encoding: None,
    })
}

pub async fn initialized(b: &Backend, _: InitializedParams) {
    b.spawn_load();
    b.spawn_workspace_scan();
}

/// The local path of a `file:` URI; None for other schemes.
fn file_path(uri: &Uri) -> Option<std::path::PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

pub async fn shutdown(_: &Backend) -> Result<()> {
    Ok(())
}
