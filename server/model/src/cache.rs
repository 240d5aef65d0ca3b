//! The KV cache of one context: per-layer keys and values, the tokens they stand for, and the
//! next-token log-probs after the last of them. It is not part of the weights: the model's
//! `forward(&self, tokens, &mut KvCache)` reads and extends it.
//!
//! It also keeps a few rows of log-probs a little past its tokens (what a word search stepped
//! to, one token or a few past them), so the next keystroke's search over the same context does
//! not run those steps again.
//!
//! Keys and values live in buffers that grow in steps of [`STEP`] positions; new positions are
//! written in place (MLX donates a buffer nobody else holds), so a keystroke costs O(new tokens),
//! not a copy of the whole context. Trimming only moves the offset.
//!
//! A fork of a one-row cache reads the context from its parent's buffers (a shared prefix,
//! never written) and keeps only the positions it adds in buffers of its own, grown in steps of
//! [`FORK_STEP`]: a search, a scoring batch or a decode step on a fork of a 500-token context
//! writes a few positions, where a copy of the context (24 MB for the default model at 512
//! positions, once per row of a batch) cost more than the step's attention. Laya's fused CPU
//! block reads the prefix in place; MLX's own path (the GPU, Gemma) joins the two first.

use std::sync::Arc;

use mlx_rs::ops::indexing::TryIndexOp;
use mlx_rs::{ops, Array};

use crate::error::Result;

/// Positions added to a layer's buffers when they run out of room.
pub const STEP: usize = 256;

/// The same for a fork's own buffers past a shared prefix: forks add a few positions.
pub const FORK_STEP: usize = 16;

/// Rows of log-probs past the cached tokens a cache keeps ([`KvCache::keep_lookahead`]); each is
/// a vocabulary of f32 (192 KiB for the default model). A ghost-text search keeps up to four
/// per step, over one or two steps.
pub const LOOKAHEAD_ROWS: usize = 16;

#[derive(Clone)]
pub(crate) struct LayerKv {
    /// [batch, kv_heads, capacity, head_dim]; positions `offset..` are free.
    keys: Array,
    values: Array,
}

/// Positions `0..len` of every layer, in another cache's buffers (the one this was forked from;
/// one row, for every row of this one), read and never written.
#[derive(Clone)]
struct Shared {
    layers: Vec<Option<LayerKv>>,
    len: usize,
}

#[derive(Clone, Default)]
pub struct KvCache {
    /// The cache's own buffers: index t of a layer's holds position `shared_len() + t`.
    pub(crate) layers: Vec<Option<LayerKv>>,
    /// The positions read from a parent's buffers ([`KvCache::fork`]).
    shared: Option<Shared>,
    /// Token ids the cache holds, in order (batch row 0; rows only differ in scoring forks).
    pub(crate) tokens: Vec<u32>,
    /// Log-probs of the token after `tokens`: [vocab] f32, when known.
    pub(crate) next_logprobs: Option<Array>,
    /// The model's last hidden state (after the final norm) at cached positions of a one-row
    /// cache, in chunks as forwards computed them: (first position, [n, hidden]). Later chunks
    /// win where they overlap (a trim keeps the stale tail of the chunk it cuts). They let the
    /// log-probs after any cached position be had for one head matmul, with no forward.
    pub(crate) hidden: Vec<(usize, Array)>,
    /// Log-probs a little past the cached tokens, oldest first ([`KvCache::lookahead`]).
    lookahead: Vec<Ahead>,
}

/// The next-token log-probs after the first `len` cached tokens followed by `path` (the tokens
/// a search stepped to, the last one the step's), and what the step that computed them left at
/// its position when it was kept. Valid while those `len` tokens stay cached, so a trim re-roots
/// the entries past its cut at the cut; where the cache goes on with the start of `path`, the
/// entry is also the one after those cached tokens and the rest of it.
#[derive(Clone)]
struct Ahead {
    len: usize,
    path: Vec<u32>,
    logprobs: Arc<[f32]>,
    step: Option<StepState>,
}

impl Ahead {
    /// Its log-probs, and its share of the step's stacked keys and values and its hidden state.
    fn nbytes(&self) -> usize {
        self.logprobs.len() * std::mem::size_of::<f32>()
            + self.step.as_ref().map_or(0, |s| (s.keys.nbytes() + s.values.nbytes()) / s.keys.dim(1).max(1) as usize + s.hidden.nbytes())
    }
}

/// What a step computed at one position of one row: every layer's keys and values there, as row
/// `row` of [layers, rows, kv_heads, 1, head_dim] stacks, and the hidden state, [1, hidden].
/// With it, a cache is extended by that position's token without a forward ([`KvCache::graft`]).
#[derive(Clone)]
pub(crate) struct StepState {
    pub keys: Array,
    pub values: Array,
    pub row: i32,
    pub hidden: Array,
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

    /// Bytes held by the key and value buffers (their capacity, which is what they occupy; a
    /// shared prefix's too, which it keeps alive), the kept hidden states and the kept
    /// lookahead rows.
    pub fn nbytes(&self) -> usize {
        let kv = |layers: &[Option<LayerKv>]| layers.iter().flatten().map(|l| l.keys.nbytes() + l.values.nbytes()).sum::<usize>();
        kv(&self.layers)
            + self.shared.as_ref().map_or(0, |s| kv(&s.layers))
            + self.hidden.iter().map(|(_, h)| h.nbytes()).sum::<usize>()
            + self.lookahead.iter().map(Ahead::nbytes).sum::<usize>()
    }

    /// Positions the buffers can hold before they grow (with a shared prefix's).
    pub fn capacity(&self) -> usize {
        self.shared_len() + self.layers.iter().flatten().next().map_or(0, |l| l.keys.dim(2) as usize)
    }

    /// Positions read from the buffers of the cache this was forked from (0 when none).
    pub fn shared_len(&self) -> usize {
        self.shared.as_ref().map_or(0, |s| s.len)
    }

    /// Layers with keys and values cached.
    fn n_layers(&self) -> usize {
        self.layers.len().max(self.shared.as_ref().map_or(0, |s| s.layers.len()))
    }

    /// Rows in the cache (1 for a context; more in a scoring or search fork).
    pub fn rows(&self) -> usize {
        self.layers.iter().flatten().next().map_or(1, |l| l.keys.dim(0) as usize)
    }

    /// A copy that can be extended without touching this one. A one-row cache's positions
    /// become the fork's shared prefix, read from these buffers and never written; the fork
    /// writes what it adds to buffers of its own. (A fork of a fork, or of many rows, shares its
    /// buffers until one of the two writes: then MLX copies, as it never writes a buffer held
    /// twice in place; a fork's own buffers are a few positions.)
    pub fn fork(&self) -> Self {
        let mut fork = self.clone();
        if self.shared.is_none() && self.rows() == 1 && self.offset() > 0 && !self.layers.is_empty() {
            fork.shared = Some(Shared { layers: std::mem::take(&mut fork.layers), len: self.offset() });
        }
        fork
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
        self.next_logprobs = None;
        if let Some(s) = self.shared.as_mut().filter(|s| len < s.len) {
            s.len = len; // the own buffers' positions all lie past the cut
            self.layers.clear();
        }
        self.hidden.retain(|(start, _)| *start < len);
        // An entry kept past the cut stays true of the same tokens: it is re-rooted at the cut,
        // the cut tokens put before its path. A search that stepped on from a word the cache
        // went on with (a phrase's next word) is then found again once the cache goes on with
        // that word again, as the next keystroke's prefill does.
        let cut = &self.tokens[len..];
        for a in self.lookahead.iter_mut().filter(|a| a.len > len) {
            a.path.splice(0..0, cut[..a.len - len].iter().copied());
            a.len = len;
        }
        self.tokens.truncate(len);
        Ok(())
    }

    /// The next-token log-probs after the cached tokens followed by `token`, if they were kept.
    pub fn lookahead(&self, token: u32) -> Option<Arc<[f32]>> {
        self.lookahead_path(&[token])
    }

    /// The next-token log-probs after the cached tokens followed by `path`, if they were kept.
    pub fn lookahead_path(&self, path: &[u32]) -> Option<Arc<[f32]>> {
        self.ahead(self.offset(), path).map(|a| a.logprobs.clone())
    }

    /// The next-token log-probs after the first `len` cached tokens followed by `token`.
    pub(crate) fn lookahead_at(&self, len: usize, token: u32) -> Option<Arc<[f32]>> {
        self.ahead(len, &[token]).map(|a| a.logprobs.clone())
    }

    /// The kept entry for the first `len` cached tokens followed by `path`: kept at `len`, or
    /// at an earlier position with a path that runs through the cached tokens up to `len`.
    fn ahead(&self, len: usize, path: &[u32]) -> Option<&Ahead> {
        if self.rows() != 1 || len > self.offset() || path.is_empty() {
            return None;
        }
        self.lookahead.iter().rev().find(|a| {
            a.len <= len
                && a.len + a.path.len() == len + path.len()
                && a.path[..len - a.len] == self.tokens[a.len..len]
                && a.path[len - a.len..] == *path
        })
    }

    /// Keeps `logprobs`, the next-token log-probs after the cached tokens followed by `token`
    /// (a search's step), for [`KvCache::lookahead`]; past [`LOOKAHEAD_ROWS`] the oldest of
    /// the deepest goes.
    pub fn keep_lookahead(&mut self, token: u32, logprobs: Arc<[f32]>) {
        self.keep_lookahead_at(self.offset(), vec![token], logprobs, None);
    }

    /// Keeps the log-probs after the first `len` cached tokens followed by `path`, and the
    /// step's state at its last position when given (an entry that has one keeps it).
    pub(crate) fn keep_lookahead_at(&mut self, len: usize, path: Vec<u32>, logprobs: Arc<[f32]>, step: Option<StepState>) {
        if self.rows() != 1 || len > self.offset() || path.is_empty() {
            return;
        }
        let step = match self.lookahead.iter().position(|a| a.len == len && a.path == path) {
            Some(i) => step.or(self.lookahead.remove(i).step),
            None => step,
        };
        self.lookahead.push(Ahead { len, path, logprobs, step });
        if self.lookahead.len() > LOOKAHEAD_ROWS {
            // The oldest of the deepest goes: a first step is what every keystroke in the word
            // searches again, and what a finished word grafts first.
            let deepest = self.lookahead.iter().map(|a| a.path.len()).max().unwrap_or(1);
            let i = self.lookahead.iter().position(|a| a.path.len() == deepest).unwrap_or(0);
            self.lookahead.remove(i);
        }
    }

    /// Before a prefill or a graft grows the cache: the log-probs after its last token stay
    /// useful (a trim back to it finds them), so they move to the lookahead.
    pub(crate) fn retire_next_logprobs(&mut self) {
        if let (Some(lp), Some(&last)) = (self.next_logprobs.take(), self.tokens.last()) {
            self.keep_lookahead_at(self.tokens.len() - 1, vec![last], Arc::from(lp.as_slice::<f32>()), None);
        }
    }

    /// Every layer's keys and values at position `at` of each row, stacked: [layers, rows,
    /// kv_heads, 1, head_dim] (copies, so the buffers are not held).
    pub(crate) fn position_kv(&self, at: usize) -> Result<(Array, Array)> {
        let base = self.shared_len();
        let (layers, i, rows) = match &self.shared {
            Some(s) if at < base => (&s.layers[..], at as i32, self.rows() as i32),
            _ => (&self.layers[..], (at - base) as i32, 0),
        };
        let (mut k, mut v) = (Vec::new(), Vec::new());
        for l in layers.iter().flatten() {
            let (lk, lv) = (l.keys.try_index((.., .., i..i + 1, ..))?, l.values.try_index((.., .., i..i + 1, ..))?);
            // A shared prefix's one row stands for every row of the fork.
            k.push(if rows > 0 { broadcast(&lk, rows)? } else { lk });
            v.push(if rows > 0 { broadcast(&lv, rows)? } else { lv });
        }
        Ok((ops::stack(&k, 0)?, ops::stack(&v, 0)?))
    }

    /// Extends a one-row cache by the token after it whose step state was kept, without a
    /// forward; false (and nothing done) when there is none. The buffers are left to evaluate.
    pub(crate) fn graft(&mut self, token: u32) -> Result<bool> {
        let at = self.offset();
        let Some(Ahead { logprobs, step: Some(st), .. }) = self.ahead(at, &[token]).cloned() else {
            return Ok(false);
        };
        if at == 0 || st.keys.dim(0) as usize != self.n_layers() {
            return Ok(false);
        }
        self.retire_next_logprobs();
        for layer in 0..self.n_layers() {
            let k = st.keys.try_index((layer as i32, st.row..st.row + 1))?;
            let v = st.values.try_index((layer as i32, st.row..st.row + 1))?;
            self.write(layer, k, v)?;
        }
        self.tokens.push(token);
        self.keep_hidden(at, st.hidden)?;
        self.next_logprobs = Some(Array::from_slice(&logprobs, &[logprobs.len() as i32]));
        Ok(true)
    }

    /// Extends a one-row cache by `tokens` without a forward when every one of them was kept by
    /// a step ([`crate::Model::step_keeping`]); false when one was not, with the cache then
    /// holding only those before it (the caller drops it or trims it back).
    pub fn graft_all(&mut self, tokens: &[u32]) -> Result<bool> {
        for &t in tokens {
            if !self.graft(t)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Trims to the longest common prefix of the cached tokens and `tokens`; returns its length.
    pub fn trim_to_common_prefix(&mut self, tokens: &[u32]) -> Result<usize> {
        let common = self.tokens.iter().zip(tokens).take_while(|(a, b)| a == b).count();
        self.trim(common)?;
        Ok(common)
    }

    /// Keeps the given batch rows, in this order (beam search reorders hypotheses this way).
    /// `first`: the tokens of the row that becomes the first (the cache knows the first row's
    /// tokens only); the same number as before.
    pub fn select_rows(&mut self, rows: &[u32], first: &[u32]) -> Result<()> {
        if first.len() != self.tokens.len() {
            return Err(crate::error::ModelError::Input("the first row's tokens must be as many as the cache holds".into()));
        }
        let idx = Array::from_slice(rows, &[rows.len() as i32]);
        for l in self.layers.iter_mut().flatten() {
            l.keys = l.keys.take_axis(&idx, 0)?;
            l.values = l.values.take_axis(&idx, 0)?;
        }
        self.tokens = first.to_vec();
        self.next_logprobs = None;
        self.hidden.clear();
        self.lookahead.clear();
        Ok(())
    }

    /// Writes `keys`/`values` ([batch, kv_heads, new, head_dim]) of layer `layer` at the current
    /// offset and returns views of everything cached in that layer, [batch, kv_heads, offset +
    /// new, head_dim]. A batch-1 cache extended by a batch of b rows is broadcast to b rows.
    pub(crate) fn append(&mut self, layer: usize, keys: Array, values: Array) -> Result<(Array, Array)> {
        self.unshare()?; // MLX's attention reads one buffer
        let end = self.offset() as i32 + keys.dim(2);
        self.write(layer, keys, values)?;
        let l = self.layers[layer].as_ref().expect("written just now");
        Ok((l.keys.try_index((.., .., 0..end, ..))?, l.values.try_index((.., .., 0..end, ..))?))
    }

    /// Writes `keys`/`values` ([batch, kv_heads, new, head_dim]) of layer `layer` at the current
    /// offset, into the cache's own buffers (past a shared prefix, which stays shared).
    fn write(&mut self, layer: usize, keys: Array, values: Array) -> Result<()> {
        let [b, heads, new, dim] = keys.shape().try_into().expect("keys are [batch, heads, len, dim]");
        let offset = (self.offset() - self.shared_len()) as i32;
        let (kb, vb) = self.take_buffers(layer, b, heads, dim, self.offset() + new as usize, keys.dtype())?;
        let (kb, vb) = (slice_update(kb, &keys, offset, offset + new)?, slice_update(vb, &values, offset, offset + new)?);
        self.put_buffers(layer, kb, vb);
        Ok(())
    }

    /// The own buffers of layer `layer`, broadcast to `b` rows and grown to hold `needed`
    /// positions (counted from the start, a shared prefix's among them), taken out of the cache
    /// (a fused block returns their successors to [`KvCache::put_buffers`]).
    pub(crate) fn take_buffers(&mut self, layer: usize, b: i32, heads: i32, dim: i32, needed: usize, dtype: mlx_rs::Dtype) -> Result<(Array, Array)> {
        let base = self.shared_len();
        let (offset, needed) = ((self.offset() - base) as i32, needed - base);
        if self.layers.len() <= layer {
            self.layers.resize(layer + 1, None);
        }
        let step = if base > 0 { FORK_STEP } else { STEP };
        let capacity = needed.div_ceil(step) * step;
        let grow = |old: Option<&Array>| -> Result<Array> {
            let zeros = ops::zeros_dtype(&[b, heads, capacity as i32 - offset, dim], dtype)?;
            Ok(match old {
                Some(o) if offset > 0 => ops::concatenate(&[broadcast(&o.try_index((.., .., 0..offset, ..))?, b)?, zeros], 2)?,
                _ => zeros,
            })
        };
        Ok(match self.layers[layer].take() {
            Some(l) if l.keys.dim(2) as usize >= needed => (broadcast(&l.keys, b)?, broadcast(&l.values, b)?),
            Some(l) => (grow(Some(&l.keys))?, grow(Some(&l.values))?),
            None => (grow(None)?, grow(None)?),
        })
    }

    pub(crate) fn put_buffers(&mut self, layer: usize, keys: Array, values: Array) {
        self.layers[layer] = Some(LayerKv { keys, values });
    }

    /// Layer `layer`'s shared prefix: its keys and values buffers (one row; positions
    /// `0..shared_len()` are the prefix's), when the cache has one.
    pub(crate) fn shared_buffers(&self, layer: usize) -> Option<(&Array, &Array)> {
        let l = self.shared.as_ref()?.layers.get(layer)?.as_ref()?;
        Some((&l.keys, &l.values))
    }

    /// Joins a shared prefix and the own buffers into buffers of its own (MLX's path reads one).
    fn unshare(&mut self) -> Result<()> {
        let Some(s) = self.shared.take() else { return Ok(()) };
        let (base, own, rows) = (s.len as i32, (self.offset() - s.len) as i32, self.rows() as i32);
        if own == 0 {
            // Nothing of its own yet: the parent's buffers as they are, room included, as a plain
            // clone would hold them (the first write copies them); no join, no extra graph nodes,
            // which cost MLX's GPU backend host time on every layer.
            self.layers = s.layers;
            return Ok(());
        }
        self.layers.resize(self.layers.len().max(s.layers.len()), None);
        for (i, l) in self.layers.iter_mut().enumerate() {
            let Some(p) = s.layers.get(i).and_then(Option::as_ref) else { continue };
            let join = |prefix: &Array, mine: Option<&Array>| -> Result<Array> {
                let prefix = broadcast(&prefix.try_index((.., .., 0..base, ..))?, rows)?;
                Ok(match mine {
                    Some(m) => ops::concatenate(&[prefix, m.try_index((.., .., 0..own, ..))?], 2)?,
                    None => prefix,
                })
            };
            let mine = l.take();
            *l = Some(LayerKv { keys: join(&p.keys, mine.as_ref().map(|m| &m.keys))?, values: join(&p.values, mine.as_ref().map(|m| &m.values))? });
        }
        Ok(())
    }

    /// Every buffer, for evaluating them together with a forward's outputs.
    pub(crate) fn arrays(&self) -> impl Iterator<Item = &Array> {
        self.layers.iter().flatten().flat_map(|l| [&l.keys, &l.values]).chain(self.hidden.iter().map(|(_, h)| h))
    }

    /// Keeps the hidden states of positions `start..start + n` ([n, hidden]), merging the
    /// chunks into one now and then so that a long session of keystrokes does not pile them up.
    pub(crate) fn keep_hidden(&mut self, start: usize, h: Array) -> Result<()> {
        self.hidden.push((start, h));
        if self.hidden.len() > 32 {
            self.compact_hidden()?;
        }
        Ok(())
    }

    /// One chunk for every position still cached. A chunk that starts at p was computed when
    /// the cache held p positions, so it replaces every earlier chunk's rows from p on.
    fn compact_hidden(&mut self) -> Result<()> {
        let n = self.offset();
        let mut parts = Vec::new();
        let mut covered = 0usize;
        for (k, (start, h)) in self.hidden.iter().enumerate() {
            let end = self.hidden[k + 1..].iter().map(|(s, _)| *s).fold(start + h.dim(0) as usize, usize::min).min(n);
            if *start != covered {
                return Ok(()); // a gap (cannot happen for a one-row cache): leave the chunks be
            }
            if end > *start {
                parts.push(h.try_index(0..(end - start) as i32)?);
                covered = end;
            }
        }
        if covered != n || parts.is_empty() {
            return Ok(());
        }
        let all = ops::concatenate(&parts.iter().collect::<Vec<_>>(), 0)?;
        all.eval()?;
        self.hidden = vec![(0, all)];
        Ok(())
    }

    /// The hidden state at cached position `pos`, [1, hidden], if it was kept.
    pub(crate) fn hidden_row(&self, pos: usize) -> Result<Option<Array>> {
        if pos >= self.offset() {
            return Ok(None);
        }
        for (start, h) in self.hidden.iter().rev() {
            let n = h.dim(0) as usize;
            if (*start..start + n).contains(&pos) {
                let i = (pos - start) as i32;
                return Ok(Some(h.try_index(i..i + 1)?));
            }
        }
        Ok(None)
    }
}

/// `buf` with positions `start..end` (axis 2) replaced by `update`, through MLX's slice_update
/// itself: indexing through mlx-rs (`try_index_mut`) adds two reshapes of the update around it,
/// graph nodes that cost MLX's CUDA backend host work on every layer of every step.
fn slice_update(buf: Array, update: &Array, start: i32, end: i32) -> Result<Array> {
    let ndim = buf.ndim();
    let mut starts = vec![0i32; ndim];
    let mut stops = buf.shape().to_vec();
    starts[2] = start;
    stops[2] = end;
    let strides = vec![1i32; ndim];
    let stream = mlx_rs::Stream::thread_local_or_default();
    // SAFETY: plain mlx-c call on live handles; `res` is freed unless it becomes the result.
    unsafe {
        let mut res = mlx_sys::mlx_array_new();
        let status = mlx_sys::mlx_slice_update(
            &mut res,
            buf.as_ptr(),
            update.as_ptr(),
            starts.as_ptr(),
            ndim,
            stops.as_ptr(),
            ndim,
            strides.as_ptr(),
            ndim,
            stream.as_ptr(),
        );
        drop(buf); // the caller's handle goes, so that MLX may write the buffer in place
        if status != 0 {
            mlx_sys::mlx_array_free(res);
            return Err(crate::error::ModelError::Mlx(format!("slice_update of a KV buffer at {start}..{end} failed")));
        }
        Ok(Array::from_ptr(res))
    }
}

/// `a` with its batch axis broadcast to `b` rows (a no-op when it has them).
fn broadcast(a: &Array, b: i32) -> Result<Array> {
    if a.dim(0) == b {
        return Ok(a.clone());
    }
    let mut shape = a.shape().to_vec();
    shape[0] = b;
    Ok(ops::broadcast_to(a, &shape)?)
}
