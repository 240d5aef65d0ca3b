//! `laya serve`'s settings (from `initializationOptions` and `workspace/didChangeConfiguration`),
//! validated, and the user dictionary file (read, and appended to atomically).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp_server::ls_types::DiagnosticSeverity;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Settings {
    /// Inline ghost text (`textDocument/inlineCompletion`).
    pub ghost_text: bool,
    /// Completion items (`textDocument/completion`).
    pub completion: bool,
    /// Spelling and confused-word diagnostics.
    pub diagnostics: bool,
    /// Language ids Laya works in.
    pub languages: Vec<String>,
    /// A GGUF file or an mlx-lm folder; default: the installed default model.
    pub model_path: Option<PathBuf>,
    /// The lexicon (`word<TAB>count`); default: the installed one.
    pub lexicon_path: Option<PathBuf>,
    /// Memory for the documents' KV caches, in MB (the model comes on top).
    pub memory_budget_mb: u64,
    /// Least probability for ghost text to show.
    pub threshold: f32,
    /// A ghost-text request still waiting for the model after this long is dropped (ms).
    pub latency_budget_ms: u64,
    /// One word per line; "Add to dictionary" appends to it. Default:
    /// `$XDG_CONFIG_HOME/laya/dictionary.txt` (`~/.config/laya/dictionary.txt`).
    pub user_dictionary: Option<PathBuf>,
    /// error, warning, information or hint.
    pub diagnostic_severity: String,
    /// Quiet time after an edit before its paragraph is re-checked (ms).
    pub debounce_ms: u64,
    /// Use idle time between keystrokes: work out the ghost text for a space after a known word
    /// (a forward or two per such word, so that the space's next-word suggestion is a lookup),
    /// and score the paragraph's settled words for its spelling check (a forward per contested
    /// word, so that the check after a pause has them ready).
    pub work_ahead: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            ghost_text: true,
            completion: true,
            diagnostics: true,
            languages: ["markdown", "plaintext", "gitcommit", "latex", "restructuredtext"].map(String::from).to_vec(),
            model_path: None,
            lexicon_path: None,
            memory_budget_mb: 256,
            threshold: 0.5,
            latency_budget_ms: 200,
            user_dictionary: None,
            diagnostic_severity: "information".into(),
            debounce_ms: 250,
            work_ahead: true,
        }
    }
}

impl Settings {
    /// Parses and validates settings; unknown keys and bad values are errors that say which.
    pub fn from_value(v: &Value) -> Result<Self, String> {
        if v.is_null() {
            return Ok(Self::default());
        }
        let s: Settings = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
        if !(0.0..=1.0).contains(&s.threshold) {
            return Err(format!("threshold must be between 0 and 1, not {}", s.threshold));
        }
        if s.memory_budget_mb == 0 || s.memory_budget_mb > 64 * 1024 {
            return Err(format!("memoryBudgetMb must be between 1 and 65536, not {}", s.memory_budget_mb));
        }
        if s.latency_budget_ms == 0 || s.latency_budget_ms > 60_000 {
            return Err(format!("latencyBudgetMs must be between 1 and 60000, not {}", s.latency_budget_ms));
        }
        if s.debounce_ms > 10_000 {
            return Err("debounceMs must be at most 10000".into());
        }
        if !["error", "warning", "information", "hint"].contains(&s.diagnostic_severity.as_str()) {
            return Err(format!("diagnosticSeverity must be error, warning, information or hint, not {:?}", s.diagnostic_severity));
        }
        for (name, p) in [("modelPath", &s.model_path), ("lexiconPath", &s.lexicon_path), ("userDictionary", &s.user_dictionary)] {
            if let Some(p) = p {
                if p.as_os_str().is_empty() || !p.is_absolute() {
                    return Err(format!("{name} must be an absolute path, not {:?}", p.display().to_string()));
                }
            }
        }
        if let Some(p) = &s.user_dictionary {
            if p.is_dir() {
                return Err(format!("userDictionary {} is a folder", p.display()));
            }
        }
        Ok(s)
    }

    /// Whether Laya works in documents of this language id; editors spell some ids differently
    /// ("git-commit" in VS Code and LSP's list, "gitcommit" elsewhere; "text" for plain text).
    pub fn serves(&self, language: &str) -> bool {
        let canon = |l: &str| match l {
            "git-commit" | "git_commit" => "gitcommit".to_string(),
            "text" | "txt" => "plaintext".to_string(),
            "tex" => "latex".to_string(),
            "rst" => "restructuredtext".to_string(),
            other => other.to_lowercase(),
        };
        let want = canon(language);
        self.languages.iter().any(|l| canon(l) == want)
    }

    /// The user dictionary in use: the setting, else the default file under the user's config
    /// folder (None only without $HOME).
    pub fn dictionary(&self) -> Option<PathBuf> {
        self.user_dictionary.clone().or_else(|| Some(crate::edge::edge().config_home.as_ref()?.join("laya").join("dictionary.txt")))
    }

    pub fn budget_bytes(&self) -> usize {
        (self.memory_budget_mb as usize) << 20
    }

    pub fn severity(&self) -> DiagnosticSeverity {
        match self.diagnostic_severity.as_str() {
            "error" => DiagnosticSeverity::ERROR,
            "warning" => DiagnosticSeverity::WARNING,
            "hint" => DiagnosticSeverity::HINT,
            _ => DiagnosticSeverity::INFORMATION,
        }
    }
}

/// The words of a user dictionary (one per line; `#` comments). A missing file has none.
pub fn read_words(path: &Path) -> Result<Vec<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Adds `word` to the dictionary at `path` by writing a new file beside it and renaming it over
/// the old one, so a crash leaves either the old or the new file, never half of one. A symbolic
/// link (a dictionary kept in a dotfiles repository) stays a link: the file it points to is
/// the one replaced.
pub fn append_word_atomically(path: &Path, word: &str) -> Result<(), String> {
    let resolved;
    let path = match std::fs::canonicalize(path) {
        Ok(p) if p != path => {
            resolved = p;
            resolved.as_path()
        }
        _ => path,
    };
    let mut words = read_words(path)?;
    if words.iter().any(|w| w == word) {
        return Ok(());
    }
    let old = std::fs::read_to_string(path).unwrap_or_default();
    words.push(word.to_string());
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // Two servers (two editors) may add words at once: each writes its own temporary file.
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path.file_name().map_or("dictionary".into(), |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}-{n}.laya-tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    let mut text = old;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(word);
    text.push('\n');
    f.write_all(text.as_bytes()).and_then(|_| f.sync_all()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot replace {}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_validation() {
        assert_eq!(Settings::from_value(&Value::Null).unwrap(), Settings::default());
        let s = Settings::from_value(&serde_json::json!({"threshold": 0.5, "ghostText": false})).unwrap();
        assert!(!s.ghost_text && s.threshold == 0.5);
        assert!(Settings::from_value(&serde_json::json!({"threshold": 2})).unwrap_err().contains("threshold"));
        assert!(Settings::from_value(&serde_json::json!({"bogus": 1})).unwrap_err().contains("bogus"));
        assert!(Settings::from_value(&serde_json::json!({"modelPath": "rel/path"})).unwrap_err().contains("absolute"));
    }

    #[test]
    fn language_ids_in_either_spelling() {
        let s = Settings::default();
        assert!(s.serves("git-commit") && s.serves("gitcommit") && s.serves("markdown") && s.serves("text"));
        assert!(!s.serves("rust"));
    }

    #[test]
    fn dictionary_appends_once() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("words.txt");
        append_word_atomically(&p, "Laya").unwrap();
        append_word_atomically(&p, "Laya").unwrap();
        append_word_atomically(&p, "MLX").unwrap();
        assert_eq!(read_words(&p).unwrap(), ["Laya", "MLX"]);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "no temporary file left behind");
    }

    #[test]
    fn a_linked_dictionary_stays_a_link() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("dotfiles-words.txt");
        std::fs::write(&real, "Laya\n").unwrap();
        let link = d.path().join("words.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        append_word_atomically(&link, "MLX").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(read_words(&real).unwrap(), ["Laya", "MLX"]);
    }

    #[test]
    fn the_default_dictionary_is_under_the_config_folder() {
        let s = Settings { user_dictionary: Some("/x/words.txt".into()), ..Settings::default() };
        assert_eq!(s.dictionary().unwrap(), PathBuf::from("/x/words.txt"));
        if let Some(p) = Settings::default().dictionary() {
            assert!(p.ends_with("laya/dictionary.txt"), "{}", p.display());
        }
    }
}
