//! `laya rank`: the log-probability of each candidate as the continuation of a context.

use std::time::Instant;

use laya_model::KvCache;
use serde_json::json;

use super::{load_model_for, ms, out, visible};
use crate::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The text the candidates continue (it may start with "-": `--context "- The"`).
    #[arg(long, allow_hyphen_values = true)]
    context: String,
    /// Candidates, taken as whole words: "help" is scored as " help" after a context that does
    /// not end in a space (use --literal to score them exactly as given).
    #[arg(required = true, num_args = 1..)]
    candidates: Vec<String>,
    /// Score the candidates exactly as given, without adding a leading space.
    #[arg(long)]
    literal: bool,
    /// One JSON object on stdout instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    model: ModelArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.context.is_empty() {
        anyhow::bail!("--context is empty: ranking needs text for the candidates to continue");
    }
    if let Some(i) = args.candidates.iter().position(|c| c.is_empty()) {
        anyhow::bail!("candidate {} is empty", i + 1);
    }
    // A context ending in a letter wants its next word with a leading space (" help"), the way
    // the tokenizer saw words in training; after a space or newline the candidate goes as is,
    // and so does one that continues text written without spaces ("今天天气真" -> "好").
    let spaced = !args.literal && !args.context.ends_with(char::is_whitespace) && !args.context.ends_with(laya_text::is_spaceless);
    let scored: Vec<String> = args
        .candidates
        .iter()
        .map(|c| if spaced && !c.starts_with(char::is_whitespace) && !c.starts_with(laya_text::is_spaceless) { format!(" {c}") } else { c.clone() })
        .collect();
    let (model, load_ms) = load_model_for(&args.model, &args.context)?;
    let mut cache = KvCache::new();
    let start = Instant::now();
    let ranked = laya_decide::rank(&model, &mut cache, &args.context, &scored)?;
    let latency_ms = ms(start);
    if args.json {
        let items: Vec<_> = ranked
            .iter()
            .map(|r| {
                json!({
                    "candidate": args.candidates[r.index],
                    "scored_as": r.candidate,
                    "logprob": r.logprob,
                    "tokens": r.tokens,
                    "index": r.index,
                })
            })
            .collect();
        let v = json!({ "context": args.context, "ranked": items, "latency_ms": latency_ms, "load_ms": load_ms });
        return out(&v.to_string());
    }
    out(&format!("{:>4}  {:>9}  {:>6}  candidate", "#", "logprob", "tokens"))?;
    for (i, r) in ranked.iter().enumerate() {
        out(&format!("{:>4}  {:>9.3}  {:>6}  \"{}\"", i + 1, r.logprob, r.tokens, visible(&args.candidates[r.index])))?;
    }
    out(&format!("{} candidates in one batch: {latency_ms:.1} ms (model loaded in {load_ms:.0} ms)", ranked.len()))
}
