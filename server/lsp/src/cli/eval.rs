//! `laya eval`: how good the decisions are on a writer's data — next-word ghost text simulated
//! keystroke by keystroke, isolated misspellings, and errors in context — as JSON and a table.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use laya_decide::{ghost, GhostOptions, IssueKind, Lexicon, Recall, RecallOptions, Recalls, Speller, SpellerOptions, Vocab};
use laya_model::{KvCache, Model};
use laya_text::words;
use serde_json::{json, Value};

use laya_harness::stats;

use super::peers::{self, Flag, Peer};
use super::{load_model, load_model_for, ms, out};
use crate::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// Simulates a writer typing each FILE.txt from start to end, accepting every correct ghost
    /// text with one key: keystroke savings, wrong suggestions shown, next-word accuracy, latency.
    NextWord(Common),
    /// Lines `typo<TAB>correct`: top-1/3/5 accuracy of the suggestions for each misspelling alone.
    Typos(Common),
    /// One JSON object per line {text, start, end, error, correct} (character offsets, or nulls for
    /// a clean text): detection recall, correction accuracy, false alarms per 1,000 words.
    Context(Common),
    /// Lines `pinyin<TAB>hanzi`: clause accuracy (the whole conversion right) and character
    /// accuracy (position by position) of the best conversion of each toneless pinyin clause.
    Pinyin(super::eval_pinyin::Args),
}

#[derive(clap::Args)]
struct Common {
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Evaluate at most N items (characters typed for next-word; lines otherwise).
    #[arg(long)]
    limit: Option<usize>,
    /// Shuffle the items with this seed before --limit (default: keep file order).
    #[arg(long)]
    seed: Option<u64>,
    /// One JSON object on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// The lexicon (`word<TAB>count`); default LAYA_LEXICON, then .deps/lexicon/en.tsv.
    #[arg(long, value_name = "FILE")]
    lexicon: Option<PathBuf>,
    /// Least probability for ghost text finishing a word to show (next-word).
    #[arg(long, default_value_t = GhostOptions::default().threshold)]
    threshold: f32,
    /// Least probability for a whole next word, nothing of it typed, to show (next-word).
    #[arg(long, default_value_t = GhostOptions::default().next_threshold)]
    next_threshold: f32,
    /// Least probability of each further word for ghost text to grow into a phrase (next-word).
    #[arg(long, default_value_t = GhostOptions::default().phrase_threshold)]
    phrase_threshold: f32,
    /// How much a word's length lowers its bar (next-word; 0: one bar for every length).
    #[arg(long, default_value_t = GhostOptions::default().length_weight)]
    length_weight: f32,
    /// Run this spell checker on the same items and report it beside Laya (typos: aspell,
    /// hunspell; context: harper, cspell; pinyin: rime). Repeatable. `make spell-peers` installs them.
    #[arg(long, value_enum)]
    peer: Vec<Peer>,
    /// The text files under DIR (.md, .txt, ...) are the workspace whose words ghost text
    /// recalls (next-word; the typed file is left out of it).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Ghost text with the writer's own words: the text typed so far, and the workspace's with
    /// --workspace (which implies it), as the server's `recall` setting does.
    #[arg(long)]
    recall: bool,
    /// The cache's largest share after two words, one word, none, the continuations at which
    /// it is half that, and its share for the writer's own words (next-word; for tuning).
    #[arg(long, value_name = "W3,W2,W1,EVIDENCE,OWN", value_delimiter = ',')]
    recall_weights: Option<Vec<f32>>,
    /// The ceiling of this model's ghost text (next-word): every bar at 0, and a suggestion
    /// counted only where its first word is right, as if a perfect judge hid the wrong ones.
    /// What it saves no calibration of the bars can beat.
    #[arg(long)]
    oracle: bool,
    #[command(flatten)]
    model: ModelArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (report, json_out) = match args.what {
        What::NextWord(c) => (next_word(&c)?, c.json),
        What::Typos(c) => (typos(&c)?, c.json),
        What::Context(c) => (context(&c)?, c.json),
        What::Pinyin(a) => (super::eval_pinyin::run(&a)?, a.json),
    };
    if json_out {
        return out(&report.to_string());
    }
    table(&report)
}

pub fn load_speller(path: Option<&Path>) -> anyhow::Result<Speller> {
    load_speller_with(path, SpellerOptions::default())
}

fn load_speller_with(path: Option<&Path>, opts: SpellerOptions) -> anyhow::Result<Speller> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => crate::edge::edge()
            .locations
            .lexicon
            .clone()
            .context("no lexicon found: run `make lexicon` (or scripts/lexicon.sh), or pass --lexicon FILE")?,
    };
    Ok(Speller::with_options(Lexicon::load(&path)?, opts))
}

/// The real-word margins `laya eval context` checks with: the defaults, or for tuning
/// LAYA_REAL_WORD_MARGIN, LAYA_COMMON_PRIOR_NATS, LAYA_CONTESTED_NATS, LAYA_INFLECTION_MARGIN,
/// LAYA_AGREEMENT_MARGIN, LAYA_VERB_MARGIN, LAYA_NEIGHBOUR_MARGIN, LAYA_JOIN_MARGIN,
/// LAYA_NON_WORD_MARGIN (nats; "inf" turns the uncontested shortcut, or the inflections, off),
/// LAYA_CHANNEL_WEIGHT, LAYA_CONTEXT_CHANNEL and LAYA_SOUND_LOGLIK ("-inf" turns sound-alikes off). Read here, at the
/// binary's edge; the server and `laya check` always use the defaults.
fn tuning_from_env() -> anyhow::Result<SpellerOptions> {
    let mut o = SpellerOptions::default();
    for (var, field) in [
        ("LAYA_REAL_WORD_MARGIN", &mut o.real_word_margin),
        ("LAYA_COMMON_PRIOR_NATS", &mut o.common_prior_nats),
        ("LAYA_CONTESTED_NATS", &mut o.uncontested_nats),
        ("LAYA_CHANNEL_WEIGHT", &mut o.channel_weight),
        ("LAYA_INFLECTION_MARGIN", &mut o.inflection_margin),
        ("LAYA_AGREEMENT_MARGIN", &mut o.agreement_margin),
        ("LAYA_VERB_MARGIN", &mut o.verb_margin),
        ("LAYA_NEIGHBOUR_MARGIN", &mut o.neighbour_margin),
        ("LAYA_SOUND_LOGLIK", &mut o.sound_loglik),
        ("LAYA_NON_WORD_MARGIN", &mut o.non_word_margin),
        ("LAYA_SLIP_FLOOR", &mut o.slip_floor),
        ("LAYA_LIKELY_SLIP_MARGIN", &mut o.likely_slip_margin),
        ("LAYA_CODE_SLIP", &mut o.code_slip),
        ("LAYA_JOIN_MARGIN", &mut o.join_margin),
        ("LAYA_CONTEXT_CHANNEL", &mut o.context_channel_weight),
        ("LAYA_PLAIN_AGREEMENT_MARGIN", &mut o.plain_agreement_margin),
    ] {
        if let Ok(v) = std::env::var(var) {
            *field = v.parse().with_context(|| format!("{var}={v:?} is not a number"))?;
        }
    }
    Ok(o)
}

pub(super) fn read(files: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, String)>> {
    files.iter().map(|f| Ok((f.clone(), std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?))).collect()
}

/// A seeded shuffle (laya-harness's generator, the suite's).
fn shuffle<T>(v: &mut [T], seed: u64) {
    laya_harness::Rng::new(seed).shuffle(v);
}

fn pick<T>(v: Vec<T>, c: &Common) -> Vec<T> {
    pick_rows(v, c.seed, c.limit)
}

/// The rows an eval runs on: shuffled with `seed` when given, then at most `limit` of them.
pub(super) fn pick_rows<T>(mut v: Vec<T>, seed: Option<u64>, limit: Option<usize>) -> Vec<T> {
    if let Some(seed) = seed {
        shuffle(&mut v, seed);
    }
    if let Some(n) = limit {
        v.truncate(n);
    }
    v
}

pub(super) fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        f64::NAN
    } else {
        a as f64 / b as f64
    }
}

// ---------------------------------------------------------------------------------------------

fn next_word(c: &Common) -> anyhow::Result<Value> {
    if !(0.0..=1.0).contains(&c.threshold) {
        bail!("--threshold is a probability between 0 and 1");
    }
    let mut files = read(&c.files)?;
    // The model that covers the text's script (the multilingual one for Chinese).
    let all: String = files.iter().map(|(_, t)| t.as_str()).collect();
    let (model, _) = load_model_for(&c.model, &all)?;
    let vocab = Vocab::new(&model)?;
    let speller = load_speller(c.lexicon.as_deref()).ok();
    let recall = match &c.recall_weights {
        Some(w) if w.len() != 5 => bail!("--recall-weights takes five numbers: W3,W2,W1,EVIDENCE,OWN"),
        Some(w) => Some(RecallOptions { weight: [w[0], w[1], w[2]], evidence: w[3], own_weight: w[4], ..RecallOptions::default() }),
        None => (c.recall || c.workspace.is_some()).then(RecallOptions::default),
    };
    let bar = |t: f32| if c.oracle { 0.0 } else { t };
    let opts = GhostOptions {
        threshold: bar(c.threshold),
        next_threshold: bar(c.next_threshold),
        phrase_threshold: bar(c.phrase_threshold),
        length_weight: c.length_weight,
        recall,
        ..GhostOptions::default()
    };
    let workspace_files = match &c.workspace {
        Some(dir) => workspace_texts(dir, &c.files)?,
        None => vec![],
    };
    let workspace = Recall::of_texts(workspace_files.iter().map(|(_, t)| t.as_str()));
    let (mut wrong_next, mut shown_next) = (0usize, 0usize);
    // LAYA_EVAL_NO_LEARNING=1: show suggestions the writer typed past as if they had not.
    let learn = std::env::var_os("LAYA_EVAL_NO_LEARNING").is_none();
    // LAYA_EVAL_DUMP=FILE: one line per shown suggestion (typed chars, probability, right or not,
    // characters inserted, the whole word's characters, its lexicon log prior, its count in the
    // text so far, words), to choose thresholds from one run.
    let mut dump = std::env::var_os("LAYA_EVAL_DUMP").map(std::fs::File::create).transpose()?;
    let mut budget = c.limit.unwrap_or(usize::MAX);
    let (mut total_chars, mut keys, mut shown, mut wrong, mut accepted) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let (mut words_seen, mut top1, mut top3) = (0usize, 0usize, 0usize);
    let mut latencies = vec![];
    if let Some(seed) = c.seed {
        shuffle(&mut files, seed);
    }
    for (_, text) in &files {
        let text = text.replace("\r\n", "\n");
        let mut cache = KvCache::new();
        // What the writer typed past in this text (the server keeps one per document).
        let mut turned_down = laya_decide::Rejections::default();
        // The words typed so far, counted up to the word being typed (as the server does).
        let mut document = Recall::new();
        let mut counted = 0usize;
        let mut i = 0usize;
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let byte_at = |k: usize| chars.get(k).map_or(text.len(), |x| x.0);
        while i < chars.len() && budget > 0 {
            let at = byte_at(i);
            let (before, rest) = text.split_at(at);
            // Next-word accuracy at every word start (after a space).
            if before.ends_with(' ') && rest.starts_with(|ch: char| ch.is_alphanumeric()) {
                let truth: String = rest.chars().take_while(|&ch| laya_text::is_word_char(ch)).collect();
                let top = laya_decide::complete(&model, &vocab, &mut cache, before, 3)?;
                words_seen += 1;
                if top.first().is_some_and(|s| s.word == truth) {
                    top1 += 1;
                }
                if top.iter().any(|s| s.word == truth) {
                    top3 += 1;
                }
            }
            let t = Instant::now();
            let context_end = laya_text::split_at_cursor(before).context.len();
            if context_end > counted {
                document.add(&before[counted..context_end]);
                counted = context_end;
            }
            let recalls = Recalls { document: &document, workspace: &workspace };
            let g = ghost(&model, &vocab, speller.as_ref(), Some(&recalls), &mut cache, before, "", &opts)?
                .filter(|g| !(learn && turned_down.holds_back(before, g)));
            latencies.push(ms(t));
            total_chars += 1;
            budget -= 1;
            match g {
                Some(g) if g.replace == 0 && !g.insert.is_empty() => {
                    // Accept the whole suggestion with one key, or the words of a phrase that
                    // are right with one key each (an editor's accept-next-word).
                    let (n, words) = accepted_part(&g.insert, rest);
                    if let Some(f) = dump.as_mut() {
                        use std::io::Write;
                        let typed = before.chars().rev().take_while(|&ch| laya_text::is_word_char(ch)).count();
                        let word: String = laya_text::split_at_cursor(before)
                            .word
                            .chars()
                            .chain(g.insert.trim_start().chars().take_while(|&ch| laya_text::is_word_char(ch)))
                            .collect();
                        let prior = speller.as_ref().and_then(|sp| sp.lexicon().log_prior(&word.to_lowercase())).unwrap_or(f32::NEG_INFINITY);
                        writeln!(
                            f,
                            "{typed}\t{}\t{}\t{}\t{}\t{prior}\t{}\t{}",
                            g.probability,
                            (n > 0) as u8,
                            g.insert.chars().count(),
                            word.chars().count(),
                            document.count(&word),
                            g.words
                        )?;
                    }
                    // With --oracle a perfect judge hides a wrong one: as if nothing were shown.
                    if n > 0 || !c.oracle {
                        shown += 1;
                        let next = !before.ends_with(|ch: char| laya_text::is_word_char(ch));
                        shown_next += next as usize;
                        if n > 0 {
                            accepted += 1;
                            keys += words;
                            total_chars += n - 1;
                            i += n;
                            continue;
                        }
                        wrong += 1;
                        wrong_next += next as usize;
                        turned_down.record(before, &g);
                    }
                }
                Some(_) => {}
                None => {}
            }
            keys += 1;
            i += 1;
        }
        if budget == 0 {
            break;
        }
    }
    Ok(json!({
        "eval": "next-word",
        "files": c.files,
        "threshold": c.threshold,
        "characters": total_chars,
        "keystrokes": keys,
        "keystroke_savings": 1.0 - ratio(keys, total_chars),
        "suggestions_shown": shown,
        "accepted": accepted,
        "wrong_shown": wrong,
        "wrong_share": ratio(wrong, shown),
        "next_threshold": c.next_threshold,
        "phrase_threshold": c.phrase_threshold,
        "length_weight": c.length_weight,
        "oracle": c.oracle,
        "whole_next_words": {"shown": shown_next, "wrong": wrong_next},
        "word_endings": {"shown": shown - shown_next, "wrong": wrong - wrong_next},
        "next_word": {"words": words_seen, "top1": ratio(top1, words_seen), "top3": ratio(top3, words_seen)},
        "latency": stats::latency(latencies),
        "recall": opts.recall.is_some(),
        "workspace": {"files": workspace_files.len(), "words": workspace.len()},
    }))
}

/// The text files under `dir` (what the language server reads of a workspace's prose), but
/// those being typed.
fn workspace_texts(dir: &Path, typed: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let meta = std::fs::metadata(dir).with_context(|| format!("--workspace {}", dir.display()))?;
    if !meta.is_dir() {
        bail!("--workspace {} is not a folder", dir.display());
    }
    let typed: Vec<PathBuf> = typed.iter().filter_map(|f| f.canonicalize().ok()).collect();
    let mut out = vec![];
    for path in crate::serve::workspace::prose_files(&[dir.to_path_buf()]) {
        if path.canonicalize().is_ok_and(|p| typed.contains(&p)) {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(&path) {
            out.push((path, text));
        }
    }
    Ok(out)
}

/// How much of a suggestion a writer takes when `rest` is what they will type: (chars, keys).
/// All of it with one key when it is right; else its leading words that are right, one key each
/// (a word is taken with the space or punctuation after it only if that also matches).
fn accepted_part(insert: &str, rest: &str) -> (usize, usize) {
    if rest.starts_with(insert) {
        return (insert.chars().count(), 1);
    }
    let mut taken = 0usize; // bytes
    let mut words = 0usize;
    for (i, c) in insert.char_indices() {
        let word_end = c == ' ' && i > 0 && !insert[..i].ends_with(' ');
        if word_end && rest.starts_with(&insert[..i]) {
            taken = i;
            words += 1;
        }
    }
    (insert[..taken].chars().count(), words)
}

// ---------------------------------------------------------------------------------------------

fn typos(c: &Common) -> anyhow::Result<Value> {
    let speller = load_speller_with(c.lexicon.as_deref(), tuning_from_env()?)?;
    let mut pairs = vec![];
    for (path, text) in read(&c.files)? {
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((typo, correct)) = line.split_once('\t') else {
                bail!("{}:{}: expected `typo<TAB>correct`", path.display(), n + 1);
            };
            pairs.push((typo.trim().to_string(), correct.trim().to_string()));
        }
    }
    let pairs = pick(pairs, c);
    if pairs.is_empty() {
        bail!("no typo pairs in {:?}", c.files);
    }
    let (mut hits, mut in_lexicon) = ([0usize; 3], 0usize);
    let mut latencies = vec![];
    let mut misses = vec![];
    for (typo, correct) in &pairs {
        let t = Instant::now();
        let s = speller.suggest(typo, 5);
        latencies.push(ms(t));
        if speller.is_known(correct) {
            in_lexicon += 1;
        }
        let rank = s.iter().position(|x| x.word.eq_ignore_ascii_case(correct));
        for (k, top) in [1usize, 3, 5].iter().enumerate() {
            if rank.is_some_and(|r| r < *top) {
                hits[k] += 1;
            }
        }
        if rank != Some(0) && misses.len() < 20 {
            misses.push(json!({"typo": typo, "correct": correct, "got": s.iter().map(|x| x.word.clone()).collect::<Vec<_>>()}));
        }
    }
    let n = pairs.len();
    let mut peer_reports = serde_json::Map::new();
    for &peer in &c.peer {
        if !peer.for_words() {
            bail!("--peer {} does not suggest for words alone: use it with `laya eval {}`", peer.name(), peer.eval());
        }
        let typos: Vec<String> = pairs.iter().map(|p| p.0.clone()).collect();
        let t = Instant::now();
        let got = peers::suggest_words(peer, &typos)?;
        let per_word_ms = ms(t) / n as f64;
        let mut hits = [0usize; 3];
        for ((_, correct), s) in pairs.iter().zip(&got) {
            let rank = s.iter().position(|x| x.eq_ignore_ascii_case(correct));
            for (k, top) in [1usize, 3, 5].iter().enumerate() {
                hits[k] += rank.is_some_and(|r| r < *top) as usize;
            }
        }
        peer_reports.insert(
            peer.name().into(),
            json!({"version": peer.version()?, "top1": ratio(hits[0], n), "top3": ratio(hits[1], n), "top5": ratio(hits[2], n), "mean_ms_per_word": per_word_ms}),
        );
    }
    Ok(json!({
        "eval": "typos",
        "files": c.files,
        "pairs": n,
        "correct_in_lexicon": in_lexicon,
        "top1": ratio(hits[0], n),
        "top3": ratio(hits[1], n),
        "top5": ratio(hits[2], n),
        "latency": stats::latency(latencies),
        "lexicon": speller.lexicon().source(),
        "lexicon_words": speller.lexicon().len(),
        "peers": peer_reports,
        "misses": misses,
    }))
}

// ---------------------------------------------------------------------------------------------

struct Case {
    text: String,
    /// Where the text came from (the optional "source" field), for false alarms by kind of prose.
    source: String,
    /// Byte range of each error, and the word meant: every error of the text (records with the
    /// same text are one case), so a flag on any other word is a false alarm.
    errors: Vec<(usize, usize, String)>,
}

fn parse_cases(c: &Common) -> anyhow::Result<Vec<Case>> {
    let mut cases: Vec<Case> = vec![];
    let mut by_text: std::collections::HashMap<String, usize> = Default::default();
    for (path, text) in read(&c.files)? {
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let where_ = || format!("{}:{}", path.display(), n + 1);
            let v: Value = serde_json::from_str(line).with_context(|| format!("{}: not JSON", where_()))?;
            let text = v["text"].as_str().with_context(|| format!("{}: no \"text\"", where_()))?.to_string();
            let error = match (v["start"].as_u64(), v["end"].as_u64(), v["correct"].as_str()) {
                (Some(s), Some(e), Some(correct)) => {
                    let byte = |ch: u64| text.char_indices().nth(ch as usize).map_or(text.len(), |x| x.0);
                    let (bs, be) = (byte(s), byte(e));
                    if s > e || be > text.len() || (e as usize) > text.chars().count() {
                        bail!("{}: start/end {s}..{e} are outside the text", where_());
                    }
                    if let Some(err) = v["error"].as_str() {
                        if &text[bs..be] != err {
                            bail!("{}: text[start..end] is {:?}, not the error {err:?}", where_(), &text[bs..be]);
                        }
                    }
                    Some((bs, be, correct.to_string()))
                }
                _ => None,
            };
            let source = v["source"].as_str().or(v["repo"].as_str()).map_or("", |s| s.split(['/', ':']).next().unwrap_or("")).to_string();
            let i = *by_text.entry(text.clone()).or_insert_with(|| {
                cases.push(Case { text, errors: vec![], source });
                cases.len() - 1
            });
            if let Some(e) = error {
                if !cases[i].errors.iter().any(|x| x.0 == e.0 && x.1 == e.1) {
                    cases[i].errors.push(e);
                }
            }
        }
    }
    Ok(cases)
}

fn context(c: &Common) -> anyhow::Result<Value> {
    let speller = load_speller_with(c.lexicon.as_deref(), tuning_from_env()?)?;
    let cases = pick(parse_cases(c)?, c);
    if cases.is_empty() {
        bail!("no cases in {:?}", c.files);
    }
    for &peer in &c.peer {
        if peer.eval() != "context" {
            bail!("--peer {} does not check texts: use it with `laya eval {}`", peer.name(), peer.eval());
        }
    }
    let (model, _) = load_model(&c.model)?;
    let model: &Model = &model;
    let mut latencies = vec![];
    let mut flags = vec![];
    for case in &cases {
        let mut cache = KvCache::new();
        let counts = laya_decide::word_counts(&case.text);
        let t = Instant::now();
        let issues = speller.check(
            Some(model),
            &mut cache,
            &case.text,
            0,
            &|w: &str| speller.meant_by_repetition(w, counts.get(&w.to_lowercase()).copied().unwrap_or(0)),
            &|| false,
        )?;
        latencies.push(ms(t));
        let kind = |k: IssueKind| match k {
            IssueKind::Misspelling => "misspelling",
            IssueKind::RealWord => "real_word",
            IssueKind::Repeated => "repeated_word",
        };
        flags.push(
            issues
                .iter()
                .map(|i| Flag { start: i.start, end: i.end, suggestion: i.suggestions.first().map(|x| x.word.clone()), kind: kind(i.kind).into() })
                .collect::<Vec<_>>(),
        );
    }
    let mut report = score_context(&cases, &flags, &speller);
    report["eval"] = json!("context");
    report["files"] = json!(c.files);
    report["latency"] = stats::latency(latencies);
    let mut peer_reports = serde_json::Map::new();
    for &peer in &c.peer {
        let texts: Vec<String> = cases.iter().map(|c| c.text.clone()).collect();
        let t = Instant::now();
        let flags = peers::check_texts(peer, &texts)?;
        let mut r = score_context(&cases, &flags, &speller);
        r["version"] = json!(peer.version()?);
        r["mean_ms_per_text"] = json!(ms(t) / texts.len() as f64);
        peer_reports.insert(peer.name().into(), r);
    }
    report["peers"] = Value::Object(peer_reports);
    Ok(report)
}

/// Scores what a checker flagged in each case: errors found (any flag overlapping an error),
/// first suggestions right, real-word errors found (an error that is itself a word of the
/// lexicon), false alarms (flags on no error) per 1,000 words that are not errors.
fn score_context(cases: &[Case], flags: &[Vec<Flag>], speller: &Speller) -> Value {
    let (mut errors, mut detected, mut corrected, mut false_alarms, mut clean_words) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let (mut real_word_errors, mut real_word_detected) = (0usize, 0usize);
    let mut alarms = vec![];
    let mut missed = vec![];
    let mut miscorrected = vec![];
    let mut alarm_kinds: std::collections::BTreeMap<String, usize> = Default::default();
    let mut by_source: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for (case, flags) in cases.iter().zip(flags) {
        let n_words = words(&case.text).len();
        let words_clean = n_words.saturating_sub(case.errors.len());
        clean_words += words_clean;
        for (s, e, correct) in &case.errors {
            errors += 1;
            let real = speller.is_known(&case.text[*s..*e]);
            real_word_errors += real as usize;
            let Some(f) = flags.iter().find(|f| f.start < *e && *s < f.end) else {
                missed.push(json!({"error": &case.text[*s..*e], "correct": correct, "real_word": real, "around": around(&case.text, *s, *e)}));
                continue;
            };
            detected += 1;
            real_word_detected += real as usize;
            // Right when it makes the same text as the correction (a doubled word's fix
            // deletes " the" where the set may replace "the the" with "the").
            let fixed = |s: usize, e: usize, w: &str| format!("{}{w}{}", &case.text[..s], &case.text[e..]).to_lowercase();
            if f.suggestion.as_deref().is_some_and(|w| fixed(f.start, f.end, w) == fixed(*s, *e, correct)) {
                corrected += 1;
            } else {
                let around = around(&case.text, *s, *e);
                miscorrected.push(json!({"error": &case.text[*s..*e], "correct": correct, "suggestion": f.suggestion, "around": around}));
            }
        }
        let wrong: Vec<&Flag> = flags.iter().filter(|f| !case.errors.iter().any(|(s, e, _)| f.start < *e && *s < f.end)).collect();
        false_alarms += wrong.len();
        for f in &wrong {
            *alarm_kinds.entry(f.kind.clone()).or_default() += 1;
            // The first 20 false alarms, and every one that is not a misspelling: those are rare,
            // and they are what a change to the real-word checks moves.
            if alarms.len() < 20 || f.kind != "misspelling" {
                let around = around(&case.text, f.start, f.end);
                alarms
                    .push(json!({"word": case.text.get(f.start..f.end).unwrap_or(""), "kind": f.kind, "suggestion": f.suggestion, "around": around}));
            }
        }
        let e = by_source.entry(case.source.clone()).or_default();
        e.0 += wrong.len();
        e.1 += words_clean;
    }
    json!({
        "texts": cases.len(),
        "errors": errors,
        "detection_recall": ratio(detected, errors),
        "real_word_errors": real_word_errors,
        "real_word_recall": ratio(real_word_detected, real_word_errors),
        "correction_accuracy": ratio(corrected, detected),
        "clean_words": clean_words,
        "false_alarms": false_alarms,
        "false_alarms_per_1000_words": 1000.0 * ratio(false_alarms, clean_words),
        "false_alarms_by_kind": alarm_kinds,
        "false_alarms_per_1000_words_by_source": by_source
            .iter()
            .map(|(k, (fa, w))| (k.clone(), json!({"false_alarms": fa, "words": w, "per_1000": 1000.0 * ratio(*fa, *w)})))
            .collect::<serde_json::Map<_, _>>(),
        "false_alarm_examples": alarms,
        "missed": missed,
        "miscorrected": miscorrected,
    })
}

/// Up to AROUND characters either side of `text[s..e]`, the span itself in [[ ]]: enough to read
/// a miss or a false alarm in its sentence without looking the case up.
fn around(text: &str, s: usize, e: usize) -> String {
    const AROUND: usize = 60;
    let (Some(before), Some(span), Some(after)) = (text.get(..s), text.get(s..e), text.get(e..)) else { return String::new() };
    let skip = before.chars().count().saturating_sub(AROUND);
    let before: String = before.chars().skip(skip).collect();
    let after: String = after.chars().take(AROUND).collect();
    format!("{before}[[{span}]]{after}")
}

fn table(report: &Value) -> anyhow::Result<()> {
    let Some(obj) = report.as_object() else { return Ok(()) };
    for (k, v) in obj {
        if matches!(k.as_str(), "misses" | "missed" | "miscorrected" | "false_alarm_examples" | "peers") {
            continue;
        }
        let shown = match v {
            Value::Number(n) if n.is_f64() => format!("{:.4}", n.as_f64().unwrap_or(f64::NAN)),
            Value::Object(m) => m
                .iter()
                .map(|(a, b)| match b.as_f64() {
                    Some(f) if b.is_f64() => format!("{a} {f:.3}"),
                    _ => format!("{a} {b}"),
                })
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        };
        out(&format!("{k:<28} {shown}"))?;
    }
    side_by_side(report)
}

/// Laya and each peer on the same items, the measures both have, one column each.
fn side_by_side(report: &Value) -> anyhow::Result<()> {
    let Some(peers) = report["peers"].as_object().filter(|p| !p.is_empty()) else { return Ok(()) };
    let keys = [
        "clause_accuracy",
        "char_accuracy",
        "mean_ms_per_clause",
        "top1",
        "top3",
        "top5",
        "detection_recall",
        "real_word_recall",
        "correction_accuracy",
        "false_alarms_per_1000_words",
    ];
    let mut header = format!("{:<28} {:>9}", "side by side, same items", "laya");
    for name in peers.keys() {
        header += &format!(" {name:>9}");
    }
    out("")?;
    out(&header)?;
    for k in keys.iter().filter(|k| report.get(**k).is_some()) {
        let cell = |v: &Value| v.as_f64().map_or("-".to_string(), |f| format!("{f:.3}"));
        let mut row = format!("{k:<28} {:>9}", cell(&report[*k]));
        for p in peers.values() {
            row += &format!(" {:>9}", cell(&p[*k]));
        }
        out(&row)?;
    }
    for (name, p) in peers {
        out(&format!("{name}: {}", p["version"].as_str().unwrap_or("")))?;
    }
    Ok(())
}
