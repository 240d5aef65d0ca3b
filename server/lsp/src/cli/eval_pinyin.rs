//! `laya eval pinyin`: how often the best conversion of a toneless pinyin clause is the hanzi
//! meant — clause accuracy (all of it) and character accuracy (position by position) — with
//! Rime (`--peer rime`) on the same rows.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::bail;
use laya_model::KvCache;
use serde_json::{json, Value};

use laya_harness::stats;

use super::eval::{pick_rows, ratio, read};
use super::peers::{self, Peer};
use super::{load_model_as, ms};
use crate::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    /// Files of `pinyin<TAB>hanzi` lines (`#` comments and blank lines skipped).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Evaluate at most N rows.
    #[arg(long)]
    limit: Option<usize>,
    /// Shuffle the rows with this seed before --limit (default: keep file order).
    #[arg(long)]
    seed: Option<u64>,
    /// One JSON object on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The pinyin dictionary; default LAYA_PINYIN_DICT, then .deps/pinyin/zh.tsv.
    #[arg(long, value_name = "FILE")]
    dict: Option<PathBuf>,
    /// Run this input method on the same rows and report it beside Laya (rime). `make
    /// spell-peers` installs it.
    #[arg(long, value_enum)]
    peer: Vec<Peer>,
    /// Paths the search keeps at each place (as `laya convert --beam`).
    #[arg(long, default_value_t = laya_decide::ConvertOptions::default().beam)]
    beam: usize,
    /// Words tried from each place (as `laya convert --width`).
    #[arg(long, default_value_t = laya_decide::ConvertOptions::default().words_per_place)]
    width: usize,
    /// Weight of the dictionary's prior beside the model's log-probability.
    #[arg(long, default_value_t = laya_decide::ConvertOptions::default().prior_weight)]
    prior_weight: f32,
    #[command(flatten)]
    model: ModelArgs,
}

pub fn run(a: &Args) -> anyhow::Result<Value> {
    if a.beam == 0 || a.width == 0 || !a.prior_weight.is_finite() {
        bail!("--beam and --width must be at least 1, and --prior-weight a number");
    }
    let opts = laya_decide::ConvertOptions { beam: a.beam, words_per_place: a.width, prior_weight: a.prior_weight, ..Default::default() };
    for &peer in &a.peer {
        if peer.eval() != "pinyin" {
            bail!("--peer {} does not convert pinyin: use it with `laya eval {}`", peer.name(), peer.eval());
        }
    }
    let mut rows = vec![];
    for (path, text) in read(&a.files)? {
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((pinyin, hanzi)) = line.split_once('\t') else {
                bail!("{}:{}: expected `pinyin<TAB>hanzi`", path.display(), n + 1);
            };
            if pinyin.trim().is_empty() || hanzi.trim().is_empty() {
                bail!("{}:{}: the pinyin or the hanzi is empty", path.display(), n + 1);
            }
            rows.push((pinyin.trim().to_string(), hanzi.trim().to_string()));
        }
    }
    let rows = pick_rows(rows, a.seed, a.limit);
    if rows.is_empty() {
        bail!("no `pinyin<TAB>hanzi` rows in {:?}", a.files);
    }
    let dict = super::convert::load_dict(a.dict.as_deref())?;
    let (model, _) = load_model_as(&a.model, laya_model::ModelChoice::Multilingual)?;
    let mut cache = KvCache::new();
    let mut latencies = vec![];
    let mut got = vec![];
    for (pinyin, _) in &rows {
        let t = Instant::now();
        // A row the converter cannot read counts as wrong, with its error among the misses.
        let best = match laya_decide::convert_with(&model, &mut cache, &dict, pinyin, "", 1, &opts) {
            Ok(c) => c.into_iter().next().map(|c| c.text).unwrap_or_default(),
            Err(e) => format!("error: {e}"),
        };
        latencies.push(ms(t));
        got.push(best);
    }
    let mut report = score(&rows, &got);
    report["eval"] = json!("pinyin");
    report["files"] = json!(a.files);
    report["model"] = json!(model.info.path);
    report["mean_ms_per_clause"] = json!(latencies.iter().sum::<f64>() / latencies.len() as f64);
    report["latency"] = stats::latency(latencies);
    let mut peer_reports = serde_json::Map::new();
    for &peer in &a.peer {
        let inputs: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        let t = Instant::now();
        let got = peers::convert_pinyin(peer, &inputs)?;
        let mut r = score(&rows, &got);
        r["version"] = json!(peer.version()?);
        r["mean_ms_per_clause"] = json!(ms(t) / inputs.len() as f64);
        peer_reports.insert(peer.name().into(), r);
    }
    report["peers"] = Value::Object(peer_reports);
    Ok(report)
}

/// Clause accuracy (the conversion is the hanzi), character accuracy (characters equal at the
/// same position, over the reference's characters; a conversion of another length is matched
/// position by position as far as it goes), and the first misses.
fn score(rows: &[(String, String)], got: &[String]) -> Value {
    let (mut clauses, mut chars, mut right_chars) = (0usize, 0usize, 0usize);
    let mut misses = vec![];
    for ((pinyin, want), got) in rows.iter().zip(got) {
        let w: Vec<char> = want.chars().collect();
        let g: Vec<char> = got.chars().collect();
        chars += w.len();
        right_chars += w.iter().zip(&g).filter(|(a, b)| a == b).count();
        if want == got {
            clauses += 1;
        } else if misses.len() < 20 {
            misses.push(json!({"pinyin": pinyin, "want": want, "got": got}));
        }
    }
    json!({
        "clauses": rows.len(),
        "characters": chars,
        "clause_accuracy": ratio(clauses, rows.len()),
        "char_accuracy": ratio(right_chars, chars),
        "misses": misses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_count_position_by_position() {
        let rows = vec![("a".into(), "今天天气".into()), ("b".into(), "西安".into())];
        let r = score(&rows, &["今天天汽".into(), "西安".into()]);
        assert_eq!(r["clause_accuracy"], 0.5);
        assert!((r["char_accuracy"].as_f64().unwrap() - 5.0 / 6.0).abs() < 1e-9);
        assert_eq!(r["misses"][0]["got"], "今天天汽");
    }
}
