//! Ranking: the log-probability of each candidate as the continuation of a context, best
//! first, all candidates scored in one batched forward over the cached context.

use laya_model::{KvCache, Model};

use crate::{DecideError, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// Position of the candidate in the input.
    pub index: usize,
    pub candidate: String,
    /// Natural-log probability of the candidate's tokens after the context.
    pub logprob: f32,
    /// Tokens the candidate took (a longer candidate pays for each).
    pub tokens: usize,
}

/// Ranks `candidates` as continuations of `context`, best first. Candidates are taken
/// literally: "help" and " help" differ; [`rank`] does not add spaces.
pub fn rank(model: &Model, cache: &mut KvCache, context: &str, candidates: &[String]) -> Result<Vec<Ranked>> {
    if candidates.is_empty() {
        return Err(DecideError::Input("no candidates to rank".into()));
    }
    let ids = model.tokenizer.encode_context(context)?;
    if ids.is_empty() {
        return Err(DecideError::Input("the context is empty: ranking needs text to continue".into()));
    }
    let cands = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| match model.tokenizer.encode(c)? {
            t if t.is_empty() => Err(DecideError::Input(format!("candidate {i} is empty"))),
            t => Ok(t),
        })
        .collect::<Result<Vec<_>>>()?;
    model.prefill(cache, &ids)?;
    let scores = model.score(cache, &cands)?;
    let mut out: Vec<Ranked> = scores
        .into_iter()
        .zip(candidates)
        .enumerate()
        .map(|(index, (s, c))| Ranked { index, candidate: c.clone(), logprob: s.total, tokens: s.per_token.len() })
        .collect();
    out.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
    Ok(out)
}
