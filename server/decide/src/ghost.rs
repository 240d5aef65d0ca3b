//! Ghost text: the one suggestion an editor shows at the cursor, or none. Decides whether the
//! model is confident enough to show anything, extends a word to a phrase the writer already
//! wrote (with recall) or one the model is sure of word by word,
//! corrects a misspelled prefix ("recie" -> "receive"), and stays quiet outside prose.

use laya_model::{KvCache, Model};
use laya_text::{is_prose_at, is_word_char, split_at_cursor};

use crate::complete::{complete_with, first_steps, next_chars, Suggestion, SuggestionKind, Vocab};
use crate::lexicon::match_case;
use crate::recall::{Recall, RecallOptions, Recalled};
use crate::typo::Speller;
use crate::{DecideError, Result};

/// Beam width of the ghost's search: one suggestion needs fewer hypotheses than a list.
const GHOST_BEAM: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GhostOptions {
    /// Least probability of a word (given what is typed) for it to be shown.
    pub threshold: f32,
    /// Least probability of the next word after a space or punctuation, with nothing of it
    /// typed yet (guessing a whole word is riskier than finishing one).
    pub next_threshold: f32,
    /// Fewest characters a guess of the next word must add, nothing of it typed yet (one key to
    /// accept it must save something). A completion of the word being typed shows from one
    /// letter: typing through a suggestion keeps it on show to the word's end, and a client
    /// that asks only after a burst of keys sees the same (see [`adds_enough`]).
    pub min_chars: usize,
    /// Least probability of each further word for a phrase to grow.
    pub phrase_threshold: f32,
    /// Most words in one suggestion.
    pub max_words: usize,
    /// How much a word's length moves the bar of its rest (some of it typed; a whole next word
    /// keeps `next_threshold`): the odds it needs are the bar's times
    /// (`LENGTH_REF` / its characters) to this power, so a long word, which saves more keys when
    /// right, shows a little less sure than a short one (0: one bar for every length).
    pub length_weight: f32,
    /// How the writer's own words are mixed with the model's (None: not at all).
    pub recall: Option<RecallOptions>,
}

impl Default for GhostOptions {
    fn default() -> Self {
        // The writer's words are mixed in only when asked (`recall`): mixed in by default, they
        // held a model that was sure back where the document had followed the same word with
        // another ("The capital of France is Paris." then "... of Germany is " showed no
        // "Berlin"), for no gain in keystrokes saved (docs/benchmarks.md).
        // The rest-of-word bar is a six-letter word's; a longer word needs less
        // (`length_weight`). Against 0.5 / 0.7 for every word, the default before, 1.1–3.8
        // points fewer of the shown are wrong on the five texts of data/dev/prose, for 0.7–1.8
        // points fewer keys saved; the next-word bar stays at 0.7 ("Paris" at 0.77 after "The
        // capital of France is" would need 0.78 at 0.75). docs/benchmarks.md, "A bar by the
        // word's length".
        Self { threshold: 0.55, next_threshold: 0.7, phrase_threshold: 0.7, max_words: 4, min_chars: 2, length_weight: 1.0, recall: None }
    }
}

/// The word length (characters) whose bar is the bar as set, and the length past which a word's
/// bar goes no lower. The cap is also the search's floor: at 14 letters (0.38 at a bar of 0.55)
/// the search followed words far enough to run 0.19–0.20 forwards per ghost job in the typing
/// replay against 0.13–0.15, and its p99 rose from 29–35 to 38–40 ms on the Zen 3 machine; at 8
/// (0.48) it follows about what a bar of 0.5 did.
const LENGTH_REF: f32 = 6.0;
const LENGTH_CAP: usize = 8;

impl GhostOptions {
    /// The least probability `word` needs where the bar is `bar`. A word of a script written
    /// without spaces keeps the bar: its characters are not letters (one hanzi is a syllable's
    /// worth of keys, and most suggestions there are one or two of them).
    pub fn bar_for(&self, bar: f32, word: &str) -> f32 {
        if word.chars().any(laya_text::is_spaceless) {
            return bar;
        }
        self.bar_for_len(bar, word.chars().count())
    }

    fn bar_for_len(&self, bar: f32, chars: usize) -> f32 {
        if self.length_weight == 0.0 || bar <= 0.0 || bar >= 1.0 {
            return bar;
        }
        let odds = bar / (1.0 - bar) * (LENGTH_REF / chars.clamp(1, LENGTH_CAP) as f32).powf(self.length_weight);
        odds / (1.0 + odds)
    }

    /// The lowest bar any word can have where the bar is `bar`: what a search must follow.
    pub fn floor(&self, bar: f32) -> f32 {
        self.bar_for_len(bar, LENGTH_CAP)
    }
}

/// The writer's words ghost text recalls: the document's up to the cursor, and the workspace's.
#[derive(Debug, Clone, Copy)]
pub struct Recalls<'a> {
    pub document: &'a Recall,
    pub workspace: &'a Recall,
}

impl<'a> Recalls<'a> {
    /// The stores with their weights.
    fn weighted(&self, o: &RecallOptions) -> [(&'a Recall, f32); 2] {
        [(self.document, 1.0), (self.workspace, o.workspace_weight)]
    }
}

/// Times a word the lexicon does not know must be in the writer's words to be offered.
const RECALL_UNKNOWN_MIN: u32 = 2;
/// The lowest model probability the search follows when the writer's words may lift a word
/// over the bar (each hypothesis followed costs; under this the model's share adds little).
const RECALL_FLOOR: f32 = 0.05;
/// A phrase grows from the writer's words alone only where they have followed the history
/// with the same word at least this often, and with this share of its continuations.
const RECALL_PHRASE_EVIDENCE: f32 = 2.0;
const RECALL_PHRASE_SHARE: f32 = 0.8;

#[derive(Debug, Clone, PartialEq)]
pub struct Ghost {
    /// Text to insert at the cursor (after removing `replace` bytes before it).
    pub insert: String,
    /// Bytes before the cursor the suggestion replaces (a misspelled prefix), 0 when it only inserts.
    pub replace: usize,
    /// Probability of the first word (the decision to show anything at all).
    pub probability: f32,
    /// Words in the suggestion.
    pub words: usize,
}

/// The suggestion to show after `before` (the text before the cursor; `after` is the rest of
/// its line), or None. `cache` is left holding the context for the next keystroke. `recalls`:
/// the writer's words, mixed with the model's where `opts.recall` says.
#[allow(clippy::too_many_arguments)]
pub fn ghost(
    model: &Model,
    vocab: &Vocab,
    speller: Option<&Speller>,
    recalls: Option<&Recalls>,
    cache: &mut KvCache,
    before: &str,
    after: &str,
    opts: &GhostOptions,
) -> Result<Option<Ghost>> {
    if ![opts.threshold, opts.next_threshold, opts.phrase_threshold].iter().all(|t| (0.0..=1.0).contains(t)) {
        return Err(DecideError::Input("thresholds are probabilities, between 0 and 1".into()));
    }
    // Not in the middle of a word, not outside prose, not before any text.
    if after.chars().next().is_some_and(is_word_char) || before.trim().is_empty() || !is_prose_at(before, before.len()) {
        return Ok(None);
    }
    let split = split_at_cursor(before);
    let bar = if split.word.is_empty() { opts.next_threshold.max(opts.threshold) } else { opts.threshold };
    let mid_word = !split.word.is_empty();
    // The word's length shapes the bar of the rest of a word only: a whole next word keeps its
    // one bar ("Paris" at 0.72 after a few lines and "The capital of France is" would need 0.74
    // as a five-letter word).
    let bar_of = |word: &str| if mid_word { opts.bar_for(bar, word) } else { bar };
    let low = if mid_word { opts.floor(bar) } else { bar };
    // The writer's own words, for the word being typed or the next one after a space.
    let recalled = match (recalls, opts.recall) {
        (Some(r), Some(o)) if mid_word || split.typed == " " => Recall::predict(&r.weighted(&o), split.context, split.word, &o),
        _ => None,
    }
    .filter(|r| r.lambda > 0.0);
    let recalled_count = |w: &str| recalls.filter(|_| opts.recall.is_some()).map_or(0, |r| r.document.count(w) + r.workspace.count(w));
    // A word the lexicon does not know is not offered (the model has seen "seperate" too),
    // unless the writer has used it.
    let known = |w: &str| speller.is_none_or(|sp| sp.may_offer(w)) || recalled_count(w) >= RECALL_UNKNOWN_MIN;
    let first = match &recalled {
        None => complete_with(model, vocab, cache, before, 1, GHOST_BEAM, false, low)?.into_iter().next(),
        Some(r) => {
            // P = (1 - λ) P_model + λ P_cache: a word the cache gives p needs only
            // (bar - λ p) / (1 - λ) of the model to reach the bar.
            let best = r.words.first().map_or(0.0, |w| w.1);
            let floor = ((low - r.lambda * best) / (1.0 - r.lambda)).clamp(RECALL_FLOOR, low);
            // The model's best word only, as without the cache: asking for three made the
            // search run on past it and cost a step now and then for no better choices (saved
            // 0.229 / 0.318 against 0.227 / 0.315 on the tuning texts). The cache's other words
            // are scored by their cache share alone (see [`mixed`]).
            let found = complete_with(model, vocab, cache, before, 1, GHOST_BEAM, false, floor)?;
            let own = |w: &str| speller.is_some_and(|sp| !sp.may_offer(w)) && recalled_count(w) >= RECALL_UNKNOWN_MIN;
            mixed(found, r, opts.recall.map_or(0.0, |o| o.own_weight), own, &split, mid_word)
        }
    }
    .filter(|s| !s.insert.is_empty());
    // Sure enough to show; whether it adds enough is decided on the whole suggestion, phrase
    // included (see [`adds_enough`]).
    let sure = first.filter(|s| s.logprob.exp() >= bar_of(&s.word));
    let unknown_completion = sure.as_ref().is_some_and(|s| !known(&s.word));
    let mut out = match sure {
        Some(s) if known(&s.word) => Ghost { probability: s.logprob.exp(), words: 1, replace: 0, insert: s.insert },
        _ => {
            // Nothing known and likely continues what is typed: perhaps it is misspelled.
            let typo_prefix = !split.word.is_empty()
                && speller.is_some_and(|sp| !sp.is_user_word(split.word) && (unknown_completion || !sp.lexicon().has_prefix(split.word)));
            match (typo_prefix, speller) {
                (true, Some(sp)) => match corrected(model, cache, sp, split.context, split.typed, split.word, opts)? {
                    Some(g) => g,
                    None => return Ok(None),
                },
                _ => return Ok(None),
            }
        }
    };
    // A phrase only after a word the model is already sure of.
    if out.replace > 0 || opts.max_words <= 1 || out.probability < opts.phrase_threshold {
        return Ok(adds_enough(&out.insert, mid_word, opts).then_some(out));
    }
    // A phrase the writer wrote before: "X Y Z" written, "X Y" typed, Z follows.
    if let (Some(r), Some(o), Some(_)) = (recalls, opts.recall, &recalled) {
        let mut text = format!("{before}{}", out.insert);
        while out.words < opts.max_words {
            let next = Recall::predict(&r.weighted(&o), &text, "", &o).filter(|p| p.order >= 2 && p.evidence >= RECALL_PHRASE_EVIDENCE);
            match next {
                Some(p) if p.words[0].1 >= RECALL_PHRASE_SHARE && known(&p.forms[0]) => {
                    let w = format!(" {}", p.forms[0]);
                    text.push_str(&w);
                    out.insert.push_str(&w);
                    out.words += 1;
                }
                _ => break,
            }
        }
        if out.words > 1 {
            return Ok(adds_enough(&out.insert, mid_word, opts).then_some(out));
        }
    }
    // A phrase: more words while the model is sure of each, each asked for after a space (on
    // the text ending in the word, the search would only complete that word). The forwards
    // this costs are mostly worked out while idle: the steps of each word are kept in the
    // cache (a trim keeps them, re-rooted: `KvCache::trim`), so the next keystrokes, and the
    // space after a known word worked out ahead, find them.
    // Not after a word of a script written without spaces (Chinese): its next word does not
    // follow a space, so a phrase grown this way would put one into the text.
    let spaced = out.insert.chars().last().is_some_and(|c| !laya_text::is_spaceless(c));
    let mut text = format!("{before}{}", out.insert);
    while spaced && out.words < opts.max_words {
        text.push(' ');
        let next = complete_with(model, vocab, cache, &text, 1, GHOST_BEAM, false, opts.phrase_threshold)?;
        match next.first() {
            Some(s) if s.kind == SuggestionKind::NextWord && s.logprob.exp() >= opts.phrase_threshold && !s.insert.is_empty() && known(&s.word) => {
                text.push_str(&s.insert);
                out.insert.push(' ');
                out.insert.push_str(&s.insert);
                out.words += 1;
            }
            _ => break,
        }
    }
    Ok(adds_enough(&out.insert, mid_word, opts).then_some(out))
}

/// The likeliest word of the mixture of the model's words (`found`, probabilities given what
/// is typed) and the writer's (`r`): (1 - λ) P_model + λ P_cache. A word of the writer's the
/// search did not find had less than its floor of the model's probability: it is scored by its
/// share of the cache alone, a lower bound, so no forward is spent on it. A word of the
/// writer's own (`own`: one the lexicon does not know, used at least twice: a name, a term)
/// the model cannot know at all: its share of the cache counts `own_weight`, if more than λ.
fn mixed(
    found: Vec<Suggestion>,
    r: &Recalled,
    own_weight: f32,
    own: impl Fn(&str) -> bool,
    split: &laya_text::CursorSplit,
    mid_word: bool,
) -> Option<Suggestion> {
    let mut best: Option<(f32, Suggestion)> = None;
    let mut consider = |p: f32, s: Suggestion| {
        if best.as_ref().is_none_or(|(q, _)| p > *q) {
            best = Some((p, s));
        }
    };
    for s in &found {
        let p = (1.0 - r.lambda) * s.logprob.exp() + r.lambda * r.p(&s.word);
        consider(p, s.clone());
    }
    let typed_chars = split.word.chars().count();
    for ((word, pc), form) in r.words.iter().zip(&r.forms) {
        if found.iter().any(|s| s.word.to_lowercase() == *word) {
            continue;
        }
        let rest: String = form.chars().skip(typed_chars).collect();
        if rest.is_empty() {
            continue; // the word as typed
        }
        let kind = if mid_word { SuggestionKind::CompleteWord } else { SuggestionKind::NextWord };
        let word = format!("{}{rest}", split.word);
        let weight = if own(form) { r.lambda.max(own_weight) } else { r.lambda };
        consider(weight * pc, Suggestion { insert: rest, word, logprob: 0.0, kind });
    }
    best.map(|(p, s)| Suggestion { logprob: p.ln(), ..s })
}

/// Whether a suggestion adds enough to show. Inside a word (`mid_word`: some of it typed), any
/// letter does: the rest of a word shows to its end ("p" after "hel"), as it does while the
/// writer types through a suggestion, so a client that asks at every key and one that asks
/// after a burst see the same. A guess of the next word needs `opts.min_chars` characters past
/// its leading space ("I" is not worth a key).
pub fn adds_enough(insert: &str, mid_word: bool, opts: &GhostOptions) -> bool {
    insert.trim_start().chars().count() >= if mid_word { 1 } else { opts.min_chars }
}

/// What [`ghost`] would answer once the writer has typed `typed` after the text a suggestion
/// `g` was made for, when that is known without the model.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedThrough {
    /// The rest of `g`: the same word and phrase the model would pick again.
    Shows(Ghost),
    /// Only the model can say (the writer typed something else, or the phrase could now grow).
    AskModel,
}

/// The rule that keeps ghost text a function of the text and the cursor, not of which keys a
/// client asked at. Typing the start of a suggested word only makes that word likelier (its
/// probability given the longer prefix is at least what it was), so [`ghost`] picks the same
/// word again; what follows it is the same phrase when the phrase was already grown, or could
/// not grow for a reason the typed letters do not change (its next word was unsure, or phrases
/// are off). Only when `g` was too unsure for a phrase (below `phrase_threshold`) may the
/// longer prefix, now surer, grow one: then the model is asked, as for a client that never saw `g`.
/// `opts` must be the options `g` was made with. A correction (`replace` > 0) is never typed through.
pub fn typed_through(g: &Ghost, typed: &str, opts: &GhostOptions) -> TypedThrough {
    if g.replace > 0 || typed.is_empty() || g.insert.len() <= typed.len() {
        return TypedThrough::AskModel;
    }
    let Some(rest) = g.insert.strip_prefix(typed) else { return TypedThrough::AskModel };
    // Typing through stays inside the first word (a space typed starts the next word's search).
    let first_word_end = g.insert.char_indices().skip(1).find(|&(_, c)| !is_word_char(c)).map_or(g.insert.len(), |(i, _)| i);
    if typed.len() >= first_word_end || !typed.chars().all(is_word_char) {
        return TypedThrough::AskModel;
    }
    let phrase_settled = g.words > 1 || opts.max_words <= 1 || g.probability >= opts.phrase_threshold;
    if !phrase_settled {
        return TypedThrough::AskModel;
    }
    // Inside the first word, with a letter or more of it left: enough to show (adds_enough).
    TypedThrough::Shows(Ghost { insert: rest.to_string(), ..g.clone() })
}

/// Keys other than letters that often end a word: after a word, the step for the mark's token
/// is worked out ahead like a letter's (the space has a whole speculation of its own).
const MARKS: [char; 9] = [',', '.', ';', ':', '?', '!', ')', '-', '/'];

/// Most marks worked out ahead after a word, and the least probability of one there.
const MARKS_AHEAD: usize = 2;
const MARK_MIN_PROB: f32 = 0.05;

/// Work for idle time: the steps the ghost text of the next keystroke would run if that key is
/// one more letter of the word at the cursor (its search's first step: [`first_steps`]), for the
/// `letters` likeliest letters but `skip` (the letter the shown suggestion goes on with: typing
/// it needs no model), or a mark that ends the word ("," or "."; the step for its token after
/// the word's), likeliest key first, without those `cache` already keeps. Each is one forward
/// of [`step_ahead`]. `cache` must hold the word's context (as after [`ghost`] for `before`, or
/// after the ghost text for a space after it); nothing is planned when it does not.
#[allow(clippy::too_many_arguments)]
pub fn letters_ahead(
    model: &Model,
    vocab: &Vocab,
    cache: &KvCache,
    before: &str,
    after: &str,
    opts: &GhostOptions,
    letters: usize,
    skip: Option<char>,
) -> Result<Vec<LetterStep>> {
    if after.chars().next().is_some_and(is_word_char) || before.trim().is_empty() || !is_prose_at(before, before.len()) {
        return Ok(vec![]);
    }
    let split = split_at_cursor(before);
    let ids = model.tokenizer.encode_context(split.context)?;
    if ids.is_empty() || cache.tokens().len() < ids.len() || cache.tokens()[..ids.len()] != ids[..] {
        return Ok(vec![]);
    }
    let mut fork = cache.fork();
    fork.trim(ids.len())?;
    model.prefill(&mut fork, &ids)?; // the log-probs after the context are kept: no forward
    let lp = model.next_logprobs(&fork)?;
    // Each key with its probability and its steps.
    let mut keys: Vec<(f32, Vec<LetterStep>)> = Vec::new();
    let chars = next_chars(vocab, &lp, split.typed);
    let mass: f32 = chars.iter().map(|&(_, m)| m).sum();
    for (c, m) in chars.into_iter().filter(|&(c, _)| Some(c) != skip).take(letters) {
        let typed = format!("{}{c}", split.typed);
        if split_at_cursor(&format!("{before}{c}")).context != split.context {
            continue;
        }
        let steps = first_steps(vocab, &lp, &typed, GHOST_BEAM, opts.floor(opts.threshold))
            .into_iter()
            .filter(|&t| fork.lookahead(t).is_none())
            .map(|t| LetterStep { context: ids.clone(), key: c, path: vec![t] })
            .collect();
        keys.push((m / mass.max(f32::MIN_POSITIVE), steps));
    }
    if !split.word.is_empty() {
        keys.extend(marks_ahead(model, &fork, before, &ids)?);
    }
    keys.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out: Vec<LetterStep> = Vec::new();
    for step in keys.into_iter().flat_map(|(_, steps)| steps) {
        if !out.iter().any(|s| s.path == step.path) {
            out.push(step);
        }
    }
    Ok(out)
}

/// The marks likeliest to end the word at the end of `before`, with their probability after
/// it and their step: its token after the word's tokens (`fork` holds the context, `ids`).
/// Only where the word's own tokens were stepped to already (their log-probs are kept), and
/// the mark is a token of its own after them.
fn marks_ahead(model: &Model, fork: &KvCache, before: &str, ids: &[u32]) -> Result<Vec<(f32, Vec<LetterStep>)>> {
    let all = model.tokenizer.encode_document(before)?;
    let Some(word) = all.strip_prefix(ids).filter(|w| !w.is_empty()) else { return Ok(vec![]) };
    let Some(after_word) = fork.lookahead_path(word) else { return Ok(vec![]) };
    let mut out = Vec::new();
    for m in MARKS {
        // The mark's own token, and its probability, before the costlier check that the whole
        // text with the mark is tokenized as the word's tokens and that one.
        let [t] = model.tokenizer.encode(m.encode_utf8(&mut [0; 4]))?[..] else { continue };
        let p = after_word.get(t as usize).map_or(0.0, |l| l.exp());
        let path = [word, &[t]].concat();
        if p < MARK_MIN_PROB || fork.lookahead_path(&path).is_some() {
            continue;
        }
        if model.tokenizer.encode_document(&format!("{before}{m}"))?.strip_prefix(&all[..]) == Some(&[t][..]) {
            out.push((p, vec![LetterStep { context: ids.to_vec(), key: m, path }]));
        }
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.truncate(MARKS_AHEAD);
    Ok(out)
}

/// One step planned by [`letters_ahead`]: after the tokens of `context`, the tokens of `path`
/// (the word's own before a mark's), the last of which is the step's, for the keystroke that
/// types `key`.
#[derive(Debug, Clone, PartialEq)]
pub struct LetterStep {
    pub context: Vec<u32>,
    pub key: char,
    pub path: Vec<u32>,
}

/// Runs a step planned by [`letters_ahead`] and keeps what it computed in `cache` (one forward),
/// where the search of that keystroke finds it; nothing when `cache` no longer holds the
/// context or keeps the step already, or a mark's word is no longer kept to graft. For a mark,
/// `cache` is first extended by the word (a graft, no forward; what the prefill of the mark's
/// keystroke, or of a space, would do), so that the step is kept one past its tokens, as a
/// letter's first step is.
pub fn step_ahead(model: &Model, cache: &mut KvCache, step: &LetterStep) -> Result<bool> {
    let n = step.context.len();
    let Some((&token, word)) = step.path.split_last() else { return Ok(false) };
    if cache.tokens().len() < n || cache.tokens()[..n] != step.context[..] {
        return Ok(false);
    }
    if !cache.tokens()[n..].starts_with(word) {
        cache.trim(n)?;
        if !cache.graft_all(word)? {
            cache.trim(n)?;
            return Ok(false);
        }
    }
    let mut fork = cache.fork();
    fork.trim(n + word.len())?;
    if fork.lookahead(token).is_some() {
        return Ok(false);
    }
    model.step_keeping(cache, &mut fork, &[token])?;
    Ok(true)
}

/// A correction of a misspelled prefix: lexicon words that begin with something near `word`,
/// ranked by the model after `context`.
fn corrected(
    model: &Model,
    cache: &mut KvCache,
    speller: &Speller,
    context: &str,
    typed: &str,
    word: &str,
    opts: &GhostOptions,
) -> Result<Option<Ghost>> {
    if word.chars().count() < 3 {
        return Ok(None);
    }
    let cands = speller.lexicon().near_prefix(word, 1.0, 8);
    if cands.is_empty() {
        return Ok(None);
    }
    let ids = model.tokenizer.encode_context(context)?;
    if ids.is_empty() {
        return Ok(None);
    }
    model.prefill(cache, &ids)?;
    let lead = &typed[..typed.len() - word.len()];
    let toks =
        cands.iter().map(|c| model.tokenizer.encode(&format!("{lead}{}", match_case(&c.word, word)))).collect::<std::result::Result<Vec<_>, _>>()?;
    let scores = model.score(cache, &toks)?;
    // Probability among the candidates, with the edit cost as a penalty.
    let logits: Vec<f32> = scores.iter().zip(&cands).map(|(s, c)| s.total - 2.0 * c.cost).collect();
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let z: f32 = logits.iter().map(|l| (l - m).exp()).sum();
    let (best, _) = logits.iter().enumerate().fold((0, f32::NEG_INFINITY), |a, (i, &l)| if l > a.1 { (i, l) } else { a });
    // How sure the correction of what is typed is: the mass of the candidates that begin like
    // the best one ("separate", "separated", "separately" all fix "seperat" the same way).
    let stem: String = cands[best].word.to_lowercase().chars().take(word.chars().count()).collect();
    let p: f32 = logits.iter().zip(&cands).filter(|(_, c)| c.word.to_lowercase().starts_with(&stem)).map(|(l, _)| (l - m).exp() / z).sum();
    if p < opts.threshold.max(0.5) {
        return Ok(None);
    }
    Ok(Some(Ghost { insert: match_case(&cands[best].word, word), replace: word.len(), probability: p, words: 1 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(insert: &str, probability: f32, words: usize) -> Ghost {
        Ghost { insert: insert.into(), replace: 0, probability, words }
    }

    #[test]
    fn typing_through_a_suggestion_answers_what_the_model_would() {
        let o = GhostOptions::default();
        // A word sure enough for a phrase, none grown: the rest stands while it adds enough.
        assert_eq!(typed_through(&g("elp", 0.9, 1), "e", &o), TypedThrough::Shows(g("lp", 0.9, 1)));
        assert_eq!(typed_through(&g("elp", 0.9, 1), "el", &o), TypedThrough::Shows(g("p", 0.9, 1)), "to the word's last letter");
        // A phrase grown: its words follow the first word whatever was typed of it.
        assert_eq!(typed_through(&g("elp you", 0.9, 2), "el", &o), TypedThrough::Shows(g("p you", 0.9, 2)));
        // Too unsure for a phrase: the longer prefix may be sure enough to grow one.
        assert_eq!(typed_through(&g("elp", 0.6, 1), "e", &o), TypedThrough::AskModel);
        assert_eq!(typed_through(&g("elp", 0.6, 1), "e", &GhostOptions { max_words: 1, ..o }), TypedThrough::Shows(g("lp", 0.6, 1)));
        // Something else typed, the whole word typed, a space typed, a correction: the model decides.
        assert_eq!(typed_through(&g("elp", 0.9, 1), "a", &o), TypedThrough::AskModel);
        assert_eq!(typed_through(&g("elp you", 0.9, 2), "elp", &o), TypedThrough::AskModel);
        assert_eq!(typed_through(&g("elp you", 0.9, 2), "elp ", &o), TypedThrough::AskModel);
        assert_eq!(typed_through(&Ghost { replace: 3, ..g("receive", 0.9, 1) }, "r", &o), TypedThrough::AskModel);
        assert_eq!(typed_through(&g("elp", 0.9, 1), "", &o), TypedThrough::AskModel);
    }

    #[test]
    fn a_suggestion_must_add_enough() {
        let o = GhostOptions::default();
        assert!(adds_enough("p", true, &o), "the last letter of a word being typed");
        assert!(!adds_enough("I", false, &o), "a one-letter next word is not worth a key");
        assert!(!adds_enough(" I", false, &o), "a leading space does not count");
        assert!(adds_enough(" it", false, &o));
        assert!(adds_enough("p you", true, &o));
    }

    #[test]
    fn a_longer_word_needs_less_certainty_and_no_weight_means_one_bar() {
        let flat = GhostOptions { length_weight: 0.0, ..GhostOptions::default() };
        assert_eq!(flat.bar_for(0.5, "is"), 0.5);
        assert_eq!(flat.bar_for(0.5, "international"), 0.5);
        let o = GhostOptions { length_weight: 1.0, ..GhostOptions::default() };
        assert!((o.bar_for(0.5, "around") - 0.5).abs() < 1e-6, "the reference length keeps the bar");
        // Odds 1 times 6/8: an eight-letter word needs 3/7; times 6/3: a three-letter one 2/3.
        assert!((o.bar_for(0.5, "language") - 3.0 / 7.0).abs() < 1e-6);
        assert!((o.bar_for(0.5, "the") - 2.0 / 3.0).abs() < 1e-6);
        assert_eq!(o.bar_for(0.5, "contemporary"), o.bar_for(0.5, "language"), "no lower past the cap");
        assert_eq!(o.floor(0.5), o.bar_for(0.5, "language"), "the search follows every word that may show");
        assert_eq!(o.bar_for(0.5, "和国"), 0.5, "hanzi are not letters: the bar stands");
        assert_eq!(o.bar_for(0.0, "the"), 0.0, "a bar of 0 (an oracle) stays 0");
        assert_eq!(o.bar_for(1.0, "language"), 1.0);
    }
}
