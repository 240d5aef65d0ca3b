//! `laya stress`: the language service under fuzzing, load and bad input (serve/stress.rs),
//! with a summary table; `--quick` is what `make test` runs, `--minutes N` the long run.

use std::path::PathBuf;

use anyhow::{bail, Context};
use serde_json::Value;

use super::out;
use crate::serve::stress::{self, Stress};

#[derive(clap::Args)]
pub struct Args {
    /// The fast version (about a minute): 1,500 random edits per encoding, 200 documents
    /// typed into for 3 s at each rate.
    #[arg(long, conflicts_with = "minutes")]
    quick: bool,
    /// How long the full run takes, roughly (default 10): half fuzzing, half under load.
    #[arg(long)]
    minutes: Option<f64>,
    /// Documents open at once under load.
    #[arg(long, default_value_t = 200)]
    docs: usize,
    /// Seed of the random edits.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Prose the load phase types (default: tests/data/prose-sample.txt).
    #[arg(long, value_name = "FILE.txt")]
    prose: Option<PathBuf>,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.docs == 0 {
        bail!("--docs must be at least 1");
    }
    let mut s = match args.minutes {
        Some(m) if !(m > 0.0 && m <= 24.0 * 60.0) => bail!("--minutes must be between 0 and 1440"),
        Some(m) => Stress::long(m),
        None if args.quick => Stress::quick(),
        None => Stress::long(10.0),
    };
    s.docs = args.docs;
    s.seed = args.seed;
    let file = args.prose.clone().unwrap_or_else(|| PathBuf::from("tests/data/prose-sample.txt"));
    let prose = std::fs::read_to_string(&file).with_context(|| format!("reading the prose to type, {}", file.display()))?;
    let report = stress::run(s, prose)?;
    if let Some(p) = &args.out {
        std::fs::write(p, serde_json::to_string_pretty(&report)?).with_context(|| format!("writing {}", p.display()))?;
    }
    if args.json {
        out(&report.to_string())?;
    } else {
        print_table(&report)?;
    }
    let failed = failures(&report);
    if !failed.is_empty() {
        bail!("{} check(s) failed:\n  {}", failed.len(), failed.join("\n  "));
    }
    Ok(())
}

/// What did not hold, in words (empty when everything did).
pub fn failures(r: &Value) -> Vec<String> {
    let mut f = vec![];
    for s in r["sync"].as_array().into_iter().flatten() {
        for m in s["mismatches"].as_array().into_iter().flatten() {
            f.push(format!("sync: {}", m.as_str().unwrap_or("?")));
        }
    }
    for b in r["bad_input"].as_array().into_iter().flatten() {
        if b["ok"] != true {
            f.push(format!("bad input: {} was not handled: {b}", b["probe"]));
        }
    }
    for l in r["load"].as_array().into_iter().flatten() {
        if l["unanswered_after_30_s"].as_u64() != Some(0) {
            f.push(format!("load at {} chars/s: {} requests never answered", l["chars_per_s_per_document"], l["unanswered_after_30_s"]));
        }
        if l["cache_bytes_after_close"].as_u64() != Some(0) || l["documents_cached_after_close"].as_u64() != Some(0) {
            f.push(format!("load at {} chars/s: caches left after every document closed", l["chars_per_s_per_document"]));
        }
        if l["cache_bytes_open"].as_u64() > l["budget_bytes"].as_u64() {
            f.push(format!("load at {} chars/s: caches over the budget", l["chars_per_s_per_document"]));
        }
    }
    f
}

fn print_table(r: &Value) -> anyhow::Result<()> {
    let n = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    out(&format!("{:<44} {:>12} {:>10}  result", "phase", "cases", "seconds"))?;
    for s in r["sync"].as_array().into_iter().flatten() {
        let bad = s["mismatches"].as_array().map_or(0, Vec::len);
        out(&format!(
            "{:<44} {:>12} {:>10.1}  {} comparisons, {} mismatches",
            format!("sync fuzz, {}", s["encoding"].as_str().unwrap_or("?")),
            s["edits"],
            n(&s["seconds"]),
            s["comparisons"],
            bad
        ))?;
    }
    let probes = r["bad_input"].as_array().cloned().unwrap_or_default();
    let ok = probes.iter().filter(|p| p["ok"] == true).count();
    out(&format!("{:<44} {:>12} {:>10.1}  {ok} handled", "bad input", probes.len(), n(&r["bad_input_seconds"])))?;
    for p in &probes {
        let detail = if let Some(ms) = p["then_answered_ms"].as_f64() {
            format!("next request answered in {ms:.0} ms")
        } else if let Some(ms) = p["per_key_ms"].as_f64() {
            format!("{ms:.1} ms a key")
        } else {
            format!("error {}", p["error"])
        };
        out(&format!(
            "  {:<42} {:>12} {:>10}  {}{detail}",
            p["probe"].as_str().unwrap_or("?"),
            "",
            "",
            if p["ok"] == true { "" } else { "NOT HANDLED: " }
        ))?;
    }
    for l in r["load"].as_array().into_iter().flatten() {
        out(&format!(
            "{:<44} {:>12} {:>10.1}  ghost p50 {:.0} / p99 {:.0} ms, completion p50 {:.0} / p99 {:.0} ms",
            format!("load, {} docs x {} chars/s", l["documents"], l["chars_per_s_per_document"]),
            l["keystrokes"],
            n(&l["typing_s"]),
            n(&l["ghost"]["p50_ms"]),
            n(&l["ghost"]["p99_ms"]),
            n(&l["completion"]["p50_ms"]),
            n(&l["completion"]["p99_ms"]),
        ))?;
        out(&format!(
            "  {:<42} {:>12} {:>10}  {} jobs run, {} stale dropped; caches {:.1} MiB open (budget {:.0} MiB), {} after close; RSS {:.0} -> {:.0} MiB ({:.0} MiB live)",
            "",
            "",
            "",
            l["jobs"],
            l["stale_dropped"],
            n(&l["cache_bytes_open"]) / 1048576.0,
            n(&l["budget_bytes"]) / 1048576.0,
            l["cache_bytes_after_close"],
            n(&l["rss_bytes_before_load"]) / 1048576.0,
            n(&l["rss_bytes_under_load"]) / 1048576.0,
            n(&l["rss_bytes_under_load_trimmed"]) / 1048576.0,
        ))?;
    }
    out(&format!(
        "peak RSS {:.0} MiB (this process: the service, the model and the test client), load average {}",
        n(&r["peak_rss_bytes"]) / 1048576.0,
        r["load_average"].as_str().unwrap_or("?")
    ))?;
    Ok(())
}
