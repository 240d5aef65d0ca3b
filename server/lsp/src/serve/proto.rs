//! Conversions between LSP's types and Laya's (positions, document keys, diagnostics) and the
//! JSON-RPC errors a job's failure becomes, with LSP's named codes.

use laya_decide::{Issue, IssueKind};
use laya_engine::JobError;
use laya_text::{Document, PositionEncoding};
use serde_json::json;
use tower_lsp_server::jsonrpc::{Error, ErrorCode};
use tower_lsp_server::ls_types::*;

/// LSP's RequestFailed: the request was valid, but the server cannot serve it now (no model).
pub const REQUEST_FAILED: i64 = -32803;

/// The diagnostic code of a doubled word ("the the"), whose one fix deletes the second.
pub const CODE_REPEATED: &str = "repeated-word";

pub fn to_pos(p: Position) -> laya_text::Position {
    laya_text::Position::new(p.line, p.character)
}

pub fn from_pos(p: laya_text::Position) -> Position {
    Position::new(p.line, p.character)
}

pub fn key(uri: &Uri) -> String {
    uri.as_str().to_string()
}

/// A job that did not answer, as the request's error: superseded or late is Canceled (the
/// client no longer wants it), no model is RequestFailed, anything else an internal error.
pub fn job_error(e: JobError) -> Error {
    match e {
        JobError::Stale => Error { code: ErrorCode::RequestCancelled, message: "superseded by a newer edit".into(), data: None },
        JobError::Late => Error { code: ErrorCode::RequestCancelled, message: "dropped: it waited longer than latencyBudgetMs".into(), data: None },
        JobError::NoModel(m) => {
            Error { code: ErrorCode::ServerError(REQUEST_FAILED), message: format!("the model is not ready: {m}").into(), data: None }
        }
        JobError::Failed(m) => Error { code: ErrorCode::InternalError, message: m.into(), data: None },
    }
}

/// A checker issue as an LSP diagnostic over chars `s..e` of `doc`.
pub fn diagnostic(doc: &Document, enc: PositionEncoding, s: usize, e: usize, i: &Issue, severity: DiagnosticSeverity) -> Diagnostic {
    let range = Range::new(from_pos(doc.position_of(s, enc)), from_pos(doc.position_of(e, enc)));
    let sugg: Vec<String> = i.suggestions.iter().take(5).map(|c| c.word.clone()).collect();
    let message = match (i.kind, sugg.first()) {
        (IssueKind::Misspelling, Some(b)) => format!("\"{}\" may be misspelled: {b}?", i.word),
        (IssueKind::Misspelling, None) => format!("\"{}\" is not in the dictionary", i.word),
        (IssueKind::RealWord, Some(b)) if i.word.contains(' ') => format!("\"{}\" may be one word: {b}?", i.word),
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
