//! The command-line subcommands, one file each, and what they share: loading the model with
//! a clear error, timing, and writing to stdout.

pub mod bench;
pub mod check;
pub mod complete;
pub mod convert;
pub mod doctor;
pub mod eval;
pub mod eval_pinyin;
pub mod peers;
pub mod rank;
pub mod stress;

use std::io::Write;
use std::time::Instant;

use anyhow::Context;
use laya_model::Model;

use crate::ModelArgs;

/// Loads the model the arguments name (or the default), saying which one failed and why.
pub fn load_model(args: &ModelArgs) -> anyhow::Result<(Model, f64)> {
    load_model_for(args, "")
}

/// Loads the model the arguments name, else the fetched model that covers `text`'s script
/// (the multilingual one for Chinese, Japanese, Cyrillic, ...; the default for English).
pub fn load_model_for(args: &ModelArgs, text: &str) -> anyhow::Result<(Model, f64)> {
    load_model_as(args, laya_model::ModelChoice::for_script(laya_text::dominant_script(text)))
}

/// Loads the model the arguments name, else the fetched model of that `choice` (pinyin
/// conversion always wants the multilingual one).
pub fn load_model_as(args: &ModelArgs, choice: laya_model::ModelChoice) -> anyhow::Result<(Model, f64)> {
    let locations = &crate::edge::edge().locations;
    let path = locations.models.resolve_for(args.model.as_deref(), choice)?;
    let start = Instant::now();
    let model = Model::load_with(&path, locations.load).with_context(|| format!("loading the model {}", path.display()))?;
    Ok((model, ms(start)))
}

pub fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Writes `s` and a newline to stdout; a closed pipe (`laya ... | head`) is not an error.
pub fn out(s: &str) -> anyhow::Result<()> {
    let mut o = std::io::stdout().lock();
    match writeln!(o, "{s}") {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// `text` for one-line display between double quotes: control and invisible characters, the
/// double quote and the backslash escaped; an apostrophe stays as typed ("il's", not "il\'s").
pub fn visible(text: &str) -> String {
    text.chars().map(|c| if c == '\'' { "'".to_string() } else { c.escape_debug().to_string() }).collect()
}

/// A probability in six columns: three decimals, or "<0.001" rather than a bare 0.000.
pub fn prob(p: f32) -> String {
    if p > 0.0 && p < 0.0005 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// Peak resident memory of this process (Linux: VmHWM in /proc/self/status; None elsewhere).
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM")
}

/// Resident memory of this process now (Linux: VmRSS; None elsewhere).
pub fn rss_bytes() -> Option<u64> {
    status_bytes("VmRSS")
}

/// A memory field of /proc/self/status ("VmRSS", ...) in bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The machine's 1, 5 and 15-minute load averages (Linux), for reports measured on shared machines.
pub fn load_average() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg").ok().map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// The CPU a benchmark ran on: its model name, the vector and matrix features that matter to
/// the kernels (of those it has), and what Laya's kernels use of them.
pub fn cpu_report() -> serde_json::Value {
    const FEATURES: &[&str] = &["avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"];
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string()).unwrap_or_default()
    };
    let flags = field("flags");
    let has: Vec<&str> = FEATURES.iter().copied().filter(|f| flags.split_whitespace().any(|x| x == *f)).collect();
    serde_json::json!({"model": field("model name"), "features": has, "kernels": laya_model::cpu_kernels::describe()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_escapes_what_would_break_the_line_or_the_quotes_and_nothing_else() {
        assert_eq!(visible("il's"), "il's");
        assert_eq!(visible("il\u{2019}s"), "il\u{2019}s");
        assert_eq!(visible(" \"a\"\n\tb\\"), " \\\"a\\\"\\n\\tb\\\\");
        assert_eq!(visible("a\u{200b}b"), "a\\u{200b}b");
    }

    #[test]
    fn tiny_probabilities_do_not_read_as_zero() {
        assert_eq!(prob(0.526), "0.526");
        assert_eq!(prob(0.0001), "<0.001");
        assert_eq!(prob(0.0), "0.000");
    }
}
