//! The KV cache of one context: per-layer keys and values, the tokens they stand for, and the
//! next-token log-probs after the last of them. It is not part of the weights: the model's
//! `forward(&self, tokens, &mut KvCache)` reads and extends it.

use mlx_rs::ops::indexing::TryIndexOp;
use mlx_rs::Array;

use crate::error::Result;

#[derive(Clone, Default)]
pub struct KvCache {
    /// Per layer: keys and values, each [batch, kv_heads, offset, head_dim].
    pub(crate) layers: Vec<Option<(Array, Array)>>,
    /// Token ids the cache holds, in order (batch row 0; rows only differ in scoring forks).
    pub(crate) tokens: Vec<u32>,
    /// Log-probs of the token after `tokens`: [vocab] f32, when known.
    pub(crate) next_logprobs: Option<Array>,
}

impl std::fmt::Debug for KvCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KvCache").field("offset", &self.offset()).field("nbytes", &self.nbytes()).finish()
    }
}

impl KvCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of positions cached.
    pub fn offset(&self) -> usize {
        self.tokens.len()
    }

    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// Bytes held by keys and values.
    pub fn nbytes(&self) -> usize {
        self.layers.iter().flatten().map(|(k, v)| k.nbytes() + v.nbytes()).sum()
    }

    /// A copy that can be extended without touching this one. MLX arrays are immutable and
    /// every extension makes new arrays, so this copies handles, not data.
    pub fn fork(&self) -> Self {
        self.clone()
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Drops every position from `len` on.
    pub fn trim(&mut self, len: usize) -> Result<()> {
        if len >= self.offset() {
            return Ok(());
        }
        if len == 0 {
            self.clear();
            return Ok(());
        }
        let n = len as i32;
        for (k, v) in self.layers.iter_mut().flatten() {
            *k = k.try_index((.., .., 0..n, ..))?;
            *v = v.try_index((.., .., 0..n, ..))?;
        }
        self.tokens.truncate(len);
        self.next_logprobs = None;
        Ok(())
    }

    /// Keeps the given batch rows, in this order (beam search reorders hypotheses this way).
    pub fn select_rows(&mut self, rows: &[u32]) -> Result<()> {
        let idx = Array::from_slice(rows, &[rows.len() as i32]);
        for (k, v) in self.layers.iter_mut().flatten() {
            *k = k.take_axis(&idx, 0)?;
            *v = v.take_axis(&idx, 0)?;
        }
        self.next_logprobs = None;
        Ok(())
    }

    /// Rows in the cache (1 for a context; more in a scoring or search fork).
    pub fn rows(&self) -> usize {
        self.layers.iter().flatten().next().map_or(1, |(k, _)| k.dim(0) as usize)
    }

    /// Trims to the longest common prefix of the cached tokens and `tokens`; returns its length.
    pub fn trim_to_common_prefix(&mut self, tokens: &[u32]) -> Result<usize> {
        let common = self.tokens.iter().zip(tokens).take_while(|(a, b)| a == b).count();
        self.trim(common)?;
        Ok(common)
    }
}
