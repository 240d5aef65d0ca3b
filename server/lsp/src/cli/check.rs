//! `laya check`: the misspellings and confused words of a text, with suggestions in context.

use std::time::Instant;

use laya_decide::IssueKind;
use laya_model::KvCache;
use serde_json::json;

use super::{load_model, ms, out};
use crate::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The text to check; `-` reads it from stdin. Text that starts with "-" (a Markdown list
    /// item) is text, not an option.
    #[arg(allow_hyphen_values = true)]
    text: String,
    /// One JSON object on stdout instead of lines.
    #[arg(long)]
    json: bool,
    /// The lexicon (`word<TAB>count`); default LAYA_LEXICON, then .deps/lexicon/en.tsv.
    #[arg(long, value_name = "FILE")]
    lexicon: Option<std::path::PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let text = if args.text == "-" { std::io::read_to_string(std::io::stdin())? } else { args.text.clone() };
    if text.trim().is_empty() {
        anyhow::bail!("the text is empty");
    }
    // Spelling is checked against an English lexicon: words of other scripts are left alone.
    let note = laya_text::dominant_script(&text)
        .filter(|s| !s.is_latin())
        .map(|s| format!("the text is mostly in {s:?} script, which Laya has no spelling lexicon for: only its Latin-script words are checked"));
    let speller = super::eval::load_speller(args.lexicon.as_deref())?;
    let (model, load_ms) = load_model(&args.model)?;
    let counts = laya_decide::word_counts(&text);
    let start = Instant::now();
    let mut cache = KvCache::new();
    let issues = speller.check(
        Some(&model),
        &mut cache,
        &text,
        0,
        &|w: &str| speller.meant_by_repetition(w, counts.get(&w.to_lowercase()).copied().unwrap_or(0)),
        &|| false,
    )?;
    let latency_ms = ms(start);
    if args.json {
        let items: Vec<_> = issues
            .iter()
            .map(|i| {
                json!({
                    "word": i.word, "start": i.start, "end": i.end,
                    "kind": match i.kind { IssueKind::Misspelling => "misspelling", IssueKind::RealWord => "confused_word", IssueKind::Repeated => "repeated_word" },
                    "suggestions": i.suggestions.iter().take(5).map(|c| c.word.clone()).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut v = json!({"issues": items, "latency_ms": latency_ms, "load_ms": load_ms});
        if let Some(n) = &note {
            v["note"] = json!(n);
        }
        return out(&v.to_string());
    }
    if let Some(n) = &note {
        eprintln!("note: {n}");
    }
    for i in &issues {
        let what = match i.kind {
            IssueKind::Misspelling => "misspelling",
            IssueKind::RealWord => "confused word",
            IssueKind::Repeated => "repeated word",
        };
        let sugg: Vec<&str> = i.suggestions.iter().take(3).map(|c| c.word.as_str()).collect();
        let fix = match (i.kind, sugg.is_empty()) {
            (IssueKind::Repeated, _) => "(delete it)".to_string(),
            (_, true) => "(no suggestion)".into(),
            (_, false) => sugg.join(", "),
        };
        out(&format!("{:>5}  {what:<13}  \"{}\" -> {fix}", i.start, i.word.trim_start()))?;
    }
    out(&format!("{} issue(s) in {latency_ms:.0} ms (model loaded in {load_ms:.0} ms)", issues.len()))
}
