//! Laya's own requests: `laya/rank` (candidates scored after a context), `laya/convert` (pinyin
//! to hanzi, for input-method front-ends), `laya/stats` and `laya/documentText` (the server's
//! copy of a document, for tests and sync checks).

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

    /// Toneless pinyin ("jin tian tian qi", "jintian", "xi'an") to hanzi, ranked by the model
    /// after `context`: `{"candidates": [{"text", "logprob"}]}`, best first.
    pub async fn convert(&self, params: ConvertParams) -> Result<Value> {
        if params.pinyin.trim().is_empty() {
            return Err(Error::invalid_params("pinyin is empty"));
        }
        let n = params.n.unwrap_or(5);
        if !(1..=50).contains(&n) {
            return Err(Error::invalid_params(format!("n is {n}; ask for 1 to 50 candidates")));
        }
        let converted = self
            .engine
            .ask(|reply| Job::Convert { pinyin: params.pinyin.clone(), context: params.context.clone().unwrap_or_default(), n, reply })
            .await
            .map_err(|e| match e {
                // The input is what failed (not pinyin, no words for it): the caller's to fix.
                laya_engine::JobError::Failed(m) => Error::invalid_params(m),
                other => job_error(other),
            })?;
        Ok(json!({
            "candidates": converted.iter().map(|c| json!({"text": c.text, "logprob": c.logprob})).collect::<Vec<_>>()
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
pub struct ConvertParams {
    pub pinyin: String,
    pub context: Option<String>,
    pub n: Option<usize>,
}

#[derive(Debug, Deserialize)]
pub struct RankParams {
    pub context: String,
    pub candidates: Vec<String>,
}
