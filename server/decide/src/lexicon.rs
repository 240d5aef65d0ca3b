//! The English lexicon: words with their frequencies (from `word<TAB>count` files), and the
//! words within a small, keyboard-aware edit distance of a misspelling, found by walking a trie
//! with one row of the weighted edit-distance table per level, and the words that sound like it
//! (see `phonetic.rs`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::phonetic::sound_key;

use crate::{DecideError, Result};

/// A word of the lexicon.
#[derive(Debug, Clone)]
pub struct Entry {
    /// How the word is usually written ("the", "Paris", "NASA", "I").
    pub word: String,
    /// How often it occurs, summed over its case forms.
    pub count: u64,
}

/// A lexicon word near a misspelling.
#[derive(Debug, Clone, PartialEq)]
pub struct Near {
    pub word: String,
    /// Weighted edit cost from the word to what was typed (1.0 is one ordinary edit).
    pub cost: f32,
    /// ln(count / total): the word's prior.
    pub log_prior: f32,
}

#[derive(Default)]
struct Node {
    children: Vec<(char, u32)>,
    entry: Option<u32>,
}

pub struct Lexicon {
    entries: Vec<Entry>,
    /// Lower-case form -> entry.
    index: HashMap<String, u32>,
    nodes: Vec<Node>,
    log_total: f32,
    source: PathBuf,
    /// Sound key -> entries, commonest first; built on first use (a spelling check needs it,
    /// a completion does not).
    sounds: OnceLock<HashMap<String, Vec<u32>>>,
}

/// The cost a word found by its sound ([`Lexicon::sounding_like`]) is given: beyond the edit
/// search's reach, so in context it needs the model's support to win over a nearer word.
pub const SOUND_COST: f32 = 2.5;

/// The cost of a word left joined to the next ("alot" for "a lot"): one ordinary edit.
pub const SPLIT_COST: f32 = 1.0;
/// The least ln prior of each word of a split ([`Lexicon::splits`]): common words, so that a
/// name the lexicon lacks is not read as two rare ones.
const SPLIT_PRIOR: f32 = -12.0;
/// The same for the other word beside a function word: "for instrumenting", "of comfits".
const SPLIT_PRIOR_BESIDE: f32 = -15.0;
/// Shortest word looked at for a split.
const SPLIT_LETTERS: usize = 4;
/// Taken off a split's prior, the two words' as if independent: most pairs of common words are
/// no phrase ("a add" for "aadd", "all edges" for "alledges"), and words alone have no model
/// to say which are.
const SPLIT_PENALTY: f32 = 6.0;
/// The least ln prior of the word two words make together ([`Lexicon::joined`]).
const JOIN_PRIOR: f32 = -13.0;
/// Words of which a split must have one: the joins writers make by slip are a function word and
/// its neighbour ("a lot", "in fact", "each other", "be able"). Two content words joined
/// ("callsite", "compiletime") are more often a compound the writer means.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "i", "you", "he", "she", "it", "we", "they", "me", "him", "her", "us", "them", "my", "your", "his", "its", "our", "their",
    "this", "that", "these", "those", "each", "every", "any", "some", "no", "all", "both", "other", "another", "of", "in", "on", "at", "to", "for",
    "from", "by", "with", "as", "up", "out", "off", "into", "over", "about", "after", "before", "than", "then", "and", "or", "but", "if", "so",
    "not", "be", "is", "are", "was", "were", "been", "do", "does", "did", "can", "could", "will", "would", "shall", "should", "may", "might", "must",
    "have", "has", "had", "one", "how", "what", "when", "where", "who", "why", "which", "there", "here", "even", "though", "least", "most", "more",
    "much", "many", "without", "within", "upon", "through", "while", "between", "under", "among", "across", "since", "until", "because", "although",
    "unless", "whether", "during", "against", "along", "around", "behind", "below", "beside", "beyond", "inside", "outside", "toward", "towards",
    "via", "per", "few", "several", "such", "also", "only", "just", "very",
];

/// Where `scripts/lexicon.sh` puts the lexicon, relative to the repository or an install.
pub const LEXICON_RELATIVE: &str = ".deps/lexicon/en.tsv";

impl Lexicon {
    /// Reads a `word<TAB>count` file (one word per line; `#` comments and blank lines skipped).
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| DecideError::Input(format!("cannot read the lexicon {}: {e}", path.display())))?;
        let mut words = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (w, c) = line.split_once('\t').unwrap_or((line, "1"));
            let count: u64 =
                c.trim().parse().map_err(|_| DecideError::Input(format!("{}:{}: count {c:?} is not a whole number", path.display(), n + 1)))?;
            if !w.is_empty() {
                words.push((w.to_string(), count));
            }
        }
        if words.is_empty() {
            return Err(DecideError::Input(format!("the lexicon {} has no words", path.display())));
        }
        let mut lex = Self::from_counts(words);
        lex.source = path.to_path_buf();
        Ok(lex)
    }

    /// Builds a lexicon from (word, count) pairs; case forms of a word share one entry written
    /// the way it is most often written.
    pub fn from_counts(words: impl IntoIterator<Item = (String, u64)>) -> Self {
        let mut lex = Self {
            entries: vec![],
            index: HashMap::new(),
            nodes: vec![Node::default()],
            log_total: 0.0,
            source: PathBuf::new(),
            sounds: OnceLock::new(),
        };
        let mut best_form: Vec<u64> = vec![];
        for (word, count) in words {
            let key = word.to_lowercase();
            match lex.index.get(&key) {
                Some(&i) => {
                    let e = &mut lex.entries[i as usize];
                    e.count += count;
                    if count > best_form[i as usize] {
                        best_form[i as usize] = count;
                        e.word = word;
                    }
                }
                None => {
                    let i = lex.entries.len() as u32;
                    lex.insert_key(&key, i);
                    lex.index.insert(key, i);
                    lex.entries.push(Entry { word, count });
                    best_form.push(count);
                }
            }
        }
        let total: f64 = lex.entries.iter().map(|e| e.count.max(1) as f64).sum();
        lex.log_total = total.ln() as f32;
        lex
    }

    fn insert_key(&mut self, key: &str, entry: u32) {
        let mut at = 0usize;
        for c in key.chars() {
            at = match self.nodes[at].children.binary_search_by_key(&c, |&(ch, _)| ch) {
                Ok(i) => self.nodes[at].children[i].1 as usize,
                Err(i) => {
                    let id = self.nodes.len() as u32;
                    self.nodes.push(Node::default());
                    self.nodes[at].children.insert(i, (c, id));
                    id as usize
                }
            };
        }
        self.nodes[at].entry = Some(entry);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The file it was read from (empty when built in memory).
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// The entry of a word in any case ("The", "THE" and "the" are the same word).
    pub fn get(&self, word: &str) -> Option<&Entry> {
        self.index.get(&normalize_apostrophes(&word.to_lowercase())).map(|&i| &self.entries[i as usize])
    }

    pub fn contains(&self, word: &str) -> bool {
        self.get(word).is_some()
    }

    /// ln(count / total), or None for a word not in the lexicon.
    pub fn log_prior(&self, word: &str) -> Option<f32> {
        self.get(word).map(|e| self.prior_of(e))
    }

    fn prior_of(&self, e: &Entry) -> f32 {
        (e.count.max(1) as f32).ln() - self.log_total
    }

    /// Whether some word of the lexicon starts with `prefix` (any case).
    pub fn has_prefix(&self, prefix: &str) -> bool {
        let mut at = 0usize;
        for c in normalize_apostrophes(&prefix.to_lowercase()).chars() {
            match self.nodes[at].children.binary_search_by_key(&c, |&(ch, _)| ch) {
                Ok(i) => at = self.nodes[at].children[i].1 as usize,
                Err(_) => return false,
            }
        }
        true
    }

    /// Words that begin with something within `max_cost` of `typed` ("recie" -> "receive",
    /// "receipt"): the `n` best by cost, then frequency. For correcting a word being typed.
    pub fn near_prefix(&self, typed: &str, max_cost: f32, n: usize) -> Vec<Near> {
        let Some(target) = search_target(typed) else { return vec![] };
        let mut matches = self.walk(&target, max_cost, true);
        matches.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut cost_of: HashMap<u32, f32> = HashMap::new();
        for (node, cost) in matches {
            let mut stack = vec![node];
            while let Some(x) = stack.pop() {
                let nd = &self.nodes[x as usize];
                if let Some(e) = nd.entry {
                    cost_of.entry(e).or_insert(cost);
                }
                stack.extend(nd.children.iter().map(|&(_, ch)| ch));
            }
        }
        let mut out: Vec<Near> = cost_of
            .into_iter()
            .map(|(e, cost)| {
                let entry = &self.entries[e as usize];
                Near { word: entry.word.clone(), cost, log_prior: self.prior_of(entry) }
            })
            .collect();
        out.sort_by(|a, b| a.cost.total_cmp(&b.cost).then(b.log_prior.total_cmp(&a.log_prior)));
        out.truncate(n);
        out
    }

    /// The `limit` commonest lexicon words that sound like `typed` (the same [`sound_key`]),
    /// other than `typed` itself, each at [`SOUND_COST`].
    pub fn sounding_like(&self, typed: &str, limit: usize) -> Vec<Near> {
        let Some(key) = sound_key(typed) else { return vec![] };
        let sounds = self.sounds.get_or_init(|| {
            let mut map: HashMap<String, Vec<u32>> = HashMap::new();
            for (i, e) in self.entries.iter().enumerate() {
                if let Some(k) = sound_key(&e.word) {
                    map.entry(k).or_default().push(i as u32);
                }
            }
            for v in map.values_mut() {
                v.sort_by_key(|&i| std::cmp::Reverse(self.entries[i as usize].count));
            }
            map
        });
        // `typed` itself, and each word once (entries are one per lowercase form).
        let mut seen: HashSet<u32> = self.index.get(&typed.to_lowercase()).copied().into_iter().collect();
        let mut out: Vec<Near> = Vec::new();
        let mut take = |ids: &[u32], n: usize, cost: f32, out: &mut Vec<Near>| {
            for &i in ids.iter().filter(|&&i| seen.insert(i)).take(n) {
                let e = &self.entries[i as usize];
                out.push(Near { word: e.word.clone(), cost, log_prior: self.prior_of(e) });
            }
        };
        take(sounds.get(&key).map_or(&[][..], Vec::as_slice), limit, SOUND_COST, &mut out);
        // Keys one sound away (a sound added, dropped or changed), at a higher cost.
        if key.len() >= 3 {
            const SYMBOLS: &[u8] = b"0AFHJKLMNPRSTWX";
            let k = key.as_bytes();
            let mut keys: Vec<Vec<u8>> = Vec::new();
            for i in 0..=k.len() {
                for &c in SYMBOLS {
                    let mut v = k.to_vec();
                    v.insert(i, c);
                    keys.push(v);
                    if i < k.len() && k[i] != c {
                        let mut v = k.to_vec();
                        v[i] = c;
                        keys.push(v);
                    }
                }
                if i < k.len() {
                    let mut v = k.to_vec();
                    v.remove(i);
                    keys.push(v);
                }
            }
            for v in keys {
                let Ok(other) = String::from_utf8(v) else { continue };
                // The commonest tenth of the limit of each such key, less those already taken.
                let ids = sounds.get(&other).map_or(&[][..], Vec::as_slice);
                take(&ids[..ids.len().min(limit / 10)], limit / 10, SOUND_COST + 0.5, &mut out);
            }
        }
        out
    }

    /// Two common words that `typed` is, written without the space between them: "alot" -> "a
    /// lot", "eachother" -> "each other", "infact" -> "in fact", where one of the two is a
    /// function word (FUNCTION_WORDS: "callsite" is no slip). Each at [`SPLIT_COST`], its prior
    /// the two words' together less SPLIT_PENALTY (in context the model says which pairs are
    /// phrases). Only a word of letters the lexicon does not know, in lower case or capitalized;
    /// each word of the split common (SPLIT_PRIOR; SPLIT_PRIOR_BESIDE beside a function word) and
    /// of three letters or more unless it is a function word ("a", "I", "in").
    /// With `compounds`, two content words too ("callsite" -> "call site"): a suggestion for a
    /// word on its own, not a reason to flag one in context.
    pub fn splits(&self, typed: &str, compounds: bool) -> Vec<Near> {
        let lower = typed.to_lowercase();
        let plain = lower.chars().all(|c| c.is_ascii_lowercase()) && typed.chars().skip(1).all(|c| c.is_ascii_lowercase());
        if !plain || lower.len() < SPLIT_LETTERS || self.get(&lower).is_some() {
            return vec![];
        }
        let prior = |w: &str, floor: f32| {
            // Short words of other kinds are mostly abbreviations ("al", "co", "de").
            let short = w.len() < 3 && !FUNCTION_WORDS.contains(&w);
            self.log_prior(w).filter(|&p| p > floor && !short)
        };
        let mut out: Vec<Near> = (1..lower.len())
            .filter_map(|k| {
                let (a, b) = lower.split_at(k);
                let function = FUNCTION_WORDS.contains(&a) || FUNCTION_WORDS.contains(&b);
                if !compounds && !function {
                    return None;
                }
                let floor = if function { SPLIT_PRIOR_BESIDE } else { SPLIT_PRIOR };
                Some(Near { word: format!("{a} {b}"), cost: SPLIT_COST, log_prior: prior(a, floor)? + prior(b, floor)? - SPLIT_PENALTY })
            })
            .collect();
        out.sort_by(|a, b| b.log_prior.total_cmp(&a.log_prior));
        out
    }

    /// The one common word that `first` and `second`, written apart, make together: "in to" ->
    /// "into", "some one" -> "someone", "with out" -> "without", where one of the two is a
    /// function word (FUNCTION_WORDS; two content words apart, "data type", "file name", are
    /// most often meant). Both must be words of the lexicon, plain letters, of two letters or
    /// more unless "a" ("a head"), the second in lower case; the word they make has an ln prior
    /// over JOIN_PRIOR. In the case of `first` ("Some one" -> "Someone").
    pub fn joined(&self, first: &str, second: &str) -> Option<String> {
        let plain = |w: &str| w.chars().all(|c| c.is_ascii_alphabetic()) && w.chars().skip(1).all(|c| c.is_ascii_lowercase());
        if !plain(first) || !second.chars().all(|c| c.is_ascii_lowercase()) {
            return None;
        }
        let (a, b) = (first.to_lowercase(), second);
        let long_enough = |w: &str| w.len() >= 2 || w == "a";
        if !long_enough(&a) || !long_enough(b) || !self.contains(&a) || !self.contains(b) {
            return None;
        }
        if !FUNCTION_WORDS.contains(&a.as_str()) && !FUNCTION_WORDS.contains(&b) {
            return None;
        }
        let whole = format!("{a}{b}");
        self.log_prior(&whole).filter(|&p| p > JOIN_PRIOR)?;
        Some(match_case(&whole, first))
    }

    /// Lexicon words within `max_cost` of `typed` under the keyboard-aware error model (see
    /// [`edit_costs`]), cheapest first, ties broken by frequency. `typed` itself is excluded.
    pub fn near(&self, typed: &str, max_cost: f32) -> Vec<Near> {
        let Some(target) = search_target(typed) else { return vec![] };
        let found = self.walk(&target, max_cost, false);
        let typed_key: String = target.iter().collect();
        let mut out: Vec<Near> = found
            .into_iter()
            .filter(|&(e, _)| self.entries[e as usize].word.to_lowercase() != typed_key)
            .map(|(e, cost)| {
                let entry = &self.entries[e as usize];
                Near { word: entry.word.clone(), cost, log_prior: self.prior_of(entry) }
            })
            .collect();
        out.sort_by(|a, b| a.cost.total_cmp(&b.cost).then(b.log_prior.total_cmp(&a.log_prior)));
        out
    }
}

/// What a search compares against: the typed word in lower case with straight apostrophes
/// (None for an empty or absurdly long word).
fn search_target(typed: &str) -> Option<Vec<char>> {
    let t: Vec<char> = normalize_apostrophes(&typed.to_lowercase()).chars().collect();
    (!t.is_empty() && t.len() <= 40).then_some(t)
}

impl Lexicon {
    /// Walks the trie against `target`: (entry, cost) of whole words, or with `prefixes`
    /// (node, cost) of word prefixes, within `max_cost`.
    fn walk(&self, target: &[char], max_cost: f32, prefixes: bool) -> Vec<(u32, f32)> {
        let mut found = Vec::new();
        // Row 0: the cost of turning the empty prefix into target[..j] (j inserted characters).
        let mut row0 = vec![0.0f32; target.len() + 1];
        for j in 1..=target.len() {
            row0[j] = row0[j - 1] + insert_cost(target, j - 1);
        }
        let mut walk = Walk { lex: self, target, max_cost, found: &mut found };
        let mut path = Vec::new();
        for &(c, child) in &self.nodes[0].children {
            if prefixes {
                walk.visit_prefixes(child, c, &mut path, &row0, None);
            } else {
                walk.visit(child, c, &mut path, &row0, None);
            }
        }
        found
    }
}

struct Walk<'a> {
    lex: &'a Lexicon,
    target: &'a [char],
    max_cost: f32,
    found: &'a mut Vec<(u32, f32)>,
}

impl Walk<'_> {
    /// Like `visit`, but records trie nodes (word prefixes) whose whole-target cost is within budget.
    fn visit_prefixes(&mut self, node: u32, c: char, path: &mut Vec<char>, parent: &[f32], grand: Option<&[f32]>) {
        let Some(row) = self.row(c, path, parent, grand) else { return };
        let t = self.target.len();
        // A prefix shorter than what was typed minus one char is not a completion of it.
        if row[t] <= self.max_cost && path.len() + 1 + 1 >= t {
            self.found.push((node, row[t]));
        }
        path.push(c);
        for &(cc, child) in &self.lex.nodes[node as usize].children {
            self.visit_prefixes(child, cc, path, &row, Some(parent));
        }
        path.pop();
    }

    /// This level's row of the weighted edit-distance table, or None when every cell is over budget.
    fn row(&self, c: char, path: &[char], parent: &[f32], grand: Option<&[f32]>) -> Option<Vec<f32>> {
        let t = self.target;
        let mut row = vec![0.0f32; t.len() + 1];
        row[0] = parent[0] + delete_cost(path, c);
        let mut best = row[0];
        for j in 1..=t.len() {
            let sub = parent[j - 1] + substitute_cost(c, t[j - 1]);
            let del = parent[j] + delete_cost(path, c);
            let ins = row[j - 1] + insert_cost(t, j - 1);
            let mut v = sub.min(del).min(ins);
            if let (Some(g), Some(&prev)) = (grand, path.last()) {
                if j >= 2 && t[j - 1] == prev && t[j - 2] == c && prev != c {
                    v = v.min(g[j - 2] + TRANSPOSE);
                }
            }
            row[j] = v;
            best = best.min(v);
        }
        (best <= self.max_cost).then_some(row)
    }

    /// Visits trie node `node`, reached by char `c` (path = the word's chars before `c`):
    /// computes this level's row from the parent's (and the grandparent's, for transpositions).
    fn visit(&mut self, node: u32, c: char, path: &mut Vec<char>, parent: &[f32], grand: Option<&[f32]>) {
        let Some(row) = self.row(c, path, parent, grand) else { return };
        let t = self.target;
        let n = &self.lex.nodes[node as usize];
        if let Some(e) = n.entry {
            if row[t.len()] <= self.max_cost {
                self.found.push((e, row[t.len()]));
            }
        }
        path.push(c);
        for &(cc, child) in &n.children {
            self.visit(child, cc, path, &row, Some(parent));
        }
        path.pop();
    }
}

// ---------------------------------------------------------------------------------------------
// The error model. Costs are in "edits": 1.0 is an ordinary insertion, deletion or substitution;
// the slips typists and spellers make most often cost less.

const TRANSPOSE: f32 = 0.75;

/// A key's row and column on a QWERTY keyboard (letters only).
fn key_pos(c: char) -> Option<(i32, f32)> {
    const ROWS: [&str; 3] = ["qwertyuiop", "asdfghjkl", "zxcvbnm"];
    const SHIFT: [f32; 3] = [0.0, 0.25, 0.75];
    ROWS.iter().enumerate().find_map(|(r, row)| row.find(c).map(|i| (r as i32, i as f32 + SHIFT[r])))
}

fn adjacent_keys(a: char, b: char) -> bool {
    match (key_pos(a), key_pos(b)) {
        (Some((ra, ca)), Some((rb, cb))) => (ra - rb).abs() <= 1 && (ca - cb).abs() <= 1.0,
        _ => false,
    }
}

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y')
}

/// The word has `w`, the typist typed `t`.
fn substitute_cost(w: char, t: char) -> f32 {
    if w == t {
        0.0
    } else if is_vowel(w) && is_vowel(t) {
        0.6 // "seperate", "definately": vowels of unstressed syllables
    } else if adjacent_keys(w, t) || matches!((w, t), ('c', 's') | ('s', 'c') | ('c', 'k') | ('k', 'c') | ('s', 'z') | ('z', 's')) {
        0.7 // a neighbouring key, or letters that sound alike
    } else {
        1.0
    }
}

/// The typist left out `c`, which came after `path` in the word.
fn delete_cost(path: &[char], c: char) -> f32 {
    match path.last() {
        Some(&p) if p == c => 0.5,         // a doubled letter written once: "ocasion", "begining"
        _ if c == '\'' || c == '’' => 0.5, // "dont"
        _ if is_vowel(c) => 0.8,
        _ => 1.0,
    }
}

/// The typist typed target[j] where the word has nothing.
fn insert_cost(target: &[char], j: usize) -> f32 {
    let c = target[j];
    let prev = if j > 0 { Some(target[j - 1]) } else { None };
    let next = target.get(j + 1).copied();
    if prev == Some(c) {
        0.5 // a letter doubled: "untill", "occurr"
    } else if prev.is_some_and(|p| adjacent_keys(p, c)) || next.is_some_and(|n| adjacent_keys(n, c)) {
        0.7 // a neighbouring key caught on the way
    } else if is_vowel(c) {
        0.8
    } else {
        1.0
    }
}

fn normalize_apostrophes(s: &str) -> String {
    s.replace('’', "'")
}

/// Writes `word` in the case pattern of `like`: "The" -> "Their", "THE" -> "THEIR"; a word the
/// lexicon writes with capitals ("Paris", "I") keeps them.
pub fn match_case(word: &str, like: &str) -> String {
    let letters: Vec<char> = like.chars().filter(|c| c.is_alphabetic()).collect();
    if letters.len() > 1 && letters.iter().all(|c| c.is_uppercase()) {
        return word.to_uppercase();
    }
    if letters.first().is_some_and(|c| c.is_uppercase()) {
        let mut cs = word.chars();
        return match cs.next() {
            Some(f) => f.to_uppercase().chain(cs).collect(),
            None => String::new(),
        };
    }
    word.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex() -> Lexicon {
        Lexicon::from_counts(
            [("the", 1000), ("they", 300), ("then", 200), ("receive", 50), ("Paris", 40), ("paris", 2), ("occasion", 20), ("separate", 30)]
                .map(|(w, c)| (w.to_string(), c)),
        )
    }

    #[test]
    fn case_forms_share_an_entry_written_the_usual_way() {
        let l = lex();
        assert_eq!(l.get("PARIS").unwrap().word, "Paris");
        assert_eq!(l.get("paris").unwrap().count, 42);
        assert!(l.contains("The"));
        assert!(!l.contains("teh"));
    }

    #[test]
    fn near_finds_transpositions_doubles_and_vowel_slips() {
        let l = lex();
        assert_eq!(l.near("teh", 1.0)[0].word, "the");
        assert_eq!(l.near("recieve", 1.0)[0].word, "receive");
        assert_eq!(l.near("ocasion", 1.0)[0].word, "occasion");
        assert_eq!(l.near("seperate", 1.0)[0].word, "separate");
        let t = l.near("thw", 1.0);
        assert_eq!(t[0].word, "the");
        assert!(t[0].cost < 1.0, "w is next to e: {}", t[0].cost);
    }

    #[test]
    fn splits_are_two_words_typed_as_one() {
        let l = Lexicon::from_counts(
            [("a", 1000), ("i", 500), ("o", 50), ("lot", 100), ("each", 100), ("other", 100), ("allot", 5)].map(|(w, c)| (w.to_string(), c)),
        );
        assert_eq!(l.splits("alot", false).iter().map(|n| n.word.as_str()).collect::<Vec<_>>(), ["a lot"]);
        assert_eq!(l.splits("Eachother", false)[0].word, "each other");
        assert_eq!(l.splits("Eachother", false)[0].cost, SPLIT_COST);
        assert!(l.splits("allot", true).is_empty(), "a known word is no join");
        assert!(l.splits("olot", true).is_empty(), "one letter: only a and I");
        assert!(l.splits("eachOther", true).is_empty(), "a name in camel case");
        let l = Lexicon::from_counts([("call", 100), ("site", 100)].map(|(w, c)| (w.to_string(), c)));
        assert!(l.splits("callsite", false).is_empty(), "two content words: a compound");
        assert_eq!(l.splits("callsite", true)[0].word, "call site");
    }

    #[test]
    fn two_words_that_make_one_are_joined() {
        let l = Lexicon::from_counts(
            [
                ("in", 1000),
                ("to", 1000),
                ("into", 500),
                ("some", 300),
                ("one", 300),
                ("someone", 100),
                ("data", 100),
                ("type", 100),
                ("datatype", 50),
            ]
            .map(|(w, c)| (w.to_string(), c)),
        );
        assert_eq!(l.joined("in", "to").as_deref(), Some("into"));
        assert_eq!(l.joined("Some", "one").as_deref(), Some("Someone"), "in the first word's case");
        assert_eq!(l.joined("data", "type"), None, "two content words: meant apart");
        assert_eq!(l.joined("in", "To"), None, "a name after");
        assert_eq!(l.joined("to", "in"), None, "no such word");
    }

    #[test]
    fn near_respects_the_budget_and_skips_the_word_itself() {
        let l = lex();
        assert!(l.near("xyzzy", 2.0).is_empty());
        assert!(l.near("the", 1.0).iter().all(|n| n.word != "the"));
        assert!(l.near("the", 1.0).iter().any(|n| n.word == "then"));
    }

    #[test]
    fn prefixes_and_near_prefixes() {
        let l = lex();
        assert!(l.has_prefix("rec") && l.has_prefix("PAR") && !l.has_prefix("recie"));
        assert_eq!(l.near_prefix("recie", 1.0, 3)[0].word, "receive");
        assert_eq!(l.near_prefix("seper", 1.0, 3)[0].word, "separate");
    }

    #[test]
    fn case_follows_what_was_typed() {
        assert_eq!(match_case("their", "Teh"), "Their");
        assert_eq!(match_case("their", "TEH"), "THEIR");
        assert_eq!(match_case("Paris", "paris"), "Paris");
        assert_eq!(match_case("the", "teh"), "the");
    }
}
