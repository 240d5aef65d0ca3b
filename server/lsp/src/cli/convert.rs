//! `laya convert`: typed pinyin to hanzi, the model ranking the dictionary's readings in
//! context — one input from the command line, or one a line from stdin with the model kept loaded.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use laya_decide::{Candidate, ConvertOptions, PinyinDict};
use laya_model::{KvCache, Model};
use serde_json::json;

use super::{load_model_as, ms, out, visible};
use crate::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    /// Toneless pinyin ("jin tian tian qi", "jintian", "xi'an"), or "-" for one input a line on
    /// stdin, answered with one JSON object a line.
    #[arg(long, allow_hyphen_values = true)]
    pinyin: String,
    /// The text before the input (Chinese text the conversion continues).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    context: String,
    /// How many conversions to give, best first.
    #[arg(long, short = 'n', default_value_t = 5)]
    n: usize,
    /// One JSON object on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Paths kept at each place of the input (wider: slower, fewer misses).
    #[arg(long, default_value_t = ConvertOptions::default().beam)]
    beam: usize,
    /// Words tried from each place of the input.
    #[arg(long, default_value_t = ConvertOptions::default().words_per_place)]
    width: usize,
    /// The pinyin dictionary (`reading<TAB>hanzi<TAB>count`); default LAYA_PINYIN_DICT, then
    /// .deps/pinyin/zh.tsv (`make pinyin`).
    #[arg(long, value_name = "FILE")]
    dict: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
}

/// The pinyin dictionary at `path`, or the default one.
pub fn load_dict(path: Option<&Path>) -> anyhow::Result<PinyinDict> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => crate::edge::edge()
            .locations
            .pinyin
            .clone()
            .context("no pinyin dictionary found: run `make pinyin` (or scripts/pinyin.sh), or pass --dict FILE")?,
    };
    Ok(PinyinDict::load(&path)?)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.n == 0 {
        anyhow::bail!("--n is 0: ask for at least one conversion");
    }
    if args.pinyin.trim().is_empty() {
        anyhow::bail!("--pinyin is empty: give toneless pinyin, or \"-\" to read lines from stdin");
    }
    let dict = load_dict(args.dict.as_deref())?;
    let (model, load_ms) = load_model_as(&args.model, laya_model::ModelChoice::Multilingual)?;
    let mut cache = KvCache::new();
    if args.pinyin == "-" {
        return stdin_loop(&model, &mut cache, &dict, &args);
    }
    let start = Instant::now();
    let got = laya_decide::convert_with(&model, &mut cache, &dict, &args.pinyin, &args.context, args.n, &options(&args)?)?;
    let latency_ms = ms(start);
    if args.json {
        let v = json!({ "pinyin": args.pinyin, "candidates": items(&got), "latency_ms": latency_ms, "load_ms": load_ms });
        return out(&v.to_string());
    }
    out(&format!("{:>4}  {:>9}  {:>9}  candidate (reading)", "#", "score", "logprob"))?;
    for (i, c) in got.iter().enumerate() {
        out(&format!("{:>4}  {:>9.3}  {:>9.3}  \"{}\" ({})", i + 1, c.score, c.logprob, visible(&c.text), c.reading))?;
    }
    out(&format!("{} conversions in {latency_ms:.0} ms (model loaded in {load_ms:.0} ms)", got.len()))
}

fn options(args: &Args) -> anyhow::Result<ConvertOptions> {
    if args.beam == 0 || args.width == 0 {
        anyhow::bail!("--beam and --width must be at least 1");
    }
    Ok(ConvertOptions { beam: args.beam, words_per_place: args.width, ..ConvertOptions::default() })
}

fn items(got: &[Candidate]) -> Vec<serde_json::Value> {
    got.iter().map(|c| json!({"text": c.text, "logprob": c.logprob, "score": c.score, "reading": c.reading})).collect()
}

/// One input a line; one JSON object a line. A bad line gets {"error": ...} and the loop goes on.
fn stdin_loop(model: &Model, cache: &mut KvCache, dict: &PinyinDict, args: &Args) -> anyhow::Result<()> {
    let opts = options(args)?;
    for line in std::io::stdin().lock().lines() {
        let line = line.context("reading stdin")?;
        let input = line.trim_end_matches('\r');
        let start = Instant::now();
        let v = match laya_decide::convert_with(model, cache, dict, input, &args.context, args.n, &opts) {
            Ok(got) => json!({ "pinyin": input, "candidates": items(&got), "latency_ms": ms(start) }),
            Err(e) => json!({ "pinyin": input, "error": e.to_string() }),
        };
        out(&v.to_string())?;
    }
    Ok(())
}
