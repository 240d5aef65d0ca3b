//! Pinyin to hanzi: the dictionary of readings (`reading<TAB>hanzi<TAB>count` files, built by
//! scripts/pinyin.sh) and the conversion: a lattice over the typed syllables whose edges are
//! dictionary words, searched left to right with a bounded beam, each path scored by the model
//! (its words' log-probability after the context and the path so far, a batch per path) plus a
//! small dictionary prior.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use laya_model::{KvCache, Model};

use crate::syllables::{is_syllable, Pinyin};
use crate::{DecideError, Result};

/// Where `scripts/pinyin.sh` puts the dictionary, relative to the repository or an install.
pub const PINYIN_RELATIVE: &str = ".deps/pinyin/zh.tsv";

/// A word of the dictionary under one reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    pub text: String,
    /// ln(count / total): the word's prior among all words.
    pub log_prior: f32,
}

/// Toneless readings ("xi an") and the hanzi words that have them, commonest first.
pub struct PinyinDict {
    by_reading: HashMap<String, Vec<Word>>,
    /// The most syllables any word has.
    longest: usize,
    words: usize,
    source: PathBuf,
}

impl PinyinDict {
    /// Reads a `reading<TAB>hanzi<TAB>count` file: the reading's syllables lower-case, joined by
    /// single spaces (ü as v); one hanzi character per syllable; `#` comments and blank lines
    /// skipped. Each bad line is an error naming it.
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).map_err(|e| DecideError::Input(format!("cannot read the pinyin dictionary {}: {e}", path.display())))?;
        let mut dict = Self::parse(&text).map_err(|e| DecideError::Input(format!("{}: {e}", path.display())))?;
        dict.source = path.to_path_buf();
        Ok(dict)
    }

    /// [`PinyinDict::load`] from text; errors start with "line N: ".
    pub fn parse(text: &str) -> Result<Self> {
        let mut rows: Vec<(String, String, u64)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: String| DecideError::Input(format!("line {}: {why}: {line:?}", n + 1));
            let mut fields = line.split('\t');
            let (Some(reading), Some(word)) = (fields.next(), fields.next()) else {
                return Err(bad("expected `reading<TAB>hanzi<TAB>count`".into()));
            };
            let count: u64 = match fields.next() {
                None => 1,
                Some(c) => c.trim().parse().map_err(|_| bad(format!("count {c:?} is not a whole number")))?,
            };
            let syllables: Vec<&str> = reading.split(' ').collect();
            if let Some(s) = syllables.iter().find(|s| !is_syllable(s)) {
                return Err(bad(format!("{s:?} is not a toneless pinyin syllable (lower case, ü as v, one space between syllables)")));
            }
            if word.chars().count() != syllables.len() {
                return Err(bad(format!("{} syllables but {} characters", syllables.len(), word.chars().count())));
            }
            rows.push((reading.to_string(), word.to_string(), count));
        }
        if rows.is_empty() {
            return Err(DecideError::Input("the pinyin dictionary has no words".into()));
        }
        let total: f64 = rows.iter().map(|r| r.2.max(1) as f64).sum();
        let mut by_reading: HashMap<String, Vec<Word>> = HashMap::new();
        let mut longest = 0;
        for (reading, text, count) in rows {
            longest = longest.max(reading.split(' ').count());
            let log_prior = ((count.max(1) as f64) / total).ln() as f32;
            by_reading.entry(reading).or_default().push(Word { text, log_prior });
        }
        let mut words = 0;
        for list in by_reading.values_mut() {
            list.sort_by(|a, b| b.log_prior.total_cmp(&a.log_prior).then_with(|| a.text.cmp(&b.text)));
            list.dedup_by(|a, b| a.text == b.text);
            words += list.len();
        }
        Ok(Self { by_reading, longest, words, source: PathBuf::new() })
    }

    /// The words read `reading` ("xi an"), commonest first.
    pub fn words(&self, reading: &str) -> &[Word] {
        self.by_reading.get(reading).map_or(&[], Vec::as_slice)
    }

    /// (reading, word) entries.
    pub fn len(&self) -> usize {
        self.words
    }

    pub fn is_empty(&self) -> bool {
        self.words == 0
    }

    /// The file it was read from (empty when parsed from text).
    pub fn source(&self) -> &Path {
        &self.source
    }
}

/// How wide the conversion searches.
#[derive(Debug, Clone, Copy)]
pub struct ConvertOptions {
    /// Paths kept at each place in the input.
    pub beam: usize,
    /// Words tried from each place (the commonest of each length first).
    pub words_per_place: usize,
    /// Words tried for one reading (one place, one end).
    pub words_per_reading: usize,
    /// Weight of the dictionary prior (ln of the word's share) beside the model's log-prob.
    pub prior_weight: f32,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        Self { beam: 3, words_per_place: 12, words_per_reading: 6, prior_weight: 0.3 }
    }
}

/// A conversion of the whole input.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub text: String,
    /// The model's natural-log probability of the text after the context.
    pub logprob: f32,
    /// What the candidates are ranked by: `logprob` plus the weighted dictionary prior.
    pub score: f32,
    /// The syllables it read the input as, space-separated ("xi an").
    pub reading: String,
}

#[derive(Clone)]
struct Partial {
    text: String,
    reading: Vec<&'static str>,
    logprob: f32,
    score: f32,
}

/// Converts typed pinyin into hanzi: the `n` best whole-input conversions after `context`,
/// best first.
pub fn convert(model: &Model, cache: &mut KvCache, dict: &PinyinDict, input: &str, context: &str, n: usize) -> Result<Vec<Candidate>> {
    convert_with(model, cache, dict, input, context, n, &ConvertOptions::default())
}

/// [`convert`] with the search's bounds and weights.
pub fn convert_with(
    model: &Model,
    cache: &mut KvCache,
    dict: &PinyinDict,
    input: &str,
    context: &str,
    n: usize,
    opts: &ConvertOptions,
) -> Result<Vec<Candidate>> {
    if n == 0 {
        return Err(DecideError::Input("asked for no candidates".into()));
    }
    let pinyin = Pinyin::parse(input)?;
    let end = pinyin.len();
    // Paths ending at each letter place; a place is expanded once all paths into it are in.
    let mut at: Vec<Vec<Partial>> = vec![vec![]; end + 1];
    at[0].push(Partial { text: String::new(), reading: vec![], logprob: 0.0, score: 0.0 });
    let beam = opts.beam.max(1).max(n);
    for place in 0..end {
        if at[place].is_empty() {
            continue;
        }
        let mut paths = std::mem::take(&mut at[place]);
        keep_best(&mut paths, beam);
        let edges = edges_from(dict, &pinyin, place, opts);
        if edges.is_empty() {
            continue;
        }
        let ids: Vec<Vec<u32>> = edges
            .iter()
            .map(|e| match model.tokenizer.encode(&e.word.text)? {
                t if t.is_empty() => Err(DecideError::Input(format!("the model's tokenizer gives no tokens for {:?}", e.word.text))),
                t => Ok(t),
            })
            .collect::<Result<_>>()?;
        // Words of one token are read off the path's next-token log-probs; only the longer
        // ones need a forward, batched per path (a batch pads every row to its longest word).
        let (single, multi): (Vec<usize>, Vec<usize>) = (0..edges.len()).partition(|&i| ids[i].len() == 1);
        let multi_ids: Vec<Vec<u32>> = multi.iter().map(|&i| ids[i].clone()).collect();
        let single_ids: Vec<Vec<u32>> = single.iter().map(|&i| ids[i].clone()).collect();
        for path in &paths {
            let ctx = context_ids(model, &format!("{context}{}", path.text))?;
            if ctx.is_empty() {
                return Err(DecideError::Input("the model has no start token and the context is empty: give a context".into()));
            }
            model.prefill(cache, &ctx)?;
            let mut totals = vec![0.0f32; edges.len()];
            for (group, group_ids) in [(&single, &single_ids), (&multi, &multi_ids)] {
                if group.is_empty() {
                    continue;
                }
                for (&i, s) in group.iter().zip(model.score(cache, group_ids)?) {
                    totals[i] = s.total;
                }
            }
            for (e, total) in edges.iter().zip(totals) {
                let mut reading = path.reading.clone();
                reading.extend_from_slice(&e.syllables);
                at[e.end].push(Partial {
                    text: format!("{}{}", path.text, e.word.text),
                    reading,
                    logprob: path.logprob + total,
                    score: path.score + total + opts.prior_weight * e.word.log_prior,
                });
            }
        }
    }
    let mut done = std::mem::take(&mut at[end]);
    keep_best(&mut done, n);
    if done.is_empty() {
        return Err(DecideError::Input(format!("the pinyin dictionary has no words for {input:?}")));
    }
    Ok(done.into_iter().map(|p| Candidate { text: p.text, logprob: p.logprob, score: p.score, reading: p.reading.join(" ") }).collect())
}

/// The tokens a sequence starts with, then `text`'s, as a context to continue; for a model
/// with no start token and no text, its end-of-text token (what a new text follows).
fn context_ids(model: &Model, text: &str) -> Result<Vec<u32>> {
    let ids = model.tokenizer.encode_context(text)?;
    Ok(if ids.is_empty() { model.tokenizer.eos().into_iter().collect() } else { ids })
}

/// Best first by score; one path per text (two readings can give the same hanzi), at most `k`.
fn keep_best(paths: &mut Vec<Partial>, k: usize) {
    paths.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.text.clone()));
    paths.truncate(k);
}

struct Edge<'a> {
    end: usize,
    word: &'a Word,
    syllables: Vec<&'static str>,
}

/// The dictionary words that start at letter place `place`: every run of syllables from there
/// that is a reading, its commonest words; at most `words_per_place`, shared out so that each
/// length keeps some (a long word is rarer than a short one, but worth trying).
fn edges_from<'a>(dict: &'a PinyinDict, pinyin: &Pinyin, place: usize, opts: &ConvertOptions) -> Vec<Edge<'a>> {
    let mut runs: Vec<(usize, Vec<&'static str>)> = vec![];
    let mut stack: Vec<(usize, Vec<&'static str>)> = vec![(place, vec![])];
    while let Some((at, syl)) = stack.pop() {
        if syl.len() >= dict.longest {
            continue;
        }
        for s in pinyin.syllables_from(at) {
            let mut next = syl.clone();
            next.push(s.text);
            runs.push((s.end, next.clone()));
            stack.push((s.end, next));
        }
    }
    // Per reading, its words in order; then round-robin over the readings, so each gets its
    // commonest words in before any gets its rarer ones.
    let lists: Vec<(usize, Vec<&'static str>, &[Word])> = runs
        .into_iter()
        .filter_map(|(end, syl)| {
            let words = dict.words(&syl.join(" "));
            (!words.is_empty()).then(|| (end, syl, &words[..words.len().min(opts.words_per_reading)]))
        })
        .collect();
    let mut out = vec![];
    for rank in 0..opts.words_per_reading {
        for (end, syl, words) in &lists {
            if out.len() >= opts.words_per_place {
                return out;
            }
            if let Some(w) = words.get(rank) {
                out.push(Edge { end: *end, word: w, syllables: syl.clone() });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dictionary_reads_its_rows_commonest_first() {
        let d = PinyinDict::parse("# comment\nxi an\t西岸\t7\nxi an\t西安\t20\nxian\t先\t30\n\nxian\t现\n").unwrap();
        assert_eq!(d.words("xi an").iter().map(|w| w.text.as_str()).collect::<Vec<_>>(), ["西安", "西岸"]);
        assert_eq!(d.words("xian").len(), 2);
        assert_eq!(d.len(), 4);
        assert!(d.words("zhong").is_empty());
    }

    #[test]
    fn bad_dictionary_rows_are_named() {
        let err = |t: &str| PinyinDict::parse(t).err().expect("an error").to_string();
        assert!(err("").contains("no words"));
        assert!(err("xian\n").starts_with("line 1: expected `reading<TAB>hanzi<TAB>count`"), "{}", err("xian\n"));
        assert!(err("xian\t先\tmany\n").contains("\"many\" is not a whole number"));
        assert!(err("xi3an\t西安\t1\n").contains("\"xi3an\" is not a toneless pinyin syllable"));
        assert!(err("Xi an\t西安\t1\n").contains("not a toneless"));
        assert!(err("xi an\t西\t1\n").contains("2 syllables but 1 characters"));
        assert!(err("a\t阿\t1\nxi  an\t西安\t1\n").starts_with("line 2: "), "{}", err("a\t阿\t1\nxi  an\t西安\t1\n"));
    }

    #[test]
    fn a_missing_dictionary_file_says_which() {
        let e = PinyinDict::load(Path::new("/nonexistent/zh.tsv")).err().unwrap().to_string();
        assert!(e.contains("/nonexistent/zh.tsv"), "{e}");
    }

    #[test]
    fn edges_try_every_reading_from_a_place() {
        let d = PinyinDict::parse("xi an\t西安\t20\nxian\t先\t30\nxi\t西\t5\nan\t安\t5\n").unwrap();
        let p = Pinyin::parse("xian").unwrap();
        let e = edges_from(&d, &p, 0, &ConvertOptions::default());
        let mut got: Vec<&str> = e.iter().map(|e| e.word.text.as_str()).collect();
        got.sort();
        assert_eq!(got, ["先", "西", "西安"]);
    }
}
