//! The workspace's own words: the names its code uses (identifiers of its source files, words in
//! the code spans and blocks of its prose files), read once after `initialized` so a project's
//! terms ("gopls", "rwlock", a crate's name) are not flagged in its docs; and the prose of its
//! prose files, counted for ghost text to recall (`laya_decide::Recall`).

use std::collections::HashSet;
use std::path::PathBuf;

use laya_decide::Recall;
use laya_text::prose_mask;

/// What a scan reads at most: files, bytes of one file, bytes in all.
const MAX_FILES: usize = 5_000;
const MAX_FILE_BYTES: u64 = 1 << 20;
const MAX_TOTAL_BYTES: u64 = 64 << 20;
/// Folders no one writes by hand.
const SKIPPED_DIRS: &[&str] = &["node_modules", "target", "dist", "build", "vendor", "__pycache__", "venv", "site-packages"];
/// Files read as prose: only their code counts.
const PROSE_EXTENSIONS: &[&str] = &["md", "markdown", "txt", "rst", "adoc", "org", "tex", "typ"];
/// Source files read for their identifiers (comments and string literals left out), by
/// extension, with how their comments and strings look. Files of any other kind are not read:
/// a commit message or a licence is prose, a lock file is data.
const SOURCES: &[(&str, Lexis)] = &[
    ("rs", Lexis::C),
    ("go", Lexis::C),
    ("c", Lexis::C),
    ("h", Lexis::C),
    ("cc", Lexis::C),
    ("cpp", Lexis::C),
    ("hpp", Lexis::C),
    ("java", Lexis::C),
    ("kt", Lexis::C),
    ("swift", Lexis::C),
    ("cs", Lexis::C),
    ("scala", Lexis::C),
    ("zig", Lexis::C),
    ("dart", Lexis::C),
    ("js", Lexis::Script),
    ("mjs", Lexis::Script),
    ("ts", Lexis::Script),
    ("tsx", Lexis::Script),
    ("jsx", Lexis::Script),
    ("php", Lexis::Script),
    ("py", Lexis::Hash),
    ("rb", Lexis::Hash),
    ("sh", Lexis::Hash),
    ("bash", Lexis::Hash),
    ("r", Lexis::Hash),
    ("jl", Lexis::Hash),
    ("toml", Lexis::Hash),
    ("yaml", Lexis::Hash),
    ("yml", Lexis::Hash),
    ("lua", Lexis::Dash),
    ("sql", Lexis::Dash),
    ("hs", Lexis::Dash),
];

/// How a language writes comments and strings.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lexis {
    /// `//` and `/* */` comments; `"` strings (a `'` is a character or a lifetime).
    C,
    /// `//` and `/* */` comments; `"`, `'` and `` ` `` strings.
    Script,
    /// `#` comments; `"` and `'` strings (triple-quoted too).
    Hash,
    /// `--` comments; `"` and `'` strings.
    Dash,
}

/// What a scan found.
#[derive(Debug, Default)]
pub struct Vocabulary {
    /// Lowercase words the workspace's code uses.
    pub words: HashSet<String>,
    /// The words of its prose files' prose, in order (bounded: [`Recall::is_full`]).
    pub recall: Recall,
    pub files: usize,
    pub bytes: u64,
    /// Whether a limit cut the scan short.
    pub truncated: bool,
}

/// The code words of the files under `roots` (hidden folders and SKIPPED_DIRS left out), within
/// the limits above, and the prose of its prose files.
pub fn scan(roots: &[PathBuf]) -> Vocabulary {
    let mut v = Vocabulary::default();
    let (files, truncated) = walk(roots);
    for (path, lexis, size) in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue }; // not UTF-8: not text
        v.files += 1;
        v.bytes += size;
        match lexis {
            Some(l) => add_identifiers(&text, l, &mut v.words),
            None => {
                add_code_spans(&text, &mut v.words);
                v.recall.add_prose(&text);
                v.recall.end_chain();
            }
        }
        // The file's own name is the project's word too ("gopls.go", "rwlock.rs").
        if let Some(stem) = path.file_stem().and_then(|x| x.to_str()) {
            add_words_of(stem, &mut v.words);
        }
    }
    v.truncated = truncated;
    v
}

/// The prose files under `roots` a scan reads, in its order.
pub fn prose_files(roots: &[PathBuf]) -> Vec<PathBuf> {
    walk(roots).0.into_iter().filter(|(_, lexis, _)| lexis.is_none()).map(|(p, _, _)| p).collect()
}

/// The files a scan reads (path, how its code is written or None for prose, size), and whether
/// a limit cut the walk short.
fn walk(roots: &[PathBuf]) -> (Vec<(PathBuf, Option<Lexis>, u64)>, bool) {
    let mut out = vec![];
    let mut bytes = 0u64;
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
            let ext = path.extension().and_then(|x| x.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
            let lexis = SOURCES.iter().find(|(x, _)| *x == ext).map(|(_, l)| *l);
            let prose = PROSE_EXTENSIONS.contains(&ext.as_str());
            if !kind.is_file() || (lexis.is_none() && !prose) {
                continue;
            }
            let size = e.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
            if size > MAX_FILE_BYTES {
                continue;
            }
            if out.len() >= MAX_FILES || bytes + size > MAX_TOTAL_BYTES {
                return (out, true);
            }
            bytes += size;
            out.push((path, lexis, size));
        }
    }
    (out, false)
}

/// The words in the code spans and blocks of a prose file.
fn add_code_spans(text: &str, out: &mut HashSet<String>) {
    let mask = prose_mask(text);
    for (start, end) in identifiers(text) {
        if !mask.contains(start) {
            add_words_of(&text[start..end], out);
        }
    }
}

/// The identifiers of a source file, outside its comments and string literals (what it says in
/// them is prose, typos included).
fn add_identifiers(text: &str, lexis: Lexis, out: &mut HashSet<String>) {
    let b = text.as_bytes();
    let mut code = String::with_capacity(text.len());
    let mut i = 0;
    let at = |i: usize, s: &[u8]| b[i..].starts_with(s);
    while i < b.len() {
        let slash = lexis == Lexis::C || lexis == Lexis::Script;
        if (slash && at(i, b"//")) || (lexis == Lexis::Hash && b[i] == b'#') || (lexis == Lexis::Dash && at(i, b"--")) {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if slash && at(i, b"/*") {
            i = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
        } else if lexis == Lexis::Hash && (at(i, b"\"\"\"") || at(i, b"'''")) {
            let q = &text[i..i + 3];
            i = text[i + 3..].find(q).map_or(b.len(), |n| i + 3 + n + 3);
        } else if b[i] == b'"' || (b[i] == b'\'' && lexis != Lexis::C) || (b[i] == b'`' && lexis == Lexis::Script) {
            let q = b[i];
            i += 1;
            while i < b.len() && b[i] != q {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            let n = text[i..].chars().next().map_or(1, char::len_utf8);
            code.push_str(&text[i..(i + n).min(b.len())]);
            i += n;
            continue;
        }
        code.push(' ');
    }
    for (start, end) in identifiers(&code) {
        add_words_of(&code[start..end], out);
    }
}

/// Byte ranges of the ASCII identifiers of `text` (a letter, then letters, digits, `_`).
fn identifiers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        if !(b[i].is_ascii_alphabetic() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        out.push((start, i));
    }
    out
}

/// An identifier's words, whole and in its parts ("TokenStream" -> tokenstream, token, stream;
/// "rw_lock" -> lock; "gopls-server" -> gopls, server).
fn add_words_of(ident: &str, out: &mut HashSet<String>) {
    keep(ident, out);
    for part in ident.split(|c: char| !c.is_ascii_alphanumeric()) {
        keep(part, out);
        for piece in camel_parts(part) {
            keep(piece, out);
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

    fn words(text: &str, lexis: Option<Lexis>) -> Vec<String> {
        let mut out = HashSet::new();
        match lexis {
            Some(l) => add_identifiers(text, l, &mut out),
            None => add_code_spans(text, &mut out),
        }
        let mut v: Vec<String> = out.into_iter().collect();
        v.sort();
        v
    }

    #[test]
    fn source_files_give_their_identifiers_whole_and_in_parts() {
        assert_eq!(
            words("let rw_lock = TokenStream::new(HTTPServer, \"recieve\"); // gopls /* teh */", Some(Lexis::C)),
            ["http", "httpserver", "let", "lock", "new", "server", "stream", "token", "tokenstream"],
            "comments and strings are prose"
        );
    }

    #[test]
    fn prose_files_give_only_their_code() {
        assert_eq!(words("Run `gopls check` to see the desireable output.\n\n```\nrwlock := x\n```\n", None), ["check", "gopls", "rwlock"]);
        assert_eq!(words("def gopls_main():\n    \"\"\"Recieve it.\"\"\"\n    x = 'teh'  # acheive\n", Some(Lexis::Hash)), ["def", "gopls", "main"]);
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
        std::fs::write(dir.join("COMMIT_EDITMSG"), "I will recieve it").unwrap();
        let v = scan(std::slice::from_ref(&dir));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(v.words.contains("gocode") && v.words.contains("zorblat"), "{:?}", v.words);
        for w in ["frobnicate", "leftpadder", "hiddenword", "recieve"] {
            assert!(!v.words.contains(w), "{w}: {:?}", v.words);
        }
        assert!(v.words.contains("readme") && v.words.contains("main"), "file names count: {:?}", v.words);
        assert_eq!((v.files, v.truncated), (2, false));
    }
}
