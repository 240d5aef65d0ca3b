//! Next-word decisions: completions of the word being typed and the word after it, found by a
//! constrained beam search over the model's tokens (token healing: the search backs off to
//! the start of the word and only follows tokens consistent with the typed characters).

use std::borrow::Cow;
use std::sync::Arc;

use laya_model::{KvCache, Model};
use laya_text::{is_spaceless, is_word, is_word_char, split_at_cursor};

use crate::{DecideError, Result};

/// Beam width and the longest word, in tokens, the search follows.
const BEAM: usize = 8;
const MAX_WORD_TOKENS: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuggestionKind {
    /// Finishes the word the cursor is in ("Par" -> "is").
    CompleteWord,
    /// The next word (" Paris" after "is").
    NextWord,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// What to insert at the cursor.
    pub insert: String,
    /// The whole word the suggestion ends in.
    pub word: String,
    /// Log-probability of this continuation given the text as typed.
    pub logprob: f32,
    pub kind: SuggestionKind,
}

/// Decoded text of every token, and which tokens start at a word boundary; computed once
/// per model because the search consults them for every token of every step.
pub struct Vocab {
    texts: Vec<String>,
    boundary: Vec<bool>,
    /// Ids of tokens made only of word characters (what may continue a word).
    word_ids: Vec<u32>,
    /// Ids of tokens that may start the next word: word tokens, with or without one leading space.
    start_ids: Vec<u32>,
    /// Ids sorted by text, for the tokens that begin with a typed prefix; and the same for
    /// the tokens made only of word characters, and for a space and word characters.
    by_text: Vec<u32>,
    words_by_text: Vec<u32>,
    spaced_words_by_text: Vec<u32>,
    /// Text -> id, for the tokens that are a prefix of what was typed.
    id_of: std::collections::HashMap<String, u32>,
}

impl Vocab {
    pub fn new(model: &Model) -> Result<Self> {
        let n = model.config.vocab;
        let tok = &model.tokenizer;
        let mut texts = Vec::with_capacity(n);
        for id in 0..n as u32 {
            // Ids past the tokenizer (padded vocabularies) and control tokens never match text.
            let t =
                if (id as usize) < tok.vocab_size() && !tok.is_special(id) { tok.token_text(id).map_err(DecideError::Model)? } else { String::new() };
            texts.push(t);
        }
        let special = (0..n as u32).map(|id| tok.is_special(id)).collect();
        Ok(Self::from_texts(texts, special))
    }

    /// The indexes over each token's text (empty for those that never match text) and whether
    /// it is a control token.
    fn from_texts(texts: Vec<String>, special: Vec<bool>) -> Self {
        let n = texts.len();
        // A token ends the word before it if it starts with anything but a word char
        // (space, punctuation, newline) or is a control token such as end-of-text. In scripts
        // written without spaces (Chinese, Japanese) the tokenizer's own pieces are the words:
        // a token that starts with such a character ends the word before it, and never goes
        // on with one ("天气" is a word, "真" the next).
        let boundary = texts
            .iter()
            .enumerate()
            .map(|(id, t)| match t.chars().next() {
                Some(c) => (!is_word_char(c) && c != '\u{FFFD}') || is_spaceless(c),
                None => special[id],
            })
            .collect();
        let ok = |t: &str| !t.is_empty() && !t.contains('\u{FFFD}');
        let word_ids = (0..n as u32)
            .filter(|&i| ok(&texts[i as usize]) && is_word(&texts[i as usize]) && !texts[i as usize].starts_with(is_spaceless))
            .collect();
        let start_ids = (0..n as u32)
            .filter(|&i| {
                let t = &texts[i as usize];
                ok(t) && is_word(t.strip_prefix(' ').unwrap_or(t))
            })
            .collect();
        let mut by_text: Vec<u32> = (0..n as u32).filter(|&i| ok(&texts[i as usize])).collect();
        by_text.sort_by(|&a, &b| texts[a as usize].cmp(&texts[b as usize]));
        let mut id_of = std::collections::HashMap::new();
        for &i in by_text.iter().rev() {
            id_of.insert(texts[i as usize].clone(), i);
        }
        let words_by_text = by_text.iter().copied().filter(|&i| is_word(&texts[i as usize])).collect();
        let spaced_words_by_text = by_text.iter().copied().filter(|&i| texts[i as usize].strip_prefix(' ').is_some_and(is_word)).collect();
        Self { texts, boundary, word_ids, start_ids, by_text, words_by_text, spaced_words_by_text, id_of }
    }

    /// Token ids that may follow `so_far` in a word that must start with `typed` (see
    /// [`allowed`]), found through indexes instead of a pass over the vocabulary.
    fn candidates(&self, so_far: &str, typed: &str) -> Cow<'_, [u32]> {
        if so_far.len() < typed.len() {
            let need = &typed[so_far.len()..];
            let mut out: Vec<u32> = Vec::new();
            // Tokens that are a prefix of what is still needed ("Pa" of "Par")...
            for (i, _) in need.char_indices().skip(1).chain(std::iter::once((need.len(), ' '))) {
                if let Some(&id) = self.id_of.get(&need[..i]) {
                    out.push(id);
                }
            }
            // ...and tokens that begin with all of it and go on with word characters only
            // ("Paris"). When `need` is a word, or a space and a word, those are the longer
            // tokens of the same shape: one run of an index sorted by text, found by two
            // binary searches (a space alone starts half the vocabulary).
            let text = |id: &u32| self.texts[*id as usize].as_str();
            let shaped = if is_word(need) {
                Some(&self.words_by_text)
            } else {
                need.strip_prefix(' ').filter(|w| w.is_empty() || is_word(w)).map(|_| &self.spaced_words_by_text)
            };
            match shaped {
                Some(index) => {
                    let from = index.partition_point(|id| text(id) < need);
                    let run = &index[from..];
                    let run = &run[..run.partition_point(|id| text(id).starts_with(need))];
                    out.extend(run.iter().filter(|id| text(id).len() > need.len()));
                }
                None => {
                    let from = self.by_text.partition_point(|id| text(id) < need);
                    for id in &self.by_text[from..] {
                        let t = text(id);
                        if !t.starts_with(need) {
                            break;
                        }
                        if t.len() > need.len() && is_word(&t[need.len()..]) {
                            out.push(*id);
                        }
                    }
                }
            }
            return Cow::Owned(out);
        }
        if so_far.is_empty() && typed.is_empty() {
            return Cow::Borrowed(&self.start_ids);
        }
        Cow::Borrowed(&self.word_ids)
    }
}

#[derive(Clone)]
struct Beam {
    tokens: Vec<u32>,
    text: String,
    logprob: f32,
}

/// Whether `tok` may follow `so_far` in a word that must start with `typed`: before `typed` is
/// covered the text must agree with it; after, only word characters may follow, and the word
/// may start with one space when nothing was typed.
#[cfg_attr(not(debug_assertions), allow(dead_code))]
fn allowed(so_far: &str, tok: &str, typed: &str) -> bool {
    if tok.is_empty() || tok.contains('\u{FFFD}') {
        return false;
    }
    if so_far.len() < typed.len() {
        // Still covering what was typed (`so_far` is a prefix of `typed`).
        let need = &typed[so_far.len()..];
        return if tok.len() <= need.len() { need.starts_with(tok) } else { tok.starts_with(need) && is_word(&tok[need.len()..]) };
    }
    if so_far.is_empty() && typed.is_empty() {
        return is_word(tok.strip_prefix(' ').unwrap_or(tok));
    }
    is_word(tok) && !tok.starts_with(is_spaceless)
}

/// Searches the words that can follow `cache`'s context and start with `typed`; returns them
/// with log P(word, then a boundary | context), best first, and the log of the mass of every
/// first token that agrees with `typed` (an upper bound of P(the text goes on as typed)).
/// Hypotheses whose probability, relative to that mass, falls under `floor` (a log-prob) are
/// dropped: a word's probability only shrinks as tokens are added, so they could never reach it.
///
/// What each step computed for each hypothesis is kept in `cache` ([`Model::step_keeping_paths`]):
/// the next keystroke in the same word searches the same context and mostly steps to the same
/// tokens, so those steps cost no forward, and when the word is finished the prefill that
/// extends the cache by it runs none either.
fn search(model: &Model, vocab: &Vocab, cache: &mut KvCache, typed: &str, n: usize, beam: usize, floor: f32) -> Result<(Vec<Beam>, f32)> {
    let mut fork = cache.fork();
    // Whether the fork's rows hold the live hypotheses' tokens (not when a step's log-probs came
    // from the cache's lookahead: the fork catches up only if a later step needs a forward).
    let mut fork_current = true;
    let mut logprobs: Vec<Arc<[f32]>> = vec![Arc::from(model.next_logprobs(cache)?)];
    let prefix_mass = prefix_mass(vocab, &logprobs[0], typed);
    let mut live = vec![Beam { tokens: vec![], text: String::new(), logprob: 0.0 }];
    let mut finished: Vec<Beam> = Vec::new();
    for step in 0..=MAX_WORD_TOKENS {
        let mut next: Vec<(usize, u32, f32)> = Vec::new();
        for (b, beam) in live.iter().enumerate() {
            let lp = &logprobs[b];
            // A word can end here if it has begun and does not end in an apostrophe ("April'").
            let word = beam.text.len() >= typed.len()
                && beam.text.trim_start_matches(' ').chars().any(char::is_alphanumeric)
                && !beam.text.ends_with(['\'', '’']);
            if word {
                // P(the word ends here) = mass of the tokens that start a new word.
                let end: f32 = lp.iter().zip(&vocab.boundary).filter(|(_, &e)| e).map(|(p, _)| p.exp()).sum();
                if end > 0.0 {
                    finished.push(Beam { logprob: beam.logprob + end.ln(), ..beam.clone() });
                }
            }
            if step == MAX_WORD_TOKENS {
                continue;
            }
            for &id in vocab.candidates(&beam.text, typed).iter() {
                let p = lp[id as usize];
                if p > -25.0 {
                    debug_assert!(allowed(&beam.text, &vocab.texts[id as usize], typed));
                    next.push((b, id, beam.logprob + p));
                }
            }
        }
        if next.is_empty() || step == MAX_WORD_TOKENS {
            break;
        }
        // Stop when no live hypothesis can beat the n-th finished word any more.
        finished.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
        let bar = finished.get(n.saturating_sub(1)).map_or(f32::NEG_INFINITY, |b| b.logprob);
        next.retain(|e| e.2 > bar && e.2 - prefix_mass.min(0.0) >= floor);
        best_first(&mut next, beam);
        if next.is_empty() {
            break;
        }
        let parents: Vec<u32> = next.iter().map(|e| e.0 as u32).collect();
        let paths: Vec<Vec<u32>> = next.iter().map(|&(b, id, _)| [&live[b].tokens[..], &[id]].concat()).collect();
        let kept: Option<Vec<Arc<[f32]>>> = paths.iter().map(|p| cache.lookahead_path(p)).collect();
        logprobs = match kept {
            Some(rows) => {
                fork_current = false;
                rows
            }
            None => {
                if !fork_current {
                    fork = fork_holding(model, cache, &live)?;
                    fork_current = true;
                }
                if fork.rows() > 1 {
                    let first = [cache.tokens(), &live[parents[0] as usize].tokens[..]].concat();
                    fork.select_rows(&parents, &first)?;
                }
                model.step_keeping_paths(cache, &mut fork, &paths)?
            }
        };
        live = next
            .iter()
            .map(|&(b, id, logprob)| {
                let parent = &live[b];
                let mut tokens = parent.tokens.clone();
                tokens.push(id);
                Beam { tokens, text: format!("{}{}", parent.text, vocab.texts[id as usize]), logprob }
            })
            .collect();
    }
    finished.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
    finished.dedup_by(|a, b| a.text == b.text);
    finished.truncate(n);
    Ok((finished, prefix_mass))
}

/// The tokens a search for a word that starts with `typed` steps to first, given the log-probs
/// after its context (what [`search`] does at its first step, when nothing is finished yet):
/// those that agree with `typed` and hold at least `min_prob` of the mass of all such tokens,
/// likeliest first, at most `beam`.
pub(crate) fn first_steps(vocab: &Vocab, lp: &[f32], typed: &str, beam: usize, min_prob: f32) -> Vec<u32> {
    let floor = min_prob.ln();
    let cands = vocab.candidates("", typed);
    let prefix_mass = prefix_mass(vocab, lp, typed);
    let mut next: Vec<(usize, u32, f32)> =
        cands.iter().map(|&id| (0, id, lp[id as usize])).filter(|e| e.2 > -25.0 && e.2 - prefix_mass.min(0.0) >= floor).collect();
    best_first(&mut next, beam.max(1));
    next.into_iter().map(|e| e.1).collect()
}

/// The log of the mass of every first token that agrees with `typed`, given the log-probs after
/// the context: an upper bound of P(the text goes on as typed) (a token shorter than `typed` may
/// still go elsewhere).
pub(crate) fn prefix_mass(vocab: &Vocab, lp: &[f32], typed: &str) -> f32 {
    log_sum_exp(vocab.candidates("", typed).iter().map(|&id| lp[id as usize]))
}

/// The characters a word that starts with `typed` may go on with, by the mass of the tokens
/// that agree with `typed` and continue it with that character (a token that ends inside
/// `typed` says nothing of it), likeliest first.
pub(crate) fn next_chars(vocab: &Vocab, lp: &[f32], typed: &str) -> Vec<(char, f32)> {
    let mut mass: Vec<(char, f32)> = Vec::new();
    for &id in vocab.candidates("", typed).iter() {
        let Some(c) = vocab.texts[id as usize].get(typed.len()..).and_then(|rest| rest.chars().next()).filter(|&c| is_word_char(c)) else {
            continue;
        };
        let p = lp[id as usize].exp();
        match mass.iter_mut().find(|(d, _)| *d == c) {
            Some((_, m)) => *m += p,
            None => mass.push((c, p)),
        }
    }
    mass.sort_by(|a, b| b.1.total_cmp(&a.1));
    mass
}

/// A fork of `cache` whose rows hold the live hypotheses' tokens after its context (one row when
/// there is one hypothesis): from the steps kept in the cache when they are all there, else
/// by stepping the hypotheses' tokens again.
fn fork_holding(model: &Model, cache: &KvCache, live: &[Beam]) -> Result<KvCache> {
    if let [one] = live {
        let mut fork = cache.fork();
        if fork.graft_all(&one.tokens)? {
            return Ok(fork);
        }
    }
    let mut fork = cache.fork();
    for d in 0..live.first().map_or(0, |b| b.tokens.len()) {
        let tokens: Vec<u32> = live.iter().map(|b| b.tokens[d]).collect();
        model.step(&mut fork, &tokens)?;
    }
    Ok(fork)
}

/// Keeps the `k` likeliest of `next` (parent, token, log-prob), best first; of equal ones, the
/// earlier. The same as a stable sort and a cut, without sorting the tens of thousands of
/// tokens a step may allow.
fn best_first(next: &mut Vec<(usize, u32, f32)>, k: usize) {
    if k == 0 {
        next.clear();
        return;
    }
    let mut ranked: Vec<(usize, (usize, u32, f32))> = next.drain(..).enumerate().collect();
    let order = |a: &(usize, (usize, u32, f32)), b: &(usize, (usize, u32, f32))| b.1 .2.total_cmp(&a.1 .2).then(a.0.cmp(&b.0));
    if ranked.len() > k {
        ranked.select_nth_unstable_by(k - 1, order);
        ranked.truncate(k);
    }
    ranked.sort_by(order);
    next.extend(ranked.into_iter().map(|r| r.1));
}

/// log(sum(exp(x)))
fn log_sum_exp(xs: impl Iterator<Item = f32>) -> f32 {
    let v: Vec<f32> = xs.collect();
    let m = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if m == f32::NEG_INFINITY {
        return m;
    }
    m + v.iter().map(|x| (x - m).exp()).sum::<f32>().ln()
}

/// The `n` most likely continuations of `text` (the text before the cursor): completions of
/// the word being typed, and — when the typed word is likely complete, or nothing is typed —
/// the next word. `cache` is brought to the text's context and can be reused by the caller
/// for the next keystroke.
pub fn complete(model: &Model, vocab: &Vocab, cache: &mut KvCache, text: &str, n: usize) -> Result<Vec<Suggestion>> {
    complete_with(model, vocab, cache, text, n, BEAM, true, 0.0)
}

/// [`complete`] with a given beam width (narrower is faster and finds fewer alternatives),
/// whether a typed word that may be whole also gets next-word suggestions (costs a second
/// search), and the least probability a caller will show (0 for all): the search stops
/// following words that cannot reach it, so a keystroke with no likely word costs one forward
/// instead of a whole search. Suggestions at or over `min_prob` are the same as with 0.
#[allow(clippy::too_many_arguments)]
pub fn complete_with(
    model: &Model,
    vocab: &Vocab,
    cache: &mut KvCache,
    text: &str,
    n: usize,
    beam: usize,
    next_after_whole: bool,
    min_prob: f32,
) -> Result<Vec<Suggestion>> {
    let floor = min_prob.ln(); // -inf for 0: nothing is cut
    let beam = beam.max(1);
    if n == 0 {
        return Ok(vec![]);
    }
    let split = split_at_cursor(text);
    // `typed`: what the next word must start with; `shown`: how much of it is already on screen.
    let next_word = |cache: &mut KvCache, context: &str, typed: &str, shown: usize, prior: f32| -> Result<Vec<Suggestion>> {
        let ids = model.tokenizer.encode_context(context).map_err(DecideError::Model)?;
        if ids.is_empty() {
            return Err(DecideError::Input("there is no text to continue".into()));
        }
        model.prefill(cache, &ids).map_err(DecideError::Model)?;
        Ok(search(model, vocab, cache, typed, n, beam, floor)?
            .0
            .into_iter()
            .map(|b| Suggestion {
                word: b.text.trim_start().to_string(),
                insert: b.text[shown..].to_string(),
                logprob: prior + b.logprob,
                kind: SuggestionKind::NextWord,
            })
            .collect())
    };
    if split.word.is_empty() {
        // After a space or punctuation: the next word, with what is typed (" " or "") as its start.
        let mut out = next_word(cache, split.context, split.typed, split.typed.len(), 0.0)?;
        normalize(&mut out);
        return Ok(out);
    }
    // Inside a word: complete it. Its probabilities are relative to the typed characters.
    let ids = model.tokenizer.encode_context(split.context).map_err(DecideError::Model)?;
    // P(word | what is typed) = P(word) / P(the text goes on as typed). The search finds only a
    // few words, so their sum would overstate each one; the mass of every first token that
    // agrees with the typed letters bounds P(as typed) from above (a token shorter than what is
    // typed may still go elsewhere), which keeps the probability on the cautious side.
    let (words, prefix_mass) = if ids.is_empty() {
        (vec![], f32::NEG_INFINITY) // a word at the very start of the text: no context to heal against
    } else {
        model.prefill(cache, &ids).map_err(DecideError::Model)?;
        search(model, vocab, cache, split.typed, n + 1, beam, floor)?
    };
    let total = log_sum_exp(words.iter().map(|b| b.logprob)).max(prefix_mass);
    let mut out: Vec<Suggestion> = Vec::new();
    let mut complete_as_typed = if words.is_empty() { 0.0 } else { f32::NEG_INFINITY };
    for b in &words {
        let logprob = b.logprob - total;
        if b.text == split.typed {
            complete_as_typed = logprob;
        } else {
            out.push(Suggestion {
                insert: b.text[split.typed.len()..].to_string(),
                word: b.text.trim_start().to_string(),
                logprob,
                kind: SuggestionKind::CompleteWord,
            });
        }
    }
    // The word may already be whole ("is"): then the next word is a suggestion too, weighted
    // by how likely the word is to end here.
    if next_after_whole && complete_as_typed > f32::NEG_INFINITY {
        out.extend(next_word(cache, text, " ", 0, complete_as_typed)?);
    }
    normalize(&mut out);
    out.truncate(n);
    Ok(out)
}

/// Best first, each text once: the search can reach one word by two tokenizations (" Paris",
/// and " Pa" + "ris"), and the word's probability is the sum of its paths'.
fn normalize(out: &mut Vec<Suggestion>) {
    let mut merged: Vec<Suggestion> = Vec::with_capacity(out.len());
    for s in out.drain(..) {
        match merged.iter_mut().find(|m| m.kind == s.kind && m.insert == s.insert) {
            Some(m) => m.logprob = log_sum_exp([m.logprob, s.logprob].into_iter()),
            None => merged.push(s),
        }
    }
    merged.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
    *out = merged;
}

#[cfg(test)]
mod tests {
    use super::{allowed, best_first, Vocab};

    #[test]
    fn the_indexes_find_exactly_the_allowed_tokens_once_each() {
        let texts = [
            " ",
            "P",
            "Pa",
            "Par",
            "Paris",
            "Par,",
            " P",
            " Pa",
            " Par",
            " Paris",
            " Parisian",
            " Pet",
            "ris",
            "is",
            " is",
            ".",
            ",",
            "\n",
            "'s",
            "’t",
            "don",
            " don't",
            "  The",
            " (",
            "The",
            " The",
            "re",
            "\u{FFFD}",
            "é",
            " été",
            "Pé",
            "",
        ];
        let special: Vec<bool> = texts.iter().map(|t| t.is_empty()).collect();
        let v = Vocab::from_texts(texts.iter().map(|t| t.to_string()).collect(), special);
        let cases = [
            ("", " Par"),
            (" P", " Par"),
            (" Pa", " Par"),
            ("", "Par"),
            ("P", "Par"),
            ("", " "),
            ("", ""),
            (" Par", " Par"),
            ("", "P"),
            ("", " P"),
            ("", "don"),
            ("", " don'"),
            ("", "'"),
            ("", " é"),
            ("", "P,"),
            ("", " ("),
            (" The", ""),
            ("", " Z"),
        ];
        for (so_far, typed) in cases {
            let got: Vec<u32> = v.candidates(so_far, typed).to_vec();
            let mut want: Vec<u32> = (0..texts.len() as u32).filter(|&i| allowed(so_far, texts[i as usize], typed)).collect();
            let mut sorted = got.clone();
            sorted.sort_unstable();
            want.sort_unstable();
            assert_eq!(sorted, want, "{so_far:?} {typed:?}");
            sorted.dedup();
            assert_eq!(sorted.len(), got.len(), "a token twice for {so_far:?} {typed:?}");
        }
    }

    #[test]
    fn best_first_is_a_stable_sort_and_a_cut() {
        let all: Vec<(usize, u32, f32)> = (0..200u32).map(|i| ((i % 3) as usize, i, ((i * 37) % 11) as f32 * -0.5)).collect();
        for k in [0, 1, 4, 199, 200, 300] {
            let mut want = all.clone();
            want.sort_by(|a, b| b.2.total_cmp(&a.2));
            want.truncate(k);
            let mut got = all.clone();
            best_first(&mut got, k);
            assert_eq!(got, want, "k = {k}");
        }
    }

    #[test]
    fn tokens_must_agree_with_what_was_typed() {
        assert!(allowed("", " Par", " Par"));
        assert!(allowed("", " Pa", " Par"));
        assert!(allowed(" Pa", "ris", " Par"));
        assert!(allowed("", " Paris", " Par"));
        assert!(!allowed("", " Pet", " Par"));
        assert!(!allowed("", " Par,", " Par"));
        assert!(!allowed("", "Paris", " Par"));
    }

    #[test]
    fn after_the_typed_part_only_word_chars_follow() {
        assert!(allowed(" Par", "is", " Par"));
        assert!(!allowed(" Par", " is", " Par"));
        assert!(!allowed(" Par", ".", " Par"));
    }

    #[test]
    fn a_next_word_may_start_with_one_space_when_nothing_was_typed() {
        assert!(allowed("", " The", ""));
        assert!(allowed("", "The", ""));
        assert!(!allowed("", "  The", ""));
        assert!(!allowed("", " (", ""));
        assert!(allowed("", " The", " "));
        assert!(!allowed("", "The", " "));
        assert!(allowed(" The", "re", ""));
    }
}
