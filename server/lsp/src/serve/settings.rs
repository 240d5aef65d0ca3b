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
    /// The model for documents not in Latin script (Chinese, Japanese, ...); default: the
    /// installed multilingual model (Gemma 3 270M), or `model_path` alone when that is set.
    pub multilingual_model_path: Option<PathBuf>,
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
    /// Ghost text recalls the writer's own words: those of the document before the cursor and
    /// of the workspace's prose files, mixed with the model's probabilities (off by default).
    pub recall: bool,
}

/// A numeric setting's allowed values, inclusive.
#[derive(Debug)]
pub struct Limit {
    pub key: &'static str,
    pub min: f64,
    pub max: f64,
    /// Whole numbers only ("integer" in a JSON schema).
    pub integer: bool,
}

/// The numeric settings' ranges: the one definition. The VS Code extension's package.json (which
/// its settings code reads them from) and docs/settings.md are checked against it by the tests
/// below.
pub const LIMITS: [Limit; 4] = [
    Limit { key: "memoryBudgetMb", min: 1.0, max: 65536.0, integer: true },
    Limit { key: "threshold", min: 0.0, max: 1.0, integer: false },
    Limit { key: "latencyBudgetMs", min: 1.0, max: 60000.0, integer: true },
    Limit { key: "debounceMs", min: 0.0, max: 10000.0, integer: true },
];

/// `diagnosticSeverity`'s values.
pub const SEVERITIES: [&str; 4] = ["error", "warning", "information", "hint"];

impl Default for Settings {
    fn default() -> Self {
        Self {
            ghost_text: true,
            completion: true,
            diagnostics: true,
            languages: ["markdown", "plaintext", "gitcommit", "latex", "restructuredtext"].map(String::from).to_vec(),
            model_path: None,
            multilingual_model_path: None,
            lexicon_path: None,
            memory_budget_mb: 256,
            threshold: laya_decide::GhostOptions::default().threshold,
            latency_budget_ms: 200,
            user_dictionary: None,
            diagnostic_severity: "information".into(),
            debounce_ms: 250,
            work_ahead: true,
            recall: false,
        }
    }
}

impl Settings {
    /// Parses and validates settings; unknown keys and bad values are errors that say which.
    pub fn from_value(v: &Value) -> Result<Self, String> {
        if v.is_null() {
            return Ok(Self::default());
        }
        let s: Settings = serde_json::from_value(v.clone()).map_err(|e| {
            // serde names a bad value's type but not its key: find the key by trying each alone.
            let bad =
                v.as_object().into_iter().flatten().find(|(k, x)| serde_json::from_value::<Settings>(serde_json::json!({ k.as_str(): x })).is_err());
            match bad {
                Some((k, _)) if !e.to_string().contains(k.as_str()) => format!("{k}: {e}"),
                _ => e.to_string(),
            }
        })?;
        let as_json = serde_json::to_value(&s).map_err(|e| e.to_string())?;
        for l in &LIMITS {
            let v = as_json[l.key].as_f64().unwrap_or(f64::NAN);
            if !(l.min..=l.max).contains(&v) || (l.integer && v.fract() != 0.0) {
                return Err(format!("{} must be between {} and {}, not {v}", l.key, l.min, l.max));
            }
        }
        if !SEVERITIES.contains(&s.diagnostic_severity.as_str()) {
            return Err(format!("diagnosticSeverity must be error, warning, information or hint, not {:?}", s.diagnostic_severity));
        }
        for (name, p) in [
            ("modelPath", &s.model_path),
            ("multilingualModelPath", &s.multilingual_model_path),
            ("lexiconPath", &s.lexicon_path),
            ("userDictionary", &s.user_dictionary),
        ] {
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
        assert!(Settings::from_value(&serde_json::json!({"multilingualModelPath": "gemma.gguf"}))
            .unwrap_err()
            .contains("multilingualModelPath must be an absolute path"));
    }

    #[test]
    fn every_limit_is_enforced() {
        for l in &LIMITS {
            let json = |v: f64| if l.integer { serde_json::json!({ l.key: v as i64 }) } else { serde_json::json!({ l.key: v }) };
            for v in [l.min - 1.0, l.max + 1.0] {
                let e = Settings::from_value(&json(v)).unwrap_err();
                assert!(e.contains(l.key), "{e}");
            }
            for v in [l.min, l.max] {
                Settings::from_value(&json(v)).unwrap();
            }
        }
    }

    /// The extension's package.json and docs/settings.md say what this file says: every key
    /// with its default, the numbers' ranges and types, the severities.
    #[test]
    fn the_extension_and_the_docs_agree_with_these_settings() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let manifest: Value = serde_json::from_str(&std::fs::read_to_string(root.join("extension-vscode/package.json")).unwrap()).unwrap();
        let props = &manifest["contributes"]["configuration"]["properties"];
        let docs = std::fs::read_to_string(root.join("docs/settings.md")).unwrap();
        let defaults = serde_json::to_value(Settings::default()).unwrap();
        for (key, default) in defaults.as_object().unwrap() {
            let p = &props[format!("laya.{key}")];
            assert!(p.is_object(), "package.json has no laya.{key}");
            // Paths default to "" there: unset, the server's own default.
            let want = if default.is_null() { Value::String(String::new()) } else { default.clone() };
            let same = match (p["default"].as_f64(), want.as_f64()) {
                // The same f32: 0.45 is 0.44999998807907104 once widened.
                (Some(a), Some(b)) => a as f32 == b as f32,
                _ => p["default"] == want,
            };
            assert!(same, "laya.{key}'s default in package.json is {}, not {want}", p["default"]);
            let row =
                docs.lines().find(|l| l.starts_with(&format!("| `{key}` |"))).unwrap_or_else(|| panic!("docs/settings.md has no row for {key}"));
            if !default.is_null() && !default.is_array() {
                let default = default.as_f64().filter(|_| default.is_f64()).map_or(default.to_string(), |x| (x as f32).to_string());
                assert!(row.contains(&format!("`{default}`")), "docs/settings.md's default for {key}: {row}");
            }
        }
        for l in &LIMITS {
            let p = &props[format!("laya.{}", l.key)];
            assert_eq!((p["minimum"].as_f64(), p["maximum"].as_f64()), (Some(l.min), Some(l.max)), "laya.{}'s range in package.json", l.key);
            assert_eq!(p["type"], if l.integer { "integer" } else { "number" }, "laya.{}'s type in package.json", l.key);
            let row = docs.lines().find(|r| r.starts_with(&format!("| `{}` |", l.key))).unwrap();
            assert!(row.contains(&format!("| {} to {} |", l.min, l.max)), "docs/settings.md's range for {}: {row}", l.key);
        }
        assert_eq!(props["laya.diagnosticSeverity"]["enum"], serde_json::json!(SEVERITIES));
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
