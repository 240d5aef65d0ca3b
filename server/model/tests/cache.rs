//! The KV cache: extending, trimming and forking give the same numbers as computing from
//! scratch, and batched candidate scoring gives the same log-probs as scoring one by one.

mod common;
use common::*;
use laya_model::{KvCache, Model};

/// Close enough for two computations of the same thing by different paths: f32 in another batch
/// or chunking (~1e-4), or one position alone, whose matmuls on an AVX2 machine take their input
/// in 16 bits per 32-block (up to 2e-3 in a log-prob after 30 layers, measured on the default
/// model). A wrong position, mask or cache row moves log-probs by far more.
const TOL: f32 = 4e-3;

fn next_lp(model: &Model, cache: &mut KvCache, ids: &[u32]) -> Vec<f32> {
    model.prefill(cache, ids).unwrap();
    model.next_logprobs(cache).unwrap()
}

#[test]
fn prefill_in_pieces_equals_prefill_at_once() {
    let _mlx = mlx_lock();
    let model = default_model();
    let ids = model.tokenizer.encode(PROSE).unwrap();
    let (a, _) = ids.split_at(9);

    let mut whole = KvCache::new();
    let once = next_lp(&model, &mut whole, &ids);

    let mut pieces = KvCache::new();
    let p = model.prefill(&mut pieces, a).unwrap();
    assert_eq!((p.reused, p.computed), (0, 9));
    let p = model.prefill(&mut pieces, &ids).unwrap();
    assert_eq!((p.reused, p.computed), (9, ids.len() - 9), "only the new tokens are computed");
    let twice = model.next_logprobs(&pieces).unwrap();
    assert!(max_abs_diff(&once, &twice) < TOL, "{}", max_abs_diff(&once, &twice));
    assert_eq!(pieces.offset(), ids.len());

    // The per-position logits of a forward after a cached prefix equal those of one forward.
    let full = laya_logits(&model, &ids);
    let vocab = model.config.vocab;
    let mut c = KvCache::new();
    model.forward(&[a.to_vec()], &mut c).unwrap();
    let rest = model.forward(&[ids[9..].to_vec()], &mut c).unwrap();
    assert!(max_abs_diff(rest.as_slice::<f32>(), &full[9 * vocab..]) < TOL);
}

#[test]
fn trim_and_re_extend_equals_a_fresh_run() {
    let _mlx = mlx_lock();
    let model = default_model();
    let ids = model.tokenizer.encode(PROSE).unwrap();
    let other = model.tokenizer.encode("The quick brown fox sleeps all day long").unwrap();

    let mut cache = KvCache::new();
    model.prefill(&mut cache, &ids).unwrap();
    // An edit in the middle: only the common prefix survives, the rest is recomputed.
    let p = model.prefill(&mut cache, &other).unwrap();
    let common = ids.iter().zip(&other).take_while(|(a, b)| a == b).count();
    assert!(common >= 3);
    assert_eq!((p.reused, p.computed), (common, other.len() - common));
    let edited = model.next_logprobs(&cache).unwrap();
    let fresh = next_lp(&model, &mut KvCache::new(), &other);
    assert!(max_abs_diff(&edited, &fresh) < TOL);

    // Deleting back to a prefix of what is cached computes no forward: the head reads the
    // hidden state kept at its last token.
    let f = model.forward_count().0;
    let p = model.prefill(&mut cache, &other[..5]).unwrap();
    assert_eq!((p.reused, p.computed), (5, 0));
    assert_eq!(model.forward_count().0, f);
    let fresh = next_lp(&model, &mut KvCache::new(), &other[..5]);
    assert!(max_abs_diff(&model.next_logprobs(&cache).unwrap(), &fresh) < TOL, "{}", max_abs_diff(&model.next_logprobs(&cache).unwrap(), &fresh));

    // The same text again costs nothing.
    assert_eq!(model.prefill(&mut cache, &other[..5]).unwrap().computed, 0);
}

#[test]
fn log_probs_past_the_cached_tokens_are_kept_for_the_tokens_they_follow() {
    let _mlx = mlx_lock();
    let model = default_model();
    let ids = model.tokenizer.encode("It was a bright cold day in April, and the clocks").unwrap();
    let n = 6;
    let mut cache = KvCache::new();
    let short = next_lp(&model, &mut cache, &ids[..n]);
    // Extending the context keeps the log-probs after its old end; going back finds them.
    model.prefill(&mut cache, &ids).unwrap();
    let f = model.forward_count().0;
    assert_eq!(model.prefill(&mut cache, &ids[..n]).unwrap().computed, 0);
    assert_eq!(model.next_logprobs(&cache).unwrap(), short);
    assert_eq!(model.forward_count().0, f);

    // What a search keeps: the log-probs after the context and one more token.
    let t = ids[n];
    let after_t = next_lp(&model, &mut cache.fork(), &ids[..=n]);
    assert!(cache.lookahead(t).is_none());
    cache.keep_lookahead(t, after_t.clone().into());
    assert_eq!(cache.lookahead(t).as_deref(), Some(&after_t[..]));
    assert!(cache.lookahead(ids[n + 1]).is_none(), "kept for one token only");
    // It is the context's: a longer context does not see it, and it is there again after a
    // trim back to that context. A trim that cuts into the context keeps it for the same
    // tokens: it is found again once the cache goes on with them, and not after others.
    model.prefill(&mut cache, &ids).unwrap();
    assert!(cache.lookahead(t).is_none());
    model.prefill(&mut cache, &ids[..n]).unwrap();
    assert_eq!(cache.lookahead(t).as_deref(), Some(&after_t[..]));
    model.prefill(&mut cache, &ids[..n - 1]).unwrap();
    assert!(cache.lookahead(t).is_none());
    assert_eq!(cache.lookahead_path(&[ids[n - 1], t]).as_deref(), Some(&after_t[..]));
    model.prefill(&mut cache, &ids[..n]).unwrap();
    assert_eq!(cache.lookahead(t).as_deref(), Some(&after_t[..]));
    let other = [&ids[..n - 1], &[ids[n + 2]]].concat();
    model.prefill(&mut cache, &other).unwrap();
    assert!(cache.lookahead(t).is_none());
    // A fork of many rows keeps none.
    let mut fork = cache.fork();
    fork.keep_lookahead(t, after_t.clone().into());
    model.step(&mut fork, &[ids[n], ids[n + 1]]).unwrap();
    fork.trim(n).unwrap();
    assert!(fork.lookahead(t).is_none());
}

#[test]
fn a_kept_step_extends_the_cache_without_a_forward_and_with_the_same_numbers() {
    let _mlx = mlx_lock();
    let model = default_model();
    let ids = model.tokenizer.encode("It was a bright cold day in April, and the clocks were striking thirteen").unwrap();
    let n = 7;
    let mut cache = KvCache::new();
    model.prefill(&mut cache, &ids[..n]).unwrap();
    // A search's first step over three tokens, the right one among them.
    let tokens = [ids[n + 1], ids[n], ids[n + 2]];
    let mut fork = cache.fork();
    let rows = model.step_keeping(&mut cache, &mut fork, &tokens).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(cache.offset(), n, "the base is not extended");
    assert_eq!(cache.lookahead(ids[n]).as_deref(), Some(&rows[1][..]));

    // Extending by that token runs no forward; the rest of the text runs after it.
    let f = model.forward_count().0;
    let p = model.prefill(&mut cache, &ids[..=n]).unwrap();
    assert_eq!((p.reused, p.computed), (n + 1, 0));
    assert_eq!(model.forward_count().0, f);
    assert_eq!(model.next_logprobs(&cache).unwrap(), rows[1].to_vec());
    model.prefill(&mut cache, &ids).unwrap();
    let fresh = next_lp(&model, &mut KvCache::new(), &ids);
    let grafted = model.next_logprobs(&cache).unwrap();
    assert!(max_abs_diff(&grafted, &fresh) < TOL, "{}", max_abs_diff(&grafted, &fresh));
    // The grafted position's hidden state was kept too: log-probs after it come from the head.
    let forks = model.forks_at(&cache, &[n + 1]).unwrap();
    let after = model.next_logprobs(forks[0].as_ref().expect("the grafted position's hidden state")).unwrap();
    assert!(max_abs_diff(&after, &rows[1]) < TOL, "{}", max_abs_diff(&after, &rows[1]));

    // From a fork cut back to part of the base's tokens: kept for that shorter context, and
    // found once the base is back there.
    let mut shorter = cache.fork();
    shorter.trim(n - 2).unwrap();
    let rows = model.step_keeping(&mut cache, &mut shorter, &[ids[n - 2]]).unwrap();
    assert!(cache.lookahead(ids[n - 2]).is_none(), "not the longer context's");
    let f = model.forward_count().0;
    model.prefill(&mut cache, &ids[..=n - 2]).unwrap();
    assert_eq!(model.forward_count().0, f, "read from the kept step");
    assert_eq!(model.next_logprobs(&cache).unwrap(), rows[0].to_vec());
    let fresh = next_lp(&model, &mut KvCache::new(), &ids[..=n - 2]);
    assert!(max_abs_diff(&rows[0], &fresh) < TOL);
    // Only from the base's own tokens: a fork of another text is refused.
    let mut other = KvCache::new();
    model.prefill(&mut other, &model.tokenizer.encode("The capital of France is").unwrap()).unwrap();
    assert!(model.step_keeping(&mut cache, &mut other, &tokens).is_err());
}

#[test]
fn a_fork_extends_without_touching_the_original() {
    let _mlx = mlx_lock();
    let model = default_model();
    let ids = model.tokenizer.encode("It was a bright cold day").unwrap();
    let mut cache = KvCache::new();
    let before = next_lp(&model, &mut cache, &ids);
    let mut fork = cache.fork();
    model.prefill(&mut fork, &[ids.clone(), model.tokenizer.encode(" in April").unwrap()].concat()).unwrap();
    assert_eq!(cache.offset(), ids.len());
    assert!(fork.offset() > ids.len());
    assert_eq!(model.next_logprobs(&cache).unwrap(), before);
    // Buffers grow in steps of 256 positions: 30 layers x (k + v) x 3 kv heads x 64 dims x f32.
    assert_eq!(cache.capacity(), laya_model::KV_STEP);
    // And the hidden state kept for each cached position: 576 f32.
    assert_eq!(cache.nbytes(), laya_model::KV_STEP * 30 * 2 * 3 * 64 * 4 + ids.len() * 576 * 4);
}

/// Steps `rows` rows through `tokens` one position at a time (row r steps token + r), then
/// trims back to `cut` and steps them by `tokens[0]` again; every step's log-probs, in order.
fn steps_then_cut(model: &Model, cache: &mut KvCache, tokens: &[u32], rows: u32, cut: usize) -> Vec<Vec<f32>> {
    let mut out = Vec::new();
    for &t in tokens {
        let row: Vec<u32> = (0..rows).map(|r| t + r).collect();
        out.push(model.step(cache, &row).unwrap().as_slice::<f32>().to_vec());
    }
    cache.trim(cut).unwrap();
    let row: Vec<u32> = (0..rows).map(|r| tokens[0] + r).collect();
    out.push(model.step(cache, &row).unwrap().as_slice::<f32>().to_vec());
    out
}

#[test]
fn a_fork_reads_its_context_in_place_and_steps_as_a_copy_does() {
    let _mlx = mlx_lock();
    for cpu_kernels in [true, false] {
        let model = Model::load_with(&default_model_path(), laya_model::LoadOptions { cpu_kernels, ..Default::default() }).unwrap();
        let ids = model.tokenizer.encode("It was a bright cold day in April, and the clocks were striking thirteen. Winston Smith").unwrap();
        let n = ids.len();
        let mut cache = KvCache::new();
        let before = next_lp(&model, &mut cache, &ids);
        // 20 steps: the fork's own buffers (16 positions) grow once.
        let tokens: Vec<u32> = (0..20).map(|i| ids[i % n]).collect();
        let mut fork = cache.fork();
        assert_eq!(fork.shared_len(), n, "a one-row cache's positions are the fork's shared prefix");
        let mut copy = cache.clone(); // the same buffers, copied when first written
        assert_eq!(copy.shared_len(), 0);
        let (a, b) = (steps_then_cut(&model, &mut fork, &tokens, 3, n - 4), steps_then_cut(&model, &mut copy, &tokens, 3, n - 4));
        // The same kernels over the same numbers, read from two places: exactly equal.
        assert_eq!(a, b, "cpu_kernels {cpu_kernels}");
        // Laya's block reads the prefix in place; MLX's path joins it to the fork's own first.
        let shared = if cpu_kernels { n - 4 } else { 0 };
        assert_eq!(fork.shared_len(), shared, "a cut into the prefix shortens it");
        // A fork of a fork shares the same prefix; the first fork's own positions are copied.
        let mut grand = fork.fork();
        assert_eq!(grand.shared_len(), shared);
        let (c, d) = (steps_then_cut(&model, &mut grand, &tokens[..3], 3, n - 2), steps_then_cut(&model, &mut copy, &tokens[..3], 3, n - 2));
        assert_eq!(c, d, "cpu_kernels {cpu_kernels}");
        // The original never moved.
        assert_eq!(cache.offset(), n);
        assert_eq!(model.next_logprobs(&cache).unwrap(), before);
        let mut fresh = KvCache::new();
        model.prefill(&mut fresh, &ids).unwrap();
        let (e, f) = (model.step(&mut cache.fork(), &[ids[0]]).unwrap(), model.step(&mut fresh, &[ids[0]]).unwrap());
        assert_eq!(e.as_slice::<f32>(), f.as_slice::<f32>());
        // A kept step on a fork: what a copy's step gives, grafted onto the base without a forward.
        let mut fork = cache.fork();
        let rows = model.step_keeping(&mut cache, &mut fork, &[ids[3], ids[5]]).unwrap();
        let stepped = model.step(&mut cache.clone(), &[ids[3], ids[5]]).unwrap();
        assert_eq!(&rows[1][..], &stepped.as_slice::<f32>()[rows[1].len()..]);
        let forwards = model.forward_count().0;
        let extended = [&ids[..], &[ids[5]]].concat();
        assert_eq!(model.prefill(&mut cache, &extended).unwrap().computed, 0);
        assert_eq!(model.forward_count().0, forwards);
        assert_eq!(model.next_logprobs(&cache).unwrap(), &rows[1][..]);
    }
}

#[test]
fn forks_at_earlier_positions_equal_prefills_of_those_prefixes() {
    let _mlx = mlx_lock();
    let model = default_model();
    let ids = model.tokenizer.encode(PROSE).unwrap();
    assert!(ids.len() > 12);
    let mut cache = KvCache::new();
    // Typed in pieces, with an edit that cuts back into a chunk, and one token at a time for
    // long enough that the kept chunks are merged.
    model.prefill(&mut cache, &ids[..8]).unwrap();
    model.prefill(&mut cache, &[&ids[..5], &[ids[0]][..]].concat()).unwrap();
    for end in 5..=ids.len() {
        model.prefill(&mut cache, &ids[..end]).unwrap();
    }
    for _ in 0..40 {
        model.prefill(&mut cache, &[&ids[..], &[ids[1]][..]].concat()).unwrap();
        model.prefill(&mut cache, &ids).unwrap();
    }
    let lens = [1, 3, 5, 9, ids.len()];
    let mut forks = model.forks_at(&cache, &[&lens[..], &[0, ids.len() + 1][..]].concat()).unwrap();
    assert!(forks[5].is_none() && forks[6].is_none(), "no position before the first or past the end");
    assert_eq!(cache.offset(), ids.len(), "the cache is left as it was");
    for (len, fork) in lens.iter().zip(forks.iter_mut()) {
        let fork = fork.as_mut().expect("every cached position kept its hidden state");
        assert_eq!(fork.offset(), *len);
        let fresh = next_lp(&model, &mut KvCache::new(), &ids[..*len]);
        let got = model.next_logprobs(fork).unwrap();
        assert!(max_abs_diff(&got, &fresh) < TOL, "at {len}: {}", max_abs_diff(&got, &fresh));
        // A fork scores as a prefill of its prefix does.
        let cand = vec![ids[*len - 1], ids[0]];
        let a = model.score(fork, std::slice::from_ref(&cand)).unwrap();
        let mut c = KvCache::new();
        model.prefill(&mut c, &ids[..*len]).unwrap();
        let b = model.score(&c, std::slice::from_ref(&cand)).unwrap();
        assert!((a[0].total - b[0].total).abs() < TOL);
    }
    // The cached tokens' log-probs, read in the head matmul of a scoring forward (or alone, when
    // the candidates are single tokens), equal scoring those tokens after a prefill.
    let at = [4usize, 5, 6];
    let mut c = KvCache::new();
    model.prefill(&mut c, &ids[..4]).unwrap();
    let direct = model.score(&c, &[ids[4..7].to_vec()]).unwrap().remove(0).per_token;
    for cands in [vec![vec![ids[0], ids[1], ids[2]], vec![ids[7]]], vec![vec![ids[7]]]] {
        let rows = model.cached_rows(&cache, &at).unwrap().expect("kept");
        let (scores, cached) = model.score_with_cached(&c, &cands, rows).unwrap();
        assert_eq!(cached.len(), 3);
        for (a, b) in cached.iter().zip(&direct) {
            assert!((a - b).abs() < TOL, "{cached:?} vs {direct:?}");
        }
        for (a, b) in scores.iter().zip(model.score(&c, &cands).unwrap()) {
            assert!((a.total - b.total).abs() < TOL, "{a:?} vs {b:?}");
        }
    }
    assert!(model.cached_rows(&cache, &[0]).unwrap().is_none() && model.cached_rows(&cache, &[ids.len()]).unwrap().is_none());
}

#[test]
fn batched_scoring_equals_scoring_each_alone() {
    let _mlx = mlx_lock();
    let model = default_model();
    let tok = &model.tokenizer;
    let ctx = tok.encode("I would like to thank you for your").unwrap();
    let candidates: Vec<Vec<u32>> =
        [" help", " banana", " kind support", " patience and understanding", " time"].iter().map(|c| tok.encode(c).unwrap()).collect();
    assert!(candidates.iter().any(|c| c.len() == 1) && candidates.iter().any(|c| c.len() >= 3));
    let mut cache = KvCache::new();
    model.prefill(&mut cache, &ctx).unwrap();
    let batch = model.score(&cache, &candidates).unwrap();
    assert_eq!(cache.offset(), ctx.len(), "scoring leaves the cache as it was");
    for (cand, scored) in candidates.iter().zip(&batch) {
        let alone = &model.score(&cache, std::slice::from_ref(cand)).unwrap()[0];
        assert_eq!(scored.per_token.len(), cand.len());
        for (a, b) in scored.per_token.iter().zip(&alone.per_token) {
            assert!((a - b).abs() < TOL, "{cand:?}: {a} vs {b}");
        }
        // And each equals the log-prob read off a plain forward of context + candidate.
        let full = [ctx.clone(), cand.clone()].concat();
        let lp = log_softmax(&laya_logits(&model, &full), model.config.vocab);
        let direct: f32 = cand.iter().enumerate().map(|(j, &t)| lp[(ctx.len() + j - 1) * model.config.vocab + t as usize]).sum();
        assert!((scored.total - direct).abs() < TOL, "{cand:?}: {} vs {direct}", scored.total);
    }
    assert!(batch[0].total > batch[1].total, "help beats banana");
}

#[test]
fn the_default_model_knows_paris() {
    let _mlx = mlx_lock();
    let model = default_model();
    let ids = model.tokenizer.encode("The capital of France is").unwrap();
    let lp = next_lp(&model, &mut KvCache::new(), &ids);
    let paris = model.tokenizer.id_of("ĠParis").unwrap() as usize;
    let best = lp.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
    assert_eq!(best, paris);
    assert!((lp[paris].exp() - 0.7727).abs() < 0.005, "p(Paris) = {}", lp[paris].exp());
}

#[test]
fn the_cache_grows_past_its_first_buffer_and_stays_exact() {
    let _mlx = mlx_lock();
    let model = default_model();
    // ~300 tokens: past the first 256-position buffer, added in three pieces.
    let text = PROSE.repeat(12);
    let ids = model.tokenizer.encode(&text).unwrap();
    assert!(ids.len() > 300, "{}", ids.len());
    let ids = &ids[..300];
    let mut cache = KvCache::new();
    for end in [200, 250, 300] {
        model.prefill(&mut cache, &ids[..end]).unwrap();
    }
    assert_eq!(cache.capacity(), 2 * laya_model::KV_STEP);
    let pieces = model.next_logprobs(&cache).unwrap();
    let once = next_lp(&model, &mut KvCache::new(), ids);
    assert!(max_abs_diff(&pieces, &once) < TOL, "{}", max_abs_diff(&pieces, &once));
    // A prefill runs long prompts in 64-token blocks on the CPU: the same numbers as one forward
    // of the whole prompt (MLX's long-query path).
    let whole = laya_logits(&model, ids);
    let vocab = model.config.vocab;
    let last = log_softmax(&whole[299 * vocab..], vocab);
    assert!(max_abs_diff(&once, &last) < TOL, "{}", max_abs_diff(&once, &last));
}

#[test]
fn steps_kept_two_tokens_deep_extend_the_cache_without_a_forward() {
    let _mlx = mlx_lock();
    let model = default_model();
    let ids = model.tokenizer.encode("It was a bright cold day in April, and the clocks were striking thirteen").unwrap();
    let n = 7;
    let mut cache = KvCache::new();
    model.prefill(&mut cache, &ids[..n]).unwrap();
    // A search's first and second steps, as a word of two tokens is followed.
    let mut fork = cache.fork();
    model.step_keeping(&mut cache, &mut fork, &[ids[n]]).unwrap();
    let rows = model.step_keeping_paths(&mut cache, &mut fork, &[vec![ids[n], ids[n + 1]]]).unwrap();
    assert_eq!(cache.offset(), n, "the base is not extended");
    assert_eq!(cache.lookahead_path(&[ids[n], ids[n + 1]]).as_deref(), Some(&rows[0][..]));
    assert!(cache.lookahead_path(&[ids[n + 1], ids[n]]).is_none());
    // A path that is not what the fork holds past the base is refused.
    assert!(model.step_keeping_paths(&mut cache, &mut fork, &[vec![ids[n + 5], ids[n + 1], ids[n + 2]]]).is_err());
    assert!(model.step_keeping_paths(&mut cache, &mut fork, &[vec![ids[n], ids[n + 1], ids[n + 2], ids[n + 3]]]).is_err());

    // Extending by both tokens runs no forward, with the numbers of a fresh cache.
    let f = model.forward_count().0;
    let p = model.prefill(&mut cache, &ids[..n + 2]).unwrap();
    assert_eq!((p.reused, p.computed), (n + 2, 0));
    assert_eq!(model.forward_count().0, f);
    assert_eq!(model.next_logprobs(&cache).unwrap(), rows[0].to_vec());
    model.prefill(&mut cache, &ids).unwrap();
    let fresh = next_lp(&model, &mut KvCache::new(), &ids);
    assert!(max_abs_diff(&model.next_logprobs(&cache).unwrap(), &fresh) < TOL, "{}", max_abs_diff(&model.next_logprobs(&cache).unwrap(), &fresh));
}
