//! The learned error model: how likely each single-letter slip is where it happens (a letter
//! typed for another, left out or added after a given letter, two letters swapped), counted over
//! real misspellings (data/error-model.tsv, made by scripts/make_error_model.py from codespell's
//! list), and the log-probability of the likeliest way a word became what was typed.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The table, built in: a few thousand counts.
const TABLE: &str = include_str!("../data/error-model.tsv");

/// Weight of the backoff in each context's estimate (pseudo-observations).
const BACKOFF_WEIGHT: f32 = 10.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// The word has .0, the writer typed .1.
    Sub,
    /// The writer left out .1, which follows .0 in the word.
    Del,
    /// The writer typed .1 after .0 where the word has nothing.
    Ins,
    /// The word has .0 .1, the writer typed .1 .0.
    Tra,
}

const START: char = '^';

/// ln P(a space left out between two words), for "alot" -> "a lot", "eachother" -> "each other".
/// codespell's list, which the table is counted from, names 93 such joins among its 65,000
/// misspellings and the table counts letters only, so this is set by hand among the common
/// single slips: a doubled letter written once is about −1.6 ("ocasion"), a letter left out
/// −2.8 ("hllo"), an unrelated letter for another −4.8.
const DROPPED_SPACE: f32 = -3.0;

#[derive(Debug, Default)]
pub struct ErrorModel {
    ops: HashMap<(Kind, char, char), f32>,
    /// Letters (and word starts) in the right words.
    letters: HashMap<char, f32>,
    /// Letter pairs in the right words.
    pairs: HashMap<(char, char), f32>,
    /// Each kind's rate per context and possible letter, for contexts seen rarely or never.
    backoff: HashMap<Kind, f32>,
}

impl ErrorModel {
    /// The model built into Laya.
    pub fn builtin() -> &'static ErrorModel {
        static MODEL: OnceLock<ErrorModel> = OnceLock::new();
        MODEL.get_or_init(|| ErrorModel::parse(TABLE))
    }

    fn parse(table: &str) -> ErrorModel {
        let mut m = ErrorModel::default();
        for line in table.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
            let mut f = line.split('\t');
            let (Some(kind), Some(key), Some(n)) = (f.next(), f.next(), f.next().and_then(|n| n.parse::<f32>().ok())) else { continue };
            let k: Vec<char> = key.chars().collect();
            match (kind, k.as_slice()) {
                ("sub", [x, '>', y]) => _ = m.ops.insert((Kind::Sub, *x, *y), n),
                ("del", [p, x]) => _ = m.ops.insert((Kind::Del, *p, *x), n),
                ("ins", [p, y]) => _ = m.ops.insert((Kind::Ins, *p, *y), n),
                ("tra", [x, y]) => _ = m.ops.insert((Kind::Tra, *x, *y), n),
                ("chr", [x]) => _ = m.letters.insert(*x, n),
                ("big", [p, x]) => _ = m.pairs.insert((*p, *x), n),
                _ => {}
            }
        }
        let letters: f32 = m.letters.values().sum();
        let pairs: f32 = m.pairs.values().sum();
        let alphabet = m.letters.len().max(1) as f32;
        for kind in [Kind::Sub, Kind::Del, Kind::Ins, Kind::Tra] {
            let total: f32 = m.ops.iter().filter(|(k, _)| k.0 == kind).map(|(_, n)| n).sum();
            let contexts = match kind {
                Kind::Sub | Kind::Ins => letters * alphabet,
                Kind::Del | Kind::Tra => pairs,
            };
            m.backoff.insert(kind, ((total + 1.0) / contexts.max(1.0)).min(0.5));
        }
        m
    }

    /// ln P(this slip), smoothed towards its kind's rate.
    fn log_p(&self, kind: Kind, a: char, b: char) -> f32 {
        let n = self.ops.get(&(kind, a, b)).copied().unwrap_or(0.0);
        let context = match kind {
            Kind::Sub | Kind::Ins => self.letters.get(&a).copied().unwrap_or(0.0),
            Kind::Del | Kind::Tra => self.pairs.get(&(a, b)).copied().unwrap_or(0.0),
        };
        let backoff = self.backoff.get(&kind).copied().unwrap_or(1e-4);
        ((n + BACKOFF_WEIGHT * backoff) / (context + BACKOFF_WEIGHT)).ln()
    }

    /// ln P(`typed` | the writer meant `word`) by the likeliest sequence of slips (Viterbi over
    /// substitutions, omissions, additions and swaps; letters kept cost nothing). Case is ignored.
    pub fn log_likelihood(&self, typed: &str, word: &str) -> f32 {
        let t: Vec<char> = typed.to_lowercase().replace('’', "'").chars().collect();
        let w: Vec<char> = word.to_lowercase().replace('’', "'").chars().collect();
        // Two words typed as one ("alot" for "a lot"): the space left out, and nothing else.
        if w.iter().filter(|&&c| c == ' ').count() == 1 && w.iter().filter(|&&c| c != ' ').eq(t.iter()) {
            return DROPPED_SPACE;
        }
        let (n, m) = (w.len(), t.len());
        let mut d = vec![vec![f32::NEG_INFINITY; m + 1]; n + 1];
        d[0][0] = 0.0;
        for i in 0..=n {
            for j in 0..=m {
                let mut best = d[i][j];
                let before = |k: usize| if k == 0 { START } else { w[k - 1] };
                if i > 0 && j > 0 {
                    let step = if w[i - 1] == t[j - 1] { 0.0 } else { self.log_p(Kind::Sub, w[i - 1], t[j - 1]) };
                    best = best.max(d[i - 1][j - 1] + step);
                }
                if i > 0 {
                    best = best.max(d[i - 1][j] + self.log_p(Kind::Del, before(i - 1), w[i - 1]));
                }
                if j > 0 {
                    best = best.max(d[i][j - 1] + self.log_p(Kind::Ins, before(i), t[j - 1]));
                }
                if i > 1 && j > 1 && w[i - 1] == t[j - 2] && w[i - 2] == t[j - 1] && w[i - 1] != w[i - 2] {
                    best = best.max(d[i - 2][j - 2] + self.log_p(Kind::Tra, w[i - 2], w[i - 1]));
                }
                d[i][j] = best;
            }
        }
        d[n][m]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_slips_are_likelier_than_odd_ones() {
        let m = ErrorModel::builtin();
        assert_eq!(m.log_likelihood("word", "word"), 0.0);
        // A doubled letter written once beats an unrelated letter dropped.
        assert!(m.log_likelihood("ocasion", "occasion") > m.log_likelihood("ocasion", "ovcasion"));
        // "ie" for "ei" is a swap writers make; "ei" -> "ex" is not.
        assert!(m.log_likelihood("recieve", "receive") > m.log_likelihood("recxive", "receive"));
        // Vowels of unstressed syllables: "seperate".
        assert!(m.log_likelihood("seperate", "separate") > m.log_likelihood("sqparate", "separate"));
        assert!(m.log_likelihood("teh", "the") > m.log_likelihood("teh", "ten") - 5.0);
    }

    #[test]
    fn a_doubled_letter_added_or_dropped_is_one_likely_slip() {
        let m = ErrorModel::builtin();
        // About as likely as the commonest slips, wherever the pair stands in the word.
        for (typed, word) in [("boddy", "body"), ("untill", "until"), ("ocasion", "occasion"), ("messsages", "messages")] {
            assert!(m.log_likelihood(typed, word) > -5.0, "{typed} for {word}: {}", m.log_likelihood(typed, word));
        }
        // Likelier than another letter added at the same place.
        assert!(m.log_likelihood("boddy", "body") > m.log_likelihood("bodgy", "body") + 2.0);
    }

    #[test]
    fn two_words_typed_as_one_are_one_slip() {
        let m = ErrorModel::builtin();
        assert_eq!(m.log_likelihood("alot", "a lot"), DROPPED_SPACE);
        assert_eq!(m.log_likelihood("Eachother", "each other"), DROPPED_SPACE);
        // A join with another slip in it takes the letters' path, and is less likely.
        assert!(m.log_likelihood("eachoter", "each other") < DROPPED_SPACE - 1.0);
    }
}
