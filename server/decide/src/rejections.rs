//! What a writer turned down: a ghost text they read and typed past is a suggestion they do not
//! want at that kind of place. Twice turned down after the same word, the same word is shown
//! there again only when the model is nearly certain of it.

use std::collections::HashMap;

use laya_text::{is_word_char, split_at_cursor};

use crate::ghost::Ghost;

/// Turn-downs of one suggestion after one word before it is held back.
const HELD_BACK_AFTER: u32 = 2;
/// The probability a held-back suggestion needs to show all the same.
const HELD_BACK_BAR: f32 = 0.95;
/// Places remembered at most (a document's worth; the oldest are not told apart).
const MAX_PLACES: usize = 4096;

/// Turn-downs by place: (the word before the one suggested, the word suggested), lower case.
#[derive(Debug, Default, Clone)]
pub struct Rejections {
    seen: HashMap<(String, String), u32>,
}

impl Rejections {
    /// `g`, shown after `before`, was read and typed past.
    pub fn record(&mut self, before: &str, g: &Ghost) {
        if self.seen.len() >= MAX_PLACES {
            self.seen.clear();
        }
        *self.seen.entry(place(before, g)).or_insert(0) += 1;
    }

    /// Whether `g`, after `before`, is held back: turned down at such places before, and the
    /// model is not nearly certain of it.
    pub fn holds_back(&self, before: &str, g: &Ghost) -> bool {
        g.probability < HELD_BACK_BAR && self.seen.get(&place(before, g)).is_some_and(|&n| n >= HELD_BACK_AFTER)
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

/// (the word before the one being typed or guessed, the whole word the suggestion makes).
fn place(before: &str, g: &Ghost) -> (String, String) {
    let split = split_at_cursor(before);
    let typed = &split.word[..split.word.len().saturating_sub(g.replace.min(split.word.len()))];
    let first: String = g.insert.trim_start().chars().take_while(|&c| is_word_char(c)).collect();
    let word = if g.insert.starts_with(' ') || split.word.is_empty() { first } else { format!("{typed}{first}") };
    let prev: String = split.context.trim_end().chars().rev().take_while(|&c| is_word_char(c)).collect::<Vec<_>>().into_iter().rev().collect();
    (prev.to_lowercase(), word.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(insert: &str, probability: f32) -> Ghost {
        Ghost { insert: insert.into(), replace: 0, probability, words: 1 }
    }

    #[test]
    fn twice_turned_down_after_a_word_it_is_held_back_unless_nearly_certain() {
        let mut r = Rejections::default();
        r.record("I went to the sto", &g("re", 0.6));
        assert!(!r.holds_back("Then the sto", &g("re", 0.6)), "once is not a pattern");
        r.record("We saw the ", &g("store", 0.6)); // the same word, guessed whole after "the"
        assert!(r.holds_back("Then the s", &g("tore", 0.6)));
        assert!(!r.holds_back("Then the s", &g("tore", 0.97)), "nearly certain: shown");
        assert!(!r.holds_back("Then a s", &g("tore", 0.6)), "after another word: shown");
        assert!(!r.holds_back("Then the s", &g("ame", 0.6)), "another word: shown");
    }
}
