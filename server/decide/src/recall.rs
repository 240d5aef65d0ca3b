//! The writer's own words (a cache language model): counts of the words, word pairs and word
//! triples of text the writer wrote — the document up to the cursor, added as it grows, and a
//! fixed store of the workspace's prose — and the distribution they give over the words that
//! may follow a history and start with the typed letters. Ghost text mixes it with the model's.
//!
//! Words are counted in lower case ("The" at a sentence's start and "the" inside one are one
//! word, and the typed letters match either), but each keeps the form the writer last wrote it
//! in inside a sentence, so "GitHub" or "Zorblax" is offered as written. A chain of words is
//! broken by anything but spaces and single line breaks (punctuation, a blank line): a history
//! never reaches across a sentence or a list item's end.

use std::collections::HashMap;

use laya_text::is_word_char;

/// Word occurrences one store counts at most; past that it stops counting (a document of
/// about 100,000 words, or a workspace's worth of prose): memory stays bounded.
pub const MAX_WORDS: usize = 100_000;

/// How a store's distribution is mixed with the model's (see [`Recall::predict`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecallOptions {
    /// The cache's largest share of the mixture, by order: after two words, after one, alone.
    pub weight: [f32; 3],
    /// Continuations of a history (that agree with the typed letters) at which the cache's
    /// share is half its largest: with `n` seen, the share is `weight * n / (n + evidence)`.
    pub evidence: f32,
    /// The workspace's counts weigh this much against the document's.
    pub workspace_weight: f32,
    /// The cache's share for a word of the writer's own that the lexicon does not know (a
    /// name, a term): the model has no probability for it to mix with.
    pub own_weight: f32,
}

impl Default for RecallOptions {
    fn default() -> Self {
        Self { weight: [0.6, 0.5, 0.3], evidence: 2.0, workspace_weight: 0.5, own_weight: 0.7 }
    }
}

/// Counts of one body of text. Words are ids into `forms`.
#[derive(Debug, Default, Clone)]
pub struct Recall {
    ids: HashMap<String, u32>,
    /// The form each word was last written in inside a sentence (or at its start, if only there).
    forms: Vec<String>,
    /// Whether `forms[i]` was seen inside a sentence.
    form_inside: Vec<bool>,
    unigrams: Vec<u32>,
    bigrams: HashMap<u32, Vec<(u32, u32)>>,
    trigrams: HashMap<(u32, u32), Vec<(u32, u32)>>,
    words: usize,
    /// The last words of the chain being read (most recent last), and a word not yet ended
    /// (the text added so far stopped inside or right after it).
    chain: Vec<u32>,
    pending: String,
    /// Whether the text added so far ends in a break of the chain that `pending` must not join
    /// across (punctuation); whitespace since the last word, and whether it held a line break.
    broken: bool,
    newline: bool,
}

/// What the writer's words predict after a history: the likeliest word, its probability among
/// the words that agree with the typed letters, and the cache's share of the mixture.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// Lower-case word -> probability, the likeliest first.
    pub words: Vec<(String, f32)>,
    /// The form to offer each word in (as the writer wrote it).
    pub forms: Vec<String>,
    /// The cache's share λ: P = (1 - λ) P_model + λ P_cache.
    pub lambda: f32,
    /// Times the history and the typed letters were seen followed by a word, and the order
    /// used (3: two words of history, 2: one, 1: none).
    pub evidence: f32,
    pub order: usize,
}

impl Recalled {
    pub fn p(&self, word: &str) -> f32 {
        let w = word.to_lowercase();
        self.words.iter().find(|(x, _)| *x == w).map_or(0.0, |(_, p)| *p)
    }
}

impl Recall {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fixed store of whole texts (each ends its own chain).
    pub fn of_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut r = Self::new();
        for t in texts {
            r.add_prose(t);
            r.end_chain();
        }
        r
    }

    /// Word occurrences counted.
    pub fn len(&self) -> usize {
        self.words
    }

    pub fn is_empty(&self) -> bool {
        self.words == 0
    }

    /// Whether the store can count no more.
    pub fn is_full(&self) -> bool {
        self.words >= MAX_WORDS
    }

    /// Times `word` (any case) was counted.
    pub fn count(&self, word: &str) -> u32 {
        self.ids.get(&word.to_lowercase()).map_or(0, |&i| self.unigrams[i as usize])
    }

    /// Counts `text`, the continuation of what was added before (the document as it grows).
    /// A word at the end of `text` is counted once what follows it is known.
    pub fn add(&mut self, text: &str) {
        for c in text.chars() {
            if is_word_char(c) {
                if self.pending.is_empty() {
                    // A new word: does it continue the chain?
                    if self.broken {
                        self.chain.clear();
                    }
                    self.broken = false;
                    self.newline = false;
                }
                self.pending.push(c);
                continue;
            }
            self.end_word();
            match c {
                ' ' | '\t' => {}
                '\n' | '\r' => {
                    if c == '\n' && self.newline {
                        self.broken = true; // a blank line
                    }
                    self.newline |= c == '\n';
                }
                _ => self.broken = true,
            }
        }
    }

    /// Counts the prose of `text` (not its code, URLs, math or front matter): each stretch
    /// between two such spans is a chain of its own. The text continues what was added before,
    /// like [`Recall::add`]; a span that began before `text` is not seen.
    pub fn add_prose(&mut self, text: &str) {
        let mask = laya_text::prose_mask(text);
        let mut at = 0;
        for r in mask.excluded() {
            if r.start > at {
                self.add(&text[at..r.start]);
            }
            self.end_chain();
            at = at.max(r.end);
        }
        if at < text.len() {
            self.add(&text[at..]);
        }
    }

    /// Ends the chain: the text added next starts afresh (another file).
    pub fn end_chain(&mut self) {
        self.end_word();
        self.chain.clear();
        self.broken = false;
        self.newline = false;
    }

    fn end_word(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let word = std::mem::take(&mut self.pending);
        // A leading or trailing apostrophe is a quote mark.
        let word = word.trim_matches(['\'', '’']);
        if word.is_empty() || self.is_full() {
            self.chain.clear();
            return;
        }
        let inside = !self.chain.is_empty();
        let key = word.to_lowercase();
        let id = match self.ids.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.forms.len() as u32;
                self.ids.insert(key, i);
                self.forms.push(word.to_string());
                self.form_inside.push(inside);
                self.unigrams.push(0);
                i
            }
        };
        if inside || !self.form_inside[id as usize] {
            self.forms[id as usize] = word.to_string();
            self.form_inside[id as usize] |= inside;
        }
        self.unigrams[id as usize] += 1;
        self.words += 1;
        if let Some(&a) = self.chain.last() {
            bump(self.bigrams.entry(a).or_default(), id);
            if self.chain.len() >= 2 {
                let b = self.chain[self.chain.len() - 2];
                bump(self.trigrams.entry((b, a)).or_default(), id);
            }
        }
        self.chain.push(id);
        if self.chain.len() > 2 {
            self.chain.remove(0);
        }
    }

    /// The last one or two words of the chain `context` ends in (lower case, oldest first), as
    /// [`Recall::add`] would read them: empty when it ends in punctuation or a blank line.
    pub fn history(context: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut rest = context;
        while out.len() < 2 {
            let trimmed = rest.trim_end_matches([' ', '\t', '\r']);
            let trimmed = trimmed.strip_suffix('\n').map_or(trimmed, |t| t.trim_end_matches([' ', '\t', '\r']));
            if trimmed.ends_with('\n') {
                break; // a blank line
            }
            if !out.is_empty() && trimmed.len() == rest.len() {
                break; // two words with no space between: not a chain
            }
            let start = trimmed.char_indices().rev().take_while(|&(_, c)| is_word_char(c)).last().map(|(i, _)| i);
            let Some(start) = start else { break };
            let word = trimmed[start..].trim_matches(['\'', '’']);
            if word.is_empty() {
                break;
            }
            out.push(word.to_lowercase());
            rest = &trimmed[..start];
            if rest.ends_with(['\'', '’']) {
                break;
            }
        }
        out.reverse();
        out
    }

    /// The continuations of `history` (see [`Recall::history`]) that start with `typed` (any
    /// case), at each order: (word id, count).
    fn continuations(&self, history: &[String], order: usize, typed: &str) -> Vec<(u32, u32)> {
        let id = |w: &String| self.ids.get(w).copied();
        let all: Vec<(u32, u32)> = match order {
            3 => match history {
                [a, b] => id(a).zip(id(b)).and_then(|k| self.trigrams.get(&k)).cloned().unwrap_or_default(),
                _ => vec![],
            },
            2 => history.last().and_then(id).and_then(|k| self.bigrams.get(&k)).cloned().unwrap_or_default(),
            _ if typed.is_empty() => vec![], // a word from nothing but its frequency: no
            _ => (0..self.forms.len() as u32).map(|i| (i, self.unigrams[i as usize])).collect(),
        };
        let typed = typed.to_lowercase();
        all.into_iter().filter(|(i, _)| starts_with_ci(&self.forms[*i as usize], &typed)).collect()
    }

    /// What `stores` (each with its weight) predict after `context` (the text before the word
    /// being typed) for a word that starts with `typed` (the letters typed of it; empty for the
    /// next word after a space): the highest order with any continuation that agrees, its words'
    /// probabilities, and the cache's share of the mixture. None when there is no evidence.
    pub fn predict(stores: &[(&Recall, f32)], context: &str, typed: &str, opts: &RecallOptions) -> Option<Recalled> {
        let history = Self::history(context);
        for order in (1..=3).rev() {
            if order > history.len() + 1 {
                continue;
            }
            let mut counts: Vec<(String, f32, String)> = Vec::new();
            for &(store, weight) in stores {
                for (i, n) in store.continuations(&history, order, typed) {
                    let form = &store.forms[i as usize];
                    let key = form.to_lowercase();
                    match counts.iter_mut().find(|(k, _, _)| *k == key) {
                        Some(e) => e.1 += n as f32 * weight,
                        None => counts.push((key, n as f32 * weight, form.clone())),
                    }
                }
            }
            let total: f32 = counts.iter().map(|c| c.1).sum();
            if total <= 0.0 {
                continue;
            }
            counts.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            counts.truncate(8);
            let max = opts.weight[3 - order];
            let lambda = max * total / (total + opts.evidence.max(f32::MIN_POSITIVE));
            return Some(Recalled {
                forms: counts.iter().map(|c| c.2.clone()).collect(),
                words: counts.into_iter().map(|c| (c.0, c.1 / total)).collect(),
                lambda,
                evidence: total,
                order,
            });
        }
        None
    }
}

fn bump(v: &mut Vec<(u32, u32)>, id: u32) {
    match v.iter_mut().find(|(i, _)| *i == id) {
        Some(e) => e.1 += 1,
        None => v.push((id, 1)),
    }
}

/// Whether `word` starts with `prefix_lower` (already lower case), ignoring case.
fn starts_with_ci(word: &str, prefix_lower: &str) -> bool {
    let mut w = word.chars().flat_map(char::to_lowercase);
    prefix_lower.chars().all(|p| w.next() == Some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_is_the_chain_the_context_ends_in() {
        assert_eq!(Recall::history("I met Zorblax and"), vec!["zorblax", "and"]);
        assert_eq!(Recall::history("I met Zorblax"), vec!["met", "zorblax"]);
        assert_eq!(Recall::history("It ended. Then"), vec!["then"]);
        assert_eq!(Recall::history("It ended."), Vec::<String>::new());
        assert_eq!(Recall::history("the long\nline"), vec!["long", "line"]);
        assert_eq!(Recall::history("one.\n\nNew"), vec!["new"]);
        assert_eq!(Recall::history("para\n\nNew"), vec!["new"]);
    }

    #[test]
    fn counts_keep_the_written_form_and_break_at_punctuation() {
        let r = Recall::of_texts(["The Zorblax engine runs. The Zorblax engine stops, then the Zorblax rests."]);
        assert_eq!(r.count("zorblax"), 3);
        let o = RecallOptions::default();
        let p = Recall::predict(&[(&r, 1.0)], "Now the", "z", &o).unwrap();
        assert_eq!((p.order, p.forms[0].as_str(), p.evidence), (2, "Zorblax", 3.0));
        let p = Recall::predict(&[(&r, 1.0)], "and the Zorblax", "", &o).unwrap();
        assert_eq!(p.order, 3);
        assert!((p.p("engine") - 2.0 / 3.0).abs() < 1e-6, "{p:?}");
        // "stops, then": the comma breaks the chain, so "stops then" was never seen.
        assert!(Recall::predict(&[(&r, 1.0)], "it stops", "", &o).is_none());
        // Nothing typed and no history: no guess from frequency alone.
        assert!(Recall::predict(&[(&r, 1.0)], "Yes.", "", &o).is_none());
    }

    #[test]
    fn text_added_in_pieces_counts_as_the_whole() {
        let whole = Recall::of_texts(["alpha beta gamma, alpha beta delta"]);
        let mut pieces = Recall::new();
        for p in ["alp", "ha be", "ta gamma", ", alpha", " beta delta"] {
            pieces.add(p);
        }
        pieces.end_chain();
        assert_eq!(whole.bigrams.len(), pieces.bigrams.len());
        assert_eq!(whole.trigrams, pieces.trigrams);
        assert_eq!(whole.count("beta"), 2);
        assert_eq!(pieces.count("beta"), 2);
    }
}
