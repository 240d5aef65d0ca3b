//! The workspace's own words: the names its code uses (identifiers of its source files, words in
//! the code spans and blocks of its prose files), read once after `initialized` so a project's
//! terms ("gopls", "rwlock", a crate's name) are not flagged in its docs.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use laya_text::prose_mask;

/// What a scan reads at most: files, bytes of one file, bytes in all.
const MAX_FILES: usize = 5_000;
const MAX_FILE_BYTES: u64 = 1 << 20;
const MAX_TOTAL_BYTES: u64 = 64 << 20;
/// Folders no one writes by hand.
const SKIPPED_DIRS: &[&str] = &["node_modules", "target", "dist", "build", "vendor", "__pycache__", "venv", "site-packages"];
/// Files read as prose: only their code counts.
const PROSE_EXTENSIONS: &[&str] = &["md", "markdown", "txt", "rst", "adoc", "org", "tex", "typ"];
/// Files not read at all (data, media, archives, lock files).
const SKIPPED_EXTENSIONS: &[&str] = &[
    "lock",
    "json",
    "svg",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "ico",
    "pdf",
    "zip",
    "gz",
    "tgz",
    "xz",
    "bz2",
    "wasm",
    "so",
    "a",
    "o",
    "dylib",
    "dll",
    "exe",
    "bin",
    "gguf",
    "safetensors",
    "npz",
    "npy",
    "tsv",
    "csv",
    "jsonl",
    "map",
    "min.js",
    "woff",
    "woff2",
    "ttf",
];

/// What a scan found.
#[derive(Debug, Default)]
pub struct Vocabulary {
    /// Lowercase words the workspace's code uses.
    pub words: HashSet<String>,
    pub files: usize,
    pub bytes: u64,
    /// Whether a limit cut the scan short.
    pub truncated: bool,
}

/// The code words of the files under `roots` (hidden folders and SKIPPED_DIRS left out), within
/// the limits above.
pub fn scan(roots: &[PathBuf]) -> Vocabulary {
    let mut v = Vocabulary::default();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(kind) = e.file_type() else { continue };
            if name.starts_with('.') || kind.is_symlink() {
                continue;
            }
            let path = e.path();
            if kind.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    stack.push(path);
                }
                continue;
            }
            if !kind.is_file() || SKIPPED_EXTENSIONS.iter().any(|x| name.ends_with(&format!(".{x}"))) {
                continue;
            }
            let size = e.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
            if size > MAX_FILE_BYTES {
                continue;
            }
            if v.files >= MAX_FILES || v.bytes + size > MAX_TOTAL_BYTES {
                v.truncated = true;
                return v;
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue }; // not UTF-8: not text
            v.files += 1;
            v.bytes += size;
            add_code_words(&text, is_prose_file(&path), &mut v.words);
        }
    }
    v
}

fn is_prose_file(path: &Path) -> bool {
    path.extension().and_then(|x| x.to_str()).is_some_and(|x| PROSE_EXTENSIONS.contains(&x.to_ascii_lowercase().as_str()))
}

/// Adds the code words of `text` to `out`: in a prose file the words outside its prose (code
/// spans and blocks), in a source file every identifier, whole and in its parts
/// ("TokenStream" -> tokenstream, token, stream; "rw_lock" -> lock).
pub fn add_code_words(text: &str, prose_file: bool, out: &mut HashSet<String>) {
    let mask = prose_file.then(|| prose_mask(text));
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if mask.as_ref().is_some_and(|m| m.contains(start)) {
            continue; // prose: a word like any other, not a name
        }
        let ident = &text[start..i];
        keep(ident, out);
        for part in ident.split('_') {
            for piece in camel_parts(part) {
                keep(piece, out);
            }
        }
    }
}

/// "TokenStream" -> ["Token", "Stream"]; "HTTPServer" -> ["HTTP", "Server"]; "gopls" -> ["gopls"].
fn camel_parts(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut parts = vec![];
    let mut start = 0;
    for i in 1..b.len() {
        let boundary = (b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase())
            || (b[i].is_ascii_uppercase() && i + 1 < b.len() && b[i + 1].is_ascii_lowercase() && b[i - 1].is_ascii_uppercase())
            || (b[i].is_ascii_digit() != b[i - 1].is_ascii_digit());
        if boundary {
            parts.push(&s[start..i]);
            start = i;
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Words of 3 to 40 letters only: shorter ones are too often a slip of a common word, longer
/// ones are hashes.
fn keep(w: &str, out: &mut HashSet<String>) {
    if (3..=40).contains(&w.len()) && w.bytes().all(|c| c.is_ascii_alphabetic()) {
        out.insert(w.to_ascii_lowercase());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str, prose: bool) -> Vec<String> {
        let mut out = HashSet::new();
        add_code_words(text, prose, &mut out);
        let mut v: Vec<String> = out.into_iter().collect();
        v.sort();
        v
    }

    #[test]
    fn source_files_give_their_identifiers_whole_and_in_parts() {
        assert_eq!(
            words("let rw_lock = TokenStream::new(HTTPServer); // gopls", false),
            ["gopls", "http", "httpserver", "let", "lock", "new", "server", "stream", "token", "tokenstream"]
        );
    }

    #[test]
    fn prose_files_give_only_their_code() {
        assert_eq!(words("Run `gopls check` to see the desireable output.\n\n```\nrwlock := x\n```\n", true), ["check", "gopls", "rwlock"]);
    }

    #[test]
    fn a_scan_reads_the_tree_and_skips_what_no_one_writes() {
        let dir = std::env::temp_dir().join(format!("laya-ws-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("node_modules/x")).unwrap();
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join("src/main.go"), "func gocodeServe() {}").unwrap();
        std::fs::write(dir.join("README.md"), "Use `zorblat` here; the frobnicate step.").unwrap();
        std::fs::write(dir.join("node_modules/x/a.js"), "var leftpadder").unwrap();
        std::fs::write(dir.join(".git/config"), "hiddenword").unwrap();
        std::fs::write(dir.join("data.bin"), [0xffu8, 0xfe, 0x00]).unwrap();
        let v = scan(std::slice::from_ref(&dir));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(v.words.contains("gocode") && v.words.contains("zorblat"), "{:?}", v.words);
        assert!(!v.words.contains("frobnicate") && !v.words.contains("leftpadder") && !v.words.contains("hiddenword"), "{:?}", v.words);
        assert_eq!((v.files, v.truncated), (2, false));
    }
}
