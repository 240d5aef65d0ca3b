//! `laya complete`: the most likely next words after a text, or completions of its last word.

use std::time::Instant;

use laya_decide::{SuggestionKind, Vocab};
use laya_model::KvCache;
use serde_json::json;

use super::{load_model_for, ms, out, prob, visible};
use crate::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The text before the cursor (use quotes; a trailing space asks for the next word). Text
    /// that starts with "-" (a Markdown list item) is text, not an option.
    #[arg(allow_hyphen_values = true)]
    text: String,
    /// How many suggestions.
    #[arg(short = 'n', long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=50))]
    count: u16,
    /// One JSON object on stdout instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    model: ModelArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.text.is_empty() {
        anyhow::bail!("TEXT is empty: give the text before the cursor, e.g. laya complete \"The capital of France is\"");
    }
    let (model, load_ms) = load_model_for(&args.model, &args.text)?;
    let vocab = Vocab::new(&model)?;
    let mut cache = KvCache::new();
    let start = Instant::now();
    let suggestions = laya_decide::complete(&model, &vocab, &mut cache, &args.text, args.count as usize)?;
    let latency_ms = ms(start);
    if args.json {
        let items: Vec<_> = suggestions
            .iter()
            .map(|s| {
                json!({
                    "insert": s.insert,
                    "word": s.word,
                    "logprob": s.logprob,
                    "prob": s.logprob.exp(),
                    "kind": match s.kind { SuggestionKind::CompleteWord => "complete_word", SuggestionKind::NextWord => "next_word" },
                })
            })
            .collect();
        let v = json!({
            "text": args.text,
            "model": model.info.path,
            "suggestions": items,
            "latency_ms": latency_ms,
            "load_ms": load_ms,
            "context_tokens": cache.offset(),
        });
        return out(&v.to_string());
    }
    out(&format!("{:>4}  {:>6}  {:<13}  {}", "#", "prob", "kind", "insert"))?;
    for (i, s) in suggestions.iter().enumerate() {
        let kind = match s.kind {
            SuggestionKind::CompleteWord => "complete-word",
            SuggestionKind::NextWord => "next-word",
        };
        out(&format!("{:>4}  {:>6}  {:<13}  \"{}\"", i + 1, prob(s.logprob.exp()), kind, visible(&s.insert)))?;
    }
    if suggestions.is_empty() {
        out("(no suggestion)")?;
    }
    out(&format!("{} suggestions in {latency_ms:.1} ms (model loaded in {load_ms:.0} ms)", suggestions.len()))
}
