//! The word search over the real default model: what one document's cache keeps between
//! keystrokes (the log-probs a search stepped to) changes what a keystroke costs, never what
//! it suggests.

use std::sync::{Mutex, MutexGuard};

use laya_decide::{complete_with, ghost, letters_ahead, step_ahead, GhostOptions, Vocab};
use laya_model::{KvCache, Model};

mod common;
use common::default_model_path;

static MLX: Mutex<()> = Mutex::new(());

/// The lock that lets one test at a time run MLX, the default model and its vocabulary.
fn default_model() -> (MutexGuard<'static, ()>, Model, Vocab) {
    let mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let path = default_model_path();
    assert!(path.exists(), "the default model is missing at {}: run `make model`", path.display());
    let model = Model::load(&path).expect("the default model loads");
    let vocab = Vocab::new(&model).unwrap();
    (mlx, model, vocab)
}

#[test]
fn typing_into_one_cache_suggests_what_a_fresh_cache_does_with_fewer_forwards() {
    let (_mlx, model, vocab) = default_model();
    let text = "The capital of France is Paris, and the capital of Germany is Berlin. I would like to thank";
    let mut warm = KvCache::new();
    let (mut warm_forwards, mut fresh_forwards) = (0, 0);
    for end in (1..=text.len()).filter(|&i| text.is_char_boundary(i)) {
        let before = &text[..end];
        // As ghost text asks: one suggestion, a narrow beam, cut at the bar for showing it.
        let f0 = model.forward_count().0;
        let a = complete_with(&model, &vocab, &mut warm, before, 1, 4, false, 0.5).unwrap();
        let f1 = model.forward_count().0;
        let b = complete_with(&model, &vocab, &mut KvCache::new(), before, 1, 4, false, 0.5).unwrap();
        let f2 = model.forward_count().0;
        warm_forwards += f1 - f0;
        fresh_forwards += f2 - f1;
        assert_eq!(a.len(), b.len(), "after {before:?}: {a:?} against {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((&x.insert, &x.word, x.kind), (&y.insert, &y.word, y.kind), "after {before:?}");
            assert!((x.logprob - y.logprob).abs() < 1e-3, "after {before:?}: {} against {}", x.logprob, y.logprob);
        }
    }
    // A fresh cache prefills the whole text every time; the warm one only what is new, and a
    // step its last search already took is not run again: 37 forwards for these 91 keys, and
    // 91 when searches kept nothing (measured on 3 Dec).
    assert!(warm_forwards * 2 < text.len() as u64, "{warm_forwards} forwards for {} keystrokes", text.len());
    assert!(fresh_forwards > warm_forwards);
    assert!(warm.nbytes() < 64 << 20);
}

#[test]
fn a_letter_or_mark_worked_out_ahead_spares_its_keystroke_a_forward_and_changes_nothing() {
    let (_mlx, model, vocab) = default_model();
    let opts = GhostOptions::default();
    let forwards = || model.forward_count().0;
    let mut planned = 0;
    for before in [
        "I would like a cup of ",
        "It was a bright cold day in Ap",
        "The capital of France is Paris, and the capital of Germany is ",
        "It was a bright cold day in April",
    ] {
        // The cache as the keystroke's own ghost text leaves it.
        let mut cache = KvCache::new();
        ghost(&model, &vocab, None, None, &mut cache, before, "", &opts).unwrap();
        let plan = letters_ahead(&model, &vocab, &cache, before, "", &opts, 3, None).unwrap();
        if before.ends_with("April") {
            // After a whole word, "," is as likely a key as a letter: its step is planned, or
            // the ghost text's own search took it already. Either way "April," runs no forward.
            let all = model.tokenizer.encode_document(&format!("{before},")).unwrap();
            let path = all.strip_prefix(cache.tokens()).expect("the cache holds the context");
            assert!(plan.iter().any(|s| s.key == ',') || cache.lookahead_path(path).is_some(), "{plan:?} {path:?}");
        }
        assert!(plan.len() <= 3 * 4 + 2, "{plan:?}");
        planned += plan.len();
        for step in &plan {
            let typed = format!("{before}{}", step.key);
            let mut cold = cache.fork();
            let f0 = forwards();
            let a = ghost(&model, &vocab, None, None, &mut cold, &typed, "", &opts).unwrap();
            let cold_forwards = forwards() - f0;
            let mut warm = cache.fork();
            assert!(step_ahead(&model, &mut warm, step).unwrap(), "{step:?} after {before:?}");
            assert!(!step_ahead(&model, &mut warm, step).unwrap(), "a step kept already is not run again");
            let f1 = forwards();
            let b = ghost(&model, &vocab, None, None, &mut warm, &typed, "", &opts).unwrap();
            let warm_forwards = forwards() - f1;
            assert_eq!(warm_forwards + 1, cold_forwards, "{typed:?}: {a:?}");
            assert_eq!(a.as_ref().map(|g| (&g.insert, g.replace, g.words)), b.as_ref().map(|g| (&g.insert, g.replace, g.words)), "{typed:?}");
            if let (Some(a), Some(b)) = (a, b) {
                assert!((a.probability - b.probability).abs() < 1e-3, "{typed:?}");
            }
        }
    }
    assert!(planned >= 3, "only {planned} steps planned");
    // Nothing inside a word, outside prose or before any text.
    let cache = KvCache::new();
    assert!(letters_ahead(&model, &vocab, &cache, "I would like a cup of t", "ea", &opts, 3, None).unwrap().is_empty());
    assert!(letters_ahead(&model, &vocab, &cache, "", "", &opts, 3, None).unwrap().is_empty());
}

#[test]
fn typing_after_a_paragraph_break_never_cuts_the_cache_back() {
    let (_mlx, model, vocab) = default_model();
    let opts = GhostOptions::default();
    // At the end of a text "\n\n" is one token, before "You" two: a cache that held the first
    // would be cut back and the break computed again at the first word of every paragraph.
    let text = "It was a bright cold day in April.\n\nYou could see the clocks";
    let from = text.find("\n\n").unwrap() + 2;
    let mut cache = KvCache::new();
    ghost(&model, &vocab, None, None, &mut cache, &text[..from], "", &opts).unwrap();
    // The break's keystroke leaves the text up to it in the cache (and a phrase after it, which
    // the next key cuts off); every later key must find the break still there.
    let kept = model.tokenizer.encode_context(&text[..from]).unwrap();
    assert!(cache.tokens().starts_with(&kept), "{:?} against {kept:?}", cache.tokens());
    for end in from + 1..=text.len() {
        ghost(&model, &vocab, None, None, &mut cache, &text[..end], "", &opts).unwrap();
        assert!(cache.tokens().starts_with(&kept), "the break was computed again after {:?}", &text[..end]);
    }
}

#[test]
fn completion_lists_from_one_cache_equal_those_of_a_fresh_cache() {
    // Wide searches (eight hypotheses, nothing cut) step many rows at once, reorder them, and
    // keep what every step computed: the next keystroke must read back the same numbers.
    let (_mlx, model, vocab) = default_model();
    let text = "I would like to thank you for";
    let mut warm = KvCache::new();
    for end in (12..=text.len()).filter(|&i| text.is_char_boundary(i)) {
        let before = &text[..end];
        let a = complete_with(&model, &vocab, &mut warm, before, 3, 8, true, 0.0).unwrap();
        let b = complete_with(&model, &vocab, &mut KvCache::new(), before, 3, 8, true, 0.0).unwrap();
        assert_eq!(a.len(), b.len(), "after {before:?}: {a:?} against {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((&x.insert, x.kind), (&y.insert, y.kind), "after {before:?}: {a:?} against {b:?}");
            assert!((x.logprob - y.logprob).abs() < 1e-3, "after {before:?}: {} against {}", x.logprob, y.logprob);
        }
    }
}

#[test]
fn a_phrase_grows_word_by_word_and_its_steps_outlive_the_next_keystrokes_trim() {
    let (_mlx, model, vocab) = default_model();
    let opts = GhostOptions::default();
    let forwards = || model.forward_count().0;
    // The model is sure of "lazy" and then of "dog": one suggestion of two words.
    let word = "The quick brown fox jumps over the";
    let space = format!("{word} ");
    let mut fresh = KvCache::new();
    let g = ghost(&model, &vocab, None, None, &mut fresh, &space, "", &opts).unwrap().expect("a suggestion");
    assert_eq!((g.insert.as_str(), g.words), ("lazy dog", 2), "{g:?}");
    // As the server works out the space after a known word while idle: the word's keystroke,
    // then the space's ghost text on the same cache. The space's real keystroke comes after
    // the word's own ghost text cut the cache back to the word: the phrase's steps were kept
    // past that cut, so it costs no forward, and it is the same phrase.
    let mut cache = KvCache::new();
    ghost(&model, &vocab, None, None, &mut cache, word, "", &opts).unwrap();
    let same_phrase = |a: Option<laya_decide::Ghost>| a.map(|a| (a.insert, a.words, (a.probability - g.probability).abs() < 1e-3));
    let first = ghost(&model, &vocab, None, None, &mut cache, &space, "", &opts).unwrap();
    assert_eq!(same_phrase(first), Some((g.insert.clone(), 2, true)));
    ghost(&model, &vocab, None, None, &mut cache, word, "", &opts).unwrap();
    let f0 = forwards();
    let again = ghost(&model, &vocab, None, None, &mut cache, &space, "", &opts).unwrap();
    assert_eq!(forwards(), f0, "the phrase was computed again");
    assert_eq!(same_phrase(again), Some((g.insert.clone(), 2, true)));
    // Typed letter by letter into one cache, the phrase is the one a fresh cache grows.
    let mut warm = KvCache::new();
    for (i, c) in "lazy dog".char_indices() {
        let typed = format!("{space}{}", &"lazy dog"[..i]);
        let a = ghost(&model, &vocab, None, None, &mut warm, &typed, "", &opts).unwrap();
        let b = ghost(&model, &vocab, None, None, &mut KvCache::new(), &typed, "", &opts).unwrap();
        assert_eq!(a.as_ref().map(|g| (&g.insert, g.words)), b.as_ref().map(|g| (&g.insert, g.words)), "{typed:?} then {c:?}");
    }
}
