//! Laya's own requests: `laya/rank` (candidates scored after a context), `laya/stats` and
//! `laya/documentText` (the server's copy of a document, for tests and sync checks).

use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use laya_engine::Job;

use crate::serve::backend::{Backend, ModelState};
use crate::serve::proto::{job_error, key};
impl Backend {
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
}

#[derive(Debug, Deserialize)]
pub struct RankParams {
    pub context: String,
    pub candidates: Vec<String>,
}
